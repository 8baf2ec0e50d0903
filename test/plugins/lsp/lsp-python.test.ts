/**
 * lsp against the real pyright (versioned pushed diagnostics), configured in opencode's `lsp` shape in place of the
 * built-in python server: an edit that introduces a type error gets it in the same result, a fix clears
 * it, and the rule is pyright's. One pyright for the file: it is slow to start (typeshed).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanTemps, tempDir } from "../../support/tools.js";
import { call, diagnosticsOf, PYRIGHT, type Started, startHost, statusOf, textOf } from "./lsp-support.js";

afterAll(cleanTemps);

describe("lsp: pyright", () => {
  let t: Started;
  beforeAll(async () => {
    const dir = tempDir(
      {
        "pyproject.toml": "[project]\nname = 'demo'\nversion = '0.1.0'\n",
        "pkg/m.py": "def add(a: int, b: int) -> int:\n    return a + b\n",
        "pkg/u.py": "from m import add\n\ntotal: int = add(1, 2)\n",
      },
      "coil-lsp-py-",
    );
    t = await startHost(dir, {
      servers: { python: false, pyright: { command: [PYRIGHT, "--stdio"], extensions: [".py"] } },
      wait: 30_000,
      toolTimeout: 60_000,
    });
  }, 30_000);
  afterAll(async () => {
    await t?.stop();
  });

  it("an edit that introduces a type error returns it in the same result; a fix clears it", async () => {
    await call(t, "read", { path: "pkg/u.py" });
    const warm = await call(t, "lsp", { action: "diagnostics", path: "pkg/u.py" });
    expect(textOf(warm)).toBe("No errors or warnings in pkg/u.py.");
    const broken = await call(t, "edit", {
      path: "pkg/u.py",
      edits: [{ oldText: "total: int", newText: "total: str" }],
    });
    expect(textOf(broken)).toMatch(
      /pkg\/u\.py:3:14 error Type "int" is not assignable to declared type "str" .*\[reportAssignmentType\]/,
    );
    expect(diagnosticsOf(broken)!.items).toEqual([
      expect.objectContaining({ file: "pkg/u.py", line: 3, severity: "error", server: "pyright" }),
    ]);
    const fixed = await call(t, "edit", {
      path: "pkg/u.py",
      edits: [{ oldText: "total: str", newText: "total: int" }],
    });
    expect(diagnosticsOf(fixed)).toMatchObject({ items: [], resolved: 1 });
    expect(textOf(fixed)).not.toContain("error");
    expect(statusOf(t)).toEqual([expect.objectContaining({ name: "pyright", state: "running", diagnostics: "push" })]);
  }, 70_000);

  it("hover and definition across files", async () => {
    const hover = await call(t, "lsp", { action: "hover", path: "pkg/u.py", line: 3, symbol: "add" });
    expect(textOf(hover)).toMatch(/def add\(\s*a: int,\s*b: int\s*\) -> int/);
    const def = await call(t, "lsp", { action: "definition", path: "pkg/u.py", line: 3, symbol: "add" });
    expect(textOf(def)).toContain("pkg/m.py:1:5: def add(a: int, b: int) -> int:");
  }, 30_000);
});
