/** tools-coding: edit and write on real files, including concurrent calls through the kernel. */
import { execFileSync } from "node:child_process";
import { chmodSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { definePlugin } from "../../../api/index.js";
import toolsCoding from "../../../plugins/tools-coding/index.js";
import { unifiedDiff } from "../../../plugins/tools-coding/diff.js";
import { agentIn, cleanTemps, runAsNobody, tempDir, textOf, toolHost } from "../../support/tools.js";

afterAll(cleanTemps);

function setup(files: Record<string, string | Uint8Array>) {
  const dir = tempDir(files);
  const read = (name: string) => readFileSync(join(dir, name), "utf8");
  const bytes = (name: string) => readFileSync(join(dir, name));
  return { dir, read, bytes, ...toolHost(dir, [[toolsCoding, {}]]) };
}

const SOURCE = `import { a } from "./a";

export function greet(name: string) {
  return "hello " + name;
}

export function part(name: string) {
  return "bye " + name;
}
`;

describe("edit: matching and applying", () => {
  it("replaces one exact match and reports the diff and first changed line", async () => {
    const { call, read } = setup({ "src.ts": SOURCE });
    const out = await call("edit", {
      path: "src.ts",
      edits: [{ oldText: 'return "hello " + name;', newText: "return `hello ${name}`;" }],
    });
    expect(out.isError).toBeFalsy();
    expect(textOf(out)).toBe("Edited src.ts: 1 replacement at line 4.");
    expect(read("src.ts")).toBe(SOURCE.replace('return "hello " + name;', "return `hello ${name}`;"));
    expect(out.details.firstChangedLine).toBe(4);
    expect(out.details.diff).toBe(
      [
        "--- a/src.ts",
        "+++ b/src.ts",
        "@@ -1,7 +1,7 @@",
        ' import { a } from "./a";',
        " ",
        " export function greet(name: string) {",
        '-  return "hello " + name;',
        "+  return `hello ${name}`;",
        " }",
        " ",
        " export function part(name: string) {",
        "",
      ].join("\n"),
    );
  });

  it("names a file outside the working directory by its absolute path in the diff headers", async () => {
    const { call } = setup({});
    const outside = tempDir({ "far.txt": "one\ntwo\n" });
    const abs = join(outside, "far.txt");
    const out = await call("edit", { path: abs, edits: [{ oldText: "two", newText: "2" }] });
    expect(out.isError).toBeFalsy();
    expect(out.details.diff.split("\n").slice(0, 2)).toEqual([`--- ${abs}`, `+++ ${abs}`]);
  });

  it("matches every edit against the original and applies them together, in any order", async () => {
    const { call, read } = setup({ "src.ts": SOURCE });
    const out = await call("edit", {
      path: "src.ts",
      edits: [
        { oldText: '"bye "', newText: '"goodbye "' },
        { oldText: "greet(name: string)", newText: "greet(name: string, loud = false)" },
        { oldText: 'import { a } from "./a";', newText: 'import { a, b } from "./a";' },
      ],
    });
    expect(textOf(out)).toBe("Edited src.ts: 3 replacements at lines 1, 3, 8.");
    expect(read("src.ts")).toBe(
      SOURCE.replace('"bye "', '"goodbye "')
        .replace("greet(name: string)", "greet(name: string, loud = false)")
        .replace("{ a }", "{ a, b }"),
    );
    expect(out.details.edits).toEqual([
      { index: 0, line: 8, tolerant: false },
      { index: 1, line: 3, tolerant: false },
      { index: 2, line: 1, tolerant: false },
    ]);
  });

  it("names the edit and the lines when oldText matches more than once, and changes nothing", async () => {
    const { call, read } = setup({ "src.ts": SOURCE });
    const out = await call("edit", {
      path: "src.ts",
      edits: [
        { oldText: "greet", newText: "hi" },
        { oldText: "(name: string) {", newText: "(who: string) {" },
      ],
    });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toBe(
      "edits[1].oldText matches 2 places in src.ts (lines 3, 7); it must match exactly one. Include more surrounding lines to make it unique.",
    );
    expect(read("src.ts")).toBe(SOURCE);
  });

  it("counts overlapping occurrences as duplicates", async () => {
    const { call } = setup({ "a.txt": "aaa\n" });
    const out = await call("edit", { path: "a.txt", edits: [{ oldText: "aa", newText: "b" }] });
    expect(textOf(out)).toContain("oldText matches 2 places in a.txt (line 1, columns 1, 2)");
  });

  it("lists the distinct lines of several matches, with columns where one line has more than one", async () => {
    const { call } = setup({ "x.ts": "y = f(a) + f(b) + f(c);\nz = 1;\nw = f(d);\n" });
    const one = await call("edit", { path: "x.ts", edits: [{ oldText: "+ f(", newText: "- g(" }] });
    expect(textOf(one)).toBe(
      "oldText matches 2 places in x.ts (line 1, columns 10, 17); it must match exactly one. Include more surrounding lines to make it unique.",
    );
    const many = await call("edit", { path: "x.ts", edits: [{ oldText: "f(", newText: "g(" }] });
    expect(textOf(many)).toContain("oldText matches 4 places in x.ts (lines 1 (columns 5, 12, 19), 3);");
  });

  it("refuses overlapping edits, naming both", async () => {
    const { call, read } = setup({ "src.ts": SOURCE });
    const out = await call("edit", {
      path: "src.ts",
      edits: [
        { oldText: "export function greet(name: string) {\n  return", newText: "x" },
        { oldText: 'return "hello " + name;\n}', newText: "y" },
      ],
    });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toBe(
      "edits[0] and edits[1] overlap in src.ts (lines 3-4 and 4-5). Every edit is matched against the original file; merge overlapping edits into one.",
    );
    expect(read("src.ts")).toBe(SOURCE);
  });

  it("refuses an edit that changes nothing, and an empty oldText", async () => {
    const { call, read } = setup({ "src.ts": SOURCE });
    const same = await call("edit", { path: "src.ts", edits: [{ oldText: "part(", newText: "part(" }] });
    expect(same.isError).toBe(true);
    expect(textOf(same)).toBe(
      "The edit changes nothing: its newText is the same as the text it replaces at line 7 of src.ts. Give the new text, or drop the edit.",
    );
    const empty = await call("edit", { path: "src.ts", edits: [{ oldText: "", newText: "x" }] });
    expect(textOf(empty)).toContain("oldText is empty");
    expect(read("src.ts")).toBe(SOURCE);
  });

  it("explains a missing oldText by showing the numbered lines of the closest text", async () => {
    const { call } = setup({ "src.ts": SOURCE });
    const out = await call("edit", {
      path: "src.ts",
      edits: [{ oldText: "export function part(name: string) {\n  return 'bye' + name;", newText: "x" }],
    });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toBe(
      [
        "oldText was not found in src.ts. The closest text is at lines 7-8, and differs from oldText first at line 8:",
        "     6\t",
        "     7\texport function part(name: string) {",
        '     8\t  return "bye " + name;',
        "     9\t}",
        "Copy oldText exactly from the file (without these line numbers), including indentation and whitespace.",
      ].join("\n"),
    );
    const other = await call("edit", { path: "src.ts", edits: [{ oldText: "nothing like this", newText: "x" }] });
    expect(textOf(other)).toContain("Re-read it with read and copy oldText exactly");
  });

  it("shows the nearest line when oldText differs only inside a line (doubled space)", async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `const v${i} = ${i};`);
    lines[14] = "//  Talks to the server";
    const { call } = setup({ "c.ts": lines.join("\n") + "\n" });
    const out = await call("edit", {
      path: "c.ts",
      edits: [{ oldText: "// Talks to the server", newText: "// Calls the server" }],
    });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toBe(
      [
        "oldText was not found in c.ts. The closest text is at line 15:",
        "    14\tconst v13 = 13;",
        "    15\t//  Talks to the server",
        "    16\tconst v15 = 15;",
        "Copy oldText exactly from the file (without these line numbers), including indentation and whitespace.",
      ].join("\n"),
    );
  });
});

