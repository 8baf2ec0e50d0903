/**
 * The agent loop: with tools.ts and compaction.ts the only code that calls `hook.promise()`. It does no
 * I/O of its own; the provider, tools and taps do. Invariant: every tool call gets exactly one result, in
 * call order. Its inputs are explicit (`LoopInputs`): the host's hooks and events, the agent's scope, the
 * run's frozen config, history, the queues and the run's own state.
 */
import { ABORT, scopedSignal, untilAborted } from "./abort.js";
import { compact, compactionDue, type History, requestOverhead } from "./compaction.js";
import { CoilError, messageOf } from "./errors.js";
import type { KernelHost } from "./host.js";
import { assistantMessage, errorResult, toolCallsOf, unansweredCalls } from "./messages.js";
import { ABORTED, executeBatch } from "./tools.js";
import {
  type AgentMessage,
  type AgentScope,
  type AssistantMessage,
  ERROR_CONTEXT_OVERFLOW,
  type Message,
  type ModelInfo,
  type ModelRequest,
  type Provider,
  type ProviderEvent,
  type ProviderRequest,
  type RequestOptions,
  type RunStopReason,
  type StopReason,
  type SystemBlock,
  type ToolResultMessage,
  type TurnRecord,
} from "./types.js";

/** What the agent is configured with; frozen (the agent replaces it: `/model` mid-run applies to the next request). */
export interface LoopConfig {
  readonly provider: Provider;
  readonly model: ModelInfo;
  readonly toolExecution: "parallel" | "sequential";
  /** Compact when the context estimate exceeds `contextWindow - reserveTokens` (the reserve capped at a quarter). */
  readonly reserveTokens: number;
  readonly system: readonly SystemBlock[];
  readonly requestOptions: RequestOptions;
}

/** Messages the caller queues while a run goes: steering (before the next model call) and follow-ups. */
export interface Queues {
  readonly steering: AgentMessage[];
  readonly followUp: AgentMessage[];
}

/** One run's own state: its signal, what it added, the calls running, the reply streaming. */
export interface RunState {
  readonly signal: AbortSignal;
  /** Messages appended during this run, in order (compaction does not remove them from here). */
  readonly added: AgentMessage[];
  readonly pending: Set<string>;
  /** The assistant message being streamed, for `agent.state`. */
  streaming?: AssistantMessage;
}

/** Everything the loop may touch. */
export interface LoopInputs {
  readonly host: Pick<KernelHost, "hooks" | "tools" | "taps" | "emit" | "bailedBy">;
  /** Which agent runs (the main one or a child), carried in every hook input. */
  readonly agent: AgentScope;
  /** The configuration in effect now. */
  readonly config: () => LoopConfig;
  readonly history: History;
  readonly queues: Queues;
  readonly run: RunState;
}

export interface RunOutcome {
  stopReason: RunStopReason;
  reason?: string;
  error?: string;
}

const TRUNCATED =
  "Not executed: your reply hit the output token limit before this call's arguments were complete. " +
  "Re-issue the call with complete arguments, splitting large content across several calls if needed.";

export async function runLoop(loop: LoopInputs, input: readonly AgentMessage[]): Promise<RunOutcome> {
  const { host, run, queues } = loop;
  let outcome: RunOutcome = { stopReason: "stop" };
  for (const message of input) append(loop, message);
  let turn = 0;
  try {
    outer: for (;;) {
      for (;;) {
        if (run.signal.aborted) {
          outcome = { stopReason: "aborted" };
          break outer;
        }
        for (const message of queues.steering.splice(0)) append(loop, message);
        if (compactionDue(loop)) await compact(loop, run.signal, "threshold");

        host.emit({ type: "turn_start", turn });
        const reply = await requestReply(loop, turn);
        append(loop, reply);
        const calls = toolCallsOf(reply);
        let results: ToolResultMessage[];
        if (reply.stopReason === "error" || reply.stopReason === "aborted") {
          const why =
            reply.stopReason === "aborted" ? ABORTED : `Not executed: ${reply.errorMessage ?? "the reply failed"}`;
          results = calls.map((call) => errorResult(call, why));
        } else if (reply.stopReason === "length" && calls.length > 0) {
          results = calls.map((call) => errorResult(call, TRUNCATED));
        } else {
          results = await executeBatch(loop, reply, calls);
        }
        for (const result of results) append(loop, result);

        const record: TurnRecord = Object.freeze({
          turn,
          message: reply,
          toolResults: Object.freeze(results),
          messages: Object.freeze(loop.history.messages.slice()),
          agent: loop.agent,
        });
        await host.hooks.turn_end.promise(record);
        host.emit({ type: "turn_end", turn, message: reply, toolResults: record.toolResults });
        turn++;

        if (reply.stopReason === "aborted" || run.signal.aborted) {
          outcome = { stopReason: "aborted" };
          break outer;
        }
        if (reply.stopReason === "error") {
          outcome = { stopReason: "error", error: reply.errorMessage };
          break outer;
        }
        const steering = queues.steering.length;
        const verdict = await host.hooks.should_stop.promise({
          turn: record,
          turns: turn,
          steering,
          agent: loop.agent,
        });
        if (verdict?.stop) {
          outcome = { stopReason: "halted", reason: verdict.reason };
          break outer;
        }
        if (verdict && verdict.stop === false) {
          for (const message of verdict.followUp ?? []) append(loop, message);
          continue;
        }
        if (calls.length > 0 || reply.stopReason === "pause" || queues.steering.length > 0) continue;
        outcome = { stopReason: reply.stopReason };
        break;
      }
      const next = queues.followUp.splice(0);
      if (next.length === 0) break;
      for (const message of next) append(loop, message);
    }
  } catch (cause) {
    // Only fatal plugin errors and kernel bugs reach here; history still gets its results.
    const error = cause instanceof CoilError ? cause : CoilError.wrap(cause, "KERNEL_ERROR", {});
    // A fatal hook error was already reported by its failure policy.
    if (!(error.fatal && error.hook))
      host.emit({ type: "diagnostic", level: "error", message: error.message, plugin: error.plugin, code: error.code });
    outcome = { stopReason: run.signal.aborted ? "aborted" : "error", error: error.message };
  }
  const ended = run.signal.aborted ? ABORTED : "Not executed: the run ended with an error.";
  for (const call of unansweredCalls(loop.history.messages)) append(loop, errorResult(call, ended));
  return outcome;
}

