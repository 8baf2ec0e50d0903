/** `coil plugin new <name>`: the scaffolded plugin's own test passes when run, and the plugin loads in coil. */
import { cpSync, existsSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
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
    for (const f of ["package.json", "index.ts", "test/index.test.mjs", "tsconfig.json", "README.md"])
      expect(existsSync(join(dir, f)), f).toBe(true);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    // Not installed from npm (a checkout): coil is linked by path, under the name plugins import it by.
    expect(pkg).toMatchObject({
      keywords: ["coil-package"],
      coil: { plugins: ["./index.ts"] },
      // `coil plugin check` type-checks with coil's own TypeScript and Node types: coil is the one dev dependency.
      scripts: { test: "node --test", typecheck: "coil plugin check" },
      devDependencies: { coil: `file:${ROOT}` },
      peerDependencies: { "coil-agent": ">=0.1.0" },
    });
    expect(JSON.stringify(pkg)).not.toMatch(/"coil": "(\^|>=)/);

    // A tool that uses Node's own modules type-checks (the scaffold's tsconfig finds coil's Node types).
    const index = readFileSync(join(dir, "index.ts"), "utf8");
    writeFiles(dir, {
      "index.ts": `${index}\nimport { readFile } from "node:fs/promises";\nexport const readText = (path: string): Promise<string> => readFile(path, "utf8");\n`,
    });
    // Run the steps it printed, as printed, then the type-check, with npm offline and an empty cache
    // (sandboxEnv); none of it may touch this checkout (a `prepare` once rebuilt dist/ here mid-suite).
    const bin = join(ROOT, "dist", "bin", "coil.js");
    const before = [statSync(bin).mtimeMs, statSync(join(ROOT, "node_modules")).mtimeMs];
    const next = /^next: (.*)$/m.exec(made.stdout)?.[1];
    expect(next).toBe(`cd ${dir} && npm install && npm test`);
    const steps = await run("sh", ["-c", `${next!} && npm run typecheck`], {
      cwd: base,
      env: { ...env, NO_COLOR: "1", FORCE_COLOR: "0" },
    });
    expect(steps.code, steps.stdout + steps.stderr).toBe(0);
    expect(steps.stdout).toContain("the model calls reverser and gets the text reversed");
    expect(steps.stdout).toMatch(/# pass 2\b/);
    expect(steps.stdout).toMatch(/# fail 0\b/);
    expect(steps.stdout).toContain("> coil plugin check");
    expect(steps.stdout).toMatch(/coil plugin check: no type errors in 1 file \(tsconfig\.json, TypeScript \d/);
    expect([statSync(bin).mtimeMs, statSync(join(ROOT, "node_modules")).mtimeMs]).toEqual(before);
    // ... and the type-check is real: a type error fails it, naming the file and line.
    writeFiles(dir, { "bad.ts": 'export const n: number = "text";\n' });
    const bad = await run("sh", ["-c", "npm run typecheck"], { cwd: dir, env });
    expect(bad.code).not.toBe(0);
    expect(bad.stdout + bad.stderr).toMatch(/bad\.ts\(1,14\): error TS2322/);
    rmSync(join(dir, "bad.ts"));

    // The same plugin in a real coil run.
    writeFiles(base, { "r.yaml": "- toolCalls: [{ name: reverser, arguments: { text: abc } }]\n- text: ok\n" });
    const ran = await coil(
      base,
      [
        "--plugin",
        "./coil-plugin-reverser/index.ts",
        "--provider",
        "scripted",
        "--script",
        "r.yaml",
        "--mode",
        "json",
        "-p",
        "go",
      ],
      env,
    );
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('"text":"cba"');

    expect(readFileSync(join(dir, "node_modules", "coil", "package.json"), "utf8")).toContain('"name": "coil-agent"');
    const again = await coil(base, ["--plugin", "packages", "plugin", "new", "coil-plugin-reverser"], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("already has a package.json");
    const badName = await coil(base, ["--plugin", "packages", "plugin", "new", "Bad Name"], env);
    expect(badName.code).toBe(2);
  }, 180_000);

  it("a coil installed from npm (node_modules/coil-agent) depends on `npm:coil-agent@^<version>` when the registry has that version, else links its folder", async () => {
    const base = tempDir("coil-scaffold-npm-");
    // A copy of coil laid out as `npm i -g coil-agent` leaves it, using this checkout's dependencies.
    const installed = join(base, "prefix", "lib", "node_modules", "coil-agent");
    for (const part of ["package.json", "dist", "presets", "skills", "prompt-templates"])
      cpSync(join(ROOT, part), join(installed, part), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(installed, "node_modules"));
    const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
    // A stand-in npm (COIL_NPM): `npm view coil-agent@<version> version` answers, or fails as it does offline.
    writeFiles(base, {
      "npm-has.js": `if (process.argv[2] === "view" && process.argv[3] === "coil-agent@${version}") console.log("${version}"); else process.exit(1);\n`,
      "npm-offline.js": `console.error("npm error code ENOTCACHED"); process.exit(1);\n`,
    });
    const scaffold = async (npm: string, name: string) => {
      const made = await run(process.execPath, [join(installed, "dist", "bin", "coil.js"), "plugin", "new", name], {
        cwd: base,
        env: sandboxEnv(base, { COIL_NPM: join(base, npm) }),
      });
      expect(made.code, made.stderr).toBe(0);
      return JSON.parse(readFileSync(join(base, name, "package.json"), "utf8"));
    };
    expect((await scaffold("npm-has.js", "coil-plugin-a")).devDependencies).toEqual({
      coil: `npm:coil-agent@^${version}`,
    });
    expect(readFileSync(join(base, "coil-plugin-a", "README.md"), "utf8")).toContain(
      `"coil": "npm:coil-agent@^${version}"`,
    );
    // Offline: linked.
    expect((await scaffold("npm-offline.js", "coil-plugin-b")).devDependencies).toEqual({ coil: `file:${installed}` });
  }, 60_000);

  it("`coil install ./x.tgz` of a scaffolded plugin (an optional peer on coil-agent) makes no registry call", async () => {
    const base = tempDir("coil-scaffold-tgz-");
    // A registry that records every request and answers none usefully: npm must not need it.
    const requests: string[] = [];
    const registry = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      res.writeHead(500).end();
    });
    await new Promise<void>((done) => registry.listen(0, "127.0.0.1", done));
    try {
      const url = `http://127.0.0.1:${(registry.address() as AddressInfo).port}/`;
      // npm may use the network here (not npm_config_offline): only the registry above answers.
      const env = sandboxEnv(base, {
        npm_config_offline: "false",
        npm_config_registry: url,
        npm_config_fetch_retries: "0",
      });
      const made = await coil(base, ["--plugin", "packages", "plugin", "new", "coil-plugin-tgz"], env);
      expect(made.code, made.stderr).toBe(0);
      const packed = await run("npm", ["pack", "--offline"], { cwd: join(base, "coil-plugin-tgz"), env });
      expect(packed.code, packed.stderr).toBe(0);
      const installed = await coil(base, ["install", "./coil-plugin-tgz/coil-plugin-tgz-0.1.0.tgz"], env);
      expect(installed.code, installed.stderr).toBe(0);
      expect(installed.stdout).toContain("enabled coil-plugin-tgz@0.1.0");
      expect(installed.stdout).toContain("tools: tgz");
      expect(requests).toEqual([]);
    } finally {
      registry.close();
    }
  }, 60_000);
});
