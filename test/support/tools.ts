/** Real hosts in temp directories for the tools plugins' tests: call a tool directly, or through an agent. */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Plugin, ToolOutput } from "../../api/index.js";
import { testHost } from "./host.js";
import { createTestKit, type ScriptedService, type ScriptStep } from "../../sdk/testing/index.js";

const temps: string[] = [];

/** A temp directory with the given files (string content or bytes); removed by `cleanTemps`. */
export function tempDir(files: Record<string, string | Uint8Array> = {}, prefix = "coil-tools-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  return dir;
}

export function cleanTemps(): void {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export interface ToolCallOptions {
  signal?: AbortSignal;
  updates?: ToolOutput[];
}

/** A host in `cwd` with the given plugins; `call` runs a registered tool's execute directly. */
export function toolHost(cwd: string, plugins: [Plugin<any>, unknown?][]) {
  const host = testHost({ cwd });
  for (const [plugin, options] of plugins) host.install(plugin, options ?? {});
  const call = async (
    name: string,
    args: Record<string, unknown>,
    o: ToolCallOptions = {},
  ): Promise<ToolOutput<any>> => {
    const tool = host.tools.get(name);
    if (!tool) throw new Error(`tool ${name} is not registered`);
    return tool.execute(args as never, {
      toolCallId: `test_${name}`,
      signal: o.signal ?? new AbortController().signal,
      update: (partial) => void o.updates?.push(partial),
    });
  };
  return { host, call, tool: (name: string) => host.tools.get(name)! };
}

/** Text of a tool output's text parts. */
export const textOf = (out: { content: readonly { type: string; text?: string }[] }): string =>
  out.content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");

/** A scripted agent in `cwd` (the model replays `script`). */
export function agentIn(
  cwd: string,
  plugins: [Plugin<any>, unknown?][],
  script: ScriptStep[],
  model: Record<string, unknown> = {},
) {
  const kit = createTestKit({
    cwd,
    plugins: plugins.map(([plugin, options]) => [plugin, options ?? {}] as [Plugin<any>, unknown]),
    replies: script,
    agent: { model: { id: "scripted", provider: "scripted", contextWindow: 200_000, maxOutput: 32_000, ...model } },
  });
  return {
    host: kit.host,
    agent: kit.agent,
    events: kit.events,
    scripted: kit.host.services.get("scripted") as ScriptedService,
  };
}

/** Processes whose command line contains `marker` and that are not zombies (from `ps`). */
export function processesWith(marker: string): string[] {
  const out = execFileSync("ps", ["-eo", "pid=,stat=,args="], { encoding: "utf8" });
  return out
    .split("\n")
    .filter((line) => line.includes(marker) && !line.includes("ps -eo"))
    .filter((line) => !/^\s*\d+\s+Z/.test(line));
}

type Output = { isError?: boolean; content: { type: string; text?: string }[]; details?: any };

/**
 * Run tools-coding tool calls in a child process as uid/gid 65534 (nobody): root reads and writes
 * everything, so permission errors can only be seen from an unprivileged process. The child runs a
 * bundle of the plugin's current sources (esbuild), so it needs no build and no TypeScript loader.
 */
export async function runAsNobody(
  cwd: string,
  calls: [tool: string, args: Record<string, unknown>][],
): Promise<Output[]> {
  const root = join(import.meta.dirname, "..", "..");
  const scriptDir = tempDir({}, "coil-tools-child-");
  chmodSync(scriptDir, 0o755);
  const { build } = await import("esbuild");
  const entry = `import plugin from ${JSON.stringify(join(root, "plugins/tools-coding/index.ts"))};
import { testHost } from ${JSON.stringify(join(root, "test/support/host.ts"))};
const host = testHost({ cwd: ${JSON.stringify(cwd)} });
host.install(plugin, {});
const outputs = [];
for (const [tool, args] of ${JSON.stringify(calls)}) {
  outputs.push(await host.tools.get(tool).execute(args, { toolCallId: "t", signal: new AbortController().signal, update() {} }));
}
process.stdout.write(JSON.stringify(outputs));
`;
  const script = join(scriptDir, "child.mjs");
  await build({
    stdin: { contents: entry, resolveDir: root, loader: "ts" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: script,
    banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" },
    logLevel: "error",
  });
  chmodSync(script, 0o644);
  const ran = spawnSync(process.execPath, [script], {
    cwd,
    uid: 65534,
    gid: 65534,
    env: { ...process.env, HOME: cwd },
    encoding: "utf8",
    timeout: 30_000,
  });
  if (ran.status !== 0) throw new Error(`child failed (${ran.status}): ${ran.stderr}`);
  return JSON.parse(ran.stdout) as Output[];
}

/** SIGKILL every process whose command line contains `marker` (cleanup after a failed process test). */
export function killAllWith(marker: string): void {
  for (const line of processesWith(marker)) {
    const pid = Number(line.trim().split(/\s+/)[0]);
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
}
