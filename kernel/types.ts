/**
 * The kernel's contracts: messages, tools, providers, and what each hook receives and returns.
 * Provider wire formats never appear here; provider plugins map to and from these shapes.
 */
import type { Static, TSchema } from "typebox";

// ─── content ───

export interface TextContent {
  type: "text";
  text: string;
}

export interface ImageContent {
  type: "image";
  /** Base64 data, no `data:` prefix. */
  data: string;
  mimeType: string;
}

export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  /** Provider signature that lets the block be replayed (Anthropic `signature`, OpenAI encrypted content). */
  signature?: string;
  /** True when the provider sent redacted thinking; `signature` then holds the opaque payload. */
  redacted?: boolean;
}

export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  /** Parsed arguments (`{}` when they did not parse). */
  arguments: Record<string, unknown>;
  /** Set by the provider when the arguments' JSON did not parse: the call is answered with an error, never run. */
  parseError?: string;
}

// ─── messages ───

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Cost in US dollars, computed by the provider plugin from its model catalog (0 when unknown). */
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

/**
 * Why a reply ended.
 * - `stop`: the model finished; `toolUse`: it wants tool results; `length`: it hit the output limit;
 * - `refusal`: the model declined; `pause`: the provider paused a long turn and the loop re-sends it;
 * - `error`: the provider failed (see `errorMessage`, `errorCode`); `aborted`: the run's signal fired.
 */
export type StopReason = "stop" | "toolUse" | "length" | "refusal" | "pause" | "error" | "aborted";

/**
 * Why a run ended: the last reply's stop reason, or `halted` when a `should_stop` rule ended it (a guard's
 * limit, a done-gate that kept failing, a Stop hook); the rule's reason is then in `reason`.
 */
export type RunStopReason = StopReason | "halted";

export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  timestamp: number;
}

export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | ToolCall)[];
  /** Provider id and model id that produced the reply. */
  provider: string;
  model: string;
  usage: Usage;
  stopReason: StopReason;
  errorMessage?: string;
  /** Machine-readable error class; `context_overflow` makes the kernel compact and retry once. */
  errorCode?: string;
  timestamp: number;
}

export interface ToolResultMessage<D = unknown> {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  /** Structured data for front ends and plugins; never sent to the model. */
  details?: D;
  isError: boolean;
  /**
   * Set when plugins rewrote the call's arguments (tool_call's rewrite step): what ran (or was blocked) and
   * who changed it. The assistant message keeps the arguments the model sent.
   */
  rewritten?: { args: Record<string, unknown>; by: readonly string[] };
  timestamp: number;
}

/**
 * A message that plugins and front ends add to history for display or state. It never reaches the
 * model as is: a `before_request` tap may convert it to a user message; any left over are dropped.
 */
export interface CustomMessage<D = unknown> {
  role: "custom";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  /** Whether a front end should show it. */
  display: boolean;
  details?: D;
  timestamp: number;
}

/** What a provider may receive. */
export type Message = UserMessage | AssistantMessage | ToolResultMessage;
/** What history holds. */
export type AgentMessage = Message | CustomMessage;

export const ERROR_CONTEXT_OVERFLOW = "context_overflow";

// ─── models and providers ───

export interface ModelInfo {
  id: string;
  provider: string;
  name?: string;
  /** Tokens the model accepts (prompt + output). */
  contextWindow: number;
  maxOutput: number;
  reasoning?: boolean;
  input?: ("text" | "image")[];
  /** US dollars per million tokens. */
  cost?: { input: number; output: number; cacheRead: number; cacheWrite: number };
}

export interface SystemBlock {
  /** Stable name of the block (e.g. `role`, `tools`, `skills`); lets plugins replace one block. */
  id: string;
  text: string;
}

