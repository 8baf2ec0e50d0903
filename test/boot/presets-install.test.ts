/**
 * Every built-in preset is assembled for real (boot/assemble.ts): each plugin module loads, its options
 * validate and its setup runs, and the agent the preset describes can be built and started on the
 * scripted provider, in an empty project with an empty $COIL_HOME.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { agentFor, assemble } from "../../boot/assemble.js";
import { builtinPresetNames } from "../../boot/preset.js";
import { startPlugins, stopPlugins } from "../../boot/lifecycle.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("built-in presets", () => {
  it.each(builtinPresetNames())("%s installs: every plugin sets up, the agent starts and stops", async (name) => {
    const project = mkdtempSync(join(tmpdir(), "coil-preset-"));
    dirs.push(project);
    writeFileSync(join(project, "replies.yaml"), "- text: ok\n");
    const home = join(project, ".home");
    const { preset, host, commandLine, setupDiagnostics } = await assemble({
      preset: name,
      cwd: project,
      home,
      trust: false,
      provider: "scripted",
    });
    expect(setupDiagnostics.filter((d) => d.level === "error")).toEqual([]);
    expect(host.plugins.map((p) => p.id)).toEqual(expect.arrayContaining(preset.entries.map((e) => e.key)));
    expect(host.plugins.length).toBeGreaterThanOrEqual(preset.entries.length);
    commandLine.values = { script: "replies.yaml" };
    const agent = agentFor(host, preset);
    expect(agent.state.provider).toBe("scripted");
    const stdin = new PassThrough();
    stdin.end();
    const io = { cwd: project, env: { COIL_HOME: home }, stdin, stdout: new PassThrough(), stderr: new PassThrough() };
    expect(await startPlugins(host, agent, io, { mode: "sdk", modelFromCli: false })).toBeUndefined();
    await stopPlugins(host);
  });
});
