/** Small pure helpers over messages: token estimates, tool-call bookkeeping, freezing. */
import type { AgentMessage, AssistantMessage, StopReason, ToolCall, ToolResultMessage, Usage } from "./types.js";

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

/** An assistant message from this provider and model with no usage (yet): a reply's start, a front end's call. */
export function assistantMessage(
  to: { provider: { id: string }; model: { id: string } },
  content: AssistantMessage["content"],
  stopReason: StopReason,
): AssistantMessage {
  return {
    role: "assistant",
    content,
    provider: to.provider.id,
    model: to.model.id,
    usage: emptyUsage(),
    stopReason,
    timestamp: Date.now(),
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
