/**
 * The plugin host: the kernel's host (hooks, tools, providers, commands, events) plus what installing
 * plugins takes, which the kernel does not know: options checked by the creator's `validate`, the context
 * setup receives (api/plugin.ts), and the registries only the command line, front ends and plugins read
 * (front ends, services with the running front end's `ui`, start and stop callbacks, and whatever the
 * creator declares: the command line's flags and subcommands). Setup is synchronous registration only;
 * boot/lifecycle.ts runs the start and stop callbacks.
 */
import type { Static, TSchema } from "typebox";
import {
  type Declaration,
  type FrontEnd,
  type FrontEndContext,
  type HostContext,
  type InstallSource,
  isPlugin,
  type Plugin,
  type PluginContext,
  type Registrar,
  type StartFn,
  type StopFn,
  type UiService,
} from "../api/plugin.js";
import type { AgentEvent } from "../kernel/types.js";
import { CoilError } from "../kernel/errors.js";
import type { HookName, TapOptions, TapRecord } from "../kernel/hooks.js";
import { KernelHost } from "../kernel/host.js";
import { Registry } from "../kernel/registry.js";
import type { ToolDefinition } from "../kernel/types.js";

export interface HostOptions {
  cwd?: string;
  /** Whether this project is trusted (its `.coil/` code may run); plugins gate project-local code on it. */
  projectTrusted?: boolean;
  /** Where `ui` comes from when none of this host's front ends runs (an embedder's dialogs). */
  ui?: () => UiService | undefined;
  /** Registrars the plugins' context gets beyond the host's, by name (the command line's `flags`, `subcommands`). */
  declare?: Readonly<Record<string, Declaration>>;
  /** Services the host itself offers every plugin (boot's `plugin-inspector`), provided by `coil`. */
  services?: Record<string, unknown>;
  /** Checks a plugin's options and fills in defaults (boot/options.ts); without it, options are taken as given. */
  validate?: (plugin: Plugin, options: unknown, source: InstallSource) => unknown;
}

type Listener = (event: AgentEvent) => void;

/** Installs plugins into the kernel's host and keeps what they register beside the kernel's registries. */
export class PluginHost extends KernelHost {
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

  constructor(options: HostOptions = {}) {
    super();
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
    try {
      return await frontEnd.run(ctx);
    } finally {
      this.frontEnd = previous;
    }
  }

  override close(): void {
    super.close();
    this.frontEnds.close();
    this.services.close();
  }

  /** Validate options and run setup. Throws a CoilError naming the plugin and phase. */
  install<S extends TSchema>(plugin: Plugin<S>, rawOptions: unknown = {}, source: InstallSource = {}): void {
    if (this.isClosed)
      throw new CoilError("REGISTRATION_CLOSED", `cannot install plugin '${plugin.id}' after start-up`);
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

  private contextFor(id: string, options: unknown, source: InstallSource): PluginContext {
    const host = this;
    const guard = () => host.assertOpen(id);
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
    const context: HostContext = {
      id,
      options,
      cwd: host.cwd,
      baseDir: source.baseDir ?? host.cwd,
      projectTrusted: host.projectTrusted,
      tap(hook: HookName, fn: TapRecord["fn"], tapOptions?: TapOptions) {
        host.tap(id, hook, fn, tapOptions);
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
    // The host's creator's registrars (the command line's flags and subcommands); none may hide the host's own.
    for (const [name, make] of Object.entries(host.declared)) {
      if (name in context) throw new CoilError("KERNEL_ERROR", `a declared registrar may not be named '${name}'`);
      Object.assign(context, { [name]: make({ id, source: where, guard }) });
    }
    return context as PluginContext;
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
