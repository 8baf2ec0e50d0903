/**
 * The kernel's host: the six hooks with their taps (through the one tap wrapper), the registries the loop
 * and the agent read (tools, providers, slash commands), the event bus, and forks for child agents
 * (`agent.fork`). What a plugin is, installing it and the context its setup gets are boot's (boot/host.ts
 * builds them over this class), and so are the registries only others read (front ends, services, start
 * and stop callbacks).
 */
import type { SlashCommand } from "./agent.js";
import { CoilError, messageOf } from "./errors.js";
import {
  createHooks,
  HOOK_NAMES,
  type HookName,
  type KernelHooks,
  type RewriteFn,
  Stage,
  type TapFn,
  type TapOptions,
  type TapRecord,
  type TapSink,
  tapHook,
} from "./hooks.js";
import { Registry } from "./registry.js";
import type { AgentEvent, AgentEventType, Provider, ToolDefinition } from "./types.js";

type Listener = (event: AgentEvent) => void;

/** A tap a child agent adds (`agent.fork`), as a plugin would tap in setup. */
export type ForkTap =
  | { [K in HookName]: { hook: K; fn: TapFn<K>; options?: TapOptions } }[HookName]
  | { hook: "tool_call"; fn: RewriteFn; options: TapOptions & { step: "rewrite" } };

/** What a child agent's host gets besides the parent's providers and taps (`agent.fork`). */
export interface ForkHostOptions {
  /** The plugin forking: its `taps` are attributed to it. */
  by: string;
  /** The child's tools (its tool_call and tool_result taps are the parent's, whatever the tools). */
  tools: readonly ToolDefinition[];
  /** Plugins whose conversation-level taps (before_request, turn_end, should_stop, compact) stay with the parent. */
  isolate?: readonly string[];
  taps?: readonly ForkTap[];
  /** Prefix of the child's diagnostics as the parent's listeners see them (`sub-agent explore (call_1)`). */
  label?: string;
}

/** Hooks whose taps every child gets, whatever `isolate` says: a child is never less guarded than its parent. */
const GATES: readonly HookName[] = ["tool_call", "tool_result"];

/** Owns the hooks, the registries the loop reads and the event bus; agents run on it. */
export class KernelHost {
  readonly hooks: KernelHooks = createHooks();
  readonly tools = new Registry<ToolDefinition>("tool");
  readonly providers = new Registry<Provider>("provider");
  readonly commands = new Registry<SlashCommand>("command");
  /** Taps in install order (what `fork` copies to a child). */
  readonly taps: TapRecord[] = [];
  private readonly listeners = new Map<string, Map<Listener, string | undefined>>();
  private readonly bails = new WeakMap<object, string>();
  /** Where the tap wrapper (hooks.ts) reports a failing tap and records who bailed. */
  private readonly sink: TapSink = {
    report: (e) =>
      this.emit({ type: "diagnostic", level: "error", message: e.message, plugin: e.plugin, code: e.code }),
    bail: (value, plugin) => this.bails.set(value, plugin),
  };
  private closed = false;

  /** Tap `hook` for `plugin`: the options checked, then through the one tap wrapper. Only before close(). */
  tap(plugin: string, hook: HookName, fn: TapRecord["fn"], options?: TapOptions): void {
    this.assertOpen(plugin);
    this.addTap(resolveTap(plugin, hook, fn, options));
  }

  private addTap(tap: TapRecord): void {
    tapHook(this.hooks, tap, this.sink);
    this.taps.push(tap);
  }

  /** Throws REGISTRATION_CLOSED, naming `plugin`, once registration has closed. */
  assertOpen(plugin: string): void {
    if (this.closed)
      throw new CoilError("REGISTRATION_CLOSED", "registration is closed; tap hooks and register things in setup()", {
        plugin,
      });
  }

  /** Close registration. Called before the first model call (the Agent's constructor). */
  close(): void {
    this.closed = true;
    for (const registry of [this.tools, this.providers, this.commands]) registry.close();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Which plugin's tap returned this value (a block, a verdict, a compaction). */
  bailedBy(value: object): string | undefined {
    return this.bails.get(value);
  }

  /** A child agent's host (`agent.fork`): this host's providers, the given tools, the taps, closed. */
  fork(options: ForkHostOptions): KernelHost {
    const child = new KernelHost();
    for (const [name, owned] of this.providers.entries())
      child.providers.register(name, owned.value, owned.owner, owned.source);
    for (const tool of options.tools) child.tools.register(tool.name, tool, this.tools.owner(tool.name) ?? options.by);
    for (const tap of this.taps)
      if (GATES.includes(tap.hook) || !options.isolate?.includes(tap.plugin)) child.addTap({ ...tap });
    for (const tap of options.taps ?? []) child.tap(options.by, tap.hook, tap.fn, tap.options);
    const prefix = options.label ? `${options.label}: ` : "";
    child.subscribe("diagnostic", (d) => {
      if (d.type === "diagnostic") this.emit({ ...d, message: `${prefix}${d.message}` });
    });
    child.close();
    return child;
  }

  /** Observe events; `owner` names the plugin in the report when the listener throws. */
  subscribe(type: AgentEventType | "*", listener: Listener, owner?: string): () => void {
    let map = this.listeners.get(type);
    if (!map) {
      map = new Map();
      this.listeners.set(type, map);
    }
    map.set(listener, owner);
    return () => map.delete(listener);
  }

  /** Deliver an event to observers. A throwing observer is reported once and never stops the loop. */
  emit(event: AgentEvent): void {
    for (const key of [event.type, "*"]) {
      for (const [listener, owner] of this.listeners.get(key) ?? []) {
        try {
          const returned = listener(event) as unknown;
          if (returned && typeof (returned as Promise<unknown>).catch === "function")
            (returned as Promise<unknown>).catch((error) => this.observerFailed(error, event, owner));
        } catch (error) {
          this.observerFailed(error, event, owner);
        }
      }
    }
  }

  private observerFailed(error: unknown, event: AgentEvent, owner?: string): void {
    if (event.type === "diagnostic") return; // never loop on a failing diagnostic listener
    this.emit({
      type: "diagnostic",
      level: "error",
      message: `an event listener failed on ${event.type}: ${messageOf(error)}`,
      plugin: owner,
      code: "PLUGIN_LISTENER_FAILED",
    });
  }
}

/** A tap's options checked and resolved (stage names, the tools filter, tool_call's step). */
function resolveTap(plugin: string, hook: HookName, fn: TapRecord["fn"], options: TapOptions = {}): TapRecord {
  const invalid = (message: string, hint?: string) => new CoilError("PLUGIN_INVALID", message, { plugin, hint });
  if (!HOOK_NAMES.includes(hook)) throw invalid(`unknown hook '${hook}'`, `hooks are: ${HOOK_NAMES.join(", ")}`);
  const stage = typeof options.stage === "string" ? Stage[options.stage] : (options.stage ?? Stage.DEFAULT);
  if (typeof stage !== "number") throw invalid(`unknown stage '${options.stage}'`);
  if (options.tools && hook !== "tool_call" && hook !== "tool_result")
    throw invalid(`the 'tools' filter only applies to tool_call and tool_result, not ${hook}`);
  if (options.step && (hook !== "tool_call" || !["rewrite", "gate"].includes(options.step)))
    throw invalid(`the 'step' option is "rewrite" or "gate", for tool_call only (got '${options.step}' for ${hook})`);
  const tools = options.tools && new Set(options.tools);
  return { hook, plugin, stage, step: options.step, tools, fn };
}
