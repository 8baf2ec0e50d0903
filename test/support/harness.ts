/**
 * A real host + agent on the scripted provider, recording every event: a thin wrapper over the shipped
 * `coil/testing` kit (sdk/testing), in the current directory and with small stream chunks.
 */
import type { AgentOptions, Plugin } from "../../api/index.js";
import { createTestKit, type ScriptedService, type ScriptStep } from "../../sdk/testing/index.js";

export interface TestAgentOptions {
  plugins?: [Plugin<any>, unknown?][];
  script?: ScriptStep[];
  agent?: Partial<AgentOptions>;
  scripted?: Record<string, unknown>;
}

export function createTestAgent(options: TestAgentOptions = {}) {
  const kit = createTestKit({
    cwd: process.cwd(),
    plugins: (options.plugins ?? []).map(([plugin, opts]) => [plugin, opts ?? {}] as [Plugin<any>, unknown]),
    replies: options.script,
    agent: options.agent,
    scripted: { chunkSize: 4, ...options.scripted },
  });
  const scripted = kit.host.services.get("scripted") as ScriptedService;
  return { host: kit.host, agent: kit.agent, scripted, events: kit.events, diagnostics: kit.diagnostics };
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