describe("edit: line endings, BOM and tolerant matches", () => {
  it("keeps CRLF endings, also in the replacement, and every other byte", async () => {
    const original = "one\r\ntwo\r\nthree\r\nfour\r\n";
    const { call, read } = setup({ "win.txt": original });
    const out = await call("edit", { path: "win.txt", edits: [{ oldText: "two\nthree", newText: "2\n2.5\n3" }] });
    expect(out.isError).toBeFalsy();
    expect(read("win.txt")).toBe("one\r\n2\r\n2.5\r\n3\r\nfour\r\n");
    expect(out.details.diff).toContain("-two\n-three\n+2\n+2.5\n+3");
  });

  it("keeps a UTF-8 BOM", async () => {
    const { call, bytes } = setup({ "bom.txt": "\uFEFFname = 1\n" });
    await call("edit", { path: "bom.txt", edits: [{ oldText: "name = 1", newText: "name = 2" }] });
    expect(bytes("bom.txt")).toEqual(Buffer.from("\uFEFFname = 2\n", "utf8"));
  });

  it("in a file with mixed endings, writes each replacement with its region's ending and leaves the rest alone", async () => {
    const original = "a1\r\na2\r\na3\r\nb1\nb2\nb3\n";
    const { call, read } = setup({ "mixed.txt": original });
    const out = await call("edit", {
      path: "mixed.txt",
      edits: [
        { oldText: "a1\na2", newText: "A1\nA1.5\nA2" },
        { oldText: "b2\nb3", newText: "B2\nB2.5\nB3" },
      ],
    });
    expect(out.isError).toBeFalsy();
    expect(read("mixed.txt")).toBe("A1\r\nA1.5\r\nA2\r\na3\r\nb1\nB2\nB2.5\nB3\n");
  });

  it("matches despite trailing whitespace and changes only that region", async () => {
    const original = "keep  \nfunction f() {   \n  return 1;\t\n}\nkeep  \n";
    const { call, read } = setup({ "ws.js": original });
    const out = await call("edit", {
      path: "ws.js",
      edits: [{ oldText: "function f() {\n  return 1;\n}", newText: "function f() {\n  return 2;\n}" }],
    });
    expect(out.isError).toBeFalsy();
    expect(textOf(out)).toContain("matched only after ignoring differences in trailing whitespace");
    expect(out.details.edits[0].tolerant).toBe(true);
    expect(read("ws.js")).toBe("keep  \nfunction f() {\n  return 2;\n}\nkeep  \n");
  });

  it("matches curly quotes, Unicode dashes and spaces by their ASCII look-alikes, leaving others untouched", async () => {
    const original = "title: \u201CIt\u2019s here\u201D \u2014 ok\u00A0now\nother: \u201Cleave me\u201D \u2013 x\n";
    const { call, read } = setup({ "doc.md": original });
    const out = await call("edit", {
      path: "doc.md",
      edits: [{ oldText: `title: "It's here" - ok now`, newText: "title: done" }],
    });
    expect(out.isError).toBeFalsy();
    expect(read("doc.md")).toBe("title: done\nother: \u201Cleave me\u201D \u2013 x\n");
  });

  it("matches fullwidth punctuation, NFKC compatibility forms and decomposed accents, changing only the matched region", async () => {
    const original =
      "call\uFF08a\uFF0Cb\uFF09;\n\uFF21\uFF22\uFF23 = 1;\n\uFB01le ok\ncafe\u0301 menu\nkeep\uFF08x\uFF09 \uFF21\n";
    const { call, read } = setup({ "wide.txt": original });
    const out = await call("edit", {
      path: "wide.txt",
      edits: [
        { oldText: "call(a,b);", newText: "call(a, b);" },
        { oldText: "ABC = 1;", newText: "abc = 2;" },
        { oldText: "file ok", newText: "done" },
        { oldText: "caf\u00E9 menu", newText: "menu" },
      ],
    });
    expect(out.isError).toBeFalsy();
    expect(out.details.edits.map((e: { tolerant: boolean }) => e.tolerant)).toEqual([true, true, true, true]);
    expect(read("wide.txt")).toBe("call(a, b);\nabc = 2;\ndone\nmenu\nkeep\uFF08x\uFF09 \uFF21\n");
  });

  it("does not match part of a decomposed character (cafe is not café)", async () => {
    const { call, read } = setup({ "menu.txt": "caf\u00E9\n" });
    const out = await call("edit", { path: "menu.txt", edits: [{ oldText: "cafe", newText: "tea" }] });
    expect(out.isError).toBe(true);
    expect(read("menu.txt")).toBe("caf\u00E9\n");
  });

  it("refuses a tolerant match that is not unique", async () => {
    const { call } = setup({ "q.txt": "say \u201Chi\u201D\nsay \u2018hi\u2019\nsay \u201Chi\u201D  \n" });
    const out = await call("edit", { path: "q.txt", edits: [{ oldText: 'say "hi"', newText: "x" }] });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toContain("ignoring whitespace and quote differences it matches 2 places (lines 1, 3)");
  });

  it("refuses binary, non-UTF-8, missing files and directories with what to do instead", async () => {
    const { call } = setup({
      "b.bin": Buffer.from([0x61, 0, 0x62]),
      "latin.txt": Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
      "dir/x": "x",
    });
    expect(textOf(await call("edit", { path: "b.bin", edits: [{ oldText: "a", newText: "b" }] }))).toContain(
      "binary file",
    );
    expect(textOf(await call("edit", { path: "latin.txt", edits: [{ oldText: "caf", newText: "x" }] }))).toContain(
      "not valid UTF-8",
    );
    expect(textOf(await call("edit", { path: "nope.txt", edits: [{ oldText: "a", newText: "b" }] }))).toMatch(
      /^File not found: nope\.txt .* To create a new file, use write\.$/,
    );
    expect(textOf(await call("edit", { path: "dir", edits: [{ oldText: "a", newText: "b" }] }))).toBe(
      "dir is a directory; edit changes files.",
    );
  });
});

