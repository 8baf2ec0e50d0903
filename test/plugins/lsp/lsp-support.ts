/**
 * Shared set-up for the lsp tests: a host on the scripted provider with tools-coding and the lsp plugin
 * in a temporary project, against the real language servers installed as devDependencies
 * (typescript-language-server + typescript, pyright). Nothing is mocked.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { Agent, type AgentEvent, type Plugin, type ToolResultMessage } from "../../../api/index.js";
import type { PluginHost } from "../../../boot/host.js";
import { startPlugins, stopPlugins } from "../../../boot/lifecycle.js";
import { packageRoot } from "../../../boot/paths.js";
import { testHost } from "../../support/host.js";
import lspPlugin, { type DiagnosticsDetails, type LspService } from "../../../plugins/lsp/index.js";
import scriptedPlugin, { type ScriptedService } from "../../../plugins/provider-scripted/index.js";
import type { ScriptStep } from "../../../plugins/provider-scripted/script.js";
import toolsCoding from "../../../plugins/tools-coding/index.js";

export const ROOT = packageRoot();
export const BIN = join(ROOT, "node_modules", ".bin");
export const TS_SERVER = join(BIN, "typescript-language-server");
export const PYRIGHT = join(BIN, "pyright-langserver");

const io = () => ({
  cwd: process.cwd(),
  env: process.env,
  stdin: new PassThrough(),
  stdout: new PassThrough(),
  stderr: new PassThrough(),
});

export interface Started {
  host: PluginHost;
  agent: Agent;
  scripted: ScriptedService;
  events: AgentEvent[];
  /** Run the plugins' stop callbacks (the lsp servers shut down). */
  stop(): Promise<void>;
  results(): ToolResultMessage[];
  warnings(): string[];
}

/** A started host in `cwd`: scripted provider, tools-coding, lsp with `options`, and `more` plugins. */
export async function startHost(
  cwd: string,
  options: Record<string, unknown>,
  more: [Plugin<any>, unknown][] = [],
): Promise<Started> {
  process.env.COIL_HOME = join(cwd, ".home");
  const host = testHost({ cwd, projectTrusted: true });
  const events: AgentEvent[] = [];
  host.subscribe("*", (e) => void events.push(e));
  host.install(scriptedPlugin, { chunkSize: 64 });
  host.install(toolsCoding, {});
  host.install(lspPlugin, options);
  for (const [p, o] of more) host.install(p, o);
  const scripted = host.services.get("scripted") as ScriptedService;
  const agent = new Agent(host, {
    provider: "scripted",
    model: { id: "scripted", provider: "scripted", contextWindow: 200_000, maxOutput: 32_000 },
  });
  await startPlugins(host, agent, io(), { mode: "text", modelFromCli: false });
  return {
    host,
    agent,
    scripted,
    events,
    stop: () => stopPlugins(host),
    results: () => agent.state.messages.filter((m): m is ToolResultMessage => m.role === "toolResult"),
    warnings: () =>
      events
        .filter((e): e is Extract<AgentEvent, { type: "diagnostic" }> => e.type === "diagnostic")
        .map((e) => e.message),
  };
}

/** One scripted turn calling `name` with `args`, then a text reply; the call's result. */
export async function call(t: Started, name: string, args: Record<string, unknown>): Promise<ToolResultMessage> {
  t.scripted.push({ toolCalls: [{ name, arguments: args }] } as ScriptStep, { text: "ok" } as ScriptStep);
  const before = t.results().length;
  await t.agent.prompt(`call ${name}`);
  const r = t.results()[before];
  if (!r) throw new Error(`no result for ${name}`);
  return r;
}

export const textOf = (r: ToolResultMessage) =>
  r.content
    .filter((c) => c.type === "text")
    .map((c) => (c as { text: string }).text)
    .join("\n");

export const diagnosticsOf = (r: ToolResultMessage) =>
  (r.details as { diagnostics?: DiagnosticsDetails } | undefined)?.diagnostics;

/** The servers the `lsp` service reports. */
export const statusOf = (t: Started) => (t.host.services.get("lsp") as LspService).status();

/** Live processes in process group `pgid` (zombies left out). */
export function groupMembers(pgid: number): number[] {
  const out = execFileSync("ps", ["-eo", "pid=,pgid=,stat="], { encoding: "utf8" });
  return out
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length === 3 && Number(f[1]) === pgid && !f[2]!.startsWith("Z"))
    .map((f) => Number(f[0]));
}
