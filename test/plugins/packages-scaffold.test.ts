/** `coil plugin new <name>`: the scaffolded plugin's own test passes when run, and the plugin loads in coil. */
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanTemps, coil, requireBuild, ROOT, run, sandboxEnv, tempDir, writeFiles } from "../support/ecosystem.js";

beforeAll(requireBuild);
afterAll(cleanTemps);

describe("coil plugin new", () => {
  it("scaffolds a TypeScript plugin whose vitest test passes against coil/testing, and which coil loads", async () => {
    const base = tempDir("coil-scaffold-");
    const env = sandboxEnv(base);
    const made = await coil(base, ["--plugin", "packages", "plugin", "new", "coil-plugin-reverser"], env);
    expect(made.code, made.stderr).toBe(0);
    const dir = join(base, "coil-plugin-reverser");
    for (const f of ["package.json", "index.ts", "test/index.test.ts", "tsconfig.json", "README.md"]) expect(existsSync(join(dir, f)), f).toBe(true);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    expect(pkg).toMatchObject({ keywords: ["coil-package"], coil: { plugins: ["./index.ts"] }, scripts: { test: "vitest run" } });

    // `npm install` would fetch coil and vitest; link this checkout and its vitest instead (offline).
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(ROOT, join(dir, "node_modules", "coil"));
    symlinkSync(join(ROOT, "node_modules", "vitest"), join(dir, "node_modules", "vitest"));
    const tested = await run(process.execPath, [join(ROOT, "node_modules", "vitest", "vitest.mjs"), "run", "--reporter", "verbose"], { cwd: dir, env: { ...env, NO_COLOR: "1", FORCE_COLOR: "0" } });
    expect(tested.code, tested.stdout + tested.stderr).toBe(0);
    expect(tested.stdout).toContain("the model calls reverser and gets the text reversed");
    expect(tested.stdout).toMatch(/Tests\s+2 passed/);

    // The same plugin in a real coil run.
    writeFiles(base, { "r.yaml": "- toolCalls: [{ name: reverser, arguments: { text: abc } }]\n- text: ok\n" });
    const ran = await coil(base, ["--plugin", "./coil-plugin-reverser/index.ts", "--provider", "scripted", "--script", "r.yaml", "--mode", "json", "-p", "go"], env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('"text":"cba"');

    const again = await coil(base, ["--plugin", "packages", "plugin", "new", "coil-plugin-reverser"], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("already has a package.json");
    const badName = await coil(base, ["--plugin", "packages", "plugin", "new", "Bad Name"], env);
    expect(badName.code).toBe(2);
  }, 60_000);
});
