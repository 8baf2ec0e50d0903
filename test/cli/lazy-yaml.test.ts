/**
 * The YAML parser loads on first use: the shipped CLI requires it (dist/vendor/yaml.cjs) only when a YAML file
 * is read, so a print run on the built-in presets (compiled to JSON) and a JSON script neither compiles nor runs
 * its 0.26 MB. Runs that read YAML (a script, a user preset, `coil preset show`) still work.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../boot/paths.js";
import { childEnv } from "../support/env.js";

const work = mkdtempSync(join(tmpdir(), "coil-lazy-yaml-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
writeFileSync(join(work, "reply.yaml"), "- text: hello from yaml\n");
writeFileSync(join(work, "reply.json"), JSON.stringify([{ text: "hello from json" }]));
const bin = join(packageRoot(), "dist", "bin", "coil.js");

/** Run the CLI; `yaml` says whether any module it loaded (ES or CommonJS) holds the yaml package's code. */
function run(
  args: string[],
  home: string,
): Promise<{ code: number | null; stdout: string; stderr: string; yaml: boolean }> {
  const list = join(work, `loaded-${Math.random().toString(36).slice(2)}.txt`);
  const hook = `data:text/javascript,${encodeURIComponent(`
import { register, createRequire } from "node:module";
import { appendFileSync } from "node:fs";
const require = createRequire(${JSON.stringify(bin)});
process.on("exit", () => appendFileSync(${JSON.stringify(list)}, Object.keys(require.cache).join("\\n") + "\\n"));
register("data:text/javascript," + encodeURIComponent(\`
import { appendFileSync } from "node:fs";
export async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(${JSON.stringify(list)}, r.url + "\\\\n"); return r; }\`));`)}`;
  writeFileSync(list, "");
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", hook, bin, ...args], {
      cwd: work,
      env: childEnv({ COIL_HOME: home }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => {
      const files = readFileSync(list, "utf8")
        .split("\n")
        .filter((f) => f.startsWith("file:") || f.startsWith("/"))
        .map((f) => (f.startsWith("file:") ? fileURLToPath(f) : f))
        .filter((f) => f.includes(`${join(packageRoot(), "dist")}/`));
      const yaml = [...new Set(files)].some((f) => readFileSync(f, "utf8").includes("// node_modules/yaml/dist/"));
      resolve({ code, stdout, stderr, yaml });
    });
  });
}

describe("the YAML parser loads on first use", () => {
  it("a print run on the built-in presets with a JSON script loads no YAML parser; a YAML script loads it", async () => {
    const home = join(work, "home-plain");
    const json = await run(["--provider", "scripted", "--script", "reply.json", "-p", "hi"], home);
    expect(json.stderr).toBe("");
    expect(json.stdout).toBe("hello from json\n");
    expect(json.yaml).toBe(false);
    const yaml = await run(["--provider", "scripted", "--script", "reply.yaml", "-p", "hi"], home);
    expect(yaml.stderr).toBe("");
    expect(yaml.stdout).toBe("hello from yaml\n");
    expect(yaml.yaml).toBe(true);
  });

  it("a user preset in YAML is read, and `coil preset show` writes YAML with the layer comments", async () => {
    const home = join(work, "home-preset");
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, "preset.yaml"), "plugins:\n  - checkpoints: false\n");
    const r = await run(["--provider", "scripted", "--script", "reply.json", "-p", "hi"], home);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("hello from json\n");
    expect(r.yaml).toBe(true);
    const show = await run(["preset", "show"], home);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("description: The default coil setup # builtin:default");
    expect(show.stdout).toMatch(/user\s+.*preset\.yaml/);
    expect(show.stdout).not.toMatch(/^\s*- checkpoints\b/m);
  });
});
