/**
 * The agent loop: the only code that calls `hook.promise()`. It does no I/O of its own; the
 * provider, tools and taps do. Invariant: every tool call gets exactly one result, in call order.
 *
 * Longer than ~350 lines on purpose: the run, compaction, streaming and tool execution share the loop
 * state and its invariants (one result per call, abort answered everywhere), and a second file would
 * add imports to a kernel that is held to a line bar (docs/kernel.md).
 */
import { Compile, type Validator } from "typebox/compile";
import { Value } from "typebox/value";
import { CoilError, messageOf } from "./errors.js";
import {
  compactionLimit,
  ContextTally,
  emptyUsage,
  errorResult,
  freezeMessage,
  requestOverhead,
  scopedSignal,
  toolCallsOf,
  unansweredCalls,
} from "./messages.js";
import type { PluginHost } from "./host.js";
import {
  ERROR_CONTEXT_OVERFLOW,
  type AgentMessage,
  type AssistantMessage,
  type CompactReason,
  type CompactResult,
  type Message,
  type ModelInfo,
  type ModelRequest,
  type Provider,
  type RequestOptions,
  type RunStopReason,
  type StopReason,
  type SystemBlock,
  type ToolCall,
  type ToolCallInfo,
  type ToolDefinition,
  type ToolOutput,
  type ToolResultMessage,
  type TurnRecord,
} from "./types.js";

export interface LoopConfig {
  toolExecution: "parallel" | "sequential";
  /** Compact when the context estimate exceeds `contextWindow - reserveTokens` (the reserve capped at a quarter of the window). */
  reserveTokens: number;
  system: readonly SystemBlock[];
  requestOptions: RequestOptions;
}

/** What the loop needs from the stateful agent around it. */
export interface LoopState {
  host: PluginHost;
  provider: Provider;
  model: ModelInfo;
  config: LoopConfig;
  signal: AbortSignal;
  messages: AgentMessage[];
  /** Messages before this index were produced before the latest compaction: their usage is stale. */
  usageFloor: number;
  /** Running context estimate over `messages`. */
  tally: ContextTally;
  /** Estimated tokens of the last request's system prompt and tools (0 before the first request). */
  overhead?: number;
  /** After a compaction that could not get under the limit: no threshold compaction until the context is over this. */
  compactHold?: number;
  steering: AgentMessage[];
  followUp: AgentMessage[];
  /** The assistant message being streamed, for `agent.state`. */
  streaming?: AssistantMessage;
  pendingTools: Set<string>;
  /** Messages appended during this run, in order (compaction does not remove them from here). */
  added: AgentMessage[];
}

export interface RunOutcome {
  stopReason: RunStopReason;
  reason?: string;
  error?: string;
}

const TRUNCATED =
  "Not executed: your reply hit the output token limit before this call's arguments were complete. Re-issue the call with complete arguments, splitting large content across several calls if needed.";
const ABORTED = "Not executed: the run was aborted by the user.";
const ABORTED_RUNNING = "Aborted by the user before the tool finished.";
const SKIPPED = "Skipped: the user sent a new message.";

