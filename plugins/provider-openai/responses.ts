/**
 * OpenAI Responses API wire format: request (instructions, input items, function tools, reasoning
 * with encrypted content for stateless replay) and streamed events (output items, text, reasoning
 * summaries, function-call arguments, usage with cached tokens) as builder calls.
 *
 * A tool call's id is `call_id|item_id`: the call id pairs results, the item id lets a replayed
 * function call stay linked to the reasoning item before it. Other providers' ids are rewritten
 * by the history step, so this never leaks into their requests.
 */
import type OpenAI from "openai";
import type {
  AssistantMessage,
  ImageContent,
  ProviderEvent,
  ProviderRequest,
  StopReason,
  TextContent,
} from "../../api/index.js";
import type { MessageBuilder } from "../../lib/provider-kit/builder.js";
import type { CatalogModel } from "../../lib/provider-kit/catalog.js";
import { StreamEndedEarly, StreamError, effortFor } from "./shared.js";

type Params = OpenAI.Responses.ResponseCreateParamsStreaming;
type Item = OpenAI.Responses.ResponseInputItem;
type Content = OpenAI.Responses.ResponseInputMessageContentList;

export interface ResponsesOptions {
  provider: string;
  /** `store: false` plus encrypted reasoning, so reasoning can be replayed without server-side state. */
  stateless: boolean;
  /** Send `strict: false` on function tools (a server that does not know the field: false, and it is left out). */
  strict?: boolean;
  maxTokens: number;
  /** The effort sent per thinking level (models.yaml `compat.reasoningEffortMap`). */
  reasoningEffortMap?: Partial<Record<string, string>>;
}

/** Longest call id the API takes (ids are `call_id|item_id` pairs; the driver shortens the call part). */
export const CALL_ID_MAX = 64;

/** `call_id|item_id` kept apart; a foreign id only has the call part. */
export function splitCallId(id: string): { callId: string; itemId?: string } {
  const bar = id.indexOf("|");
  return bar < 0 ? { callId: id } : { callId: id.slice(0, bar), itemId: id.slice(bar + 1) };
}

function inputContent(content: string | (TextContent | ImageContent)[], model: CatalogModel): Content {
  if (typeof content === "string") return [{ type: "input_text", text: content }];
  const images = model.input?.includes("image") ?? true;
  return content.map((c) =>
    c.type === "text"
      ? { type: "input_text", text: c.text }
      : images
        ? { type: "input_image", image_url: `data:${c.mimeType};base64,${c.data}`, detail: "auto" }
        : { type: "input_text", text: "(image omitted: this model does not accept images)" },
  );
}

function reasoningItem(signature: string | undefined): Item | undefined {
  if (!signature) return undefined;
  try {
    const item = JSON.parse(signature) as {
      type?: string;
      id?: string;
      summary?: unknown;
      encrypted_content?: string | null;
    };
    if (item.type !== "reasoning" || !item.id || !item.encrypted_content) return undefined;
    return {
      type: "reasoning",
      id: item.id,
      summary: Array.isArray(item.summary) ? item.summary : [],
      encrypted_content: item.encrypted_content,
    } as Item;
  } catch {
    return undefined;
  }
}

export function buildResponsesParams(request: ProviderRequest, model: CatalogModel, o: ResponsesOptions): Params {
  const sameModel = (m: AssistantMessage) => o.stateless && m.provider === o.provider && m.model === model.id;
  const history = request.messages; // repaired by the driver (index.ts's history shape)
  const input: Item[] = [];
  for (const m of history) {
    if (m.role === "user") input.push({ role: "user", content: inputContent(m.content, model) });
    else if (m.role === "toolResult") {
      const hasImage = m.content.some((c) => c.type === "image");
      const textOut = m.content
        .filter((c): c is TextContent => c.type === "text")
        .map((c) => c.text)
        .join("\n");
      const output = hasImage
        ? (inputContent(m.content, model) as OpenAI.Responses.ResponseFunctionCallOutputItemList)
        : textOut || "(no output)";
      input.push({ type: "function_call_output", call_id: splitCallId(m.toolCallId).callId, output });
    } else {
      const replayReasoning = sameModel(m);
      let text = "";
      const flush = () => {
        if (text) input.push({ role: "assistant", content: text });
        text = "";
      };
      for (const c of m.content) {
        if (c.type === "text") text += c.text;
        else if (c.type === "thinking") {
          const item = replayReasoning ? reasoningItem(c.signature) : undefined;
          if (item) {
            flush();
            input.push(item);
          }
        } else {
          flush();
          const { callId, itemId } = splitCallId(c.id);
          const call: OpenAI.Responses.ResponseFunctionToolCall = {
            type: "function_call",
            call_id: callId,
            name: c.name,
            arguments: JSON.stringify(c.arguments ?? {}),
          };
          if (itemId && replayReasoning) call.id = itemId;
          input.push(call);
        }
      }
      flush();
    }
  }

  const params: Params = { model: model.id, input, stream: true };
  const instructions = request.system
    .map((b) => b.text)
    .filter((t) => t.trim())
    .join("\n\n");
  if (instructions) params.instructions = instructions;
  params.max_output_tokens = Math.min(
    model.maxOutput,
    typeof request.options.maxTokens === "number" ? request.options.maxTokens : o.maxTokens,
  );
  if (request.tools.length) {
    params.tools = request.tools.map((t) => ({
      type: "function",
      name: t.name,
      description: t.description,
      parameters: t.parameters as unknown as Record<string, unknown>,
      ...(o.strict === false ? {} : { strict: false }),
    })) as Params["tools"];
  }
  if (model.reasoning) {
    const effort = effortFor(request.options.thinking, model, o.reasoningEffortMap);
    params.reasoning = { summary: "auto", ...(effort ? { effort: effort as "low" } : {}) };
    if (o.stateless) params.include = ["reasoning.encrypted_content"];
  } else if (typeof request.options.temperature === "number") {
    params.temperature = request.options.temperature;
  }
  if (o.stateless) params.store = false;
  return params;
}

