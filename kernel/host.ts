/**
 * The plugin host: installs plugins (setup, with options checked by the caller's `validate`), owns the
 * hooks, the registries and the event bus that setup fills, and forks child hosts (`agent.fork`). Setup is
 * synchronous registration only; boot/lifecycle.ts runs the start and stop callbacks plugins register.
 */
import type { Static, TSchema } from "typebox";
import { CoilError, messageOf } from "./errors.js";
import {
  createHooks,
  HOOK_NAMES,
  type HookName,
  type KernelHooks,
  type RewriteFn,
  Stage,
  type TapFn,
  type TapRecord,
  type TapSink,
  tapHook,
} from "./hooks.js";
import { Registry } from "./registry.js";
import type { AgentEvent, AgentEventType, Provider, ToolDefinition, UiService } from "./types.js";
import {
  isPlugin,
  type Declaration,
  type FrontEnd,
  type FrontEndContext,
  type InstallSource,
  type KernelContext,
  type Plugin,
  type PluginContext,
  type Registrar,
  type SlashCommand,
  type TapOptions,
  type StartFn,
  type StopFn,
} from "./plugin.js";

export interface HostOptions {
  cwd?: string;
  /** Whether this project is trusted (its `.coil/` code may run); plugins gate project-local code on it. */
  projectTrusted?: boolean;
  /** Where `ui` comes from when none of this host's front ends runs (a child agent's host: its parent's). */
  ui?: () => UiService | undefined;
  /** Registrars the plugins' context gets beyond the kernel's, by name (the command line's `flags`, `subcommands`). */
  declare?: Readonly<Record<string, Declaration>>;
  /** Services the host itself offers every plugin (boot's `plugin-inspector`), provided by `coil`. */
  services?: Record<string, unknown>;
  /** Checks a plugin's options and fills in defaults (boot/options.ts); without it, options are taken as given. */
  validate?: (plugin: Plugin, options: unknown, source: InstallSource) => unknown;
}

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

/** Owns the hooks, registries and event bus; plugins install into it, agents run on it. */
export class PluginHost {
  readonly hooks: KernelHooks = createHooks();
  readonly tools = new Registry<ToolDefinition>("tool");
  readonly providers = new Registry<Provider>("provider");
  readonly commands = new Registry<SlashCommand>("command");
  readonly frontEnds = new Registry<FrontEnd>("front end");
  readonly starters: { plugin: string; fn: StartFn }[] = [];
  readonly stoppers: { plugin: string; fn: StopFn }[] = [];
  readonly services = new Registry<unknown>("service");
  readonly plugins: { id: string; source: InstallSource }[] = [];
  readonly cwd: string;
  readonly projectTrusted: boolean;
  private frontEnd?: FrontEnd;
  private readonly inheritedUi?: () => UiService | undefined;
  private readonly declared: Readonly<Record<string, Declaration>>;
  private readonly validate: HostOptions["validate"];
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

  constructor(options: HostOptions = {}) {
    this.cwd = options.cwd ?? ".";
    this.projectTrusted = options.projectTrusted ?? false;
    this.inheritedUi = options.ui;
    this.declared = options.declare ?? {};
    this.validate = options.validate;
    for (const [name, service] of Object.entries(options.services ?? {})) this.services.register(name, service, "coil");
  }

  /** The dialogs of the front end running now (its registered `ui`): plugins' `ui` service. Unset in print mode. */
  get ui(): UiService | undefined {
    return this.frontEnd ? this.frontEnd.ui : this.inheritedUi?.();
  }

  /** Run a front end; while it runs, its `ui` is the host's. */
  async runFrontEnd(frontEnd: FrontEnd, ctx: FrontEndContext): Promise<number> {
    const previous = this.frontEnd;
    this.frontEnd = frontEnd;
    this.emit({ type: "ui_start", mode: ctx.mode });
    return frontEnd.run(ctx).finally(() => (this.frontEnd = previous));
  }

  /** Validate options and run setup. Throws a CoilError naming the plugin and phase. */
  install<S extends TSchema>(plugin: Plugin<S>, rawOptions: unknown = {}, source: InstallSource = {}): void {
    if (this.closed) throw new CoilError("REGISTRATION_CLOSED", `cannot install plugin '${plugin.id}' after start-up`);
    if (!isPlugin(plugin) || !/^[@a-z0-9][a-z0-9._/@-]*$/i.test(plugin.id)) {
      throw new CoilError(
        "PLUGIN_INVALID",
        "a plugin needs an 'id' (letters, digits, '-', '/', '@') and a 'setup' function",
        { phase: "import", file: source.file ?? source.ref },
      );
    }
    const twin = this.plugins.find((p) => p.id === plugin.id);
    if (twin) {
      throw new CoilError(
        "PLUGIN_DUPLICATE",
        `plugin id '${plugin.id}' is loaded twice: from ${describe(twin.source)} and from ${describe(source)}`,
        { plugin: plugin.id },
      );
    }
    const options = this.validate ? this.validate(plugin, rawOptions, source) : (rawOptions ?? {});
    const ctx = this.contextFor(plugin.id, options, source);
    try {
      const returned = plugin.setup(ctx as PluginContext<Static<S>>) as unknown;
      if (returned && typeof (returned as Promise<unknown>).then === "function") {
        throw new CoilError(
          "PLUGIN_SETUP_FAILED",
          "setup() returned a promise; setup must register synchronously (do async work inside hooks or tools)",
        );
      }
    } catch (cause) {
      throw CoilError.wrap(cause, "PLUGIN_SETUP_FAILED", {
        plugin: plugin.id,
        phase: "setup",
        file: source.file,
        line: source.line,
      });
    }
    this.plugins.push({ id: plugin.id, source });
  }

