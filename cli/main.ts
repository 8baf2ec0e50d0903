/**
 * The `coil` command. Two phases: a first scan finds the preset and extra plugins, which are loaded
 * and set up (registering their flags); then commander parses the full command line, so `--help`
 * lists plugin flags too. Exit codes: 0 ok, 1 the run failed or was aborted, 2 usage/configuration,
 * 3 a stop rule halted the run (a guard's limit); front ends map a run's end with `exitCodeFor`.
 */
import { join } from "node:path";
import { Command, CommanderError, Help, Option } from "commander";
import { Agent } from "../kernel/agent.js";
import { CoilError, formatDiagnostic } from "../kernel/errors.js";
import { formatError } from "./format-error.js";
import type { PluginHost } from "../kernel/host.js";
import type { FrontEnd } from "../kernel/plugin.js";
import {
  agentFor,
  assemble,
  presetOptions,
  showSetupDiagnostics,
  type AssembleOptions,
  type Assembled,
} from "../boot/assemble.js";
import { providerDefault } from "../lib/models.js";
import { coilHome, secureCoilHome } from "../boot/paths.js";
import { coilVersion } from "../lib/paths.js";
import { distance, resolvePreset, type ResolvedPreset } from "../boot/preset.js";
import type { RunShape } from "../boot/load.js";
import { formatPreset } from "./preset-show.js";
import { PACKAGE_INSTALLER, type PackageInstaller } from "../lib/package-installer.js";
import { RELOAD, type ReloadRequest, type ReloadService } from "../lib/reload.js";
import { settleTrust, trustCommand } from "./trust.js";
import { startPlugins, stopPlugins } from "../boot/lifecycle.js";

export interface CliIO {
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const KERNEL_FLAGS_WITH_VALUE = new Set(["--preset", "--plugin", "--provider", "--model", "--mode"]);

/** Phase 1: only what decides which plugins load. */
function scan(argv: string[]) {
  const found: {
    preset?: string;
    plugins: string[];
    provider?: string;
    model?: string;
    trust: boolean;
    yes: boolean;
    help: boolean;
    codeTrusted?: boolean;
    run?: RunShape;
  } = { plugins: [], trust: false, yes: false, help: false };
  let mode: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") break;
    if (arg === "-p" || arg === "--print") mode ??= "text";
    const [flag, inline] =
      arg.startsWith("--") && arg.includes("=")
        ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
        : [arg, undefined];
    if (flag === "--trust") found.trust = true;
    else if (flag === "--yes") found.yes = true;
    else if (flag === "--help" || flag === "-h") found.help = true;
    else if (KERNEL_FLAGS_WITH_VALUE.has(flag)) {
      const value = inline ?? argv[++i];
      if (value === undefined) continue;
      if (flag === "--plugin") found.plugins.push(value);
      else if (flag === "--mode") mode = value;
      else found[flag.slice(2) as "preset" | "provider" | "model"] = value;
    }
  }
  // A print or --mode run skips plugins that serve other modes and subcommands only (boot/load.ts needsPlugin).
  if (mode && !found.help) found.run = { mode, words: argv.filter((a) => !a.startsWith("-")) };
  return found;
}

export function version(): string {
  return coilVersion();
}

function program(io: CliIO, host?: PluginHost): Command {
  const cmd = new Command("coil")
    .description("A terminal coding agent built as a plugin-first microkernel")
    .version(version(), "-v, --version")
    .argument("[prompt...]", "what to do (with -p: run once and print the answer)")
    .option("-p, --print", "run the prompt once, print the final answer and exit")
    .addOption(
      new Option(
        "--mode <mode>",
        "front end: text (the final answer), json (every event as a JSON line), interactive (the TUI), and what the preset's plugins add (rpc, acp)",
      ).choices(modesOf(host)),
    )
    .option("--preset <name|path>", "base preset: a built-in name or a YAML file", "default")
    .option("--provider <id>", "provider to use (e.g. scripted)")
    .option("--model <id>", "model, as provider/model or a model id")
    .option(
      "--plugin <spec>",
      "add a plugin for this run (built-in id, path or npm package); repeatable",
      (v: string, all: string[]) => [...all, v],
      [],
    )
    .option("--trust", "load this project's .coil/preset.yaml (project code runs with your rights)")
    .option(
      "--yes",
      "install npm packages (and Claude Code marketplaces and plugins) the preset names but are missing, without asking (for CI)",
    )
    .showHelpAfterError("(run coil --help for usage)")
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride()
    .action(() => undefined);
  for (const [, flag] of host?.flags.entries() ?? []) {
    const f = flag.value;
    const long = f.short ? `-${f.short}, --${f.name}` : `--${f.name}`;
    const spec = f.type === "boolean" ? long : `${long} <${f.valueName ?? "value"}>`;
    const option = new Option(spec, `${f.description} [${flag.owner}]`);
    if (f.type === "number") option.argParser((v) => Number(v));
    cmd.addOption(option);
  }
  // Plugin subcommands parse their own arguments; help shows their usage text as written.
  const usages = new Map<string, string>();
  cmd.configureHelp({ subcommandTerm: (c) => usages.get(c.name()) ?? new Help().subcommandTerm(c) });
  for (const [name, sub] of host?.subcommands.entries() ?? []) {
    cmd.command(name).description(`${sub.value.description} [${sub.owner}]`);
    if (sub.value.usage) usages.set(name, `${name} ${sub.value.usage}`);
  }
  cmd.command("trust [dir]").description("trust a project (default: this directory): its .coil/ code may load");
  cmd.command("untrust [dir]").description("forget that a project is trusted");
  const preset = cmd.command("preset").description("inspect presets");
  preset
    .command("show")
    .description("print the resolved preset and the file each value came from")
    .option("--json", "print JSON instead of annotated YAML")
    .action(() => undefined);
  return cmd;
}

