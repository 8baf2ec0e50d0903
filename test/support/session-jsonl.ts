/** Helpers for the session-jsonl tests: an in-process coil with the session plugin, and the pairing rule providers enforce. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { AgentEvent, CliStreams, Plugin } from "../../api/index.js";
import { createTestKit, type ScriptedService, type ScriptStep } from "../../sdk/testing/index.js";
import { sessionPlugin, type SessionOps, type SessionService } from "../../plugins/session-jsonl/index.js";
import { startPlugins, stopPlugins } from "../../boot/lifecycle.js";

export interface SessionRigOptions {
  /** Start info the CLI would pass (default: interactive mode, model not from the command line). */
  mode?: string;
  modelFromCli?: boolean;
  home: string;
  cwd: string;
  flags?: Record<string, unknown>;
  ops?: SessionOps;
  script?: ScriptStep[];
  plugins?: [Plugin<any>, unknown?][];
  sessionOptions?: Record<string, unknown>;
  /** stdin for the start callback (a resume picker reads it). */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Model id the agent starts with. */
  model?: string;
}

/** A real host + agent with provider-scripted and session-jsonl, started like the CLI starts it. */
export async function startRig(o: SessionRigOptions) {
  const { host, agent, events, commandLine } = createTestKit({
    cwd: o.cwd,
    plugins: [
      [sessionPlugin({ ops: o.ops }), o.sessionOptions ?? {}],
      ...(o.plugins ?? []).map(([plugin, opts]) => [plugin, opts ?? {}] as [Plugin<any>, unknown]),
    ],
    replies: o.script,
    agent: { model: { id: o.model ?? "scripted", provider: "scripted", contextWindow: 200_000, maxOutput: 32_000 } },
  });
  commandLine.values = { ...o.flags };
  const scripted = host.services.get("scripted") as ScriptedService;
  let stderr = "";
  let stdout = "";
  const err = new PassThrough();
  err.on("data", (d: Buffer) => (stderr += d.toString()));
  const out = new PassThrough();
  out.on("data", (d: Buffer) => (stdout += d.toString()));
  const stdin = o.stdin ?? Object.assign(new PassThrough(), { isTTY: false });
  const io: CliStreams = { cwd: o.cwd, env: { COIL_HOME: o.home }, stdin, stdout: out, stderr: err };
  await startPlugins(host, agent, io, { mode: o.mode ?? "interactive", modelFromCli: o.modelFromCli ?? false });
  const session = host.services.get("session") as SessionService;
  return {
    host,
    commandLine,
    agent,
    session,
    scripted,
    events,
    stderr: () => stderr,
    stdout: () => stdout,
    diagnostics: () => events.filter((e): e is Extract<AgentEvent, { type: "diagnostic" }> => e.type === "diagnostic"),
    stop: () => stopPlugins(host),
  };
}

export function tempDirs(prefix = "coil-session-") {
  const root = mkdtempSync(join(tmpdir(), prefix));
  return { root, home: join(root, "home"), cwd: join(root, "project") };
}

interface WireMessage {
  role: string;
  toolCallId?: string;
  content?: unknown;
}

/**
 * The rule provider APIs enforce (Anthropic rejects a request that breaks it): every tool call of
 * an assistant message is answered by a tool result in the messages right after it, before any
 * other message, and no tool result appears without a call in the assistant message right before.
 * Returns the problems found (empty when the request is valid).
 */
export function pairingProblems(messages: readonly WireMessage[]): string[] {
  const problems: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === "toolResult") {
      problems.push(`message ${i}: tool result ${m.toolCallId} has no tool call right before it`);
      continue;
    }
    if (m.role !== "assistant" || !Array.isArray(m.content)) continue;
    const calls = (m.content as { type: string; id?: string }[]).filter((c) => c.type === "toolCall").map((c) => c.id!);
    if (calls.length === 0) continue;
    const answered = new Set<string>();
    let j = i + 1;
    for (; j < messages.length && messages[j]!.role === "toolResult"; j++) {
      const id = messages[j]!.toolCallId!;
      if (!calls.includes(id)) problems.push(`message ${j}: tool result ${id} answers no call of message ${i}`);
      else if (answered.has(id)) problems.push(`message ${j}: second result for ${id}`);
      answered.add(id);
    }
    for (const id of calls)
      if (!answered.has(id)) problems.push(`message ${i}: tool call ${id} has no result right after it`);
    i = j - 1;
  }
  return problems;
}
