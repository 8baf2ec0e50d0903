/**
 * A sub-agent's usage travels on the parent's `task` tool result (`details.subagent`): the child's own
 * messages stay in its own session, and totals over the parent's history (TUI footer, `/cost`,
 * `coil sessions stats`) add what the children spent through these helpers.
 */
import { emptyUsage, type AgentMessage, type Usage } from "../api/index.js";

/** What the `task` tool records about one child run, on its result's `details.subagent`. */
export interface SubagentRun {
  /** The child's id: the parent's tool call id. */
  id: string;
  /** Agent type (`general`, `explore`, or an agent file's name). */
  agent: string;
  description: string;
  provider: string;
  model: string;
  /** The child's session, when one was written. */
  session?: { id: string; file?: string };
  /** Usage of every model request the child made (its own children included). */
  usage: Usage;
  /** Model requests the child made (its own children included). */
  requests: number;
  stopReason: string;
  /** Nesting level: 1 for a child of the main agent. */
  depth: number;
}

/** The sub-agent run a message carries, if it is a `task` result with one. */
export function subagentRunOf(message: AgentMessage | undefined): SubagentRun | undefined {
  if (message?.role !== "toolResult") return undefined;
  const run = (message.details as { subagent?: SubagentRun } | undefined)?.subagent;
  return run && typeof run === "object" && run.usage && typeof run.usage.input === "number" ? run : undefined;
}

/** `a + b`, as a new object. */
export function addUsage(a: Usage, b: Usage): Usage {
  const c = (k: keyof Usage["cost"]) => (a.cost?.[k] ?? 0) + (b.cost?.[k] ?? 0);
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    cost: {
      input: c("input"),
      output: c("output"),
      cacheRead: c("cacheRead"),
      cacheWrite: c("cacheWrite"),
      total: c("total"),
    },
  };
}

/** Per agent type: runs, requests and usage of the sub-agents whose `task` results are in `messages`. */
export function subagentTotals(
  messages: Iterable<AgentMessage | undefined>,
): Map<string, { runs: number; requests: number; usage: Usage }> {
  const out = new Map<string, { runs: number; requests: number; usage: Usage }>();
  for (const m of messages) {
    const run = subagentRunOf(m);
    if (!run) continue;
    const t = out.get(run.agent) ?? { runs: 0, requests: 0, usage: emptyUsage() };
    out.set(run.agent, { runs: t.runs + 1, requests: t.requests + run.requests, usage: addUsage(t.usage, run.usage) });
  }
  return out;
}