function modesOf(host?: PluginHost): string[] {
  const modes = new Set(["text", "json"]);
  for (const fe of host?.frontEnds.values() ?? []) for (const m of fe.modes) modes.add(m);
  return [...modes];
}

/** What a run of the CLI offers for an in-process rebuild (`/reload`): the `reload` service, and which rebuild this is. */
interface Rebuild {
  services: Record<string, unknown>;
  fresh: number;
}

/**
 * Run the CLI; resolves to the exit code. A front end may ask for a rebuild (the `reload` service,
 * lib/reload.ts): once it returns and every plugin has stopped, coil is assembled again in this process
 * from the command line the request gives, and the new front end gets what the old one handed over.
 */
export async function main(io: CliIO): Promise<number> {
  let argv = io.argv;
  let handover: unknown;
  for (let fresh = 0; ; fresh++) {
    let requested: ReloadRequest | undefined;
    const reload: ReloadService = {
      request: (request) => {
        requested = request;
      },
      handover: () => {
        const given = handover;
        handover = undefined;
        return given;
      },
    };
    const code = await runOnce({ ...io, argv }, { services: { [RELOAD]: reload }, fresh });
    if (!requested) return code;
    argv = requested.args(argv);
    handover = requested.handover;
  }
}

async function runOnce(io: CliIO, rebuild: Rebuild): Promise<number> {
  const home = coilHome(io.env);
  const homeProblem = secureCoilHome(home);
  if (homeProblem) io.stderr.write(`coil: warning: ${homeProblem}\n`);
  const first = scan(io.argv);
  try {
    const word = io.argv[firstPositional(io.argv)];
    if (word === "trust" || word === "untrust") return trustCommand(io.argv.slice(firstPositional(io.argv)), io, home);
    const trust = await settleTrust(io, home, first.trust, word !== "preset");
    first.trust = trust.trusted;
    first.codeTrusted = trust.explicit;
    if (word === "preset") return presetCommand(io, first, home);
    const { preset, host, setupDiagnostics } = await loadPreset(io, home, first, rebuild);
    const at = firstPositional(io.argv, host);
    const sub = at >= 0 ? host.subcommands.get(io.argv[at]!) : undefined;
    showSetupDiagnostics(setupDiagnostics, io.stderr, sub !== undefined);
    if (sub) {
      try {
        return await sub.run(io.argv.slice(at + 1), io);
      } finally {
        await echoing(host, io, () => stopPlugins(host));
      }
    }
    const cmd = program(io, host);
    cmd.parse(io.argv, { from: "user" });
    if (cmd.args[0] === "preset") return 0;
    const opts = cmd.opts<{ print?: boolean; mode?: string; trust?: boolean }>();
    // with -p the words are a prompt by the user's own choice
    const near =
      cmd.args.length === 1 && !opts.print && !io.argv.includes("--")
        ? nearestCommand(cmd.args[0]!, [
            ...host.subcommands.entries().map(([name]) => name),
            "trust",
            "untrust",
            "preset",
          ])
        : undefined;
    if (near) {
      io.stderr.write(
        `coil: unknown command '${cmd.args[0]}'. Did you mean: coil ${near}?\n(to send '${cmd.args[0]}' to the model as a prompt: coil -- ${cmd.args[0]})\n`,
      );
      return 2;
    }
    for (const [name] of host.flags.entries()) {
      // commander turns `--no-x` into x=false
      host.flagValues[name] = name.startsWith("no-")
        ? (opts as Record<string, unknown>)[camel(name.slice(3))] === false
        : opts[camel(name) as keyof typeof opts];
    }
    for (const layer of preset.layers)
      if (layer.skipped) io.stderr.write(`coil: skipped ${layer.file}: ${layer.skipped}\n${trust.skipped}`);

    let prompt = cmd.args.join(" ").trim() || undefined;
    // Print modes take a piped prompt; other front ends (rpc) own stdin.
    if (!prompt && !io.stdin.isTTY && (opts.print || opts.mode === "text" || opts.mode === "json"))
      prompt = (await readAll(io.stdin)).trim() || undefined;
    const mode = opts.mode ?? (opts.print || prompt ? "text" : "interactive");
    const frontEnd = host.frontEnds.values().find((fe: FrontEnd) => fe.modes.includes(mode));
    if (!frontEnd) {
      throw new CoilError("CONFIG_INVALID", `no front end in this preset serves mode '${mode}'`, {
        hint:
          mode === "interactive"
            ? 'pass a prompt: coil -p "what to do" (the interactive UI is a plugin this preset does not include)'
            : `modes available: ${modesOf(host).join(", ")}`,
      });
    }
    const { agent, modelError } = agentForStart(host, preset);
    try {
      const exit = await echoing(host, io, () =>
        startPlugins(host, agent, io, { mode, prompt, modelFromCli: Boolean(first.model || first.provider) }),
      );
      if (exit !== undefined) return exit;
      // Without a usable provider the interactive UI still opens, to help add a key (docs/tui.md); other modes stop here.
      if (modelError && !(mode === "interactive" && modelError.code === "PROVIDER_MISSING")) throw modelError;
      return await host.runFrontEnd(frontEnd, {
        agent,
        host,
        mode,
        prompt,
        stdin: io.stdin,
        stdout: io.stdout,
        stderr: io.stderr,
      });
    } finally {
      await echoing(host, io, () => stopPlugins(host));
    }
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (first.help) {
      program(io).outputHelp();
      io.stderr.write(
        `\ncoil: plugin flags are not listed because the preset failed to load:\n${formatError(error)}\n`,
      );
      return 2;
    }
    io.stderr.write(`coil: ${formatError(error)}\n`);
    return 2;
  }
}