describe("edit: argument repair and concurrency through the kernel", () => {
  it("accepts top-level oldText/newText (and snake_case names) as one edit", async () => {
    const { tool } = setup({});
    const prepare = tool("edit").prepareArguments!;
    expect(prepare({ path: "a", oldText: "x", newText: "y" })).toEqual({
      path: "a",
      edits: [{ oldText: "x", newText: "y" }],
    });
    expect(prepare({ file_path: "a", old_string: "x", new_string: "y" })).toEqual({
      path: "a",
      edits: [{ oldText: "x", newText: "y" }],
    });
    expect(prepare({ path: "a", edits: '[{"oldText":"x","newText":"y"}]' })).toEqual({
      path: "a",
      edits: [{ oldText: "x", newText: "y" }],
    });
    expect(prepare({ path: "a", edits: { oldText: "x", newText: "y" } })).toEqual({
      path: "a",
      edits: [{ oldText: "x", newText: "y" }],
    });

    const dir = tempDir({ "f.txt": "before\n" });
    const { agent } = agentIn(
      dir,
      [[toolsCoding, {}]],
      [
        { toolCalls: [{ name: "edit", arguments: { path: "f.txt", oldText: "before", newText: "after" } }] },
        { text: "ok" },
      ],
    );
    const run = await agent.prompt("fix it");
    const result = run.messages.find((m) => m.role === "toolResult")!;
    expect(result).toMatchObject({ isError: false });
    expect(readFileSync(join(dir, "f.txt"), "utf8")).toBe("after\n");
  });

  it("applies two parallel edits to the same file (one reply, two calls), and edits through a symlink", async () => {
    const dir = tempDir({ "shared.txt": "alpha\nbeta\ngamma\n" });
    symlinkSync(join(dir, "shared.txt"), join(dir, "link.txt"));
    const { agent } = agentIn(
      dir,
      [[toolsCoding, {}]],
      [
        {
          toolCalls: [
            { name: "edit", arguments: { path: "shared.txt", edits: [{ oldText: "alpha", newText: "ALPHA" }] } },
            { name: "edit", arguments: { path: "link.txt", edits: [{ oldText: "gamma", newText: "GAMMA" }] } },
            {
              name: "edit",
              arguments: { path: join(dir, "shared.txt"), edits: [{ oldText: "beta", newText: "BETA" }] },
            },
          ],
        },
        { text: "done" },
      ],
    );
    const run = await agent.prompt("shout");
    expect(run.messages.filter((m) => m.role === "toolResult").map((m) => (m as { isError: boolean }).isError)).toEqual(
      [false, false, false],
    );
    expect(readFileSync(join(dir, "shared.txt"), "utf8")).toBe("ALPHA\nBETA\nGAMMA\n");
  });

  it("serialises same-file calls and runs different files in parallel (seen through an operations backend)", async () => {
    const dir = tempDir({ "a.txt": "a1 a2\n", "b.txt": "b1\n" });
    const spans: { file: string; start: number; end: number }[] = [];
    const slowWrites = definePlugin({
      id: "slow-writes",
      setup(ctx) {
        ctx.services.provide("operations", {
          async writeFile(path: string, data: string | Uint8Array) {
            const start = Date.now();
            await new Promise((r) => setTimeout(r, 150));
            await writeFile(path, data);
            spans.push({ file: path.slice(dir.length + 1), start, end: Date.now() });
          },
        });
      },
    });
    const { call } = toolHost(dir, [[slowWrites], [toolsCoding, {}]]);
    const results = await Promise.all([
      call("edit", { path: "a.txt", edits: [{ oldText: "a1", newText: "A1" }] }),
      call("edit", { path: "a.txt", edits: [{ oldText: "a2", newText: "A2" }] }),
      call("write", { path: "b.txt", content: "B\n" }),
    ]);
    expect(results.map((r) => r.isError ?? false)).toEqual([false, false, false]);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("A1 A2\n");
    const [a1, a2] = spans.filter((s) => s.file === "a.txt");
    const b = spans.find((s) => s.file === "b.txt")!;
    expect(a2!.start).toBeGreaterThanOrEqual(a1!.end); // same file: one after the other
    expect(b.start).toBeLessThan(a1!.end); // another file: alongside
  });
});

