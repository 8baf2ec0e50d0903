/**
 * Compaction accounting: history with its running context estimate (`History`), when compaction is due,
 * and running the `compact` strategies (`compact`), which must shrink the context or change nothing.
 */
import { scopedSignal } from "./abort.js";
import { CoilError } from "./errors.js";
import type { LoopInputs } from "./loop.js";
import { estimateMessageTokens, freezeMessage, usageTotal } from "./messages.js";
import type { AgentMessage, CompactReason, CompactRequest, CompactResult } from "./types.js";

/** Default `reserveTokens`: context tokens kept free below the window before compaction runs. */
export const DEFAULT_RESERVE_TOKENS = 16_384;

/**
 * Context size above which compaction runs: the window minus the reserve, where the reserve is at most a
 * quarter of the window (a 16K-window model keeps 4K free, not all of its 16K).
 */
export function compactionLimit(contextWindow: number, reserveTokens: number): number {
  return contextWindow - Math.min(reserveTokens, Math.floor(contextWindow / 4));
}

/** Estimated tokens a request spends besides its messages: system blocks and tool definitions. */
export function requestOverhead(request: { system: readonly { text: string }[]; tools: readonly unknown[] }): number {
  let chars = 0;
  for (const block of request.system) chars += block.text.length;
  for (const tool of request.tools) chars += JSON.stringify(tool).length;
  return Math.ceil(chars / 4);
}

const freshUsage = (message: AgentMessage) =>
  message.role === "assistant" && message.stopReason !== "error" && message.stopReason !== "aborted"
    ? usageTotal(message.usage)
    : 0;

/**
 * The conversation the loop works on, with its context size kept up to date as messages are appended
 * (O(1) per turn): the newest assistant usage (what the provider really counted, system prompt and tools
 * included) plus estimates of what came after it; without usage, the estimates plus the last request's
 * system prompt and tools. Usage recorded before a compaction measured the old context and is ignored. The
 * whole history's estimate is made on first use (compaction), so a resumed history is not walked.
 */
export class History {
  private list: AgentMessage[] = [];
  /** Messages not estimated yet. */
  private pending: AgentMessage[] = [];
  private all = 0;
  private usage = 0;
  private tail = 0;
  /** Estimated tokens of the last request's system prompt and tools (0 before the first request). */
  overhead = 0;
  /** After a compaction that could not get under the limit: no threshold compaction until the context is over this. */
  hold: number | undefined;

  constructor(messages: readonly AgentMessage[]) {
    this.replace(messages);
  }

  get messages(): readonly AgentMessage[] {
    return this.list;
  }

  append(message: AgentMessage): void {
    this.list.push(freezeMessage(message));
    const estimate = estimateMessageTokens(message);
    const used = freshUsage(message);
    this.all += estimate;
    if (used > 0) {
      this.usage = used;
      this.tail = 0;
    } else this.tail += estimate;
  }

  /** Replace history: a resume or branch switch, or (`compacted`) a compaction's result, whose old usage is stale. */
  replace(messages: readonly AgentMessage[], compacted = false): void {
    this.list = messages.map((m) => freezeMessage(m));
    this.pending = this.list.slice();
    this.all = 0;
    this.usage = 0;
    this.tail = 0;
    this.hold = undefined;
    let index = this.list.length - 1;
    for (; !compacted && index >= 0; index--) {
      this.usage = freshUsage(this.list[index]!);
      if (this.usage) break;
    }
    if (this.usage > 0) for (const message of this.list.slice(index + 1)) this.tail += estimateMessageTokens(message);
  }

  /** The context estimate. */
  tokens(): number {
    return this.usage > 0 ? this.usage + this.tail : this.estimated() + this.overhead;
  }

  /** The estimate over the messages alone, whatever usage says. */
  estimated(): number {
    for (const message of this.pending.splice(0)) this.all += estimateMessageTokens(message);
    return this.all;
  }
}

type CompactInputs = Pick<LoopInputs, "host" | "agent" | "config" | "history">;