/** Resolve the preset and load its plugins (boot's assemble()), installing missing npm packages on first use (each once). */
async function loadPreset(
  io: CliIO,
  home: string,
  first: ReturnType<typeof scan>,
  rebuild: Rebuild,
): Promise<Assembled> {
  for (const tried = new Set<string>(); ; ) {
    let assembled: Assembled;
    try {
      assembled = await assemble({ ...assembleOptions(io, home, first), ...rebuild });
    } catch (error) {
      if (!(await installOnFirstUse(error, io, home, first.yes, tried))) throw error;
      continue;
    }
    if (tried.has(PENDING) || !(await installPending(assembled.host, io, first.yes))) return assembled;
    tried.add(PENDING);
    await stopPlugins(assembled.host);
  }
}

const PENDING = "\0pending";

/**
 * What the preset names beyond npm packages and is missing (the installer's `pending()`: Claude Code
 * marketplaces and plugins): asked about on a terminal, installed with `--yes`, else named in a warning
 * and the run goes on without them. True if installed (load the preset again).
 */
async function installPending(host: PluginHost, io: CliIO, yes: boolean): Promise<boolean> {
  const pending = await (host.services.get(PACKAGE_INSTALLER) as PackageInstaller | undefined)?.pending?.();
  if (!pending) return false;
  const list = pending.describe.map((d) => `  ${d}`).join("\n");
  if (!yes && !io.stdin.isTTY) {
    io.stderr.write(
      `coil: the preset needs what is not installed (this run goes on without it):\n${list}\n  pass --yes to install it on first use\n`,
    );
    return false;
  }
  if (!yes && !(await askYes(io, `coil: the preset needs:\n${list}\ninstall?`))) return false;
  await pending.install(io);
  return true;
}

async function askYes(io: CliIO, question: string): Promise<boolean> {
  io.stderr.write(`${question} [y/N] `);
  const rl = (await import("node:readline")).createInterface({ input: io.stdin, terminal: false });
  const answer = await new Promise<string>((done) => {
    rl.once("line", done);
    rl.once("close", () => done(""));
  });
  rl.close();
  return /^y(es)?$/i.test(answer.trim());
}

function assembleOptions(io: CliIO, home: string, first: ReturnType<typeof scan>): AssembleOptions {
  return {
    preset: first.preset,
    cwd: io.cwd,
    home,
    trust: first.trust,
    explicitTrust: first.codeTrusted ?? first.trust,
    plugins: first.plugins,
    provider: first.provider,
    model: first.model,
    run: first.run,
  };
}

