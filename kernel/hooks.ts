/**
 * The six hook points, declared in one place, each with its tapable class and failure policy.
 * Only the loop calls `hook.promise()`; plugins tap through `PluginContext.tap`, and every tap goes
 * through `tapHook` below (filter, "no opinion" values, rewrites, bail attribution, failure policy).
 */
import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook } from "tapable";
import { CoilError } from "./errors.js";
import { validateArgs } from "./tools.js";
import type {
  CompactRequest,
  CompactResult,
  ModelRequest,
  StopQuery,
  StopVerdict,
  ToolBlock,
  ToolCallInfo,
  ToolResult,
  ToolRewrite,
  TurnInfo,
  TurnRecord,
} from "./types.js";

/** Named stages: lower runs first; ties go by preset order. */
export const Stage = Object.freeze({
  GUARD: -1000,
  EARLY: -100,
  DEFAULT: 0,
  LATE: 100,
  FALLBACK: 1000,
});
export type StageName = keyof typeof Stage;

/** How a plugin taps a hook (`ctx.tap(hook, fn, options)`, `agent.fork`'s taps). */
export interface TapOptions {
  /** A named stage or a number; lower runs first. Default `DEFAULT` (0). */
  stage?: StageName | number;
  /** For `tool_call` and `tool_result`: only these tool names reach the tap. */
  tools?: readonly string[];
  /**
   * For `tool_call`: `rewrite` taps run first, all of them, and may return `{ args }`; `gate` taps (the
   * default) run after every rewrite and judge the arguments that will run.
   */
  step?: "rewrite" | "gate";
}

/** What the rewrite step passes from tap to tap: the call as rewritten so far, or the block that ended it. */
export type Rewriting = ToolCallInfo | ToolBlock;

export function createHooks() {
  return Object.freeze({
    /** Waterfall: a tap returns a new request, or undefined to keep it. */
    before_request: new AsyncSeriesWaterfallHook<[ModelRequest, TurnInfo]>(["request", "turn"], "before_request"),
    /**
     * Two steps with two contracts. `rewrite`: a waterfall; a tap returns `{ args }` (validated like the
     * model's) or undefined. `gate`: a bail over the final arguments; the first `{ block: true, reason }` wins.
     */
    tool_call: Object.freeze({
      rewrite: new AsyncSeriesWaterfallHook<[Rewriting]>(["call"], "tool_call rewrite"),
      gate: new AsyncSeriesBailHook<[ToolCallInfo], ToolBlock | undefined>(["call"], "tool_call"),
    }),
    /** Waterfall: a tap returns a new result (it may flip `isError`), or undefined to keep it. */
    tool_result: new AsyncSeriesWaterfallHook<[ToolResult, ToolCallInfo]>(["result", "call"], "tool_result"),
    /** Series: every tap sees the written-back turn. */
    turn_end: new AsyncSeriesHook<[TurnRecord]>(["turn"], "turn_end"),
    /** Bail: the first verdict wins; nobody bailing means the default rule. */
    should_stop: new AsyncSeriesBailHook<[StopQuery], StopVerdict | undefined>(["query"], "should_stop"),
    /** Bail: strategies in stage order; the first to return a result wins. */
    compact: new AsyncSeriesBailHook<[CompactRequest], CompactResult | undefined>(["request"], "compact"),
  });
}

export type KernelHooks = ReturnType<typeof createHooks>;
export type HookName = keyof KernelHooks;

/** What each hook's taps receive, and what they return besides undefined ("nothing from me"). */
export interface HookTaps {
  before_request: [args: [request: ModelRequest, turn: TurnInfo], returns: ModelRequest];
  tool_call: [args: [call: ToolCallInfo], returns: ToolBlock];
  tool_result: [args: [result: ToolResult, call: ToolCallInfo], returns: ToolResult];
  turn_end: [args: [turn: TurnRecord], returns: void];
  should_stop: [args: [query: StopQuery], returns: StopVerdict];
  compact: [args: [request: CompactRequest], returns: CompactResult];
}
type Answer<T> = Promise<T | undefined> | T | undefined;
/** The function a plugin taps with. Returning undefined always means "nothing from me". */
export type TapFn<K extends HookName> = (...args: HookTaps[K][0]) => Answer<HookTaps[K][1]>;
/** A tap of tool_call's rewrite step (`{ step: "rewrite" }`): new arguments, or undefined to keep them. */
export type RewriteFn = (call: ToolCallInfo) => Answer<ToolRewrite>;

export const HOOK_NAMES = Object.freeze(Object.keys(createHooks())) as readonly HookName[];

