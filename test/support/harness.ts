/** Builds a real host + agent on the scripted provider, recording every event. */
import { Agent, PluginHost, type AgentEvent, type AgentOptions, type Plugin } from "../../kernel/index.js";
import scriptedPlugin, { type ScriptedService } from "../../plugins/provider-scripted/index.js";
import type { ScriptStep } from "../../plugins/provider-scripted/script.js";

export interface TestAgentOptions {
  plugins?: [Plugin<any>, unknown?][];
  script?: ScriptStep[];
  agent?: Partial<AgentOptions>;
  scripted?: Record<string, unknown>;
}

export function createTestAgent(options: TestAgentOptions = {}) {
  const host = new PluginHost({ cwd: process.cwd() });
  const events: AgentEvent[] = [];
  host.subscribe("*", (e) => void events.push(e));
  host.install(scriptedPlugin, { chunkSize: 4, ...options.scripted });
  for (const [plugin, opts] of options.plugins ?? []) host.install(plugin, opts ?? {});
  const scripted = host.services.get("scripted") as ScriptedService;
  scripted.push(...(options.script ?? []));
  const model = { id: "scripted", provider: "scripted", contextWindow: 200_000, maxOutput: 32_000 };
  const agent = new Agent(host, { provider: "scripted", model, ...options.agent });
  const diagnostics = () => events.filter((e): e is Extract<AgentEvent, { type: "diagnostic" }> => e.type === "diagnostic");
  return { host, agent, scripted, events, diagnostics };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves when `predicate` holds, polling every few ms (fails after `ms`). */
export async function until(predicate: () => boolean, ms = 5000): Promise<void> {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > ms) throw new Error("condition not met in time");
    await sleep(2);
  }
}