describe("write", () => {
  it("creates parent directories and reports what it wrote", async () => {
    const { call, read } = setup({});
    const out = await call("write", { path: "deep/er/new.ts", content: "export const x = 1;\nexport const y = 2;\n" });
    expect(out.isError).toBeFalsy();
    expect(textOf(out)).toBe("Wrote 40 B (2 lines) to deep/er/new.ts; created.");
    expect(read("deep/er/new.ts")).toBe("export const x = 1;\nexport const y = 2;\n");
    expect(out.details).toMatchObject({ bytes: 40, lines: 2, created: true });
  });

  it("overwrites an existing file exactly as given", async () => {
    const { call, bytes } = setup({ "f.txt": "old content that is longer\r\n" });
    const out = await call("write", { path: "f.txt", content: "new\n" });
    expect(textOf(out)).toBe("Wrote 4 B (1 line) to f.txt; replaced its previous 28 B.");
    expect(bytes("f.txt")).toEqual(Buffer.from("new\n"));
  });

  it("refuses a directory path", async () => {
    const { call } = setup({ "d/x": "" });
    const out = await call("write", { path: "d", content: "x" });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toBe("d is a directory; write needs a file path.");
  });

  it("reports permission denied for write and edit", async () => {
    const dir = tempDir({ "ro/file.txt": "read only\n" });
    chmodSync(join(dir, "ro/file.txt"), 0o444);
    chmodSync(join(dir, "ro"), 0o555);
    chmodSync(dir, 0o755);
    const calls: [string, Record<string, unknown>][] = [
      ["write", { path: "ro/file.txt", content: "x" }],
      ["write", { path: "ro/new.txt", content: "x" }],
      ["edit", { path: "ro/file.txt", edits: [{ oldText: "read", newText: "write" }] }],
    ];
    const outputs =
      process.getuid?.() === 0
        ? await runAsNobody(dir, calls)
        : await Promise.all(calls.map(([t, a]) => toolHost(dir, [[toolsCoding, {}]]).call(t, a)));
    expect(outputs.map((o) => o.isError)).toEqual([true, true, true]);
    expect(textOf(outputs[0]!)).toContain("Permission denied: cannot write ro/file.txt.");
    expect(textOf(outputs[1]!)).toContain("Permission denied: cannot write ro/new.txt.");
    expect(textOf(outputs[2]!)).toContain("Permission denied: cannot write ro/file.txt.");
    expect(readFileSync(join(dir, "ro/file.txt"), "utf8")).toBe("read only\n");
    chmodSync(join(dir, "ro"), 0o755);
  });
});

