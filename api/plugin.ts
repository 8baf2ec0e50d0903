/**
 * What a plugin is and what it sees: `definePlugin`, the context its setup receives, and the contracts of
 * what it registers beside the kernel's taps, tools, providers and commands (front ends, start and stop
 * callbacks, services, the `ui` dialogs, and the registrars a host's creator declares). The kernel knows
 * none of it: boot/host.ts installs plugins and builds this context over the kernel's host.
 */
import type { Static, TSchema } from "typebox";
import type { Agent, SlashCommand } from "../kernel/agent.js";
import type { CoilError, CoilErrorOptions, ErrorCode } from "../kernel/errors.js";
import type { HookName, RewriteFn, TapFn, TapOptions } from "../kernel/hooks.js";
import type { AgentEvent, AgentEventType, Provider, ToolDefinition } from "../kernel/types.js";

const PLUGIN_BRAND = Symbol.for("coil.plugin");

export interface Plugin<S extends TSchema = TSchema> {
  /** One string everywhere: the preset key, the tap name, the `[plugin id]` prefix in errors. */
  id: string;
  description?: string;
  /** TypeBox schema of the options. Unknown keys are rejected; defaults are filled in. */
  options?: S;
  /** Synchronous registration: tap hooks, register tools/providers/commands/flags, provide services. */
  setup(ctx: PluginContext<Static<S>>): void;
}

export function definePlugin<S extends TSchema = TSchema>(plugin: Plugin<S>): Plugin<S> {
  return Object.assign(plugin, { [PLUGIN_BRAND]: true });
}

export function isPlugin(value: unknown): value is Plugin {
  if (!value || typeof value !== "object") return false;
  const v = value as Record<string | symbol, unknown>;
  return v[PLUGIN_BRAND] === true || (typeof v.id === "string" && typeof v.setup === "function");
}

/**
 * What a front end sees of the run: the agent (its registries through `agent.view`), the working directory,
 * the prompt and the streams. The host stays the kernel's.
 */