  /** Close registration. Called before the first model call. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const registry of [this.tools, this.providers, this.commands, this.frontEnds, this.services]) registry.close();
  }

  /** Which plugin's tap returned this value (a block, a verdict, a compaction). */
  bailedBy(value: object): string | undefined {
    return this.bails.get(value);
  }

  /** A child agent's host (`agent.fork`): this host's providers, the given tools, the taps, closed. */
  fork(options: ForkHostOptions): PluginHost {
    const child = new PluginHost({ cwd: this.cwd, projectTrusted: this.projectTrusted, ui: () => this.ui });
    for (const [name, owned] of this.providers.entries())
      child.providers.register(name, owned.value, owned.owner, owned.source);
    for (const tool of options.tools) child.tools.register(tool.name, tool, this.tools.owner(tool.name) ?? options.by);
    for (const tap of this.taps)
      if (GATES.includes(tap.hook) || !options.isolate?.includes(tap.plugin)) child.addTap({ ...tap });
    for (const tap of options.taps ?? []) child.addTap(resolveTap(options.by, tap.hook, tap.fn, tap.options));
    const prefix = options.label ? `${options.label}: ` : "";
    child.subscribe("diagnostic", (d) => {
      if (d.type === "diagnostic") this.emit({ ...d, message: `${prefix}${d.message}` });
    });
    child.close();
    return child;
  }

  /** Every tap goes through the one wrapper (hooks.ts), which reports failures to this host. */
  private addTap(tap: TapRecord): void {
    tapHook(this.hooks, tap, this.sink);
    this.taps.push(tap);
  }

  get isClosed(): boolean {
    return this.closed;
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

  private contextFor(id: string, options: unknown, source: InstallSource): PluginContext {
    const host = this;
    const guard = () => {
      if (host.closed)
        throw new CoilError("REGISTRATION_CLOSED", "registration is closed; tap hooks and register things in setup()", {
          plugin: id,
        });
    };
    const where = describe(source);
    const registrar = <T>(
      registry: Registry<T>,
      nameOf: (value: T) => string,
      check?: (value: T) => void,
    ): Registrar<T> => ({
      register: (value) => {
        guard();
        check?.(value);
        registry.register(nameOf(value), value, id, where);
      },
      get: (name) => registry.get(name),
      names: () => registry.names(),
    });
    const log = (level: "info" | "warn" | "error") => (message: string) =>
      host.emit({ type: "diagnostic", level, message, plugin: id });
    const context: KernelContext = {
      id,
      options,
      cwd: host.cwd,
      baseDir: source.baseDir ?? host.cwd,
      projectTrusted: host.projectTrusted,
      tap(hook: HookName, fn: TapRecord["fn"], tapOptions?: TapOptions) {
        guard();
        host.addTap(resolveTap(id, hook, fn, tapOptions));
      },
      on: (type, listener) => host.subscribe(type, listener as Listener, id),
      tools: {
        ...registrar(
          host.tools,
          (t) => t.name,
          (t) => checkTool(t, id),
        ),
        sync: (tools) => {
          for (const tool of tools) checkTool(tool, id);
          host.tools.sync(
            id,
            tools.map((t) => [t.name, t]),
            where,
          );
        },
      },
      providers: { ...registrar(host.providers, (p) => p.id), ids: () => host.providers.names() },
      commands: {
        ...registrar(host.commands, (c) => c.name),
        sync: (commands) =>
          host.commands.sync(
            id,
            commands.map((c) => [c.name, c]),
            where,
          ),
      },
      frontEnds: registrar(host.frontEnds, (f) => f.id),
      onStart: (fn) => {
        guard();
        host.starters.push({ plugin: id, fn });
      },
      onStop: (fn) => {
        guard();
        host.stoppers.push({ plugin: id, fn });
      },
      services: {
        provide: (name, service, provideOptions) => {
          guard();
          host.services.register(name, service, id, where, provideOptions?.fallback);
        },
        owner: (name) => host.services.owner(name),
        get: (name) => (host.services.get(name) ?? (name === "ui" ? host.ui : undefined)) as never,
        require: (name) => {
          if (host.services.has(name)) return host.services.get(name) as never;
          if (name === "ui" && host.ui) return host.ui as never;
          throw new CoilError("SERVICE_MISSING", `service '${name}' is not provided by any plugin in this preset`, {
            plugin: id,
          });
        },
      },
      log: { info: log("info"), warn: log("warn"), error: log("error") },
      error: (code, message, errorOptions) => new CoilError(code, message, { plugin: id, ...errorOptions }),
    };
    // The host's creator's registrars (the command line's flags and subcommands); none may hide the kernel's own.
    for (const [name, make] of Object.entries(host.declared)) {
      if (name in context) throw new CoilError("KERNEL_ERROR", `a declared registrar may not be named '${name}'`);
      Object.assign(context, { [name]: make({ id, source: where, guard }) });
    }
    return context as PluginContext;
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

function describe(source: InstallSource): string {
  const at = source.file ? `${source.file}${source.line ? `:${source.line}` : ""}` : undefined;
  const ref = source.ref && /[./@]/.test(source.ref) ? source.ref : undefined;
  return [ref, at].filter(Boolean).join(" in ") || source.ref || "code";
}

function checkTool(tool: ToolDefinition, owner: string): void {
  const missing = (["name", "description", "parameters", "execute"] as const).filter((k) => !tool?.[k]);
  if (missing.length)
    throw new CoilError("PLUGIN_INVALID", `tool '${tool?.name ?? "?"}' lacks ${missing.join(", ")}`, { plugin: owner });
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) {
    throw new CoilError(
      "PLUGIN_INVALID",
      `tool name '${tool.name}' must be 1-64 letters, digits, '_' or '-' (what provider APIs accept)`,
      { plugin: owner },
    );
  }
}
