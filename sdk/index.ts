/**
 * `coil/sdk`: the same agent the CLI runs, in process. `createAgent` resolves a preset (built-in name,
 * YAML file or `npm:` package, with the user and trusted project layers), loads and sets up its plugins,
 * picks the model the way the CLI does, runs the plugins' start callbacks (sessions load), and hands
 * back the `Agent`. See docs/sdk.md.
 *
 *   const coil = await createAgent({ cwd: "/path/to/repo", preset: "default", model: "anthropic/claude-sonnet-4-5" });
 *   coil.agent.subscribe((e) => ...);
 *   const result = await coil.prompt("explain src/index.ts");
 *   await coil.close();
 */
import { PassThrough, Writable } from "node:stream";
import {
  Agent,
  CoilError,
  lastAssistantText,
  type AgentEvent,
  type CliStreams,
  type Plugin,
  type PromptInput,
  type RunResult,
  type Services,
} from "../api/index.js";
import { type HostOptions, PluginHost as KernelHost } from "../boot/host.js";
import { CommandLine } from "../lib/command-line.js";
import { useOptionChecks, validateOptions } from "../boot/options.js";
import { Value } from "typebox/value";
import { agentFor, assemble, showSetupDiagnostics } from "../boot/assemble.js";
import { coilHome, secureCoilHome } from "../boot/paths.js";
import type { ResolvedPreset } from "../boot/preset.js";
import { startPlugins, stopPlugins } from "../boot/lifecycle.js";

// Hosts built here install synchronously, with any options: TypeBox's value functions are there first.
useOptionChecks(Value);

export interface CreateAgentOptions {
  /** A built-in preset name, a YAML file (relative to `cwd`) or `npm:package`. Default `default`. */
  preset?: string;
  /** The project directory: tools work here, `.coil/preset.yaml` is read from here (when `trust`). Default `process.cwd()`. */
  cwd?: string;
  /** `$COIL_HOME` (user preset, packages, sessions). Default from `env`, else `~/.coil`. */
  home?: string;
  env?: NodeJS.ProcessEnv;
  /** Load the project's `.coil/preset.yaml` (its code runs in this process). Default false. */
  trust?: boolean;
  /** Extra plugin references, like `--plugin` (built-in id, path or npm package). */
  plugins?: string[];
  /** Plugin objects defined in your code, installed after the preset's: a plugin or `[plugin, options]`. */
  extraPlugins?: (Plugin | [Plugin, unknown])[];
  /** Like `--provider` and `--model` (`provider/id` or an id). */
  provider?: string;
  model?: string;
  /** Values of plugin flags by long name, as the CLI would parse them: `{ script: "replies.yaml", "no-session": true }`. */
  flags?: Record<string, unknown>;
  /** The mode start callbacks see. Default `sdk`. */
  mode?: string;
  /** Where plugins' start/stop messages go. Default: discarded (stdout), process.stderr (stderr). */
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

export interface CoilAgent {
  readonly agent: Agent;
  readonly host: KernelHost;
  readonly preset: ResolvedPreset;
  /** A service the preset's plugins provide (`session`, `scripted`, ...). */
  service<N extends string>(name: N): Services[N] | undefined;
  /** Prompt and wait for the run to end. */
  prompt(input: PromptInput): Promise<RunResult>;
  /** The text of the newest assistant message. */
  lastText(): string;
  subscribe(listener: (event: AgentEvent) => void): () => void;
  /** Abort a running run, then run the plugins' stop callbacks (flush sessions, release locks). */
  close(): Promise<void>;
}

export async function createAgent(options: CreateAgentOptions = {}): Promise<CoilAgent> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const home = options.home ?? coilHome(env);
  const stderr = options.stderr ?? process.stderr;
  const homeProblem = secureCoilHome(home);
  if (homeProblem) stderr.write(`coil: warning: ${homeProblem}\n`);
  // The CLI's own assembly (boot/assemble.ts): `trust: true` is explicit trust, as `--trust` is.
  const trust = options.trust ?? false;
  const { preset, host, commandLine, setupDiagnostics } = await assemble({
    preset: options.preset,
    cwd,
    home,
    trust,
    plugins: options.plugins,
    provider: options.provider,
    model: options.model,
  });
  showSetupDiagnostics(setupDiagnostics, stderr);
  for (const item of options.extraPlugins ?? []) {
    const [plugin, opts] = Array.isArray(item) ? item : [item, {}];
    host.install(plugin, opts ?? {}, { ref: plugin.id });
  }
  commandLine.values = { ...options.flags };
  const agent = agentFor(host, preset);
  const stdin = new PassThrough();
  stdin.end();
  const io: CliStreams = {
    cwd,
    env,
    stdin,
    stdout: options.stdout ?? new Writable({ write: (_c, _e, done) => done() }),
    stderr,
  };
  const exit = await startPlugins(host, agent, io, {
    mode: options.mode ?? "sdk",
    modelFromCli: Boolean(options.model || options.provider),
  });
  if (exit !== undefined) {
    await stopPlugins(host);
    throw new CoilError(
      "CONFIG_INVALID",
      `a plugin ended start-up (exit ${exit}); check the flags passed to createAgent`,
    );
  }
  let closed = false;
  return {
    agent,
    host,
    preset,
    service: (name) => host.services.get(name) as never,
    prompt: (input) => agent.prompt(input),
    lastText: () => lastAssistantText(agent.state.messages),
    subscribe: (listener) => agent.subscribe(listener),
    async close() {
      if (closed) return;
      closed = true;
      agent.abort();
      await agent.waitForIdle();
      await stopPlugins(host);
    },
  };
}

/**
 * A host for embedders and tests that install plugins themselves: the kernel's host with plugin options
 * validated and defaulted at install, as boot does (the kernel's own host leaves validation to its caller),
 * and the command line's `flags` and `subcommands` declared, so plugins that register them set up here too
 * (`commandLine.values` sets the flag values).
 */
export class PluginHost extends KernelHost {
  readonly commandLine: CommandLine;
  constructor(options: HostOptions = {}, commandLine = new CommandLine()) {
    super({ validate: validateOptions, declare: commandLine.declarations, ...options });
    this.commandLine = commandLine;
  }
}

export { Agent };
/**
 * For a host you built yourself: run the plugins' start callbacks once the agent exists, and their stop
 * callbacks when you are done (language servers, MCP servers and watchers end there). createAgent runs both.
 */
export { startPlugins, stopPlugins };
export type { ResolvedPreset };
/** Resolve a preset the way createAgent does, without starting it (coil fleet embeds the result in jobs). */
export { resolvePreset } from "../boot/preset.js";