export async function runLoop(s: LoopState, input: readonly AgentMessage[]): Promise<RunOutcome> {
  const { host } = s;
  let outcome: RunOutcome = { stopReason: "stop" };
  for (const m of input) append(s, m);
  let turn = 0;
  try {
    outer: for (;;) {
      for (;;) {
        if (s.signal.aborted) {
          outcome = { stopReason: "aborted" };
          break outer;
        }
        for (const m of s.steering.splice(0)) append(s, m);
        if (overThreshold(s)) await compact(s, "threshold");

        host.emit({ type: "turn_start", turn });
        const reply = await requestReply(s, turn);
        append(s, reply);
        const calls = toolCallsOf(reply);
        let results: ToolResultMessage[];
        if (reply.stopReason === "error" || reply.stopReason === "aborted") {
          results = calls.map((c) =>
            errorResult(
              c,
              reply.stopReason === "aborted" ? ABORTED : `Not executed: ${reply.errorMessage ?? "the reply failed"}`,
            ),
          );
        } else if (reply.stopReason === "length" && calls.length > 0) {
          results = calls.map((c) => errorResult(c, TRUNCATED));
        } else {
          results = await executeBatch(s, reply, calls);
        }
        for (const r of results) append(s, r);

        const record: TurnRecord = Object.freeze({
          turn,
          message: reply,
          toolResults: Object.freeze(results),
          messages: Object.freeze(s.messages.slice()),
        });
        await host.hooks.turn_end.promise(record);
        host.emit({ type: "turn_end", turn, message: reply, toolResults: record.toolResults });
        turn++;

        if (reply.stopReason === "error" || reply.stopReason === "aborted" || s.signal.aborted) {
          outcome =
            s.signal.aborted || reply.stopReason === "aborted"
              ? { stopReason: "aborted" }
              : { stopReason: "error", error: reply.errorMessage };
          break outer;
        }
        const verdict = await host.hooks.should_stop.promise({
          turn: record,
          turns: turn,
          steering: s.steering.length,
        });
        if (verdict?.stop) {
          outcome = { stopReason: "halted", reason: verdict.reason };
          break outer;
        }
        if (verdict && verdict.stop === false) {
          for (const m of verdict.followUp ?? []) append(s, m);
          continue;
        }
        if (calls.length > 0 || reply.stopReason === "pause" || s.steering.length > 0) continue;
        outcome = { stopReason: reply.stopReason };
        break;
      }
      const next = s.followUp.splice(0);
      if (next.length === 0) break;
      for (const m of next) append(s, m);
    }
  } catch (cause) {
    // Only fatal plugin errors and kernel bugs reach here; history still gets its results.
    const error = cause instanceof CoilError ? cause : CoilError.wrap(cause, "KERNEL_ERROR", {});
    // A fatal hook error was already reported by its failure policy.
    if (!(error.fatal && error.hook))
      host.emit({ type: "diagnostic", level: "error", message: error.message, plugin: error.plugin, code: error.code });
    outcome = { stopReason: s.signal.aborted ? "aborted" : "error", error: error.message };
  }
  for (const call of unansweredCalls(s.messages))
    append(s, errorResult(call, s.signal.aborted ? ABORTED : "Not executed: the run ended with an error."));
  return outcome;
}

function append(s: LoopState, message: AgentMessage): void {
  freezeMessage(message);
  if (message.role !== "assistant") s.host.emit({ type: "message_start", message });
  s.messages.push(message);
  s.tally.add(message);
  s.added.push(message);
  s.host.emit({ type: "message_end", message });
}

/** The context estimate: the tally, plus the system prompt and tools when the tally counts messages only. */
const contextTokens = (s: LoopState) => s.tally.tokens + (s.tally.measured ? 0 : (s.overhead ?? 0));
const limitOf = (s: LoopState) => compactionLimit(s.model.contextWindow, s.config.reserveTokens);
/** After a compaction that could not get under the limit, the next waits until the context grew by half the reserve. */
const holdAt = (s: LoopState, tokens: number) => tokens + Math.floor((s.model.contextWindow - limitOf(s)) / 2);
const fmt = (n: number) => n.toLocaleString("en-US");

function overThreshold(s: LoopState): boolean {
  const tokens = contextTokens(s);
  return tokens > limitOf(s) && tokens > (s.compactHold ?? 0);
}

/** Run the `compact` strategies. Undefined when none handled it, or its result was not smaller (reported as NO_COMPACTION). */
export async function compact(
  s: LoopState,
  reason: CompactReason,
  instructions?: string,
): Promise<CompactResult | undefined> {
  const { host } = s;
  const strategies = host.taps.filter((t) => t.hook === "compact").map((t) => t.plugin);
  if (strategies.length === 0) {
    if (reason === "threshold") return undefined; // a preset without compaction chose so
    throw new CoilError("NO_COMPACTION", "no compaction strategy in this preset", {
      hint: "add a compaction plugin to the preset",
    });
  }
  const [tokensBefore, messagesBefore, limit] = [contextTokens(s), s.tally.estimated, limitOf(s)];
  // After an overflow the retry must be clearly smaller, whatever the estimate said.
  const targetTokens = Math.max(
    0,
    Math.min(limit - (s.overhead ?? 0), reason === "overflow" ? Math.floor(messagesBefore * 0.75) : Infinity),
  );
  const scope = scopedSignal(s.signal); // the summariser's provider calls get a signal of their own
  const request = {
    messages: Object.freeze(s.messages.slice()),
    tokens: tokensBefore,
    contextWindow: s.model.contextWindow,
    reason,
    targetTokens,
    model: s.model,
    instructions,
    signal: scope.signal,
  };
  const result = await host.hooks.compact.promise(request).finally(scope.release);
  const refuse = (message: string): undefined => {
    const error = new CoilError("NO_COMPACTION", message);
    host.emit({
      type: "diagnostic",
      level: reason === "threshold" ? "warn" : "error",
      message: error.message,
      code: error.code,
    });
    if (reason === "threshold") s.compactHold = holdAt(s, tokensBefore);
    if (reason === "manual") throw error;
    return undefined;
  };
  if (!result || !Array.isArray(result.messages))
    return refuse(`no compaction strategy handled the request (tried: ${strategies.join(", ")})`);
  const by = host.bailedBy(result) ?? "unknown";
  const tally = new ContextTally(result.messages, result.messages.length);
  if (tally.estimated >= messagesBefore) {
    return refuse(
      `compaction by ${by} did not shrink the context (${fmt(messagesBefore)} → ${fmt(tally.estimated)} tokens of messages); the context is unchanged`,
    );
  }
  s.messages.splice(0, s.messages.length, ...result.messages.map((m) => freezeMessage(m)));
  s.usageFloor = s.messages.length;
  s.tally = tally;
  const tokensAfter = contextTokens(s);
  s.compactHold = tokensAfter > limit ? holdAt(s, tokensAfter) : undefined;
  host.emit({ type: "compaction", reason, tokensBefore, tokensAfter, by });
  if (tokensAfter > limit) {
    const message = `compaction by ${by} shrank the context from ${fmt(tokensBefore)} to ${fmt(tokensAfter)} tokens, still over the compaction limit of ${fmt(limit)} (window ${fmt(s.model.contextWindow)}): the newest messages alone are too large to keep`;
    host.emit({ type: "diagnostic", level: "warn", code: "NO_COMPACTION", message });
  }
  return result;
}

