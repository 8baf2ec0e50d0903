/**
 * Lazy plugin loading: a built-in plugin whose manifest.json says which modes and subcommands it
 * serves is not imported by a run that needs neither (`coil -p` skips fleet, packages, ui-rpc, ui-acp),
 * and is imported when the run names one of them. The manifests are checked against what each plugin
 * really registers, so they cannot drift from the code.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { builtinManifest } from "../../boot/load.js";
import { builtinPluginIds, packageRoot } from "../../boot/paths.js";
import { testHost } from "../support/host.js";
import { isPlugin } from "../../api/plugin.js";
import { CommandLine } from "../../lib/command-line.js";
import { childEnv } from "../support/env.js";

const work = mkdtempSync(join(tmpdir(), "coil-lazy-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
writeFileSync(join(work, "reply.yaml"), "- text: hello\n");
const bin = join(packageRoot(), "dist", "bin", "coil.js");

/** Run the CLI, recording every module it resolves (a module hook), and return the built-in plugins it imported. */
function run(
  args: string[],
  input = "",
): Promise<{ code: number | null; stdout: string; stderr: string; plugins: string[] }> {
  const loads = join(work, `loads-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(loads, "");
  const hook = `data:text/javascript,${encodeURIComponent(`
import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(\`
import { appendFileSync } from "node:fs";
export async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(${JSON.stringify(loads)}, r.url + "\\\\n"); return r; }\`));`)}`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", hook, bin, ...args], {
      cwd: work,
      env: childEnv({ COIL_HOME: join(work, "home") }),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.stdin.end(input);
    child.on("close", (code) => {
      const plugins = [
        ...new Set([...readFileSync(loads, "utf8").matchAll(/\/plugins\/([^/]+)\/index\.js/g)].map((m) => m[1]!)),
      ].sort();
      resolve({ code, stdout, stderr, plugins });
    });
  });
}

describe("lazy plugin loading", () => {
  it("coil -p imports no plugin that serves only other modes or subcommands; the ones it needs still run", async () => {
    const r = await run(["--provider", "scripted", "--script", "reply.yaml", "-p", "hi"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("hello\n");
    for (const id of ["fleet", "packages", "ui-rpc", "ui-acp"]) expect(r.plugins).not.toContain(id);
    for (const id of ["provider-scripted", "session-jsonl", "ui-print", "tools-coding", "ui-tui"])
      expect(r.plugins).toContain(id);
  });

  it("a run that names a mode or a subcommand imports the plugin that serves it; --help and interactive runs import them all", async () => {
    const rpc = await run(
      ["--provider", "scripted", "--script", "reply.yaml", "--mode", "rpc"],
      `${JSON.stringify({ type: "get_state" })}\n`,
    );
    expect(rpc.plugins).toContain("ui-rpc");
    expect(rpc.plugins).not.toContain("fleet");
    const list = await run(["-p", "list"]); // `list` is a subcommand of packages, whatever -p says
    expect(list.code).toBe(0);
    expect(list.plugins).toContain("packages");
    const help = await run(["-p", "--help"]);
    expect(help.stdout).toContain("fleet");
    expect(help.plugins).toEqual(expect.arrayContaining(["fleet", "packages", "ui-acp", "ui-rpc"]));
  });

  it("every manifest matches what its plugin registers: the same front-end modes and subcommands, and no tools, providers, flags or slash commands", async () => {
    const declared = builtinPluginIds().filter((id) => builtinManifest(id)?.serves);
    expect(declared).toEqual(expect.arrayContaining(["fleet", "packages", "ui-acp", "ui-rpc"]));
    for (const id of declared) {
      const serves = builtinManifest(id)!.serves!;
      const file = join(packageRoot(), "plugins", id, "index.ts");
      expect(existsSync(file)).toBe(true);
      const plugin = (await import(file)).default;
      expect(isPlugin(plugin)).toBe(true);
      const commandLine = new CommandLine();
      const host = testHost({ cwd: work }, commandLine);
      host.install(plugin, {});
      const modes = host.frontEnds.values().flatMap((f) => f.modes);
      expect({
        id,
        modes: modes.sort(),
        subcommands: commandLine.subcommands.names().sort(),
      }).toEqual({ id, modes: [...(serves.modes ?? [])].sort(), subcommands: [...(serves.subcommands ?? [])].sort() });
      expect({
        id,
        tools: host.tools.entries().length,
        providers: host.providers.entries().length,
        flags: commandLine.flags.entries().length,
        commands: host.commands.entries().length,
      }).toEqual({ id, tools: 0, providers: 0, flags: 0, commands: 0 });
    }
  });
});
