/** Paths as people and models type them, through every path-taking tool (tools-coding and tools-search). */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { textOf as messageText, type ToolResultMessage } from "../../../api/index.js";
import permissionGate from "../../../plugins/permission-gate/index.js";
import toolsCoding from "../../../plugins/tools-coding/index.js";
import toolsSearch from "../../../plugins/tools-search/index.js";
import { agentIn, cleanTemps, tempDir, textOf, toolHost } from "../../support/tools.js";

afterAll(cleanTemps);

const SHOT = "Screenshot 2024-01-01 at 10.00.00\u202FAM.txt"; // macOS puts U+202F before AM
const files = {
  [SHOT]: "shot\n",
  "cafe\u0301.txt": "nfd on disk\n", // decomposed é, as older macOS file systems store it
  "na\u00EFve.md": "nfc on disk\n",
  "Bob\u2019s notes.txt": "curly\n",
  "it's.txt": "straight\n",
  "a\u00A0b.txt": "nbsp\n",
  "src/a.ts": "at sign\n",
  "Caf\u00E9 dir/inner.txt": "nested\n",
  "twin/x\u00A0y.txt": "one\n",
  "twin/x\u202Fy.txt": "two\n",
};

function setup() {
  const dir = tempDir(files);
  return {
    dir,
    ...toolHost(dir, [
      [toolsCoding, {}],
      [toolsSearch, { ripgrep: false }],
    ]),
  };
}

// typed → the content of the file it means
const TYPED: [typed: string, content: string][] = [
  ["Screenshot 2024-01-01 at 10.00.00 AM.txt", "shot"],
  ["Screenshot 2024-01-01 at 10.00.00 am.txt", "shot"],
  ["caf\u00E9.txt", "nfd on disk"],
  ["nai\u0308ve.md", "nfc on disk"],
  ["Bob's notes.txt", "curly"],
  ["it\u2019s.txt", "straight"],
  ["a b.txt", "nbsp"],
  ["@src/a.ts", "at sign"],
  ["Cafe\u0301 dir/inner.txt", "nested"],
];

describe("paths as typed", () => {
  it.each(TYPED)("read %j", async (typed, content) => {
    const { call } = setup();
    const out = await call("read", { path: typed });
    expect(out.isError).toBeFalsy();
    expect(textOf(out)).toBe(content);
  });

  it.each(TYPED)("edit, write, grep, find and ls reach the same file for %j", async (typed, content) => {
    const { dir, call } = setup();
    const before = readdirSync(dir).sort();
    const real = join(dir, Object.keys(files).find((name) => files[name as keyof typeof files] === `${content}\n`)!);

    const grep = await call("grep", { pattern: content, path: typed });
    expect(grep.isError).toBeFalsy();
    expect(textOf(grep)).toMatch(new RegExp(`:1: ${content}$`));

    const edit = await call("edit", { path: typed, edits: [{ oldText: content, newText: `${content} edited` }] });
    expect(edit.isError).toBeFalsy();
    expect(readFileSync(real, "utf8")).toBe(`${content} edited\n`);

    const write = await call("write", { path: typed, content: "rewritten\n" });
    expect(write.isError).toBeFalsy();
    expect(write.details.created).toBe(false);
    expect(readFileSync(real, "utf8")).toBe("rewritten\n");
    expect(readdirSync(dir).sort()).toEqual(before); // no near-duplicate file was created
  });

  it("ls and find take a directory typed with the other normalization form", async () => {
    const { call } = setup();
    const ls = await call("ls", { path: "Cafe\u0301 dir" });
    expect(ls.isError).toBeFalsy();
    expect(textOf(ls)).toBe("inner.txt");
    const find = await call("find", { pattern: "*.txt", path: "Cafe\u0301 dir" });
    expect(find.isError).toBeFalsy();
    expect(textOf(find)).toBe("Caf\u00E9 dir/inner.txt");
  });

  it("does not guess between two names that fold alike, and lists both as similar names", async () => {
    const { call } = setup();
    const out = await call("read", { path: "twin/x y.txt" });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toContain("Similar names in twin: x\u00A0y.txt, x\u202Fy.txt.");
  });

  it("suggests names that differ in case through the same folding (quotes, spaces, forms)", async () => {
    const { call } = setup();
    const out = await call("read", { path: "BOB'S NOTES.txt" });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toContain("Similar names in .: Bob\u2019s notes.txt.");
    const search = await call("ls", { path: "CAFE\u0301 DIR" });
    expect(search.isError).toBe(true);
    expect(textOf(search)).toContain("Similar names in .: Caf\u00E9 dir.");
  });

  it("a new file under a directory typed in another spelling goes into the existing directory", async () => {
    const { dir, call } = setup();
    const out = await call("write", { path: "Cafe\u0301 dir/new.txt", content: "x" });
    expect(out.isError).toBeFalsy();
    expect(out.details.created).toBe(true);
    expect(readFileSync(join(dir, "Caf\u00E9 dir", "new.txt"), "utf8")).toBe("x");
    expect(readdirSync(dir).filter((n) => n.startsWith("Caf"))).toEqual(["Caf\u00E9 dir"]);
    const missing = await call("read", { path: "Cafe\u0301 dir/inne.txt" });
    expect(textOf(missing)).toContain("Similar names in Caf\u00E9 dir: inner.txt");
  });

  it("still creates a new file whose name matches nothing", async () => {
    const { dir, call } = setup();
    const out = await call("write", { path: "@new.txt", content: "x" });
    expect(out.details.created).toBe(true);
    expect(readFileSync(join(dir, "@new.txt"), "utf8")).toBe("x");
  });
});

describe("paths as typed and the permission gate", () => {
  it("a deny rule covers the file a variant spelling reaches (@.env, curly quote, NFD)", async () => {
    const dir = tempDir({
      ".env": "SECRET=1\n",
      "Bob\u2019s keys.txt": "KEY=2\n",
      "caf\u00E9.pem": "PEM\n",
      "ok.txt": "fine\n",
    });
    const calls = ["@.env", "Bob's keys.txt", "cafe\u0301.pem", "@ok.txt"].map((path, i) => ({
      id: `c${i}`,
      name: "read",
      arguments: { path },
    }));
    const { agent } = agentIn(
      dir,
      [
        [permissionGate, { mode: "yolo", deny: ["read(.env)", "read(Bob\u2019s keys.txt)", "read(*.pem)"] }],
        [toolsCoding, {}],
      ],
      [{ toolCalls: calls }, { text: "done" }],
    );
    const result = await agent.prompt("go");
    const results = result.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
    expect(results.map((m) => [m.isError ?? false, messageText(m).includes("not allowed")])).toEqual([
      [true, true],
      [true, true],
      [true, true],
      [false, false],
    ]);
    expect(messageText(results[3]!)).toBe("fine");
  });
});
