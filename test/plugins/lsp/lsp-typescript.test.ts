/**
 * lsp against the real typescript-language-server (+ typescript): an edit that introduces a type error
 * gets it in the same result, a fix clears it, what was already broken is not repeated, a crashed server
 * restarts, and the lsp tool answers diagnostics, definition, references and hover. One server (one
 * project) is shared by the tests of a describe block; tsserver takes a few seconds to load a project.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../../support/harness.js";
import { cleanTemps, tempDir } from "../../support/tools.js";
import {
  call,
  diagnosticsOf,
  groupMembers,
  type Started,
  startHost,
  statusOf,
  TS_SERVER,
  textOf,
} from "./lsp-support.js";

const TSCONFIG = JSON.stringify({ compilerOptions: { strict: true, noEmit: true, types: [], lib: ["es2022"] } });
const A = "export function add(a: number, b: number): number {\n  return a + b;\n}\n";
const B = 'import { add } from "./a";\n\nconst total: number = add(1, 2);\nexport { total };\n';

afterAll(cleanTemps);

describe("lsp: typescript-language-server", () => {
  let t: Started;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir({ "tsconfig.json": TSCONFIG, "src/a.ts": A, "src/b.ts": B }, "coil-lsp-ts-");
    // A generous wait: the first edit may come while tsserver still loads the project on a busy machine.
    // Generous bounds: they are waited out only when tsserver is slow to load the project (a busy machine).
    t = await startHost(dir, {
      servers: { typescript: { command: TS_SERVER } },
      wait: 30_000,
      toolTimeout: 60_000,
      afterBash: true,
    });
  }, 30_000);
  afterAll(async () => {
    await t?.stop();
  });

  it("offers the lsp tool in a TypeScript project, and starts no server before a file is read or edited", async () => {
    t.scripted.push({ text: "hi" });
    await t.agent.prompt("hello");
    expect(t.scripted.requests.at(-1)!.tools.map((x) => x.name)).toContain("lsp");
    expect(statusOf(t)).toEqual([]);
    // Reading a file starts the server; the tool waits for its first answer (the project loaded).
    await call(t, "read", { path: "src/b.ts" });
    expect(statusOf(t)).toEqual([expect.objectContaining({ name: "typescript" })]);
    const first = await call(t, "lsp", { action: "diagnostics", path: "src/b.ts" });
    expect(textOf(first)).toBe("No errors or warnings in src/b.ts.");
  }, 70_000);

  it("an edit that introduces a type error returns it in the same result; a fix clears it", async () => {
    const broken = await call(t, "edit", {
      path: "src/b.ts",
      edits: [{ oldText: "const total: number", newText: "const total: string" }],
    });
    expect(broken.isError).toBe(false);
    const text = textOf(broken);
    expect(text).toContain("Edited src/b.ts");
    expect(text).toMatch(/src\/b\.ts:3:7 error Type 'number' is not assignable to type 'string'\. \[TS2322\]/);
    const d = diagnosticsOf(broken)!;
    expect(d.items).toEqual([
      expect.objectContaining({
        file: "src/b.ts",
        line: 3,
        column: 7,
        severity: "error",
        rule: "TS2322",
        server: "typescript",
      }),
    ]);
    expect(d.note).toBeUndefined();
    // The edit's own details are kept (the TUI draws the diff from them).
    expect((broken.details as { diff?: string }).diff).toContain("+const total: string");

    const fixed = await call(t, "edit", {
      path: "src/b.ts",
      edits: [{ oldText: "const total: string", newText: "const total: number" }],
    });
    expect(textOf(fixed)).not.toContain("error");
    expect(diagnosticsOf(fixed)).toMatchObject({ items: [], resolved: 1 });
    expect(statusOf(t)).toEqual([
      expect.objectContaining({ name: "typescript", state: "running", root: dir, diagnostics: "tsserver" }),
    ]);
  }, 40_000);

  it("does not repeat errors that were there before the edit, and reports what an edit broke in another open file", async () => {
    writeFileSync(join(dir, "src/c.ts"), 'const broken: number = "x";\nexport const c = 1;\n');
    const unrelated = await call(t, "edit", {
      path: "src/c.ts",
      edits: [{ oldText: "export const c = 1;", newText: "export const c = 2;" }],
    });
    // The error on line 1 was there before: nothing new to say.
    expect(diagnosticsOf(unrelated)).toMatchObject({ items: [] });
    expect(textOf(unrelated)).not.toContain("TS2322");

    // b.ts is open (read earlier); changing add's signature breaks its call there.
    const signature = await call(t, "edit", {
      path: "src/a.ts",
      edits: [{ oldText: "b: number): number", newText: "b: number, c: number): number" }],
    });
    const items = diagnosticsOf(signature)!.items;
    expect(items).toEqual([expect.objectContaining({ file: "src/b.ts", line: 3, severity: "error", rule: "TS2554" })]);
    expect(textOf(signature)).toContain("src/b.ts:3:");
    await call(t, "edit", {
      path: "src/a.ts",
      edits: [{ oldText: "b: number, c: number): number", newText: "b: number): number" }],
    });
  }, 40_000);

  it("with afterBash, a command that changes an open file gets its new errors; one that changes none gets nothing", async () => {
    const broke = await call(t, "bash", { command: "sed -i 's/add(1, 2)/add(1)/' src/b.ts" });
    expect(diagnosticsOf(broke)!.items).toEqual([
      expect.objectContaining({ file: "src/b.ts", line: 3, severity: "error", rule: "TS2554" }),
    ]);
    expect(textOf(broke)).toContain("src/b.ts:3:");
    const quiet = await call(t, "bash", { command: "echo hello > notes.txt" });
    expect(quiet.details).not.toHaveProperty("diagnostics");
    const fixed = await call(t, "bash", { command: "sed -i 's/add(1)/add(1, 2)/' src/b.ts" });
    expect(diagnosticsOf(fixed)).toMatchObject({ items: [], resolved: 1 });
  }, 40_000);

  it("a new file written with an error reports it", async () => {
    const r = await call(t, "write", { path: "src/d.ts", content: "export const d: boolean = 1;\n" });
    expect(diagnosticsOf(r)!.items).toEqual([
      expect.objectContaining({ file: "src/d.ts", line: 1, column: 14, rule: "TS2322" }),
    ]);
    expect(textOf(r)).toContain("Wrote");
  }, 30_000);

  it("the lsp tool: diagnostics of a file, definition, references and hover", async () => {
    const diag = await call(t, "lsp", { action: "diagnostics", path: "src/c.ts" });
    expect(diag.isError).toBe(false);
    expect(textOf(diag)).toContain("src/c.ts:1:7 error Type 'string' is not assignable to type 'number'. [TS2322]");
    const def = await call(t, "lsp", { action: "definition", path: "src/b.ts", line: 3, symbol: "add" });
    expect(textOf(def)).toContain("src/a.ts:1:17: export function add(a: number, b: number): number {");
    const refs = await call(t, "lsp", { action: "references", path: "src/a.ts", line: 1, symbol: "add" });
    expect(textOf(refs)).toMatch(/References of the symbol at src\/a\.ts:1:17 \(3\)/);
    expect(textOf(refs)).toContain("src/b.ts:3:23: const total: number = add(1, 2);");
    const hover = await call(t, "lsp", { action: "hover", path: "src/b.ts", line: 3, symbol: "add" });
    expect(textOf(hover)).toContain("add(a: number, b: number): number");
    const none = await call(t, "lsp", { action: "hover", path: "README.md", line: 1 });
    expect(none.isError).toBe(true);
    expect(textOf(none)).toContain("No language server is configured for README.md");
    const workspace = await call(t, "lsp", { action: "diagnostics" });
    expect(textOf(workspace)).toContain("src/c.ts:1:7 error");
    expect(textOf(workspace)).toMatch(/in the \d+ files the language servers have open/);
  }, 40_000);

  it("a crashed server restarts, and the next edit is checked again", async () => {
    const [before] = statusOf(t);
    expect(before?.pid).toBeGreaterThan(0);
    process.kill(-before!.pid!, "SIGKILL");
    await until(() => statusOf(t)[0]?.state === "running" && statusOf(t)[0]?.pid !== before!.pid, 15_000);
    expect(statusOf(t)[0]).toMatchObject({ restarts: 1 });
    expect(
      t.warnings().some((w) => /language server 'typescript': the server was killed by SIGKILL; restarting/.test(w)),
    ).toBe(true);
    const broken = await call(t, "edit", {
      path: "src/b.ts",
      edits: [{ oldText: "add(1, 2)", newText: 'add(1, "2")' }],
    });
    expect(diagnosticsOf(broken)!.items).toEqual([expect.objectContaining({ file: "src/b.ts", rule: "TS2345" })]);
    // The old process group is gone.
    expect(groupMembers(before!.pid!)).toEqual([]);
  }, 40_000);

  it("stopping coil ends the server's whole process group", async () => {
    const [s] = statusOf(t);
    expect(groupMembers(s!.pid!).length).toBeGreaterThan(1); // typescript-language-server and its tsserver
    await t.stop();
    await until(() => groupMembers(s!.pid!).length === 0, 5000);
  }, 20_000);
});