/**
 * A missing npm package the preset names: install it into `$COIL_HOME/packages` after the user agrees,
 * or at once with `--yes`. The installer is whatever plugin of the built-in default preset provides the
 * `package-installer` service (lib/package-installer.ts); the CLI names no plugin. True if installed (resolve again).
 */
async function installOnFirstUse(
  error: unknown,
  io: CliIO,
  home: string,
  yes: boolean,
  tried: Set<string>,
): Promise<boolean> {
  if (!(error instanceof CoilError) || !["PRESET_NOT_FOUND", "PLUGIN_NOT_FOUND"].includes(error.code) || !error.npmSpec)
    return false;
  const [spec, dir] = [error.npmSpec, join(home, "packages")];
  if (tried.has(spec)) return false;
  tried.add(spec);
  const { host } = await assemble({ cwd: io.cwd, home, trust: false, builtinOnly: true });
  const installer = host.services.get(PACKAGE_INSTALLER) as PackageInstaller | undefined;
  try {
    if (!installer) return false;
    if (!yes) {
      const hint = `pass --yes to install ${spec} into ${dir} on first use, or install it first: coil install ${spec}`;
      if (!io.stdin.isTTY)
        throw new CoilError(error.code, error.detail, {
          phase: error.phase,
          file: error.file,
          line: error.line,
          column: error.column,
          hint,
        });
      if (!(await askYes(io, `coil: ${error.detail}\ninstall ${spec} into ${dir}?`))) return false;
    }
    return await installer.install([spec], dir, io);
  } finally {
    await stopPlugins(host);
  }
}

/** Outside a front end's run, plugin diagnostics (setup, start, stop) go to stderr. */
async function echoing<T>(host: PluginHost, io: CliIO, fn: () => T | Promise<T>): Promise<T> {
  const stop = host.subscribe("diagnostic", (d) => {
    if (d.type === "diagnostic" && d.level !== "info") io.stderr.write(`coil: ${formatDiagnostic(d)}\n`);
  });
  try {
    return await fn();
  } finally {
    stop();
  }
}

function presetCommand(io: CliIO, first: ReturnType<typeof scan>, home: string): number {
  const cmd = program(io);
  cmd.parse(io.argv, { from: "user" });
  const json = io.argv.includes("--json");
  const preset = resolvePreset(presetOptions(assembleOptions(io, home, first)));
  io.stdout.write(formatPreset(preset, json ? "json" : "yaml", { cwd: io.cwd, env: io.env, home }));
  return 0;
}

/**
 * The agent the start callbacks get. One of them may end the process before any model call (`-r -p`
 * lists sessions), so a provider that is not configured, or a model it lacks, is reported once they have
 * run; until then the agent holds a registered provider's first model as a stand-in.
 */
function agentForStart(host: PluginHost, preset: ResolvedPreset): { agent: Agent; modelError?: CoilError } {
  try {
    return { agent: agentFor(host, preset) };
  } catch (error) {
    const standIn = host.providers.values().find((p) => p.models?.length);
    if (!(error instanceof CoilError) || !["PROVIDER_MISSING", "MODEL_NOT_FOUND"].includes(error.code) || !standIn)
      throw error;
    // The stand-in shows the model a key would bring: the provider's balanced default, not its first listed.
    const model = providerDefault(standIn)!;
    return { agent: new Agent(host, { provider: standIn.id, model }), modelError: error };
  }
}

/** Index of the first argument that is not an option or an option's value (-1 if none). */
function firstPositional(argv: string[], host?: PluginHost): number {
  const withValue = new Set([
    ...KERNEL_FLAGS_WITH_VALUE,
    ...(host?.flags.values() ?? [])
      .filter((f) => f.type !== "boolean")
      .flatMap((f) => [`--${f.name}`, ...(f.short ? [`-${f.short}`] : [])]),
  ]);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") return i + 1 < argv.length ? i + 1 : -1;
    if (!arg.startsWith("-")) return i;
    if (withValue.has(arg)) i++;
  }
  return -1;
}

/**
 * A lone prompt word of five or more letters that looks like a mistyped subcommand (`coil doctr`,
 * `coil modles`): the command it is one edit away from (a letter added, dropped, changed, or two
 * neighbours swapped), so it is not sent to the model by mistake.
 */
export function nearestCommand(word: string, commands: string[]): string | undefined {
  if (!/^[a-z][a-z-]{4,}$/.test(word) || commands.includes(word)) return undefined;
  return commands.find((name) => distance(word, name) <= 1);
}

function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = "";
  for await (const chunk of stream) text += chunk.toString();
  return text;
}