/** before_request → stream; a context overflow compacts and retries once. */
async function requestReply(s: LoopState, turn: number): Promise<AssistantMessage> {
  for (let attempt = 0; ; attempt++) {
    const base: ModelRequest = Object.freeze({
      model: s.model,
      system: s.config.system,
      messages: Object.freeze(s.messages.slice()),
      tools: Object.freeze(
        s.host.tools.values().map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
      ),
      options: s.config.requestOptions,
    });
    let request = await s.host.hooks.before_request.promise(base, { turn, attempt, signal: s.signal });
    if (!request || !Array.isArray(request.messages)) {
      s.host.emit({
        type: "diagnostic",
        level: "error",
        message: "a before_request tap returned a request without messages; using the unmodified request",
        code: "PLUGIN_HOOK_FAILED",
      });
      request = base;
    }
    const messages = withoutCustom(request.messages);
    s.overhead = requestOverhead(request);
    const reply = await streamReply(s, { ...request, messages });
    if (reply.stopReason === "error" && reply.errorCode === ERROR_CONTEXT_OVERFLOW && attempt === 0) {
      const done = await compact(s, "overflow").catch((e: unknown) => {
        s.host.emit({ type: "diagnostic", level: "error", message: messageOf(e), code: "NO_COMPACTION" });
        return undefined;
      });
      if (done) continue;
    }
    return reply;
  }
}

/** Custom messages never reach a provider. Copies only when there is one to drop. */
const withoutCustom = (messages: readonly AgentMessage[]): readonly Message[] =>
  messages.some((m) => m.role === "custom")
    ? Object.freeze(messages.filter((m): m is Message => m.role !== "custom"))
    : (messages as readonly Message[]);

async function streamReply(s: LoopState, request: Parameters<Provider["stream"]>[0]): Promise<AssistantMessage> {
  const { host, provider } = s;
  const empty = (): AssistantMessage => ({
    role: "assistant",
    content: [],
    provider: provider.id,
    model: s.model.id,
    usage: emptyUsage(),
    stopReason: "stop",
    timestamp: Date.now(),
  });
  let partial = empty();
  let started = false;
  const start = (p: AssistantMessage) => {
    partial = p;
    s.streaming = p;
    if (!started) host.emit({ type: "message_start", message: p });
    started = true;
  };
  const fail = (stopReason: StopReason, errorMessage: string): AssistantMessage => ({
    ...partial,
    content: partial.content.filter((c) => c.type !== "toolCall"),
    stopReason,
    errorMessage,
  });
  let final: AssistantMessage | undefined;
  let iterator: AsyncIterator<unknown> | undefined;
  const scope = scopedSignal(s.signal); // the provider's own listeners die with this request
  try {
    iterator = provider.stream(request, scope.signal)[Symbol.asyncIterator]();
    for (;;) {
      const next = await untilAborted(iterator.next(), s.signal);
      if (next === ABORT) {
        final = fail("aborted", "aborted");
        void Promise.resolve(iterator.return?.()).catch(() => undefined);
        break;
      }
      if (next.done) break;
      const event = next.value as import("./types.js").ProviderEvent;
      if (event.type === "done" || event.type === "error") {
        final = event.message;
        break;
      }
      if (event.type === "retry") {
        // The provider starts the reply over: what streamed so far is discarded. The reply keeps its
        // one message_start; the next message_update carries the new attempt from its beginning.
        partial = empty();
        s.streaming = undefined;
        host.emit({ type: "retry", attempt: event.attempt, delayMs: event.delayMs, reason: event.reason });
        continue;
      }
      start(event.partial);
      if (event.type !== "start") host.emit({ type: "message_update", message: event.partial, event });
    }
    final ??= fail("error", `provider '${provider.id}' ended its stream without a final message`);
  } catch (cause) {
    final = s.signal.aborted
      ? fail("aborted", "aborted")
      : fail("error", `provider '${provider.id}' threw: ${messageOf(cause)}`);
  } finally {
    s.streaming = undefined;
    scope.release();
  }
  if (!started) host.emit({ type: "message_start", message: final });
  return final;
}