function append(loop: LoopInputs, message: AgentMessage): void {
  if (message.role !== "assistant") loop.host.emit({ type: "message_start", message });
  loop.history.append(message);
  loop.run.added.push(message);
  loop.host.emit({ type: "message_end", message });
}

/** before_request → stream; a context overflow compacts and retries once. */
async function requestReply(loop: LoopInputs, turn: number): Promise<AssistantMessage> {
  const { host, history, run } = loop;
  for (let attempt = 0; ; attempt++) {
    const config = loop.config();
    const tools = host.tools.values().map(({ name, description, parameters }) => ({ name, description, parameters }));
    const base: ModelRequest = Object.freeze({
      model: config.model,
      system: config.system,
      messages: Object.freeze(history.messages.slice()),
      tools: Object.freeze(tools),
      options: config.requestOptions,
    });
    let request = await host.hooks.before_request.promise(base, {
      turn,
      attempt,
      signal: run.signal,
      agent: loop.agent,
    });
    if (!request || !Array.isArray(request.messages)) {
      const message = "a before_request tap returned a request without messages; using the unmodified request";
      host.emit({ type: "diagnostic", level: "error", message, code: "PLUGIN_HOOK_FAILED" });
      request = base;
    }
    history.overhead = requestOverhead(request);
    const reply = await streamReply(loop, config, { ...request, messages: withoutCustom(request.messages) });
    if (reply.stopReason === "error" && reply.errorCode === ERROR_CONTEXT_OVERFLOW && attempt === 0) {
      const done = await compact(loop, run.signal, "overflow").catch((error: unknown) => {
        host.emit({ type: "diagnostic", level: "error", message: messageOf(error), code: "NO_COMPACTION" });
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

/** Stream one reply; never throws. A failure or an abort is a reply with that stop reason and no tool calls. */
async function streamReply(loop: LoopInputs, config: LoopConfig, request: ProviderRequest): Promise<AssistantMessage> {
  const { host, run } = loop;
  const { provider } = config;
  const empty = () => assistantMessage(config, [], "stop");
  let partial = empty();
  let started = false;
  const fail = (stopReason: StopReason, errorMessage: string): AssistantMessage => ({
    ...partial,
    content: partial.content.filter((c) => c.type !== "toolCall"),
    stopReason,
    errorMessage,
  });
  let final: AssistantMessage | undefined;
  const scope = scopedSignal(run.signal); // the provider's own listeners die with this request
  try {
    const iterator = provider.stream(request, scope.signal)[Symbol.asyncIterator]();
    for (;;) {
      const next = await untilAborted(iterator.next(), run.signal);
      if (next === ABORT) {
        final = fail("aborted", "aborted");
        void Promise.resolve(iterator.return?.()).catch(() => undefined);
        break;
      }
      if (next.done) break;
      const event: ProviderEvent = next.value;
      if (event.type === "done" || event.type === "error") {
        final = event.message;
        break;
      }
      if (event.type === "retry") {
        // The provider starts the reply over: what streamed so far is discarded. The reply keeps its
        // one message_start; the next message_update carries the new attempt from its beginning.
        partial = empty();
        run.streaming = undefined;
        host.emit({ type: "retry", attempt: event.attempt, delayMs: event.delayMs, reason: event.reason });
        continue;
      }
      partial = event.partial;
      run.streaming = event.partial;
      if (!started) host.emit({ type: "message_start", message: event.partial });
      started = true;
      if (event.type !== "start") host.emit({ type: "message_update", message: event.partial, event });
    }
    final ??= fail("error", `provider '${provider.id}' ended its stream without a final message`);
  } catch (cause) {
    final = run.signal.aborted
      ? fail("aborted", "aborted")
      : fail("error", `provider '${provider.id}' threw: ${messageOf(cause)}`);
  } finally {
    run.streaming = undefined;
    scope.release();
  }
  if (!started) host.emit({ type: "message_start", message: final });
  return final;
}