/** What a tool looks like to the model. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: TSchema;
}

/** The request as `before_request` taps see and return it. */
export interface ModelRequest {
  model: ModelInfo;
  system: readonly SystemBlock[];
  /** History for this request; custom messages left here after `before_request` are dropped. */
  messages: readonly AgentMessage[];
  tools: readonly ToolSpec[];
  /** Provider-neutral knobs; providers ignore what they do not support. */
  options: RequestOptions;
}

/** Knobs for the provider, passed through as given: the provider-neutral ones are api/contracts.ts's. */
export interface RequestOptions {
  [key: string]: unknown;
}

/** The request a provider receives: custom messages are gone. */
export interface ProviderRequest extends Omit<ModelRequest, "messages"> {
  messages: readonly Message[];
}

/**
 * What a provider's stream yields. It ends with exactly one `done` or `error`.
 * Deltas are for display only; the final message is the truth.
 */
export type ProviderEvent =
  | { type: "start"; partial: AssistantMessage }
  | { type: "text_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "thinking_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "toolcall_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "retry"; attempt: number; delayMs: number; reason: string }
  | { type: "done"; message: AssistantMessage }
  | { type: "error"; message: AssistantMessage };

/** What the loop calls of a provider; its catalog and set-up, which model resolution reads, are api/contracts.ts's. */
export interface Provider {
  /** Provider id, the part before `/` in `--model provider/model`. */
  id: string;
  /**
   * Stream one reply. Contract: must not throw or reject; failures end the stream with an `error`
   * event whose message has `stopReason: "error"` (or `"aborted"` when `signal` fired).
   */
  stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent>;
}

// ─── tools ───

export interface ToolOutput<D = unknown> {
  content: (TextContent | ImageContent)[];
  details?: D;
  /** Mark the result as a failure the model should see as such. Throwing does the same. */
  isError?: boolean;
}

export interface ToolRunContext {
  toolCallId: string;
  /** Fires on abort; a tool should stop promptly. The kernel does not wait for a tool after abort. */
  signal: AbortSignal;
  /** Stream partial output to front ends (`tool_execution_update`). */
  update(partial: ToolOutput): void;
}

/** What tool execution uses of a tool; what front ends, plan mode and the system prompt read is api/contracts.ts's. */
export interface ToolDefinition<P extends TSchema = TSchema, D = unknown> {
  /** Name the model calls, a short snake_case verb. */
  name: string;
  description: string;
  parameters: P;
  /** `sequential` makes any batch containing this tool run one call at a time. */
  executionMode?: "parallel" | "sequential";
  /** Its `update()`s are output so far (bash): an abort then keeps the last one in the result the model sees. */
  partialIsOutput?: boolean;
  /** Repair known shape mistakes in raw arguments before validation. Must not throw. */
  prepareArguments?(args: Record<string, unknown>): Record<string, unknown>;
  execute(args: Static<P>, run: ToolRunContext): Promise<ToolOutput<D>>;
}

// ─── hook arguments and verdicts ───

/** Which agent a hook runs for: the main agent (`main`, depth 0) or a child made with `agent.fork()`. */
export interface AgentScope {
  /** `main`, or the id the child was forked with (the subagents plugin uses the `task` call's id). */
  id: string;
  /** 0 for the main agent, 1 for its children, 2 for theirs. */
  depth: number;
}

/** Second argument of `before_request`. */
export interface TurnInfo {
  /** 0-based turn index within this run. */
  turn: number;
  /** 0 for the first attempt, 1 for the retry after a context-overflow compaction. */
  attempt: number;
  signal: AbortSignal;
  agent: AgentScope;
}

/** What `tool_call` rewrites and gates and `tool_result` taps see. */
export interface ToolCallInfo {
  /** The call as the model made it. */
  call: ToolCall;
  /** Arguments after `prepareArguments`, validation and the rewrites so far: in the gate step, what will run. */
  args: Record<string, unknown>;
  /** Plugins whose rewrites changed `args`, in order (absent when none did). */
  rewrittenBy?: readonly string[];
  tool: ToolDefinition;
  /** The assistant message that made the call. */
  message: AssistantMessage;
  signal: AbortSignal;
  agent: AgentScope;
}

/** A `tool_call` gate bails with this to block a call. `reason` is shown to the model. */
export interface ToolBlock {
  block: true;
  reason: string;
}
/**
 * A tap of `tool_call`'s rewrite step returns this to run the call with other arguments: validated like the
 * model's, then the later rewrites and every gate see them.
 */
export interface ToolRewrite {
  args: Record<string, unknown>;
}

export type ToolResult = ToolResultMessage;

export interface TurnRecord {
  turn: number;
  message: AssistantMessage;
  /** One per tool call in `message`, in call order. */
  toolResults: readonly ToolResultMessage[];
  /** The whole context after the write-back. */
  messages: readonly AgentMessage[];
  agent: AgentScope;
}

export interface StopQuery {
  turn: TurnRecord;
  /** Turns completed in this run. */
  turns: number;
  /** Messages waiting in the steering queue. */
  steering: number;
  agent: AgentScope;
}

/**
 * `should_stop` verdicts. `{ stop: true }` ends the run; `{ stop: false, followUp }` continues with
 * the given messages. Returning undefined leaves it to later taps and then the default rule
 * (stop when the reply made no tool calls).
 */
export type StopVerdict =
  | { stop: true; reason: string }
  | { stop: false; reason?: string; followUp: readonly AgentMessage[] };

export type CompactReason = "threshold" | "overflow" | "manual";

export interface CompactRequest {
  messages: readonly AgentMessage[];
  /** Estimated tokens of `messages`. */
  tokens: number;
  contextWindow: number;
  reason: CompactReason;
  /**
   * Estimated tokens the new `messages` should stay under: the compaction limit (window − reserve) minus
   * what the system prompt and tools take, and after an overflow at most three quarters of `messages`.
   * Absent when the caller has no limit.
   */
  targetTokens?: number;
  model: ModelInfo;
  /** Extra instructions from the user (`/compact focus on X`). */
  instructions?: string;
  signal: AbortSignal;
  agent: AgentScope;
}

export interface CompactResult {
  /** The new context view that replaces `messages`. */
  messages: readonly AgentMessage[];
  /** Estimated tokens after compaction, when the strategy knows it. */
  tokensAfter?: number;
  details?: unknown;
}

// ─── events ───

/** Observe-only events for front ends. Listeners cannot change anything or slow the loop. */
export type AgentEvent =
  | { type: "agent_start" }
  | {
      type: "agent_end";
      stopReason: RunStopReason;
      reason?: string;
      messages: readonly AgentMessage[];
      unsent: readonly AgentMessage[];
    }
  | { type: "turn_start"; turn: number }
  | { type: "turn_end"; turn: number; message: AssistantMessage; toolResults: readonly ToolResultMessage[] }
  | { type: "message_start"; message: AgentMessage }
  | { type: "message_update"; message: AssistantMessage; event: ProviderEvent }
  | { type: "message_end"; message: AgentMessage }
  | {
      type: "tool_execution_start";
      toolCallId: string;
      toolName: string;
      /** The arguments that run: the model's, or the rewrite step's (then `rewrittenBy` names who changed them). */
      args: Record<string, unknown>;
      rewrittenBy?: readonly string[];
    }
  | { type: "tool_execution_update"; toolCallId: string; toolName: string; partial: ToolOutput }
  | { type: "tool_execution_end"; toolCallId: string; toolName: string; result: ToolResultMessage }
  | { type: "retry"; attempt: number; delayMs: number; reason: string }
  | { type: "compaction"; reason: CompactReason; tokensBefore: number; tokensAfter?: number; by: string }
  | { type: "diagnostic"; level: "info" | "warn" | "error"; message: string; plugin?: string; code?: string }
  /** A front end started; its `ui` (if any) is the `ui` service from now on (status, widgets: lib/ui.ts). */
  | { type: "ui_start"; mode: string };

export type AgentEventType = AgentEvent["type"];
