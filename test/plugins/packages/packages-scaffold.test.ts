/** `coil plugin new <name>`: the scaffolded plugin's own test passes when run, and the plugin loads in coil. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanTemps, coil, requireBuild, ROOT, run, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";

beforeAll(requireBuild);
afterAll(cleanTemps);

describe("coil plugin new", () => {
  it("scaffolds a TypeScript plugin whose printed next steps (npm install, npm test) pass offline, and which coil loads", async () => {
    const base = tempDir("coil-scaffold-");
    const env = sandboxEnv(base);
    const made = await coil(base, ["--plugin", "packages", "plugin", "new", "coil-plugin-reverser"], env);
    expect(made.code, made.stderr).toBe(0);
    const dir = join(base, "coil-plugin-reverser");
    for (const f of ["package.json", "index.ts", "test/index.test.mjs", "tsconfig.json", "README.md"]) expect(existsSync(join(dir, f)), f).toBe(true);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    expect(pkg).toMatchObject({ keywords: ["coil-package"], coil: { plugins: ["./index.ts"] }, devDependencies: { coil: `file:${ROOT}` } });

    // Run the steps it printed, as printed, with npm offline and an empty cache (sandboxEnv).
    const next = /^next: (.*)$/m.exec(made.stdout)?.[1];
    expect(next).toBe(`cd ${dir} && npm install && npm test`);
    const steps = await run("sh", ["-c", next!], { cwd: base, env: { ...env, NO_COLOR: "1", FORCE_COLOR: "0" } });
    expect(steps.code, steps.stdout + steps.stderr).toBe(0);
    expect(steps.stdout).toContain("the model calls reverser and gets the text reversed");
    expect(steps.stdout).toMatch(/# pass 2\b/);
    expect(steps.stdout).toMatch(/# fail 0\b/);

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
  }, 180_000);
});
