/**
 * coil as a user installs it: `npm pack` of this checkout, `npm i -g` of the tarball into a temporary prefix
 * with the registry unreachable (`npm_config_registry=http://127.0.0.1:9`, `--offline`, an empty cache), then
 * `coil --version`, `coil -p` on the scripted provider, the plugin scaffold's printed steps and its type-check,
 * and the message a run gets for an optional dependency the default install leaves out.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanTemps, requireBuild, ROOT, run, sandboxEnv, tempDir, writeFiles } from "../support/ecosystem.js";

afterAll(cleanTemps);

let base: string;
let env: NodeJS.ProcessEnv;
let installed: string;
/** What the tarball carries in node_modules (package.json bundleDependencies and theirs). */
const SHIPPED = ["@types", "jiti", "tapable", "typebox", "typescript", "undici-types"];

beforeAll(async () => {
  requireBuild();
  base = tempDir("coil-install-");
  // No registry: a closed port, npm offline, an empty cache (sandboxEnv). PATH finds the installed `coil`.
  env = sandboxEnv(base, {
    npm_config_registry: "http://127.0.0.1:9",
    npm_config_fetch_retries: "0",
    PATH: [join(base, "prefix", "bin"), dirname(process.execPath), process.env.PATH ?? ""].join(delimiter),
  });
  // dist/ is built already (`npm test` builds first): pack it as it is, without prepack's rebuild.
  const packed = await run("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", base], {
    cwd: ROOT,
    env,
  });
  expect(packed.code, packed.stderr).toBe(0);
  const tgz = join(base, packed.stdout.trim().split("\n").at(-1)!);
  const global = await run("npm", ["install", "-g", "--prefix", join(base, "prefix"), "--offline", tgz], {
    cwd: base,
    env,
  });
  expect(global.code, global.stderr).toBe(0);
  installed = join(base, "prefix", "lib", "node_modules", "coil-agent");
}, 120_000);

describe("npm i -g of coil's tarball, offline", () => {
  it("installs coil with jiti, TypeScript and the types its own declarations need, none of the optional heavy parts", () => {
    expect(readdirSync(join(installed, "node_modules")).filter((n) => !n.startsWith("."))).toEqual(SHIPPED);
    expect(readdirSync(join(installed, "node_modules", "@types"))).toEqual(["node"]);
    expect(existsSync(join(installed, "dist", "bin", "coil.js"))).toBe(true);
  });

  it("runs coil --version and coil -p on the scripted provider", async () => {
    const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
    const v = await run("coil", ["--version"], { cwd: base, env });
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout.trim()).toBe(version);
    writeFiles(base, { "reply.yaml": "- text: Hello from the installed coil.\n" });
    const p = await run("coil", ["--provider", "scripted", "--script", "reply.yaml", "-p", "hi"], { cwd: base, env });
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout.trim()).toBe("Hello from the installed coil.");
  });

  it("names the optional package a run needs and how to install it (coil fleet, Bedrock)", async () => {
    const r = await run("coil", ["fleet", "status"], { cwd: base, env });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("coil fleet needs the npm package bullmq, which is not installed");
    expect(r.stderr).toMatch(/npm i -g bullmq@\^\d/);
    // A Bedrock run, configured, stops at the missing SDK before any request, naming it.
    const aws = { AWS_REGION: "us-east-1", AWS_ACCESS_KEY_ID: "x", AWS_SECRET_ACCESS_KEY: "y" };
    const bedrock = await run("coil", ["--model", "bedrock/anthropic.claude-sonnet-4-5", "-p", "hi"], {
      cwd: base,
      env: { ...env, ...aws },
    });
    expect(bedrock.code).toBe(1);
    expect(bedrock.stderr).toContain(
      "Amazon Bedrock needs the npm package @anthropic-ai/bedrock-sdk, which is not installed",
    );
    expect(bedrock.stderr).toMatch(/npm i -g @anthropic-ai\/bedrock-sdk@\^\d/);
    // coil doctor lists each optional dependency and how to install the missing ones.
    const doctor = await run("coil", ["doctor"], { cwd: base, env });
    expect(doctor.code, doctor.stderr).toBe(0);
    expect(doctor.stdout).toContain("Optional dependencies:");
    expect(doctor.stdout).toMatch(/^ {2}bullmq: not installed; coil fleet needs it: npm i -g bullmq@\^\d/m);
    expect(doctor.stdout).toMatch(/^ {2}@anthropic-ai\/bedrock-sdk: not installed; Amazon Bedrock/m);
  });

  it("scaffolds a plugin whose printed steps and type-check pass offline without touching the installed coil", async () => {
    const bin = join(installed, "dist", "bin", "coil.js");
    const before = statSync(bin).mtimeMs;
    // Outside a project, the check says what it needs instead of checking nothing.
    const none = await run("coil", ["plugin", "check"], { cwd: base, env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`coil plugin check: no tsconfig.json in ${base}`);
    const made = await run("coil", ["plugin", "new", "coil-plugin-echo"], { cwd: base, env });
    expect(made.code, made.stderr).toBe(0);
    const dir = join(base, "coil-plugin-echo");
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    // The registry did not answer: coil is linked by its folder, its one dev dependency (no TypeScript asked of npm).
    expect(pkg.devDependencies).toEqual({ coil: `file:${installed}` });
    expect(pkg.scripts.typecheck).toBe("coil plugin check");
    // The tool uses Node's own modules: type-checking it needs Node's types, which coil ships.
    const index = readFileSync(join(dir, "index.ts"), "utf8");
    writeFiles(dir, {
      "index.ts": `${index}\nimport { readFile } from "node:fs/promises";\nexport const readText = (path: string): Promise<string> => readFile(path, "utf8");\n`,
    });
    const next = /^next: (.*)$/m.exec(made.stdout)?.[1];
    expect(next).toBe(`cd ${dir} && npm install && npm test`);
    const quiet = { ...env, NO_COLOR: "1", FORCE_COLOR: "0" };
    const steps = await run("sh", ["-c", `${next!} && npm run typecheck`], { cwd: base, env: quiet });
    expect(steps.code, steps.stdout + steps.stderr).toBe(0);
    expect(steps.stdout).toMatch(/# pass 2\b/);
    expect(steps.stdout).toMatch(/# fail 0\b/);
    expect(steps.stdout).toMatch(/coil plugin check: no type errors in 1 file \(tsconfig\.json, TypeScript \d/);
    // A type error against coil's API (a TypeBox schema's static type) fails the type-check, naming the file
    // and line: coil's declarations resolve in full (typebox ships with coil), not as `any`.
    writeFiles(dir, {
      "index.ts": `${index}\nimport type { Static } from "coil";\nconst Text = Type.Object({ text: Type.String() });\nexport const sample: Static<typeof Text> = { text: 3 };\n`,
    });
    const bad = await run("npm", ["run", "typecheck"], { cwd: dir, env: quiet });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/index\.ts\(\d+,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/);
    expect(bad.stderr).toContain("coil plugin check: 1 type error (tsconfig.json, TypeScript");
    expect(statSync(bin).mtimeMs).toBe(before);
    expect(readdirSync(join(installed, "node_modules")).filter((n) => !n.startsWith("."))).toEqual(SHIPPED);
  }, 180_000);
});
