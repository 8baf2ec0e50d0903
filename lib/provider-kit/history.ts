/**
 * History as a provider can send it, whichever providers wrote it: failed replies are left out,
 * thinking the target cannot replay is dropped, tool-call ids are rewritten to what the API
 * accepts, and every tool call has exactly one result right after its message.
 */
import type { AssistantMessage, Message, ToolCall } from "../../api/index.js";

export interface HistoryRules {
  /** The id as the API accepts it; must map equal ids to equal ids (see normalizeToolCallId). */
  normalizeId(id: string): string;
  /** Whether this assistant message's thinking blocks can be sent back as thinking (same provider and model). */
  keepThinking(message: AssistantMessage): boolean;
}

const NO_RESULT = "No result was recorded for this tool call (the run that made it ended first).";

/** FNV-1a, 32 bits, as 8 hex digits: a short stable suffix for shortened ids. */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}

/** Mistral's tool-call ids: exactly 9 letters and digits (an id of that shape is kept, any other becomes `c` + 8 hex digits of its hash). */
export function mistralToolCallId(id: string): string {
  return /^[A-Za-z0-9]{9}$/.test(id) ? id : `c${hash(id)}`;
}

/** A tool-call id made of [A-Za-z0-9_-], at most `max` characters; the same input always maps to the same id. */
export function normalizeToolCallId(id: string, max: number): string {
  if (/^[A-Za-z0-9_-]+$/.test(id) && id.length <= max) return id;
  const clean = id.replace(/[^A-Za-z0-9_-]/g, "_");
  const suffix = hash(id);
  const room = max - suffix.length - 1;
  return room > 0 ? `${clean.slice(0, room)}_${suffix}` : suffix.slice(0, max);
}

/**
 * What an API accepts of the history, as data (an adapter's `history`): the driver turns it into the rules
 * prepareHistory applies, so a provider plugin never repairs history itself.
 */
export interface HistoryShape {
  /** Tool-call ids: at most this many characters of [A-Za-z0-9_-], or Mistral's 9 letters and digits. */
  toolIds: number | "mistral";
  /** Ids are `call_id|item_id` pairs (the Responses API): the call part is shortened, a clean item part kept. */
  pairedIds?: boolean;
  /** Thinking sent back as thinking: only in a reply of this provider and model, or never. */
  thinking: "same-model" | "never";
}

/** The rules for a shape, for requests to `provider`'s `model`. */
export function historyRules(shape: HistoryShape, provider: string, model: string): HistoryRules {
  const { toolIds } = shape;
  const one = (id: string) => (toolIds === "mistral" ? mistralToolCallId(id) : normalizeToolCallId(id, toolIds));
  const normalizeId = shape.pairedIds
    ? (id: string) => {
        const bar = id.indexOf("|");
        if (bar < 0) return one(id);
        const item = id.slice(bar + 1);
        const call = one(id.slice(0, bar));
        return /^[A-Za-z0-9_-]+$/.test(item) ? `${call}|${item}` : call;
      }
    : one;
  const keepThinking =
    shape.thinking === "same-model"
      ? (m: AssistantMessage) => m.provider === provider && m.model === model
      : () => false;
  return { normalizeId, keepThinking };
}

/**
 * Indices of user messages whose run got no reply but failed ones (provider errors), when a later
 * user message follows: the user moved on, so that prompt is not sent again glued to the new one.
 * The prompt of the last failed run stays, so `continue()` after an error retries it.
 */
function abandonedPrompts(messages: readonly Message[]): Set<number> {
  const drop = new Set<number>();
  for (let i = 0; i < messages.length; ) {
    if (messages[i]!.role !== "user") {
      i++;
      continue;
    }
    let j = i;
    while (j < messages.length && messages[j]!.role === "user") j++;
    let k = j;
    while (
      k < messages.length &&
      messages[k]!.role === "assistant" &&
      (messages[k] as AssistantMessage).stopReason === "error"
    )
      k++;
    if (k > j && messages[k]?.role === "user") for (let u = i; u < j; u++) drop.add(u);
    i = Math.max(k, j);
  }
  return drop;
}

/**
 * The messages to send. Assistant messages that ended in error or abort are dropped (their partial
 * content is not a reply the model gave), and so is the prompt of a run that failed before any
 * reply when a newer prompt follows; a result whose call is not in the preceding assistant
 * message is dropped; a call without a result gets an error result.
 */
export function prepareHistory(messages: readonly Message[], rules: HistoryRules): Message[] {
  const out: Message[] = [];
  const abandoned = abandonedPrompts(messages);
  let open: ToolCall[] = [];
  let answered = new Set<string>();
  const closeOpen = () => {
    for (const call of open) {
      if (answered.has(call.id)) continue;
      out.push({
        role: "toolResult",
        toolCallId: call.id,
        toolName: call.name,
        content: [{ type: "text", text: NO_RESULT }],
        isError: true,
        timestamp: 0,
      });
    }
    open = [];
    answered = new Set();
  };
  for (const [index, m] of messages.entries()) {
    if (abandoned.has(index)) continue;
    if (m.role === "toolResult") {
      const id = rules.normalizeId(m.toolCallId);
      if (!open.some((c) => c.id === id) || answered.has(id)) continue;
      answered.add(id);
      out.push(id === m.toolCallId ? m : { ...m, toolCallId: id });
      continue;
    }
    closeOpen();
    if (m.role === "user") {
      out.push(m);
      continue;
    }
    if (m.stopReason === "error" || m.stopReason === "aborted") continue;
    const keep = rules.keepThinking(m);
    const content: AssistantMessage["content"] = [];
    for (const block of m.content) {
      if (block.type === "thinking") {
        if (keep && (block.signature || block.redacted)) content.push(block);
      } else if (block.type === "toolCall") {
        const id = rules.normalizeId(block.id);
        const call = id === block.id ? block : { ...block, id };
        content.push(call);
        open.push(call);
      } else if (block.text.trim() !== "") {
        content.push(block);
      }
    }
    if (content.length === 0) continue;
    out.push(
      content.length === m.content.length && content.every((c, i) => c === m.content[i]) ? m : { ...m, content },
    );
  }
  closeOpen();
  return out;
}
