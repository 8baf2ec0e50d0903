/**
 * Builds one assistant message while a provider streams it, and hands out the kernel's provider
 * events. Every delta replaces the block it touches, so each event's `partial` is a cheap snapshot
 * (a new content array; untouched blocks are shared) that later deltas never change.
 */
import type {
  AssistantMessage,
  ProviderEvent,
  StopReason,
  TextContent,
  ThinkingContent,
  ToolCall,
  Usage,
} from "../../api/index.js";
import { computeCost, type CatalogModel } from "./catalog.js";
import { parsePartialJson } from "./partial-json.js";

type Block = TextContent | ThinkingContent | ToolCall;
type Tokens = Pick<Usage, "input" | "output" | "cacheRead" | "cacheWrite">;

/** Argument buffers longer than this are re-parsed for previews only every this many characters. */
const PREVIEW_STEP = 16_384;

export class MessageBuilder {
  private content: Block[] = [];
  private readonly args = new Map<number, { raw: string; parsedAt: number }>();
  readonly tokens: Tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  /**
   * True once the reply shows that the server ran a tool of its own (web search, code execution):
   * retrying would run it again, so a reply that fails after that is not retried.
   */
  serverToolRan = false;
  readonly timestamp = Date.now();

  constructor(
    readonly provider: string,
    readonly model: CatalogModel,
  ) {}

  get length(): number {
    return this.content.length;
  }

  block(index: number): Block | undefined {
    return this.content[index];
  }

  private priced?: Usage;

  /** Usage so far, with its cost (one object until the counts change, so snapshots share it). */
  usage(): Usage {
    this.priced ??= { ...this.tokens, cost: computeCost(this.tokens, this.model) };
    return this.priced;
  }

  setTokens(tokens: Partial<Tokens>): void {
    for (const key of ["input", "output", "cacheRead", "cacheWrite"] as const) {
      const v = tokens[key];
      if (typeof v === "number" && Number.isFinite(v)) this.tokens[key] = Math.max(0, v);
    }
    this.priced = undefined;
  }

  snapshot(stopReason: StopReason = "stop"): AssistantMessage {
    return {
      role: "assistant",
      content: this.content.slice(),
      provider: this.provider,
      model: this.model.id,
      usage: this.usage(),
      stopReason,
      timestamp: this.timestamp,
    };
  }

  start(): ProviderEvent {
    return { type: "start", partial: this.snapshot() };
  }

  addText(text = ""): number {
    return this.content.push({ type: "text", text }) - 1;
  }

  addThinking(thinking = "", signature?: string, redacted?: boolean): number {
    const block: ThinkingContent = { type: "thinking", thinking };
    if (signature !== undefined) block.signature = signature;
    if (redacted) block.redacted = true;
    return this.content.push(block) - 1;
  }

  addToolCall(id: string, name: string, rawArguments = ""): number {
    const index = this.content.push({ type: "toolCall", id, name, arguments: {} }) - 1;
    this.args.set(index, { raw: rawArguments, parsedAt: 0 });
    return index;
  }

  textDelta(index: number, delta: string): ProviderEvent {
    const block = this.content[index] as TextContent;
    this.content[index] = { ...block, text: block.text + delta };
    return { type: "text_delta", contentIndex: index, delta, partial: this.snapshot() };
  }

  thinkingDelta(index: number, delta: string): ProviderEvent {
    const block = this.content[index] as ThinkingContent;
    this.content[index] = { ...block, thinking: block.thinking + delta };
    return { type: "thinking_delta", contentIndex: index, delta, partial: this.snapshot() };
  }

  /** Append to (or set) a thinking block's signature; signatures may arrive in pieces. */
  signature(index: number, piece: string, replace = false): void {
    const block = this.content[index] as ThinkingContent;
    this.content[index] = { ...block, signature: replace ? piece : (block.signature ?? "") + piece };
  }

  patchToolCall(index: number, patch: { id?: string; name?: string }): void {
    const block = this.content[index] as ToolCall;
    this.content[index] = { ...block, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v)) };
  }

  toolDelta(index: number, delta: string): ProviderEvent {
    const buffer = this.args.get(index) ?? { raw: "", parsedAt: 0 };
    buffer.raw += delta;
    this.args.set(index, buffer);
    if (buffer.raw.length < PREVIEW_STEP || buffer.raw.length - buffer.parsedAt >= PREVIEW_STEP) {
      buffer.parsedAt = buffer.raw.length;
      const preview = parsePartialJson(buffer.raw);
      if (preview && typeof preview === "object" && !Array.isArray(preview)) {
        this.content[index] = { ...(this.content[index] as ToolCall), arguments: preview as Record<string, unknown> };
      }
    }
    return { type: "toolcall_delta", contentIndex: index, delta, partial: this.snapshot() };
  }

  /** Raw argument text of a tool call (for APIs that send the full text at the end). */
  rawArguments(index: number): string {
    return this.args.get(index)?.raw ?? "";
  }

  setRawArguments(index: number, raw: string): void {
    this.args.set(index, { raw, parsedAt: 0 });
  }

  /** The reply as it ended: tool arguments parsed from their full text (`{}` when it is not an object). */
  finish(stopReason: StopReason): AssistantMessage {
    for (const [index, buffer] of this.args) {
      let parsed: unknown;
      let parseError: string | undefined;
      try {
        parsed = buffer.raw.trim() === "" ? {} : JSON.parse(buffer.raw);
      } catch (error) {
        parseError = (error as Error).message;
        parsed = stopReason === "length" ? (parsePartialJson(buffer.raw) ?? {}) : {};
      }
      const isObject = parsed && typeof parsed === "object" && !Array.isArray(parsed);
      if (!isObject && !parseError) parseError = `expected a JSON object, got ${JSON.stringify(parsed)?.slice(0, 40)}`;
      const call: ToolCall = {
        ...(this.content[index] as ToolCall),
        arguments: isObject ? (parsed as Record<string, unknown>) : {},
      };
      if (parseError) call.parseError = parseError; // the kernel answers such a call with an error and never runs it
      this.content[index] = call;
    }
    this.content = this.content.filter(
      (b) => !(b.type === "text" && b.text === "") && !(b.type === "thinking" && b.thinking === "" && !b.signature),
    );
    return this.snapshot(stopReason);
  }

  /** A failed or aborted reply: what was streamed, without tool calls (they were never complete). */
  fail(stopReason: "error" | "aborted", errorMessage: string, errorCode?: string): AssistantMessage {
    const message = this.snapshot(stopReason);
    message.content = message.content.filter((b) => b.type !== "toolCall" && !(b.type === "text" && b.text === ""));
    message.errorMessage = errorMessage;
    if (errorCode) message.errorCode = errorCode;
    return message;
  }
}