describe("unified diff", () => {
  it("groups nearby changes into hunks with context, and counts lines", () => {
    const before = Array.from({ length: 30 }, (_, i) => `l${i + 1}`).join("\n");
    const after = before.replace("l5\n", "l5 changed\n").replace("l7\n", "").replace("l25", "l25\nnew");
    const { diff, firstChangedLine, added, removed } = unifiedDiff(before, after, "f");
    expect(diff).toBe(
      [
        "--- a/f",
        "+++ b/f",
        "@@ -2,9 +2,8 @@",
        " l2",
        " l3",
        " l4",
        "-l5",
        "+l5 changed",
        " l6",
        "-l7",
        " l8",
        " l9",
        " l10",
        "@@ -23,6 +22,7 @@",
        " l23",
        " l24",
        " l25",
        "+new",
        " l26",
        " l27",
        " l28",
        "",
      ].join("\n"),
    );
    expect({ firstChangedLine, added, removed }).toEqual({ firstChangedLine: 5, added: 2, removed: 2 });
  });

  it("writes diffs git apply accepts, at the end of a file with or without a last newline", async () => {
    const cases: [string, string][] = [
      ["one\ntwo\nthree\n", "one\ntwo\nthree\nfour\n"],
      ["one\ntwo", "one\ntwo2"],
      ["a\nb\nc\n", "a\nc\n"],
      ["x\n", "x\ny"],
      ["", "new\n"],
      ["a\nb\n", "a\nB\n"],
    ];
    for (const [before, after] of cases) {
      const dir = tempDir({ f: before });
      execFileSync("git", ["init", "-q"], { cwd: dir });
      writeFileSync(join(dir, "p.diff"), unifiedDiff(before, after, "f").diff);
      execFileSync("git", ["apply", "p.diff"], { cwd: dir });
      expect(readFileSync(join(dir, "f"), "utf8")).toBe(after);
    }
    // through the edit tool: appending after the last line
    const t = setup({ "g.txt": "first\nlast\n" });
    const out = await t.call("edit", { path: "g.txt", edits: [{ oldText: "last\n", newText: "last\nappended\n" }] });
    const diff = (out.details as { diff: string }).diff;
    expect(diff).toContain("@@ -1,2 +1,3 @@");
    writeFileSync(join(t.dir, "g.txt"), "first\nlast\n");
    writeFileSync(join(t.dir, "p.diff"), diff);
    execFileSync("git", ["init", "-q"], { cwd: t.dir });
    execFileSync("git", ["apply", "p.diff"], { cwd: t.dir });
    expect(t.read("g.txt")).toBe("first\nlast\nappended\n");
  });

  it("falls back to remove-then-add for a complete rewrite of a large middle", () => {
    const before = Array.from({ length: 3000 }, (_, i) => `a${i}`).join("\n");
    const after = Array.from({ length: 3000 }, (_, i) => `b${i}`).join("\n");
    const started = Date.now();
    const { added, removed } = unifiedDiff(before, after, "f");
    expect({ added, removed }).toEqual({ added: 3000, removed: 3000 });
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
