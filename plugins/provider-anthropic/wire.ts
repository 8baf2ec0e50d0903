/**
 * Anthropic Messages wire format: the kernel request as `messages.create` parameters (with prompt
 * caching breakpoints and thinking settings), the streamed events as builder calls, and SDK errors
 * as retry decisions. Pure functions over plain data: the kit's driver (lib/provider-kit/driver.ts) runs
 * the request, through the adapter in index.ts.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type {
  AssistantMessage,
  ImageContent,
  Message,
  ProviderEvent,
  ProviderRequest,
  StopReason,
  TextContent,
} from "../../api/index.js";
import type { MessageBuilder } from "../../lib/provider-kit/builder.js";
import type { CatalogModel } from "../../lib/provider-kit/catalog.js";
import type { HistoryShape } from "../../lib/provider-kit/driver.js";
import { messages, retryAfterMs, statusFailure, type Failure } from "../../lib/provider-kit/errors.js";

type Params = Anthropic.MessageCreateParamsStreaming;
type Block = Anthropic.ContentBlockParam;
type ThinkingLevel = NonNullable<ProviderRequest["options"]["thinking"]>;

export interface WireOptions {
  /** Provider id (thinking from this provider and model is replayed with its signature). */
  provider: string;
  cache: "5m" | "1h" | "none";
  /** Output limit when the request sets none. */
  maxTokens: number;
}

/** Anthropic tool-use ids: [A-Za-z0-9_-], and this long at most. */
export const TOOL_ID_MAX = 64;

/** What the Messages API accepts of the history: short clean tool ids, and thinking only from the same model (signed). */
export const HISTORY: HistoryShape = { toolIds: TOOL_ID_MAX, thinking: "same-model" };

const BUDGETS: Record<Exclude<ThinkingLevel, "off">, number> = {
  minimal: 1024,
  low: 4096,
  medium: 10_240,
  high: 24_576,
  xhigh: 32_000,
};
const EFFORT: Record<Exclude<ThinkingLevel, "off">, string> = {
  minimal: "low",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "xhigh",
};

function nearestEffort(level: Exclude<ThinkingLevel, "off">, accepted: readonly string[] | undefined): string {
  const want = EFFORT[level];
  if (!accepted?.length || accepted.includes(want)) return want;
  const order = ["low", "medium", "high", "xhigh", "max"];
  const at = order.indexOf(want);
  return accepted.reduce(
    (best, e) => (Math.abs(order.indexOf(e) - at) < Math.abs(order.indexOf(best) - at) ? e : best),
    accepted[0]!,
  );
}

function image(img: ImageContent, model: CatalogModel): Block {
  if (model.input && !model.input.includes("image"))
    return { type: "text", text: "(image omitted: this model does not accept images)" };
  return { type: "image", source: { type: "base64", media_type: img.mimeType as "image/png", data: img.data } };
}

function parts(content: string | (TextContent | ImageContent)[], model: CatalogModel): Block[] {
  if (typeof content === "string") return content.trim() ? [{ type: "text", text: content }] : [];
  const out: Block[] = [];
  for (const c of content) {
    if (c.type === "image") out.push(image(c, model));
    else if (c.text.trim()) out.push({ type: "text", text: c.text });
  }
  return out;
}

