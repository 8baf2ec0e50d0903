/**
 * OpenAI Chat Completions wire format, for OpenAI and every compatible server: request body (with
 * per-server compat switches), streamed chunks (text, `reasoning_content`/`reasoning`, tool_calls
 * deltas, usage from `stream_options.include_usage`) as builder calls.
 */
import type OpenAI from "openai";
import type { ImageContent, ProviderEvent, ProviderRequest, StopReason, TextContent } from "../../api/index.js";
import type { MessageBuilder } from "../../lib/provider-kit/builder.js";
import type { CatalogModel } from "../../lib/provider-kit/catalog.js";
import type { ResolvedCompat } from "../../lib/provider-kit/config.js";
import { StreamEndedEarly, effortFor } from "./shared.js";

type Params = OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;
type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type Part = OpenAI.Chat.Completions.ChatCompletionContentPart;

export interface CompletionsOptions {
  compat: ResolvedCompat;
  maxTokens: number;
}

function imagePart(img: ImageContent): Part {
  return { type: "image_url", image_url: { url: `data:${img.mimeType};base64,${img.data}` } };
}

function userContent(content: string | (TextContent | ImageContent)[], model: CatalogModel): string | Part[] {
  if (typeof content === "string") return content;
  const images = model.input?.includes("image") ?? true;
  const parts: Part[] = content.map((c) =>
    c.type === "text"
      ? { type: "text", text: c.text }
      : images
        ? imagePart(c)
        : { type: "text", text: "(image omitted: this model does not accept images)" },
  );
  return parts.every((p) => p.type === "text") ? parts.map((p) => (p as { text: string }).text).join("\n") : parts;
}

export function buildCompletionsParams(request: ProviderRequest, model: CatalogModel, o: CompletionsOptions): Params {
  const { compat } = o;
  const history = request.messages; // repaired by the driver (index.ts's history shape)
  const messages: ChatMessage[] = [];
  const system = request.system
    .map((b) => b.text)
    .filter((t) => t.trim())
    .join("\n\n");
  if (system) messages.push({ role: compat.systemRole, content: system } as ChatMessage);
  let pendingImages: ImageContent[] = [];
  const flushImages = () => {
    // tool messages carry text only; images from tool results follow them as one user message
    if (pendingImages.length === 0) return;
    const images = model.input?.includes("image") ?? true;
    messages.push({
      role: "user",
      content: images
        ? [{ type: "text", text: "Images returned by the tool calls above:" }, ...pendingImages.map(imagePart)]
        : "(the tool calls above returned images; this model does not accept images)",
    });
    pendingImages = [];
  };
  for (const m of history) {
    if (m.role !== "toolResult") flushImages();
    // Servers that reject a user message right after tool results get an assistant message between.
    if (m.role === "user" && compat.requiresAssistantAfterToolResult && messages.at(-1)?.role === "tool")
      messages.push({ role: "assistant", content: "I have processed the tool results." });
    if (m.role === "user") messages.push({ role: "user", content: userContent(m.content, model) });
    else if (m.role === "toolResult") {
      const textOut = m.content
        .filter((c): c is TextContent => c.type === "text")
        .map((c) => c.text)
        .join("\n");
      pendingImages.push(...m.content.filter((c): c is ImageContent => c.type === "image"));
      const tool: OpenAI.Chat.Completions.ChatCompletionToolMessageParam & { name?: string } = {
        role: "tool",
        tool_call_id: m.toolCallId,
        content: textOut || (m.content.length ? "(see the image below)" : "(no output)"),
      };
      if (compat.requiresToolResultName) tool.name = m.toolName;
      messages.push(tool);
    } else {
      const textOut = m.content
        .filter((c): c is TextContent => c.type === "text")
        .map((c) => c.text)
        .join("");
      const calls = m.content.filter((c) => c.type === "toolCall");
      const msg: OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam = {
        role: "assistant",
        content: textOut || null,
      };
      if (calls.length)
        msg.tool_calls = calls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) },
        }));
      if (msg.content === null && !msg.tool_calls) continue;
      messages.push(msg);
    }
  }
  flushImages();

  const params: Params = { model: model.id, messages, stream: true };
  if (compat.streamUsage) params.stream_options = { include_usage: true };
  const limit = Math.min(
    model.maxOutput,
    typeof request.options.maxTokens === "number" ? request.options.maxTokens : o.maxTokens,
  );
  if (compat.maxTokensField === "max_tokens") params.max_tokens = limit;
  else params.max_completion_tokens = limit;
  if (request.tools.length) {
    params.tools = request.tools.map((t) => ({
      type: "function",
      function: {
        name: t.name,
        description: t.description,
        parameters: t.parameters as unknown as Record<string, unknown>,
        ...(compat.supportsStrictMode ? { strict: false } : {}),
      },
    }));
  }
  if (model.reasoning) applyThinking(params, request.options.thinking, model, compat);
  if (typeof request.options.temperature === "number" && !model.reasoning)
    params.temperature = request.options.temperature;
  return params;
}

