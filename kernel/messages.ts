/** Small pure helpers over messages: token estimates, tool-call bookkeeping, freezing. */
import type { AgentMessage, AssistantMessage, ToolCall, ToolResultMessage, Usage } from "./types.js";

const estimates = new WeakMap<object, number>();
const IMAGE_TOKENS = 1200;

/** A rough token count (4 characters a token), cached per message object. */
export function estimateMessageTokens(message: AgentMessage): number {
  const cached = estimates.get(message);
  if (cached !== undefined) return cached;
  let chars = 0;
  let images = 0;
  const content = message.content as unknown;
  if (typeof content === "string") chars += content.length;
  else if (Array.isArray(content)) {
    for (const part of content as { type: string; [k: string]: unknown }[]) {
      if (part.type === "text") chars += (part.text as string).length;
      else if (part.type === "thinking") chars += (part.thinking as string).length;
      else if (part.type === "toolCall")
        chars += (part.name as string).length + JSON.stringify(part.arguments ?? {}).length;
      else if (part.type === "image") images++;
    }
  }
  const tokens = Math.ceil(chars / 4) + images * IMAGE_TOKENS;
  estimates.set(message, tokens);
  return tokens;
}

export function usageTotal(usage: Usage | undefined): number {
  return usage ? usage.input + usage.output + usage.cacheRead + usage.cacheWrite : 0;
}

/**
 * Context size, kept up to date as messages are appended (O(1) per turn): the newest assistant usage
 * (what the provider really counted) plus estimates of what came after it; estimates alone when no
 * usage is known. Usage from before the latest compaction (`floor`) is stale and ignored. The whole
 * history's estimate is made on first use (compaction), so a resumed history is not walked. */
export class ContextTally {
  private readonly base: AgentMessage[]; // not yet estimated
  private all = 0;
  private usage = 0;
  private tail = 0;

  constructor(messages: readonly AgentMessage[], floor: number) {
    let i = messages.length - 1;
    for (; i >= floor; i--) {
      this.usage = freshUsage(messages[i]!);
      if (this.usage) break;
    }
    for (let j = i + 1; this.usage > 0 && j < messages.length; j++) this.tail += estimateMessageTokens(messages[j]!);
    this.base = messages.slice();
  }

  add(m: AgentMessage): void {
    const [est, used] = [estimateMessageTokens(m), freshUsage(m)];
    this.all += est;
    if (used > 0) [this.usage, this.tail] = [used, 0];
    else this.tail += est;
  }

  get tokens(): number {
    return this.usage > 0 ? this.usage + this.tail : this.estimated;
  }

  /** True when `tokens` rests on a provider's usage figure (which counts the system prompt and tools too). */
  get measured(): boolean {
    return this.usage > 0;
  }

  /** The estimate over the messages alone, whatever usage says. */
  get estimated(): number {
    this.all += this.base.splice(0).reduce((n, m) => n + estimateMessageTokens(m), 0);
    return this.all;
  }
}

const freshUsage = (m: AgentMessage) =>
  m.role === "assistant" && m.stopReason !== "error" && m.stopReason !== "aborted" ? usageTotal(m.usage) : 0;

/**
 * A signal that follows `parent` until `release()`. Each provider call gets one: SDK clients add an abort
 * listener to the signal they are given and do not always remove it, which on the run's long-lived signal
 * would pile up one listener per request (MaxListenersExceededWarning after ten).
 */
export function scopedSignal(parent: AbortSignal): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent.reason);
  if (parent.aborted) onAbort();
  else parent.addEventListener("abort", onAbort, { once: true });
  return { signal: controller.signal, release: () => parent.removeEventListener("abort", onAbort) };
}

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

export function toolCallsOf(message: AssistantMessage): ToolCall[] {
  return message.content.filter((c): c is ToolCall => c.type === "toolCall");
}

export function emptyUsage(): Usage {
  return {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

export function errorResult(call: ToolCall, text: string, details?: unknown): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text }],
    isError: true,
    details,
    timestamp: Date.now(),
  };
}

/** Tool calls in `messages` that have no result yet (after the last assistant message). */
export function unansweredCalls(messages: readonly AgentMessage[]): ToolCall[] {
  const answered = new Set<string>();
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "toolResult") answered.add(m.toolCallId);
    else if (m.role === "assistant") return toolCallsOf(m).filter((c) => !answered.has(c.id));
  }
  return [];
}

/** Freeze a message and its content parts so taps cannot mutate history in place. `details` stays the tool's. */
export function freezeMessage<M extends AgentMessage>(message: M): M {
  if (Object.isFrozen(message)) return message;
  if (Array.isArray(message.content)) {
    for (const part of message.content) {
      if ((part as ToolCall).type === "toolCall") Object.freeze((part as ToolCall).arguments);
      Object.freeze(part);
    }
    Object.freeze(message.content);
  }
  if (message.role === "assistant") Object.freeze(message.usage);
  return Object.freeze(message);
}

export function userMessage(text: string): AgentMessage {
  return { role: "user", content: text, timestamp: Date.now() };
}

export function textOf(message: AgentMessage | undefined): string {
  if (!message) return "";
  if (typeof message.content === "string") return message.content;
  return (message.content as { type: string; text?: string }[])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("");
}

/** The text of the last assistant message (a run's answer). */
export const lastAssistantText = (messages: readonly AgentMessage[]): string =>
  textOf([...messages].reverse().find((m) => m.role === "assistant"));
