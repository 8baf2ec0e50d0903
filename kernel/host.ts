/**
 * The plugin host: installs plugins (option validation, setup), owns the hooks, the registries and the
 * event bus that setup fills, and runs the start and stop callbacks. Setup is synchronous registration only.
 */
import type { Static, TSchema } from "typebox";
import { Value } from "typebox/value";
import { CoilError, messageOf } from "./errors.js";
import { createHooks, Stage, tapHook, type HookName, type KernelHooks, type TapSink } from "./hooks.js";
import { Registry } from "./registry.js";
import type { AgentEvent, AgentEventType, Provider, ToolDefinition, UiService } from "./types.js";
import type { Agent } from "./agent.js";
import {
  isPlugin,
  type CliStreams,
  type Declaration,
  type FrontEnd,
  type FrontEndContext,
  type InstallSource,
  type KernelContext,
  type Plugin,
  type PluginContext,
  type Registrar,
  type StartInfo,
  type SlashCommand,
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
}

type Listener = (event: AgentEvent) => void;

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
  /** Taps in install order, for `coil plugins --hooks` style listings. */
  readonly taps: { hook: HookName; plugin: string; stage: number }[] = [];
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
  }

  /** The dialogs of the front end running now (its registered `ui`), plugins' `ui` service. Unset in print/JSON modes. */
  get ui(): UiService | undefined {
    return this.frontEnd ? this.frontEnd.ui : this.inheritedUi?.();
  }

  /** Run a front end; while it runs, its `ui` is the host's. */
  async runFrontEnd(frontEnd: FrontEnd, ctx: FrontEndContext): Promise<number> {
    const previous = this.frontEnd;
    this.frontEnd = frontEnd;
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
    const options = validateOptions(plugin, rawOptions, source);
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

  /** Run every plugin's start callback in install order; a failure names the plugin. A `{ exit }` answer stops there. */
  async start(agent: Agent, io: CliStreams, info: StartInfo): Promise<number | undefined> {
    for (const { plugin, fn } of this.starters) {
      try {
        const asked = await fn(agent, io, info);
        if (asked && typeof asked.exit === "number") return asked.exit;
      } catch (cause) {
        throw CoilError.wrap(cause, "PLUGIN_START_FAILED", { plugin, phase: "start" });
      }
    }
    return undefined;
  }

  /** Run every stop callback (reverse install order); failures are reported, never thrown. */
  async stop(): Promise<void> {
    for (const { plugin, fn } of [...this.stoppers].reverse()) {
      try {
        await fn();
      } catch (cause) {
        const error = CoilError.wrap(cause, "PLUGIN_STOP_FAILED", { plugin, phase: "stop" });
        this.emit({ type: "diagnostic", level: "error", message: error.message, plugin, code: error.code });
      }
    }
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
          const r = listener(event) as unknown;
          if (r && typeof (r as Promise<unknown>).catch === "function")
            (r as Promise<unknown>).catch((e) => this.observerFailed(e, event, owner));
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
      tap(hook, fn, tapOptions = {}) {
        guard();
        if (!Object.hasOwn(host.hooks, hook))
          throw new CoilError("PLUGIN_INVALID", `unknown hook '${hook}'`, {
            plugin: id,
            hint: `hooks are: ${Object.keys(host.hooks).join(", ")}`,
          });
        const stage =
          typeof tapOptions.stage === "string" ? Stage[tapOptions.stage] : (tapOptions.stage ?? Stage.DEFAULT);
        if (typeof stage !== "number")
          throw new CoilError("PLUGIN_INVALID", `unknown stage '${tapOptions.stage}'`, { plugin: id });
        if (tapOptions.tools && hook !== "tool_call" && hook !== "tool_result") {
          throw new CoilError(
            "PLUGIN_INVALID",
            `the 'tools' filter only applies to tool_call and tool_result, not ${hook}`,
            { plugin: id },
          );
        }
        tapHook(host.hooks, hook, id, fn, { stage, tools: tapOptions.tools && new Set(tapOptions.tools) }, host.sink);
        host.taps.push({ hook, plugin: id, stage });
      },
      on: (type, listener) => host.subscribe(type, listener as Listener, id),
      tools: {
        ...registrar(
          host.tools,
          (t) => t.name,
          (t) => checkTool(t, id),
        ),
        sync: (tools) => {
          tools.forEach((t) => {
            checkTool(t, id);
          });
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
        provide: (name, service) => {
          guard();
          host.services.register(name, service, id, where);
        },
        get: (name) => (host.services.get(name) ?? host.served(name)) as never,
        require: (name) => {
          const found = host.services.get(name) ?? host.served(name);
          if (found !== undefined) return found as never;
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

  /** What the running front end serves under `name` where no plugin provides it: its `ui`, or one of its `services`. */
  private served(name: string): unknown {
    return name === "ui" ? this.ui : this.frontEnd?.services?.[name];
  }
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

/** Reject unknown keys at every object level that declares its properties. */
function strict(schema: TSchema): TSchema {
  const s = schema as Record<string, unknown>;
  if (!s || typeof s !== "object") return schema;
  const out: Record<string, unknown> = { ...s };
  if (s.type === "object" && s.properties && s.additionalProperties === undefined && s.patternProperties === undefined)
    out.additionalProperties = false;
  if (s.properties)
    out.properties = Object.fromEntries(
      Object.entries(s.properties as Record<string, TSchema>).map(([k, v]) => [k, strict(v)]),
    );
  if (s.items && typeof s.items === "object" && !Array.isArray(s.items)) out.items = strict(s.items as TSchema);
  for (const key of ["anyOf", "oneOf", "allOf"])
    if (Array.isArray(s[key])) out[key] = (s[key] as TSchema[]).map(strict);
  return out as TSchema;
}

/** Fill defaults and validate; errors name the plugin, the key and the preset file. */
export function validateOptions(plugin: Plugin, raw: unknown, source: InstallSource = {}): unknown {
  const where = {
    plugin: plugin.id,
    phase: "options" as const,
    file: source.file,
    line: source.line,
    column: source.column,
  };
  const given = raw === undefined || raw === null || raw === true ? {} : raw;
  if (!plugin.options) {
    if (typeof given === "object" && given && Object.keys(given).length > 0) {
      throw new CoilError(
        "PLUGIN_OPTIONS_INVALID",
        `takes no options, but got ${Object.keys(given)
          .map((k) => `'${k}'`)
          .join(", ")}`,
        where,
      );
    }
    return {};
  }
  const schema = strict(plugin.options);
  // Defaults come from the schema as written (TypeBox skips them under additionalProperties: false).
  const value = Value.Default(plugin.options, structuredClone(given));
  const errors = Value.Check(schema, value) ? [] : Value.Errors(schema, value); // Check is several times faster at start-up
  if (errors.length === 0) return value;
  const from = (key: string) => {
    const file =
      source.optionSources?.[key] ??
      Object.entries(source.optionSources ?? {}).find(([k]) => k.startsWith(`${key}.`) || key.startsWith(`${k}.`))?.[1];
    return file && file !== source.file ? ` (set in ${file})` : "";
  };
  const lines = errors
    .filter((e) => e.keyword !== "boolean" || !errors.some((o) => o.keyword === "additionalProperties"))
    .map((e) => {
      if (e.keyword === "additionalProperties") {
        const keys = (e.params as { additionalProperties: string[] }).additionalProperties.map((k) =>
          pathOf(e.instancePath, k),
        );
        const known = Object.keys(((e.instancePath ? {} : schema) as { properties?: object }).properties ?? {});
        return `unknown option ${keys.map((k) => `'${k}'${from(k)}`).join(", ")}${known.length ? ` (known: ${known.join(", ")})` : ""}`;
      }
      const key = e.instancePath.slice(1).replace(/\//g, ".");
      return `option '${key || "(root)"}' ${e.message}${from(key)}`;
    });
  throw new CoilError("PLUGIN_OPTIONS_INVALID", [...new Set(lines)].join("; "), where);
}

function pathOf(instancePath: string, key: string): string {
  const base = instancePath.slice(1).replace(/\//g, ".");
  return base ? `${base}.${key}` : key;
}
