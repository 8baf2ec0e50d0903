/**
 * `coil install | enable | disable | list | remove` hand Claude Code plugins to the installer in
 * plugins/packages/claude (issue #18, part 2) through the agreed interface, imported on demand. Here a
 * stand-in installer with that interface sits where the build puts the real one, in a copy of coil.
 */
import { cpSync, existsSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanTemps, requireBuild, ROOT, run, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";

beforeAll(requireBuild);
afterAll(cleanTemps);

// Records every call in $COIL_HOME/claude-calls.jsonl and keeps one plugin's state in $COIL_HOME/claude-state.json.
const STAND_IN = `import { appendFileSync, existsSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
const state = (home) => join(home, "claude-state.json");
const log = (home, call) => appendFileSync(join(home, "claude-calls.jsonl"), JSON.stringify(call) + "\\n");
const report = (name, enabled, scope = "user") => ({ name, version: "1.0.0", scope, enabled, commands: ["/" + name + ":hello"] });
export async function detectClaudePlugin(spec, cwd, home) {
  log(home, { fn: "detect", spec });
  return existsSync(join(resolve(cwd, spec), ".claude-plugin", "plugin.json"));
}
export async function installClaudePlugin(spec, o) {
  log(o.home, { fn: "install", spec, project: o.project });
  const name = JSON.parse(readFileSync(join(resolve(o.cwd, spec), ".claude-plugin", "plugin.json"), "utf8")).name;
  writeFileSync(state(o.home), JSON.stringify({ name, enabled: true }));
  return report(name, true, o.project ? "project" : "user");
}
export async function removeClaudePlugin(name, o) { log(o.home, { fn: "remove", name }); rmSync(state(o.home)); return report(name, false); }
export async function setClaudePluginEnabled(name, enabled, o) {
  log(o.home, { fn: "enable", name, enabled });
  writeFileSync(state(o.home), JSON.stringify({ name, enabled }));
  return report(name, enabled);
}
export async function listClaudePlugins(o) {
  if (!existsSync(state(o.home))) return [];
  const s = JSON.parse(readFileSync(state(o.home), "utf8"));
  return [report(s.name, s.enabled)];
}
export function formatReport(r, verb = "installed") { return verb + " Claude Code plugin " + r.name + " (" + r.scope + "): " + r.commands.join(", "); }
`;

describe("coil install dispatches Claude Code plugins", () => {
  it("install, disable, enable, list and remove go to the Claude Code plugin installer; nothing goes to npm or the preset file", async () => {
    const base = tempDir("coil-cc-dispatch-");
    const copy = join(base, "coil");
    for (const part of ["package.json", "dist", "presets", "skills", "prompt-templates"])
      cpSync(join(ROOT, part), join(copy, part), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
    writeFiles(join(copy, "dist", "plugins", "packages", "claude"), { "index.js": STAND_IN });
    const project = writeFiles(join(base, "project"), {
      "cc-demo/.claude-plugin/plugin.json": JSON.stringify({ name: "cc-demo" }),
    });
    const env = sandboxEnv(base);
    const home = env.COIL_HOME!;
    const coil = (...args: string[]) =>
      run(process.execPath, [join(copy, "dist", "bin", "coil.js"), ...args], { cwd: project, env });

    const installed = await coil("install", "./cc-demo");
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toBe("installed Claude Code plugin cc-demo (user): /cc-demo:hello\n");
    expect(existsSync(join(home, "packages", "package.json"))).toBe(false); // npm was not run
    expect(existsSync(join(home, "preset.yaml"))).toBe(false);

    expect((await coil("disable", "cc-demo")).stdout).toBe(
      "disabled Claude Code plugin cc-demo (user): /cc-demo:hello\n",
    );
    const listed = await coil("list");
    expect(listed.stdout).toContain("disabled Claude Code plugin cc-demo");
    expect(JSON.parse((await coil("list", "--json")).stdout)[0].claudePlugins).toMatchObject([
      { name: "cc-demo", enabled: false },
    ]);
    expect((await coil("enable", "cc-demo")).stdout).toBe(
      "enabled Claude Code plugin cc-demo (user): /cc-demo:hello\n",
    );
    const unknown = await coil("disable", "nope");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("(installed: cc-demo)");
    const removed = await coil("remove", "cc-demo");
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toBe("removed Claude Code plugin cc-demo (user): /cc-demo:hello\n");

    const calls = readFileSync(join(home, "claude-calls.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(calls.filter((c) => c.fn !== "detect")).toEqual([
      { fn: "install", spec: "./cc-demo", project: false },
      { fn: "enable", name: "cc-demo", enabled: false },
      { fn: "enable", name: "cc-demo", enabled: true },
      { fn: "remove", name: "cc-demo" },
    ]);
  }, 60_000);
});