const fmt = (n: number) => n.toLocaleString("en-US");
const limitOf = (loop: CompactInputs) => {
  const { model, reserveTokens } = loop.config();
  return compactionLimit(model.contextWindow, reserveTokens);
};
/** After a compaction that could not get under the limit, the next waits until the context grew by half the reserve. */
const holdAt = (loop: CompactInputs, tokens: number) =>
  tokens + Math.floor((loop.config().model.contextWindow - limitOf(loop)) / 2);

/** Whether the context is over the compaction limit (and over the hold a failed compaction left). */
export function compactionDue(loop: CompactInputs): boolean {
  const tokens = loop.history.tokens();
  return tokens > limitOf(loop) && tokens > (loop.history.hold ?? 0);
}

/**
 * Run the `compact` strategies. Undefined when none handled it, or its result was not smaller (reported
 * as NO_COMPACTION; a manual compaction throws it).
 */
export async function compact(
  loop: CompactInputs,
  signal: AbortSignal,
  reason: CompactReason,
  instructions?: string,
): Promise<CompactResult | undefined> {
  const { host, history } = loop;
  const { model } = loop.config();
  const strategies = host.taps.filter((t) => t.hook === "compact").map((t) => t.plugin);
  if (strategies.length === 0) {
    if (reason === "threshold") return undefined; // a preset without compaction chose so
    throw new CoilError("NO_COMPACTION", "no compaction strategy in this preset", {
      hint: "add a compaction plugin to the preset",
    });
  }
  const tokensBefore = history.tokens();
  const messagesBefore = history.estimated();
  const limit = limitOf(loop);
  // After an overflow the retry must be clearly smaller, whatever the estimate said.
  const cap = reason === "overflow" ? Math.floor(messagesBefore * 0.75) : Infinity;
  const scope = scopedSignal(signal); // the summariser's provider calls get a signal of their own
  const request: CompactRequest = {
    messages: Object.freeze(history.messages.slice()),
    tokens: tokensBefore,
    contextWindow: model.contextWindow,
    reason,
    targetTokens: Math.max(0, Math.min(limit - history.overhead, cap)),
    model,
    instructions,
    signal: scope.signal,
    agent: loop.agent,
  };
  const result = await host.hooks.compact.promise(request).finally(scope.release);
  const refuse = (message: string): undefined => {
    const error = new CoilError("NO_COMPACTION", message);
    const level = reason === "threshold" ? "warn" : "error";
    host.emit({ type: "diagnostic", level, message: error.message, code: error.code });
    if (reason === "threshold") history.hold = holdAt(loop, tokensBefore);
    if (reason === "manual") throw error;
    return undefined;
  };
  if (!result || !Array.isArray(result.messages))
    return refuse(`no compaction strategy handled the request (tried: ${strategies.join(", ")})`);
  const by = host.bailedBy(result) ?? "unknown";
  const messagesAfter = result.messages.reduce((n, m) => n + estimateMessageTokens(m), 0);
  if (messagesAfter >= messagesBefore) {
    const sizes = `${fmt(messagesBefore)} → ${fmt(messagesAfter)} tokens of messages`;
    return refuse(`compaction by ${by} did not shrink the context (${sizes}); the context is unchanged`);
  }
  history.replace(result.messages, true);
  const tokensAfter = history.tokens();
  history.hold = tokensAfter > limit ? holdAt(loop, tokensAfter) : undefined;
  host.emit({ type: "compaction", reason, tokensBefore, tokensAfter, by });
  if (tokensAfter > limit) {
    const window = fmt(model.contextWindow);
    const message =
      `compaction by ${by} shrank the context from ${fmt(tokensBefore)} to ${fmt(tokensAfter)} tokens, ` +
      `still over the compaction limit of ${fmt(limit)} (window ${window}): ` +
      "the newest messages alone are too large to keep";
    host.emit({ type: "diagnostic", level: "warn", code: "NO_COMPACTION", message });
  }
  return result;
}