/** The `messages.create` body for a kernel request whose history the driver repaired (as `HISTORY` says). */
export function buildParams(request: ProviderRequest, model: CatalogModel, o: WireOptions): Params {
  const history = request.messages;
  const out: Anthropic.MessageParam[] = [];
  const push = (role: "user" | "assistant", blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === role) (last.content as Block[]).push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of history) {
    if (m.role === "user") push("user", parts(m.content, model));
    else if (m.role === "toolResult") {
      const content = parts(m.content, model) as (Anthropic.TextBlockParam | Anthropic.ImageBlockParam)[];
      push("user", [
        {
          type: "tool_result",
          tool_use_id: m.toolCallId,
          content: content.length ? content : "(no output)",
          ...(m.isError ? { is_error: true } : {}),
        },
      ]);
    } else {
      const blocks: Block[] = [];
      for (const c of m.content) {
        if (c.type === "text") blocks.push({ type: "text", text: c.text });
        else if (c.type === "thinking")
          blocks.push(
            c.redacted
              ? { type: "redacted_thinking", data: c.signature ?? "" }
              : { type: "thinking", thinking: c.thinking, signature: c.signature ?? "" },
          );
        else blocks.push({ type: "tool_use", id: c.id, name: c.name, input: c.arguments ?? {} });
      }
      push("assistant", blocks);
    }
  }
  // The API wants the conversation to open with a user turn (history can start elsewhere after compaction).
  if (out[0]?.role !== "user")
    out.unshift({ role: "user", content: [{ type: "text", text: "(conversation continues)" }] });

  const cache: Anthropic.CacheControlEphemeral | undefined =
    o.cache === "none" ? undefined : o.cache === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
  const system: Anthropic.TextBlockParam[] = request.system
    .filter((b) => b.text.trim())
    .map((b) => ({ type: "text", text: b.text }));
  const tools: Anthropic.Tool[] = request.tools.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: t.parameters as unknown as Anthropic.Tool.InputSchema,
  }));
  let maxTokens = Math.min(
    model.maxOutput,
    typeof request.options.maxTokens === "number" ? request.options.maxTokens : o.maxTokens,
  );
  const params: Params = { model: model.id, max_tokens: maxTokens, messages: out, stream: true };
  if (system.length) params.system = system;
  if (tools.length) params.tools = tools;

  const level = request.options.thinking;
  let thinking = false;
  if (model.reasoning && model.thinking === "budget" && level && level !== "off") {
    maxTokens = Math.min(model.maxOutput, maxTokens + BUDGETS[level]);
    const budget = Math.min(BUDGETS[level], maxTokens - 1024);
    if (budget >= 1024) {
      params.max_tokens = maxTokens;
      params.thinking = { type: "enabled", budget_tokens: budget };
      thinking = true;
    }
  } else if (model.reasoning && (model.thinking === "adaptive" || model.thinking === "always")) {
    if (level === "off" && model.thinking === "adaptive") {
      params.thinking = { type: "disabled" };
    } else {
      params.thinking = { type: "adaptive", display: "summarized" };
      thinking = true;
      const effective = level === "off" ? "minimal" : level;
      if (effective) params.output_config = { effort: nearestEffort(effective, model.efforts) as "low" };
    }
  }
  if (thinking && openToolTurnWithoutThinking(history, out, model, o.provider)) {
    // The API wants the final assistant turn of a tool loop to open with its thinking, and this one
    // has none (another model wrote it, or thinking was off then). Send this request without
    // thinking where the model allows it; otherwise close that turn by writing its calls as text.
    if (model.thinking === "budget") {
      delete params.thinking;
      params.max_tokens = Math.min(
        model.maxOutput,
        typeof request.options.maxTokens === "number" ? request.options.maxTokens : o.maxTokens,
      );
      thinking = false;
    } else if (model.thinking === "adaptive") {
      params.thinking = { type: "disabled" };
      delete params.output_config;
      thinking = false;
    } else {
      closeToolTurn(out);
    }
  }
  if (cache) {
    // Breakpoints: end of the stable prefix (system, tools), the newest message, and the message
    // that ended the previous request, so a growing conversation reads last turn's prefix from cache.
    if (system.length) system[system.length - 1] = { ...system[system.length - 1]!, cache_control: cache };
    if (tools.length) tools[tools.length - 1] = { ...tools[tools.length - 1]!, cache_control: cache };
    const marks = new Set<number>([out.length - 1]);
    for (let i = out.length - 2; i >= 0; i--) {
      if (out[i]!.role === "assistant") {
        if (i > 0) marks.add(i - 1);
        break;
      }
    }
    for (const i of marks) {
      const msg = out[i]!;
      if (msg.role !== "user") continue;
      const blocks = msg.content as Block[];
      const last = blocks[blocks.length - 1]!;
      blocks[blocks.length - 1] = { ...last, cache_control: cache } as Block;
    }
  }

  // Newer models take no sampling parameters (the SDK no longer types them); older ones still accept temperature.
  const sampling = !thinking && !model.fixedSampling && model.thinking !== "adaptive" && model.thinking !== "always";
  if (typeof request.options.temperature === "number" && sampling)
    (params as unknown as { temperature: number }).temperature = request.options.temperature;
  return params;
}

