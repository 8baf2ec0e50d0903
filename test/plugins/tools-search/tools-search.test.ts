/** tools-search: grep (built-in and ripgrep), find and ls on real directory trees. */
import { spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { definePlugin } from "../../../api/index.js";
import toolsSearch, * as search from "../../../plugins/tools-search/index.js";
import { localSearchOperations } from "../../../plugins/tools-search/search-backend.js";
import { cleanTemps, tempDir, textOf, toolHost } from "../../support/tools.js";

afterAll(cleanTemps);

const hasRg = spawnSync("rg", ["--version"]).status === 0;
const LONG = "x".repeat(2000) + " TODO " + "y".repeat(1000);

function project() {
  const dir = tempDir({
    ".gitignore": "dist/\n*.log\n!keep.log\n/root-only.txt\n",
    "src/app.ts": "export const answer = 42;\nfunction helper() {\n  return answer;\n}\n",
    "src/util/strings.ts": "export const greeting = 'hello';\n// TODO: more\n",
    "src/.hidden.ts": "const secret = 'TODO hidden';\n",
    "dist/app.js": "const answer = 42; // TODO\n",
    "debug.log": "TODO in log\n",
    "keep.log": "TODO kept\n",
    "root-only.txt": "TODO root\n",
    "sub/root-only.txt": "TODO sub\n",
    "sub/.gitignore": "*.tmp\n",
    "sub/x.tmp": "TODO tmp\n",
    "sub/y.txt": "TODO y\r\n",
    "bin.dat": Buffer.from("TODO\0binary\0"),
    ".git/HEAD": "ref: TODO\n",
    "min.js": LONG + "\n",
  });
  return dir;
}

const TODO_MATCHES = [
  "keep.log:1: TODO kept",
  `min.js:1: …${LONG.slice(LONG.indexOf("TODO") - 100, LONG.indexOf("TODO") + 400)}… [line has ${LONG.length} characters]`,
  "src/.hidden.ts:1: const secret = 'TODO hidden';",
  "src/util/strings.ts:2: // TODO: more",
  "sub/root-only.txt:1: TODO sub",
  "sub/y.txt:1: TODO y",
];

function tools(dir: string, options: Record<string, unknown> = {}) {
  return toolHost(dir, [[toolsSearch, options]]);
}

// Every behaviour is checked with the built-in search, and with ripgrep too where `rg` is installed.
const engines: ["builtin" | "ripgrep", { ripgrep: boolean }][] = [
  ["builtin", { ripgrep: false }],
  ...(hasRg ? [["ripgrep", { ripgrep: true }] as ["ripgrep", { ripgrep: boolean }]] : []),
];

describe.each(engines)("grep (%s)", (engine, builtin) => {
  it("finds matches in path order, honouring .gitignore (nested, anchored, negated) and skipping binary files and .git", async () => {
    const { call } = tools(project(), builtin);
    const out = await call("grep", { pattern: "TODO" });
    expect(out.isError).toBeFalsy();
    expect(textOf(out)).toBe(
      TODO_MATCHES.join("\n") + "\n\n[1 line was longer than 500 characters and cut; use read to see them whole.]",
    );
    expect(out.details).toMatchObject({ engine, matches: 6, limitReached: false, clippedLines: 1 });
  });

  it("limits the number of matches and says how to get more", async () => {
    const { call } = tools(project(), builtin);
    const out = await call("grep", { pattern: "TODO", limit: 2 });
    expect(textOf(out)).toBe(
      `${TODO_MATCHES.slice(0, 2).join("\n")}\n\n[2 matches limit reached; there may be more. Use limit=4 for more, or narrow the pattern, path or glob.]\n[1 line was longer than 500 characters and cut; use read to see them whole.]`,
    );
  });

  it("filters by glob, by name at any depth or by path", async () => {
    const { call } = tools(project(), builtin);
    expect(textOf(await call("grep", { pattern: "TODO", glob: "*.ts" }))).toBe(TODO_MATCHES.slice(2, 4).join("\n"));
    expect(textOf(await call("grep", { pattern: "TODO", glob: "src/util/**" }))).toBe(TODO_MATCHES[3]);
  });

  it("supports ignoreCase, literal patterns and context lines", async () => {
    const dir = tempDir({
      "a.txt": "one\nTwo\nthree\nfour\nfive\nsix\nseven\neight\nnine two\n",
      "b.txt": "a.b\naxb\n",
    });
    const { call } = tools(dir, builtin);
    expect(textOf(await call("grep", { pattern: "two" }))).toBe("a.txt:9: nine two");
    expect(textOf(await call("grep", { pattern: "two", ignoreCase: true }))).toBe("a.txt:2: Two\na.txt:9: nine two");
    expect(textOf(await call("grep", { pattern: "a.b", path: "b.txt" }))).toBe("b.txt:1: a.b\nb.txt:2: axb");
    expect(textOf(await call("grep", { pattern: "a.b", path: "b.txt", literal: true }))).toBe("b.txt:1: a.b");
    expect(textOf(await call("grep", { pattern: "^(Two|three|eight)$", path: "a.txt", context: 1 }))).toBe(
      [
        "a.txt-1- one",
        "a.txt:2: Two",
        "a.txt:3: three",
        "a.txt-4- four",
        "--",
        "a.txt-7- seven",
        "a.txt:8: eight",
        "a.txt-9- nine two",
      ].join("\n"),
    );
  });

  it("reports no matches plainly, and bad patterns and paths as errors", async () => {
    const { call } = tools(project(), builtin);
    const none = await call("grep", { pattern: "nothing-matches-this" });
    expect(none.isError).toBeFalsy();
    expect(textOf(none)).toBe('No matches for "nothing-matches-this" in ..');
    const bad = await call("grep", { pattern: "(unclosed" });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(
      engine === "builtin"
        ? /^Invalid regular expression "\(unclosed": .*pass literal: true/
        : /^grep failed: regex parse error[\s\S]*pass literal: true/,
    );
    expect(textOf(await call("grep", { pattern: "x", path: "missing" }))).toBe(
      "Path not found: missing. Check it with ls or find.",
    );
  });

  it("applies ignore files above the search directory inside a git work tree", async () => {
    const dir = tempDir({
      ".git/HEAD": "ref\n",
      ".gitignore": "*.log\n",
      "pkg/a.log": "needle\n",
      "pkg/b.txt": "needle\n",
    });
    const { call } = tools(dir, builtin);
    expect(textOf(await call("grep", { pattern: "needle", path: "pkg" }))).toBe("pkg/b.txt:1: needle");
  });

  it(`keeps the result within ${search.formatSize(search.MAX_BYTES)}`, async () => {
    const line = (i: number) => `match ${i} ${"z".repeat(400)}`;
    const dir = tempDir({ "wide.txt": Array.from({ length: 1000 }, (_, i) => line(i + 1)).join("\n") });
    const out = await tools(dir, builtin).call("grep", { pattern: "match", limit: 1000 });
    const text = textOf(out);
    const body = text.slice(0, text.indexOf("\n\n["));
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(search.MAX_BYTES);
    const kept = body.split("\n").length;
    expect(text).toContain(
      `[Output cut at ${kept} of 1000 lines (${search.MAX_LINES} lines / 50 KB limit). Narrow the search with path or glob.]`,
    );
  });

  it("states its limits in the description", () => {
    const { host } = tools(project());
    const grep = host.tools.get("grep")!;
    expect(grep.description).toContain(`${search.MAX_LINE_CHARS} characters`);
    expect(grep.description).toContain(`${search.DEFAULT_GREP_LIMIT} matches`);
    expect(grep.promptSnippet).toMatch(/^grep: /);
  });
});

// The same table of cases through both engines: each must give the expected text, so they agree.
describe.skipIf(!hasRg)("grep: ripgrep and the built-in search agree", () => {
  const files = {
    ".gitignore": "*.log\n!keep.log\ndist/\n",
    "x.log": "needle\n",
    "keep.log": "needle\n",
    "a.txt": "needle\n",
    "dist/a.log": "needle\n",
    "dist/b.ts": "needle\n",
    "src/.h.ts": "needle\n",
    "src/a/c.ts": "needle\n",
    "src/a/d.tsx": "needle\n",
    "sub/.gitignore": "*.ts\n",
    "sub/e.ts": "needle\n",
    "sub/f.txt": "needle\n",
  };
  const cases: [args: Record<string, unknown>, expected: string[]][] = [
    [{ glob: "*.log" }, ["keep.log"]],
    [{ glob: "*.ts" }, ["src/.h.ts", "src/a/c.ts"]],
    [{ glob: "*.{ts,tsx}" }, ["src/.h.ts", "src/a/c.ts", "src/a/d.tsx"]],
    [{ glob: "dist/**" }, []],
    [{ glob: "src/**/*.ts" }, ["src/.h.ts", "src/a/c.ts"]],
    [{ glob: "sub/*" }, ["sub/f.txt"]],
    [{ glob: "*.ts", path: "sub" }, []],
    [{ glob: "*.txt", path: "sub" }, ["sub/f.txt"]],
    [{ glob: "*.ts", path: "x.log" }, ["x.log"]],
    [{}, ["a.txt", "keep.log", "src/.h.ts", "src/a/c.ts", "src/a/d.tsx", "sub/f.txt"]],
  ];
  it.each(cases)("grep %j", async (args, expected) => {
    const dir = tempDir(files);
    const texts: Record<string, string> = {};
    for (const ripgrep of [false, true]) {
      const out = await tools(dir, { ripgrep }).call("grep", { pattern: "needle", ...args });
      expect(out.isError).toBeFalsy();
      texts[ripgrep ? "ripgrep" : "builtin"] = textOf(out);
    }
    const want = expected.length
      ? expected.map((f) => `${f}:1: needle`).join("\n")
      : expect.stringMatching(/^No matches for "needle"/);
    expect(texts).toEqual({ builtin: want, ripgrep: want });
  });
});

// A minified bundle or a JSON dump on one line: the result stays small and the search does not hold the line.
describe("grep on very long lines", () => {
  const MB = 1024 * 1024;
  const big = (size: number, at: number, word = "NEEDLE") => {
    const line = Buffer.alloc(size, "abcdefghij");
    line.write(word, at, "latin1");
    return Buffer.concat([line, Buffer.from("\nshort NEEDLE line\n")]);
  };
  const engines2 = [false, ...(hasRg ? [true] : [])];

  it.each(engines2)(
    "a match deep in a 50 MB line gives a bounded result with a way to see it (ripgrep: %s)",
    async (ripgrep) => {
      const dir = tempDir({ "big.json": big(50 * MB, 25 * MB) });
      const out = await tools(dir, { ripgrep }).call("grep", { pattern: "NEEDLE" });
      expect(out.isError).toBeFalsy();
      const text = textOf(out);
      expect(text.length).toBeLessThan(2000);
      const [first, second] = text.split("\n");
      expect(first).toBe(
        `big.json:1: ${"abcdefghij".repeat(20)}… [line longer than ${search.formatSize(search.LONG_LINE_BYTES)}; the match at byte ${25 * MB + 1} is past the part kept. See it with bash: sed -n '1p' big.json | cut -b ${25 * MB + 1 - 200}-${25 * MB + 1 + 300}]`,
      );
      expect(second).toBe("big.json:2: short NEEDLE line");
      expect(out.details).toMatchObject({ matches: 2 });
    },
    60_000,
  );

  it.each(engines2)(
    "a match near the start of a long line is shown around the match (ripgrep: %s)",
    async (ripgrep) => {
      const dir = tempDir({ "min.js": big(3 * MB, 2000) });
      const text = textOf(await tools(dir, { ripgrep }).call("grep", { pattern: "NEEDLE", context: 1 }));
      const line = big(3 * MB, 2000).toString("latin1");
      expect(text.split("\n")).toEqual([
        `min.js:1: …${line.slice(1900, 2400)}… [line longer than ${search.formatSize(search.LONG_LINE_BYTES)}]`,
        "min.js:2: short NEEDLE line",
        "",
        "[1 line was longer than 500 characters and cut; use read to see them whole.]",
      ]);
    },
    60_000,
  );

  it("the built-in search finds a match that straddles the boundary of the part it holds at once", async () => {
    const at = search.SEARCH_WINDOW_BYTES - 3;
    const dir = tempDir({ "edge.txt": big(3 * MB, at, "SPLITWORD") });
    const out = await tools(dir, { ripgrep: false }).call("grep", { pattern: "SPLITWORD" });
    expect(textOf(out)).toContain(`the match at byte ${at + 1} is past the part kept`);
    // `^` must not match where a later part of a line begins
    const dir2 = tempDir({ "x.txt": "X" + "a".repeat(3 * MB) + "\n" });
    const anchored = await tools(dir2, { ripgrep: false }).call("grep", { pattern: "^a" });
    expect(textOf(anchored)).toBe('No matches for "^a" in ..');
  }, 60_000);
});

describe("grep engine choice", () => {
  it("uses the built-in search when the ripgrep option is off", async () => {
    expect((await tools(project(), { ripgrep: false }).call("grep", { pattern: "TODO" })).details.engine).toBe(
      "builtin",
    );
  });

  it.skipIf(!hasRg)("uses ripgrep when rg is on PATH (skipped where rg is not installed)", async () => {
    const { call } = tools(project());
    const out = await call("grep", { pattern: "TODO" });
    expect(out.details.engine).toBe("ripgrep");
    expect(textOf(out)).toBe(
      TODO_MATCHES.join("\n") + "\n\n[1 line was longer than 500 characters and cut; use read to see them whole.]",
    );
    expect(textOf(await call("grep", { pattern: "TODO", limit: 2 }))).toContain("[2 matches limit reached");
  });
});

describe("find", () => {
  it("matches names at any depth, honouring .gitignore, in path order", async () => {
    const { call } = tools(project());
    expect(textOf(await call("find", { pattern: "*.ts" }))).toBe("src/.hidden.ts\nsrc/app.ts\nsrc/util/strings.ts");
    expect(textOf(await call("find", { pattern: "*.{js,log}" }))).toBe("keep.log\nmin.js");
    expect(textOf(await call("find", { pattern: "**/*.txt" }))).toBe("sub/root-only.txt\nsub/y.txt");
  });

  it("matches paths with a slash, directories with a trailing slash, and searches below a path", async () => {
    const { call } = tools(project());
    expect(textOf(await call("find", { pattern: "src/**" }))).toBe(
      "src/.hidden.ts\nsrc/app.ts\nsrc/util/\nsrc/util/strings.ts",
    );
    expect(textOf(await call("find", { pattern: "util/" }))).toBe("src/util/");
    expect(textOf(await call("find", { pattern: "*", path: "sub" }))).toBe(
      "sub/.gitignore\nsub/root-only.txt\nsub/y.txt",
    );
  });

  it("limits results and reports bad paths", async () => {
    const { call } = tools(project());
    expect(textOf(await call("find", { pattern: "*", limit: 2 }))).toBe(
      ".gitignore\nbin.dat\n\n[2 results limit reached. Use limit=4 for more, or a narrower pattern or path.]",
    );
    expect(textOf(await call("find", { pattern: "*.nothing" }))).toBe('No files matching "*.nothing" in ..');
    expect((await call("find", { pattern: "*", path: "min.js" })).isError).toBe(true);
    expect(textOf(await call("find", { pattern: "*", path: "nope" }))).toBe(
      "Directory not found: nope. Check the path with ls.",
    );
  });
});

describe("ls", () => {
  it("lists sorted entries with / after directories and directory symlinks, dotfiles included", async () => {
    const dir = tempDir({ "B.txt": "", "a.txt": "", ".env": "", "lib/x.ts": "", "Docs/readme.md": "" });
    symlinkSync(join(dir, "lib"), join(dir, "lib-link"));
    symlinkSync(join(dir, "a.txt"), join(dir, "a-link"));
    const out = await tools(dir).call("ls", {});
    expect(textOf(out)).toBe([".env", "a-link", "a.txt", "B.txt", "Docs/", "lib/", "lib-link/"].join("\n"));
    expect(textOf(await tools(dir).call("ls", { path: "lib" }))).toBe("x.ts");
  });

  it("limits entries, and reports files, missing and empty directories", async () => {
    const dir = tempDir({ a: "", b: "", c: "", "f.txt": "" });
    mkdirSync(join(dir, "empty"));
    const { call } = tools(dir);
    expect(textOf(await call("ls", { limit: 2 }))).toBe(
      "a\nb\n\n[Showing 2 of 5 entries. Use limit=5 to see all, or find to filter.]",
    );
    expect(textOf(await call("ls", { path: "f.txt" }))).toBe("f.txt is a file, not a directory; use read to see it.");
    expect(textOf(await call("ls", { path: "nope" }))).toBe(
      "Directory not found: nope. List its parent, or use find to locate it.",
    );
    expect(textOf(await call("ls", { path: "empty" }))).toBe("(empty is empty)");
  });
});

describe("tools-search plugin", () => {
  it("registers only the tools asked for", () => {
    const { host } = tools(tempDir(), { tools: ["ls"] });
    expect(host.tools.names()).toEqual(["ls"]);
  });

  it("uses an operations service provided by a plugin installed after it", async () => {
    const dir = tempDir({ "real.txt": "" });
    const listed: string[] = [];
    const backend = definePlugin({
      id: "recording-backend",
      setup(ctx) {
        ctx.services.provide("operations", {
          readdir: async (path: string) => {
            listed.push(path);
            return [...(await localSearchOperations.readdir(path)), { name: "virtual.txt", kind: "file" as const }];
          },
        });
      },
    });
    const { call } = toolHost(dir, [[toolsSearch, {}], [backend]]);
    expect(textOf(await call("ls", {}))).toBe("real.txt\nvirtual.txt");
    expect(listed).toEqual([dir]);
  });
});