const ABORT = Symbol("abort");

/** Resolve with the promise, or with ABORT as soon as the signal fires (the promise is then ignored). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORT> {
  if (signal.aborted) return Promise.resolve(ABORT);
  let onAbort = () => {};
  const aborted = new Promise<typeof ABORT>((resolve) => {
    onAbort = () => resolve(ABORT);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}

// ───────────────────────────── tools ─────────────────────────────

const validators = new WeakMap<object, Validator>();
/** Per gated call (keyed by the info `tool_call` is called with): the info as the taps so far left it, and the check of a rewrite (hooks.ts). */
export const gating = new WeakMap<object, { info: ToolCallInfo; check(args: unknown): ToolCallInfo | string }>();

type Prepared = { call: ToolCall; result: ToolResultMessage } | { call: ToolCall; info: ToolCallInfo };

/**
 * Validate and gate every call in order, then execute: in parallel unless anything asks for sequence.
 * A call not started yet when steering is queued is skipped (answered, never run), so the user's new
 * message takes effect before the next call rather than after the whole batch.
 */
async function executeBatch(s: LoopState, message: AssistantMessage, calls: ToolCall[]): Promise<ToolResultMessage[]> {
  if (calls.length === 0) return [];
  const sequential =
    s.config.toolExecution === "sequential" ||
    calls.some((c) => s.host.tools.get(c.name)?.executionMode === "sequential");
  const results: ToolResultMessage[] = new Array(calls.length);
  if (sequential) {
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i]!;
      if (s.signal.aborted) results[i] = errorResult(call, ABORTED);
      else if (s.steering.length > 0) results[i] = await finish(s, { call, result: errorResult(call, SKIPPED) });
      else results[i] = await finish(s, await prepare(s, message, call));
    }
    return results;
  }
  const prepared: Prepared[] = [];
  for (const call of calls)
    prepared.push(
      s.signal.aborted
        ? { call, result: errorResult(call, ABORTED) }
        : s.steering.length > 0
          ? { call, result: errorResult(call, SKIPPED) }
          : await prepare(s, message, call),
    );
  // steering that came while calls were gated (a permission prompt) still stops them from starting
  const skip = s.steering.length > 0;
  await Promise.all(
    prepared.map(
      async (p, i) =>
        (results[i] = await finish(
          s,
          skip && "info" in p ? { call: p.call, result: errorResult(p.call, SKIPPED) } : p,
        )),
    ),
  );
  return results;
}

/** One call outside a reply (`agent.runTool`): the same validation, gates, execution and `tool_result` as the model's calls. */
export const runToolCall = async (s: LoopState, call: ToolCall): Promise<ToolResultMessage> =>
  finish(
    s,
    await prepare(
      s,
      {
        role: "assistant",
        content: [call],
        provider: s.provider.id,
        model: s.model.id,
        usage: emptyUsage(),
        stopReason: "toolUse",
        timestamp: Date.now(),
      },
      call,
    ),
  );