/**
 * Whether the last assistant turn has tool calls but does not open with thinking, and was not this
 * model's own turn with adaptive thinking (which may skip thinking before a call).
 */
function openToolTurnWithoutThinking(
  history: readonly Message[],
  out: Anthropic.MessageParam[],
  model: CatalogModel,
  provider: string,
): boolean {
  const turn = out.findLast((m) => m.role === "assistant");
  if (!turn) return false;
  const blocks = turn.content as Block[];
  if (!blocks.some((b) => b.type === "tool_use")) return false;
  if (blocks[0]?.type === "thinking" || blocks[0]?.type === "redacted_thinking") return false;
  if (model.thinking === "budget") return true;
  const source = history.findLast((m): m is AssistantMessage => m.role === "assistant");
  return !(source && source.provider === provider && source.model === model.id);
}

/**
 * Rewrite the last assistant turn's tool calls, and the results answering them, as plain text: the
 * conversation keeps what was done, and no tool loop is left open for thinking to precede.
 */
function closeToolTurn(out: Anthropic.MessageParam[]): void {
  const at = out.findLastIndex((m) => m.role === "assistant");
  const names = new Map<string, string>();
  out[at] = {
    role: "assistant",
    content: (out[at]!.content as Block[]).map((b): Block => {
      if (b.type !== "tool_use") return b;
      names.set(b.id, b.name);
      return { type: "text", text: `[called tool ${b.name} with ${JSON.stringify(b.input)}]` };
    }),
  };
  const next = out[at + 1];
  if (!next) return;
  const blocks: Block[] = [];
  for (const b of next.content as Block[]) {
    if (b.type !== "tool_result" || !names.has(b.tool_use_id)) {
      blocks.push(b);
      continue;
    }
    blocks.push({
      type: "text",
      text: `[${b.is_error ? "error from" : "result of"} tool ${names.get(b.tool_use_id)}]`,
    });
    if (typeof b.content === "string") blocks.push({ type: "text", text: b.content });
    else for (const c of b.content ?? []) blocks.push(c as Block);
  }
  out[at + 1] = { role: "user", content: blocks };
}

export function mapStopReason(reason: string | null | undefined): StopReason {
  switch (reason) {
    case "tool_use":
      return "toolUse";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "refusal":
      return "refusal";
    case "pause_turn":
      return "pause";
    default:
      return "stop";
  }
}

/** The stream closed before `message_stop`: a dropped connection as far as retries are concerned. */
export class StreamEndedEarly extends Error {
  constructor() {
    super("the response stream ended before message_stop (connection dropped)");
  }
}