/**
 * The failure policy. A throwing tap is reported, then: on these two hooks it fails closed, with the
 * hook's safe verdict naming the plugin; on every other hook it is isolated (it contributes nothing).
 */
export const FAIL_CLOSED = {
  tool_call: (error: CoilError): ToolBlock => ({
    block: true,
    reason: `blocked because the gate failed: ${error.message}`,
  }),
  should_stop: (error: CoilError): StopVerdict => ({
    stop: true,
    reason: `stopped because a stop rule failed: ${error.message}`,
  }),
} satisfies Partial<Record<HookName, (error: CoilError) => unknown>>;

/** One tap as the host records it: the plugin's function and its options, resolved. */
export interface TapRecord {
  hook: HookName;
  plugin: string;
  stage: number;
  /** tool_call only: the rewrite step or the gate step (default). */
  step?: "rewrite" | "gate";
  /** For tool_call / tool_result: only calls of these tools reach the tap. */
  tools?: ReadonlySet<string>;
  fn: (...args: never[]) => unknown;
}

export interface TapSink {
  /** A tap threw: the error, attributed to its plugin and hook. */
  report(error: CoilError): void;
  /** A tap's verdict stopped a bail hook (or replaced a value): remember who, for messages. */
  bail(value: object, plugin: string): void;
}

const isBlock = (value: unknown): value is ToolBlock => (value as { block?: unknown })?.block === true;

/**
 * The one tap wrapper. Applies the tool filter; treats undefined, null and false as "nothing from me";
 * counts only a real `{ block: true }` as a gate's verdict and `{ stop: false }` only with follow-ups;
 * validates a rewrite's `{ args }` and records who changed them; records who bailed; and applies the hook's
 * failure policy: a throw is attributed to its plugin once and becomes the hook's safe outcome, except a
 * `fatal` error (the session store failed), which ends the run.
 */
export function tapHook(hooks: KernelHooks, tap: TapRecord, sink: TapSink): void {
  const { hook, plugin, tools } = tap;
  const rewrite = hook === "tool_call" && tap.step === "rewrite";
  const target = (hook !== "tool_call" ? hooks[hook] : rewrite ? hooks.tool_call.rewrite : hooks.tool_call.gate) as {
    tapPromise(o: { name: string; stage: number }, f: (...a: unknown[]) => Promise<unknown>): void;
  };
  target.tapPromise({ name: plugin, stage: tap.stage }, async (...args: unknown[]) => {
    // A rewrite step that a block already ended passes the block on.
    if (rewrite && isBlock(args[0])) return args[0];
    const call = args[hook === "tool_result" ? 1 : 0] as ToolCallInfo;
    if (tools && !tools.has(call.call.name)) return rewrite ? call : undefined;
    let result: unknown;
    try {
      result = await (tap.fn as (...a: unknown[]) => unknown)(...args);
    } catch (cause) {
      const error = CoilError.wrap(cause, "PLUGIN_HOOK_FAILED", { plugin, hook });
      sink.report(error);
      if (error.fatal) throw error;
      if (hook === "tool_call" || hook === "should_stop") return FAIL_CLOSED[hook](error);
      return undefined;
    }
    if (rewrite && !isBlock(result)) return rewritten(call, result as ToolRewrite | undefined, plugin);
    if (result === undefined || result === null || result === false) return undefined;
    if (hook === "tool_call" && !isBlock(result)) {
      if ((result as Partial<ToolRewrite>).args === undefined) return undefined;
      const reason = `${plugin} returned new arguments from a tool_call gate, which judges the final arguments`;
      result = {
        block: true,
        reason: `${reason}; rewrite in the rewrite step ({ step: "rewrite" })`,
      } satisfies ToolBlock;
    }
    const verdict = result as { stop?: unknown; followUp?: unknown[] };
    if (hook === "should_stop" && verdict.stop === false && !verdict.followUp?.length) return undefined;
    if (typeof result === "object") sink.bail(result as object, plugin);
    return result;
  });
}

/**
 * The call after one rewrite tap (no answer: as it was): its `{ args }` validated like the model's, or a block
 * naming the plugin.
 */
async function rewritten(call: ToolCallInfo, answer: ToolRewrite | undefined, plugin: string): Promise<Rewriting> {
  if (!answer || answer.args === undefined) return call;
  const args = await validateArgs(call.tool, answer.args);
  if (typeof args === "string")
    return { block: true, reason: `${plugin} replaced the arguments with invalid ones: ${args}` };
  if (JSON.stringify(args) === JSON.stringify(call.args)) return call;
  const rewrittenBy = Object.freeze([...(call.rewrittenBy ?? []), plugin]);
  return Object.freeze({ ...call, args: Object.freeze(args), rewrittenBy });
}
