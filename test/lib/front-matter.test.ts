/** lib/front-matter.ts: YAML front matter, and plain `key: value` lines that are not valid YAML read line by line. */
import { describe, expect, it } from "vitest";
import { splitFrontMatter } from "../../lib/front-matter.js";

describe("splitFrontMatter", () => {
  it("reads valid YAML as YAML", () => {
    expect(splitFrontMatter("---\nname: x\ntags: [a, b]\n---\nbody\n")).toEqual({ data: { name: "x", tags: ["a", "b"] }, body: "body\n" });
  });

  it("reads Claude Code's `argument-hint: [issue] [priority]` line by line, keeping other values' types, with a note", () => {
    const got = splitFrontMatter("---\ndescription: Triage an issue\nargument-hint: [issue] [priority]\ndisable-model-invocation: true\nallowed-tools: Bash(git:*), Read\n# a comment\n---\nTriage $ARGUMENTS\n");
    expect(got.error).toBeUndefined();
    expect(got.data).toEqual({ description: "Triage an issue", "argument-hint": "[issue] [priority]", "disable-model-invocation": true, "allowed-tools": "Bash(git:*), Read" });
    expect(got.note).toMatch(/^front matter is not valid YAML \(.*\); read line by line, values as written$/);
    expect(got.body).toBe("Triage $ARGUMENTS\n");
  });

  it("still refuses front matter that is neither YAML nor key: value lines", () => {
    const got = splitFrontMatter('---\nname: x\ndescription: "unclosed\n  - item\n---\nbody\n');
    expect(got.data).toBeUndefined();
    expect(got.error).toMatch(/^front matter is not valid YAML: /);
  });
});