/** Feed one streamed reply into the builder; yields the kernel's delta events and returns the stop reason. */
export async function* readStream(
  events: AsyncIterable<Anthropic.RawMessageStreamEvent>,
  builder: MessageBuilder,
): AsyncGenerator<ProviderEvent, StopReason> {
  const index = new Map<number, number>();
  let stopReason: string | null | undefined;
  let stopped = false;
  const usage = (u: Partial<Anthropic.MessageDeltaUsage> | undefined) => {
    if (!u) return;
    builder.setTokens({
      input: u.input_tokens ?? undefined,
      output: u.output_tokens ?? undefined,
      cacheRead: u.cache_read_input_tokens ?? undefined,
      cacheWrite: u.cache_creation_input_tokens ?? undefined,
    });
  };
  for await (const event of events) {
    switch (event.type) {
      case "message_start":
        usage(event.message.usage);
        yield builder.start();
        break;
      case "content_block_start": {
        const block = event.content_block;
        if (block.type === "text") {
          const at = builder.addText();
          index.set(event.index, at);
          if (block.text) yield builder.textDelta(at, block.text);
        } else if (block.type === "thinking") {
          index.set(event.index, builder.addThinking("", block.signature || undefined));
          if (block.thinking) yield builder.thinkingDelta(index.get(event.index)!, block.thinking);
        } else if (block.type === "redacted_thinking") {
          index.set(event.index, builder.addThinking("", block.data, true));
        } else if (block.type === "tool_use") {
          index.set(event.index, builder.addToolCall(block.id, block.name));
        } else if (block.type === "server_tool_use") {
          builder.serverToolRan = true;
        }
        break;
      }
      case "content_block_delta": {
        const at = index.get(event.index);
        if (at === undefined) break; // a block type coil does not keep (server tools, citations)
        const d = event.delta;
        if (d.type === "text_delta") yield builder.textDelta(at, d.text);
        else if (d.type === "thinking_delta") yield builder.thinkingDelta(at, d.thinking);
        else if (d.type === "signature_delta") builder.signature(at, d.signature);
        else if (d.type === "input_json_delta") yield builder.toolDelta(at, d.partial_json);
        break;
      }
      case "message_delta":
        stopReason = event.delta.stop_reason ?? stopReason;
        usage(event.usage);
        break;
      case "message_stop":
        stopped = true;
        break;
    }
  }
  if (!stopped) throw new StreamEndedEarly();
  return mapStopReason(stopReason);
}

const OVERFLOW =
  /prompt is too long|input is too long|exceeds? (?:the )?(?:model'?s? )?(?:maximum )?context|context (?:window|length) (?:exceeded|limit)|too many (?:input )?tokens|input length and `max_tokens` exceed/i;

interface ApiErrorLike {
  status?: number;
  headers?: Headers;
  error?: { error?: { type?: string; message?: string }; type?: string; message?: string };
  type?: string | null;
  apiMessage?: string | null;
  message?: string;
}

/**
 * How a failed request should be handled and described (without the key: the driver redacts); undefined
 * for a failure with no status and no API error (the driver reads the transport's).
 */
export function classify(
  error: unknown,
  where: { provider: string; baseUrl: string; keyFrom?: string; keyHint: string; model: string },
): Failure | undefined {
  const e = (error ?? {}) as ApiErrorLike;
  const status = typeof e.status === "number" ? e.status : undefined;
  const body = e.error?.error ?? (e.error?.type ? e.error : undefined);
  const type = body?.type ?? e.type ?? undefined;
  const detail = body?.message ?? e.apiMessage ?? messages(error)[0] ?? String(error);
  const label = `${where.provider}${status ? ` HTTP ${status}` : ""}${type ? ` ${type}` : ""}`;
  if (error instanceof StreamEndedEarly)
    return { message: `${where.provider}: ${detail}`, retryable: true, overflow: false };
  if (status === 413 || (status === 400 && OVERFLOW.test(detail))) {
    return { message: `${label}: ${detail}`, status, retryable: false, overflow: true };
  }
  if (status !== undefined)
    return statusFailure(status, label, detail, where, {
      overloaded: /overloaded/i.test(`${type} ${detail}`),
      headers: e.headers,
    });
  if (type) {
    // An `event: error` inside the stream (no HTTP status): overloaded and api errors are transient.
    const retryable = /overloaded|api_error|rate_limit|timeout/i.test(type) || /overloaded/i.test(detail);
    const overflow = OVERFLOW.test(detail);
    return {
      message: `${label}: ${detail}`,
      retryable: retryable && !overflow,
      overflow,
      retryAfterMs: retryAfterMs(e.headers),
    };
  }
  return undefined;
}
