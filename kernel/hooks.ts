/**
 * The six hook points, declared in one place, each with its tapable class and failure policy.
 * Only the loop calls `hook.promise()`; plugins tap through `PluginContext.tap`.
 */
import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook } from "tapable";
import { CoilError } from "./errors.js";
import type { CompactRequest, CompactResult, ModelRequest, StopQuery, StopVerdict, ToolBlock, ToolCallInfo, ToolResult, TurnInfo, TurnRecord } from "./types.js";

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
    /** Bail: the first `{ block: true, reason }` blocks the call. Never return an "allow". */
    tool_call: new AsyncSeriesBailHook<[ToolCallInfo], ToolBlock | undefined>(["call"], "tool_call"),
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

type HookArgs = {
  before_request: [ModelRequest, TurnInfo];
  tool_call: [ToolCallInfo];
  tool_result: [ToolResult, ToolCallInfo];
  turn_end: [TurnRecord];
  should_stop: [StopQuery];
  compact: [CompactRequest];
};
type HookReturn = {
  before_request: ModelRequest | undefined;
  tool_call: ToolBlock | undefined;
  tool_result: ToolResult | undefined;
  turn_end: void;
  should_stop: StopVerdict | undefined;
  compact: CompactResult | undefined;
};
/** The function a plugin taps with. Returning undefined always means "nothing from me". */
export type TapFn<K extends HookName> = (...args: HookArgs[K]) => Promise<HookReturn[K]> | HookReturn[K];

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
  if (hook === "should_stop") return { stop: true, reason: `stopped because a stop rule failed: ${error.message}` } satisfies StopVerdict;
  return undefined;
}

export interface TapMeta { plugin: string; stage: number }

/**
 * Install the failure policies: one `register` interceptor per hook wraps every tap so a throw is
 * attributed to its plugin once and turned into the hook's safe outcome. A `fatal` error (e.g. the
 * session store failed) is re-thrown so the loop ends the run loudly.
 */
export function applyFailurePolicies(hooks: KernelHooks, report: (error: CoilError) => void): void {
  for (const name of HOOK_NAMES) {
    const hook = hooks[name] as unknown as { intercept(i: { register(tap: { fn: Function; name: string }): unknown }): void };
    hook.intercept({
      register(tap) {
        const inner = tap.fn;
        return {
          ...tap,
          fn: async (...args: unknown[]) => {
            try {
              return await inner(...args);
            } catch (cause) {
              const error = CoilError.wrap(cause, "PLUGIN_HOOK_FAILED", { plugin: tap.name, hook: name });
              report(error);
              if (error.fatal) throw error;
              return safeVerdict(name, error);
            }
          },
        };
      },
    });
  }
}