async function prepare(s: LoopState, message: AssistantMessage, call: ToolCall): Promise<Prepared> {
  const { host } = s;
  host.emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
  const tool = host.tools.get(call.name);
  if (!tool) {
    const known = host.tools.names();
    return {
      call,
      result: errorResult(
        call,
        `Tool '${call.name}' does not exist. Available tools: ${known.length ? known.join(", ") : "(none)"}.`,
      ),
    };
  }
  if (call.parseError) {
    return {
      call,
      result: errorResult(
        call,
        `Not executed: the arguments of this call are not valid JSON (${call.parseError}). Re-issue the call with valid JSON arguments.`,
      ),
    };
  }
  let args = call.arguments ?? {};
  if (tool.prepareArguments) {
    try {
      args = tool.prepareArguments(structuredClone(args as Record<string, unknown>));
    } catch {
      // a repair that fails leaves the arguments as the model sent them; validation reports the problem
    }
  }
  const checked = validateArgs(tool, args);
  if (typeof checked === "string") return { call, result: errorResult(call, checked) };
  const info: ToolCallInfo = Object.freeze({ call, args: Object.freeze(checked), tool, message, signal: s.signal });
  // A gate's `{ args }` rewrite is checked like the model's arguments: the new info, or the problems (hooks.ts).
  const rewritten = (valid: Record<string, unknown> | string) =>
    typeof valid === "string" ? valid : Object.freeze({ ...info, args: Object.freeze(valid) });
  const gate = { info, check: (next: unknown) => rewritten(validateArgs(tool, next)) };
  gating.set(info, gate);
  const block = await host.hooks.tool_call.promise(info);
  if (block && "block" in block && block.block) {
    const by = host.bailedBy(block);
    const reason = by && !block.reason.includes(by) ? `${block.reason} (${by})` : block.reason;
    return { call, result: errorResult(call, `Blocked: ${reason}`) };
  }
  return { call, info: gate.info };
}

function validateArgs(tool: ToolDefinition, args: unknown): Record<string, unknown> | string {
  let validator = validators.get(tool.parameters);
  if (!validator) {
    validator = Compile(tool.parameters);
    validators.set(tool.parameters, validator);
  }
  const withDefaults = Value.Default(tool.parameters, structuredClone(args));
  if (validator.Check(withDefaults)) return withDefaults as Record<string, unknown>;
  const converted = Value.Convert(tool.parameters, structuredClone(withDefaults));
  if (validator.Check(converted)) return converted as Record<string, unknown>;
  const problems = validator
    .Errors(withDefaults)
    .slice(0, 8)
    .map((e) => `${e.instancePath || "(arguments)"} ${e.message}`);
  return `Invalid arguments for tool '${tool.name}': ${problems.join("; ")}. Received: ${JSON.stringify(args).slice(0, 2000)}. Fix the arguments to match the tool's schema and call it again.`;
}

async function finish(s: LoopState, p: Prepared): Promise<ToolResultMessage> {
  const { host } = s;
  let result: ToolResultMessage;
  if ("result" in p) {
    result = p.result;
  } else {
    const { call, info } = p;
    s.pendingTools.add(call.id);
    // The latest streamed output: a tool whose updates are output (bash) keeps it in an aborted result.
    let partialOutput: ToolOutput | undefined;
    try {
      const run = info.tool.execute(info.args as never, {
        toolCallId: call.id,
        signal: s.signal,
        update: (partial) => {
          partialOutput = partial;
          host.emit({ type: "tool_execution_update", toolCallId: call.id, toolName: call.name, partial });
        },
      });
      const output = await untilAborted(Promise.resolve(run), s.signal);
      if (output === ABORT) {
        void Promise.resolve(run).catch(() => undefined);
        result = errorResult(call, ABORTED_RUNNING);
        if (info.tool.partialIsOutput && partialOutput?.content.length) {
          const note = { type: "text" as const, text: `\n\n${ABORTED_RUNNING} Its output until then is above.` };
          result = { ...result, content: [...partialOutput.content, note], details: partialOutput.details };
        }
      } else {
        const content = Array.isArray(output?.content)
          ? output.content
          : [{ type: "text" as const, text: String(output ?? "") }];
        result = {
          role: "toolResult",
          toolCallId: call.id,
          toolName: call.name,
          content,
          details: output?.details,
          isError: output?.isError === true,
          timestamp: Date.now(),
        };
      }
    } catch (cause) {
      result = errorResult(call, s.signal.aborted ? ABORTED_RUNNING : `Error: ${messageOf(cause)}`);
    } finally {
      s.pendingTools.delete(call.id);
    }
    if (!s.signal.aborted) {
      const changed = await host.hooks.tool_result.promise(result, info);
      if (changed && changed !== result)
        result = { ...changed, role: "toolResult", toolCallId: call.id, toolName: call.name };
    }
  }
  host.emit({ type: "tool_execution_end", toolCallId: p.call.id, toolName: p.call.name, result });
  return result;
}