/** The thinking setting in the form the server takes (`compat.thinkingFormat`); nothing when the request sets no level. */
function applyThinking(
  params: Params,
  level: ProviderRequest["options"]["thinking"],
  model: CatalogModel,
  compat: ResolvedCompat,
): void {
  if (!level) return;
  const body = params as Params & Record<string, unknown>;
  switch (compat.thinkingFormat) {
    case "qwen":
      body.enable_thinking = level !== "off";
      return;
    case "zai":
      body.thinking = { type: level === "off" ? "disabled" : "enabled" };
      return;
    case "openrouter": {
      const effort = effortFor(level, model, compat.reasoningEffortMap);
      if (compat.reasoningEffort && effort) body.reasoning = effort === "none" ? { enabled: false } : { effort };
      return;
    }
    default: {
      const effort = compat.reasoningEffort ? effortFor(level, model, compat.reasoningEffortMap) : undefined;
      if (effort) params.reasoning_effort = effort as Params["reasoning_effort"];
    }
  }
}

function mapFinish(reason: string | null | undefined, hasCalls: boolean): StopReason {
  switch (reason) {
    case "length":
      return "length";
    case "content_filter":
      return "refusal";
    case "tool_calls":
    case "function_call":
      return "toolUse";
    default:
      return hasCalls ? "toolUse" : "stop";
  }
}

type Delta = OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta & {
  reasoning_content?: string | null;
  reasoning?: string | null;
  reasoning_text?: string | null;
};
type ChunkUsage = OpenAI.CompletionUsage & { prompt_cache_hit_tokens?: number; prompt_cache_miss_tokens?: number };

export async function* readCompletions(
  chunks: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>,
  builder: MessageBuilder,
): AsyncGenerator<ProviderEvent, StopReason> {
  let started = false;
  let finish: string | null | undefined;
  let sawAnything = false;
  let text: number | undefined;
  let thinking: number | undefined;
  const calls = new Map<number, number>();
  for await (const chunk of chunks) {
    if (!started) {
      started = true;
      yield builder.start();
    }
    const usage = chunk.usage as ChunkUsage | null | undefined;
    if (usage) {
      const cached = usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens ?? 0;
      builder.setTokens({
        input: (usage.prompt_tokens ?? 0) - cached,
        output: usage.completion_tokens ?? 0,
        cacheRead: cached,
        cacheWrite: 0,
      });
    }
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    sawAnything = true;
    const d = (choice.delta ?? {}) as Delta;
    const reasoning = d.reasoning_content ?? d.reasoning ?? d.reasoning_text;
    if (reasoning) {
      if (thinking === undefined || text !== undefined) {
        thinking = builder.addThinking();
        text = undefined;
      }
      yield builder.thinkingDelta(thinking, reasoning);
    }
    if (d.content) {
      if (text === undefined) text = builder.addText();
      yield builder.textDelta(text, d.content);
    }
    if (d.refusal) {
      if (text === undefined) text = builder.addText();
      yield builder.textDelta(text, d.refusal);
      finish ??= "content_filter";
    }
    for (const tc of d.tool_calls ?? []) {
      const key = tc.index ?? calls.size;
      let at = calls.get(key);
      if (at === undefined) {
        at = builder.addToolCall(tc.id || `call_${key}`, tc.function?.name ?? "");
        calls.set(key, at);
        text = undefined;
      } else if (tc.id || tc.function?.name) {
        builder.patchToolCall(at, { id: tc.id ?? undefined, name: tc.function?.name ?? undefined });
      }
      if (tc.function?.arguments) yield builder.toolDelta(at, tc.function.arguments);
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  if (!finish && (!sawAnything || !started))
    throw new StreamEndedEarly("the response stream ended before any choice arrived");
  if (!finish) throw new StreamEndedEarly("the response stream ended without a finish_reason (connection dropped)");
  return mapFinish(finish, calls.size > 0);
}