type Usage = OpenAI.Responses.ResponseUsage | null | undefined;

function setUsage(builder: MessageBuilder, usage: Usage): void {
  if (!usage) return;
  const cached = usage.input_tokens_details?.cached_tokens ?? 0;
  builder.setTokens({
    input: usage.input_tokens - cached,
    output: usage.output_tokens,
    cacheRead: cached,
    cacheWrite: 0,
  });
}

export async function* readResponses(
  events: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>,
  builder: MessageBuilder,
): AsyncGenerator<ProviderEvent, StopReason> {
  const blocks = new Map<string, number>(); // output item id (or output_index) → builder index
  const keyOf = (itemId: string | undefined, outputIndex: number) => itemId || `#${outputIndex}`;
  let started = false;
  let calls = 0;
  for await (const event of events) {
    if (!started && event.type !== "error") {
      started = true;
      yield builder.start();
    }
    switch (event.type) {
      case "response.output_item.added": {
        const item = event.item;
        const key = keyOf(item.id, event.output_index);
        if (item.type === "reasoning") blocks.set(key, builder.addThinking());
        else if (item.type === "message") blocks.set(key, builder.addText());
        else if (item.type === "function_call") {
          calls++;
          blocks.set(
            key,
            builder.addToolCall(item.id ? `${item.call_id}|${item.id}` : item.call_id, item.name, item.arguments ?? ""),
          );
        } else if (item.type.endsWith("_call")) builder.serverToolRan = true; // web_search_call, code_interpreter_call, ...
        break;
      }
      case "response.reasoning_summary_part.added": {
        const at = blocks.get(keyOf(event.item_id, event.output_index));
        if (at !== undefined && event.summary_index > 0) yield builder.thinkingDelta(at, "\n\n");
        break;
      }
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta": {
        const at = blocks.get(keyOf(event.item_id, event.output_index));
        if (at !== undefined) yield builder.thinkingDelta(at, event.delta);
        break;
      }
      case "response.output_text.delta":
      case "response.refusal.delta": {
        const at = blocks.get(keyOf(event.item_id, event.output_index));
        if (at !== undefined) yield builder.textDelta(at, event.delta);
        break;
      }
      case "response.function_call_arguments.delta": {
        const at = blocks.get(keyOf(event.item_id, event.output_index));
        if (at !== undefined) yield builder.toolDelta(at, event.delta);
        break;
      }
      case "response.function_call_arguments.done": {
        const at = blocks.get(keyOf(event.item_id, event.output_index));
        if (at !== undefined && builder.rawArguments(at) !== event.arguments)
          builder.setRawArguments(at, event.arguments);
        break;
      }
      case "response.output_item.done": {
        const item = event.item;
        const at = blocks.get(keyOf(item.id, event.output_index));
        if (at === undefined) break;
        if (item.type === "reasoning") {
          // The whole item is the signature: it is what a later request sends back.
          builder.signature(
            at,
            JSON.stringify({
              type: "reasoning",
              id: item.id,
              summary: item.summary ?? [],
              encrypted_content: item.encrypted_content ?? null,
            }),
            true,
          );
          const block = builder.block(at);
          const summary = (item.summary ?? []).map((s) => s.text).join("\n\n");
          if (block?.type === "thinking" && !block.thinking && summary) yield builder.thinkingDelta(at, summary);
        } else if (item.type === "function_call" && item.arguments && builder.rawArguments(at) !== item.arguments) {
          builder.setRawArguments(at, item.arguments);
        }
        break;
      }
      case "response.completed":
        setUsage(builder, event.response.usage);
        return calls > 0 ? "toolUse" : "stop";
      case "response.incomplete": {
        setUsage(builder, event.response.usage);
        const reason = event.response.incomplete_details?.reason;
        return reason === "content_filter" ? "refusal" : "length";
      }
      case "response.failed": {
        const err = event.response.error;
        throw new StreamError(err?.message ?? "the response failed", err?.code ?? undefined);
      }
      case "error":
        throw new StreamError(event.message, event.code);
    }
  }
  throw new StreamEndedEarly("the response stream ended before response.completed (connection dropped)");
}
