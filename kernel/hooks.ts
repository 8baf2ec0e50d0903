/**
 * The six hook points, declared in one place, each with its tapable class and failure policy.
 * Only the loop calls `hook.promise()`; plugins tap through `PluginContext.tap`, and every tap goes
 * through `tapHook` below (filter, "no opinion" values, bail attribution, failure policy).
 */
import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook } from "tapable";
import { CoilError } from "./errors.js";
import { gating } from "./loop.js";
import type {
  CompactRequest,
  CompactResult,
  ModelRequest,
  StopQuery,
  StopVerdict,
  ToolBlock,
  ToolCallInfo,
  ToolRewrite,
  ToolResult,
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

export function createHooks() {
  return Object.freeze({
    /** Waterfall: a tap returns a new request, or undefined to keep it. */
    before_request: new AsyncSeriesWaterfallHook<[ModelRequest, TurnInfo]>(["request", "turn"], "before_request"),
    /** Bail: the first `{ block: true, reason }` blocks the call; `{ args }` replaces its arguments for the later taps. Never return an "allow". */
    tool_call: new AsyncSeriesBailHook<[ToolCallInfo], ToolBlock | ToolRewrite | undefined>(["call"], "tool_call"),
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

/** A hook's tap arguments and what a tap returns (undefined: nothing from me), read off its declaration above. */
type HookArgs<K extends HookName> = Parameters<KernelHooks[K]["promise"]>;
type HookReturn<K extends HookName> = Awaited<ReturnType<KernelHooks[K]["promise"]>> | undefined;
/** The function a plugin taps with. Returning undefined always means "nothing from me". */
export type TapFn<K extends HookName> = (...args: HookArgs<K>) => Promise<HookReturn<K>> | HookReturn<K>;

export const HOOK_NAMES: readonly HookName[] = [
  "before_request",
  "tool_call",
  "tool_result",
  "turn_end",
  "should_stop",
  "compact",
];

/**
 * How a throwing tap is handled. `isolate`: reported, and the tap contributes nothing.
 * `fail-closed`: reported, and the hook returns its safe verdict naming the plugin.
 */
export const FAILURE: Record<HookName, "isolate" | "fail-closed"> = {
  before_request: "isolate",
  tool_call: "fail-closed",
  tool_result: "isolate",
  turn_end: "isolate",
  should_stop: "fail-closed",
  compact: "isolate",
};

function safeVerdict(hook: HookName, error: CoilError): unknown {
  if (hook === "tool_call") {
    return { block: true, reason: `blocked because the gate failed: ${error.message}` } satisfies ToolBlock;
  }
  if (hook === "should_stop")
    return { stop: true, reason: `stopped because a stop rule failed: ${error.message}` } satisfies StopVerdict;
  return undefined;
}

export interface TapOptionsResolved {
  stage: number;
  /** For tool_call / tool_result: only calls of these tools reach the tap. */
  tools?: ReadonlySet<string>;
}

export interface TapSink {
  /** A tap threw: the error, attributed to its plugin and hook. */
  report(error: CoilError): void;
  /** A tap's verdict stopped a bail hook (or replaced a value): remember who, for messages. */
  bail(value: object, plugin: string): void;
}

/**
 * The one tap wrapper. Applies the tool filter; treats undefined, null and false as "nothing from me";
 * counts only a real `{ block: true }` as a gate's verdict and `{ stop: false }` only with follow-ups;
 * records who bailed; and applies the hook's failure policy: a throw is attributed to its plugin once and
 * becomes the hook's safe outcome, except a `fatal` error (the session store failed), which ends the run.
 */
export function tapHook<K extends HookName>(
  hooks: KernelHooks,
  hook: K,
  plugin: string,
  fn: TapFn<K>,
  options: TapOptionsResolved,
  sink: TapSink,
): void {
  const target = hooks[hook] as unknown as {
    tapPromise(o: { name: string; stage: number }, f: (...a: unknown[]) => Promise<unknown>): void;
  };
  target.tapPromise({ name: plugin, stage: options.stage }, async (...args: unknown[]) => {
    const gate = hook === "tool_call" ? gating.get(args[0] as object) : undefined;
    if (gate) args = [gate.info];
    if (
      options.tools &&
      !options.tools.has((args[hook === "tool_result" ? 1 : 0] as { call: { name: string } }).call.name)
    )
      return undefined;
    let result: unknown;
    try {
      result = await (fn as (...a: unknown[]) => unknown)(...args);
    } catch (cause) {
      const error = CoilError.wrap(cause, "PLUGIN_HOOK_FAILED", { plugin, hook });
      sink.report(error);
      if (error.fatal) throw error;
      return safeVerdict(hook, error);
    }
    if (result === undefined || result === null || result === false) return undefined;
    if (hook === "tool_call" && (result as { block?: unknown }).block !== true) {
      // `{ args }`: re-validated; valid args are what the later taps (and execute) get, invalid ones block the call.
      const next =
        gate && (result as Partial<ToolRewrite>).args !== undefined
          ? gate.check((result as ToolRewrite).args)
          : undefined;
      if (typeof next !== "string") {
        if (next) gate!.info = next;
        return undefined;
      }
      result = {
        block: true,
        reason: `${plugin} replaced the arguments with invalid ones: ${next}`,
      } satisfies ToolBlock;
    }
    if (
      hook === "should_stop" &&
      (result as { stop?: unknown }).stop === false &&
      !(result as { followUp?: unknown[] }).followUp?.length
    )
      return undefined;
    if (result && typeof result === "object") sink.bail(result, plugin);
    return result;
  });
}
