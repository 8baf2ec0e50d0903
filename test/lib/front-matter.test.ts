/** lib/front-matter.ts: YAML front matter, and plain `key: value` lines that are not valid YAML read line by line. */
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { splitFrontMatter } from "../../lib/front-matter.js";

describe("splitFrontMatter", () => {
  it("reads valid YAML as YAML", () => {
    expect(splitFrontMatter("---\nname: x\ntags: [a, b]\n---\nbody\n")).toEqual({
      data: { name: "x", tags: ["a", "b"] },
      body: "body\n",
    });
  });

  it("reads Claude Code's `argument-hint: [issue] [priority]` line by line, keeping other values' types, with a note", () => {
    const got = splitFrontMatter(
      "---\ndescription: Triage an issue\nargument-hint: [issue] [priority]\ndisable-model-invocation: true\nallowed-tools: Bash(git:*), Read\n# a comment\n---\nTriage $ARGUMENTS\n",
    );
    expect(got.error).toBeUndefined();
    expect(got.data).toEqual({
      description: "Triage an issue",
      "argument-hint": "[issue] [priority]",
      "disable-model-invocation": true,
      "allowed-tools": "Bash(git:*), Read",
    });
    expect(got.note).toMatch(/^front matter is not valid YAML \(.*\); read line by line, values as written$/);
    expect(got.body).toBe("Triage $ARGUMENTS\n");
  });

  it("still refuses front matter that is neither YAML nor key: value lines", () => {
    const got = splitFrontMatter('---\nname: x\ndescription: "unclosed\n  - item\n---\nbody\n');
    expect(got.data).toBeUndefined();
    expect(got.error).toMatch(/^front matter is not valid YAML: /);
  });
});

describe("splitFrontMatter without the YAML parser (string key: value lines)", () => {
  const samples = [
    "name: x\ndescription: A skill. Use when a test fails, an error appears (or not), etc\nlicense: MIT",
    'description: Explain code\nargument-hint: "<file, symbol or question>"\n',
    'name: write-coil-plugin\nmetadata:\n  author: coil\n  version: "1"\nlicense: MIT\n',
    "# a comment\nname: x\n\nallowed-tools: Bash(git:*), Read\nquote: it's 'fine' and \"so\"\n",
    "a: 'single quoted'\nb: yes\nc: on\nd: No\ne: x [y], z {w}\nf: trailing spaces   \r\ng: a%b@c`d`",
    "empty:\nafter: value\n",
    "nested:\n    deep: four spaces\n    more: x\ntop: y",
  ];
  // Anything else goes to the YAML parser: types, escapes, comments after values, deeper nesting, lists, duplicates.
  const others = [
    "flag: true",
    "n: 3",
    "v: null",
    "t: ~",
    "x: True",
    'e: "tab\\tescape"',
    "c: value # comment",
    "a: b: c",
    "k: ends:",
    "m:\n  n:\n    o: deep",
    "l:\n  - item",
    "d: one\nd: two",
    "true: x",
    "null: y",
    "s: |\n  block",
    "p: first\n  continued",
    "i:\n  a: 1\n   b: 2",
    "__proto__: x",
    "h: a#b",
    "k:\n  # indented comment\n  a: b",
  ];

  it("reads string-valued front matter exactly as YAML does", () => {
    for (const yaml of [...samples, ...others]) {
      let want: unknown;
      try {
        want = parse(yaml) ?? {};
      } catch {
        continue; // not valid YAML: the line-by-line reading's business (tested above)
      }
      expect(splitFrontMatter(`---\n${yaml}\n---\nbody`), yaml).toEqual({ data: want, body: "body" });
    }
  });
});