export interface FrontEndContext {
  agent: Agent;
  /** The working directory the run serves. */
  cwd: string;
  /** `text`, `json`, `rpc`, `interactive`, or a plugin's own mode. */
  mode: string;
  /** The prompt from the command line (merged with piped stdin), if any. */
  prompt?: string;
  /** True when the prompt came after `--`: it is text for the model even if it starts with `/`. */
  literal?: boolean;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export interface FrontEnd {
  id: string;
  /** Modes this front end serves (`--mode`); `interactive` is used when no prompt is given. */
  modes: readonly string[];
  /** Runs until done; resolves to the process exit code. */
  run(ctx: FrontEndContext): Promise<number>;
  /** Its dialogs (TUI, RPC): the `ui` service while it runs (may be a getter). None: nobody can answer. */
  readonly ui?: UiService;
}

/** Terminal I/O handed to lifecycle callbacks (and the command line's subcommands). */
export interface CliStreams {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** What the run was asked for, as start callbacks see it. */
export interface StartInfo {
  /** The front end's mode: `text`, `json`, `interactive`, ... */
  mode: string;
  prompt?: string;
  /** True when `--model` or `--provider` chose the model for this run (a resumed session should not override it). */
  modelFromCli: boolean;
}

/**
 * Called by the CLI once the agent exists, before the front end runs (e.g. a session store loads history).
 * Returning `{ exit: code }` ends the process cleanly without running the front end (e.g. `--resume` listing).
 */
export type StartFn = (
  agent: Agent,
  io: CliStreams,
  info: StartInfo,
) => Promise<void | { exit: number }> | void | { exit: number };
/** Called once when the process is about to exit, whatever the outcome. */
export type StopFn = () => Promise<void> | void;

/** Services plugins offer each other; augment this interface to type your service. */
export interface Services {
  [name: string]: unknown;
  ui: UiService;
}

export type PluginLog = Record<"info" | "warn" | "error", (message: string) => void>;

/** Register into a registry; a duplicate name is an error naming both plugins. */
export interface Registrar<T> {
  register(value: T): void;
  get(name: string): T | undefined;
  names(): string[];
}
/** Tools and commands found at run time (an MCP server's): `sync` replaces this plugin's earlier sync, at any time. */
export interface LateRegistrar<T> extends Registrar<T> {
  sync(values: readonly T[]): void;
}

/**
 * Makes one plugin's registrar for a registry the creator of a host declares (`HostOptions.declare`):
 * the command line declares `flags` and `subcommands` (lib/command-line.ts), typed by merging them into
 * `PluginContext`. `guard` throws once registration has closed.
 */
export type Declaration = (plugin: { readonly id: string; readonly source: string; guard(): void }) => unknown;

/**
 * What `setup` receives: the host's context, and the registrars a host's creator declares, merged into
 * this interface by declaration (lib/command-line.ts: `flags`, `subcommands`).
 */
export interface PluginContext<O = unknown> extends HostContext<O> {}

/** The part of a plugin's context the plugin host itself provides (boot/host.ts). */
export interface HostContext<O = unknown> {
  readonly id: string;
  readonly options: O;
  readonly cwd: string;
  /** Directory of the preset file that configured this plugin (for relative paths in options). */
  readonly baseDir: string;
  /**
   * True when the user trusts this project (`coil trust`, `--trust`, the prompt; never merely because it
   * has nothing to load): only then may a plugin run project-local code (`.claude/settings.json` hooks,
   * binaries in its `node_modules/.bin`).
   */
  readonly projectTrusted: boolean;
  /** tool_call's rewrite step: return `{ args }` to change the call's arguments (validated), or undefined. */
  tap(hook: "tool_call", fn: RewriteFn, options: TapOptions & { step: "rewrite" }): void;
  tap<K extends HookName>(hook: K, fn: TapFn<K>, options?: TapOptions): void;
  /** Observe events; `"*"` sees all. Listeners run synchronously and must not block. */
  on<T extends AgentEventType | "*">(
    type: T,
    listener: (event: T extends "*" ? AgentEvent : Extract<AgentEvent, { type: T }>) => void,
  ): () => void;
  tools: Omit<LateRegistrar<ToolDefinition>, "register"> & {
    register<P extends TSchema>(tool: ToolDefinition<P, unknown>): void;
  };
  providers: Registrar<Provider> & { ids(): string[] };
  commands: LateRegistrar<SlashCommand>;
  frontEnds: Registrar<FrontEnd>;
  /** Run once the agent exists, before the front end; a throw stops start-up with this plugin named. */
  onStart(fn: StartFn): void;
  /** Run once at exit (flush, release locks). */
  onStop(fn: StopFn): void;
  services: {
    /** `fallback`: used only when no other plugin provides `name` (a plain provider takes its place). */
    provide<N extends string>(name: N, service: Services[N], options?: { fallback?: boolean }): void;
    /** The plugin that provides `name`. */
    owner(name: string): string | undefined;
    get<N extends string>(name: N): Services[N] | undefined;
    require<N extends string>(name: N): Services[N];
  };
  log: PluginLog;
  /** A coded error attributed to this plugin. */
  error(code: ErrorCode, message: string, options?: CoilErrorOptions): CoilError;
}

export interface InstallSource {
  /** How the preset referred to it: built-in id, path or package name. */
  ref?: string;
  /** Preset file (and position) that configured it. */
  file?: string;
  line?: number;
  column?: number;
  /** Directory relative option paths resolve against. */
  baseDir?: string;
  /** Dotted option path → the file that set it, so an option error names the right layer. */
  optionSources?: Record<string, string>;
}

/**
 * Dialogs other plugins ask through (`ctx.services.get("ui")`). An interactive front end provides it;
 * in print and JSON modes nobody does, so a plugin that needs an answer must treat "no ui" as "no"
 * (a permission gate denies, plan approval is refused) and say so.
 */
export interface UiService {
  confirm(title: string, message: string, signal?: AbortSignal): Promise<boolean>;
  /** The chosen option, or undefined when dismissed. */
  select(title: string, options: readonly string[], signal?: AbortSignal): Promise<string | undefined>;
  /** Free text, or undefined when dismissed. */
  input(title: string, placeholder?: string, signal?: AbortSignal): Promise<string | undefined>;
  notify(message: string, level?: "info" | "warn" | "error"): void;
}

/** Identity helper that types a tool's `execute` arguments from its schema. */
export function defineTool<P extends TSchema, D = unknown>(tool: ToolDefinition<P, D>): ToolDefinition<P, D> {
  return tool;
}
