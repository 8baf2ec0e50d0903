/**
 * The `coil` command. Two phases: a first scan finds the preset and extra plugins, which are loaded
 * and set up (registering their flags and subcommands); then commander parses the full command line
 * (cli/program.ts), so `--help` lists plugin flags and every subcommand's options. Exit codes: 0 ok,
 * 1 the run failed or was aborted, 2 usage/configuration, 3 a stop rule halted the run (a guard's
 * limit); front ends map a run's end with `exitCodeFor` (lib/front-end.ts).
 */
import { join, resolve } from "node:path";
import { CommanderError } from "commander";
import { Agent } from "../kernel/agent.js";
import { CoilError } from "../kernel/errors.js";
import { formatError } from "./format-error.js";
import type { PluginHost } from "../boot/host.js";
import type { FrontEnd } from "../api/plugin.js";
import type { Provider } from "../kernel/types.js";
import {
  agentFor,
  assemble,
  presetOptions,
  showSetupDiagnostics,
  type AssembleOptions,
  type Assembled,
} from "../boot/assemble.js";
import { CLI_EXTENSIONS, COIL_COMMANDS, COIL_OPTIONS, type CommandLine, type Subcommand } from "../lib/command-line.js";
import { formatDiagnostic, slashName } from "../lib/front-end.js";
import { providerDefault, resolveModel } from "../lib/models.js";
import { coilHome, secureCoilHome } from "../boot/paths.js";
import { coilVersion } from "../lib/paths.js";
import { distance, resolvePreset, type ResolvedPreset } from "../boot/preset.js";
import type { RunShape } from "../boot/load.js";
import { formatPreset } from "./preset-show.js";
import { PACKAGE_INSTALLER, type PackageInstaller } from "../lib/package-installer.js";
import { PROJECT_TRUST, type ProjectTrustService } from "../lib/project-trust.js";
import { RELOAD, type ReloadRequest, type ReloadService } from "../lib/reload.js";
import { flagHint, nearestNames, pluginWithFlag } from "./hints.js";
import { program, type Parsed, type ProgramOptions } from "./program.js";
import { mergePiped, readPiped } from "./stdin.js";
import { adviseTrust, settleTrust, trustCommand } from "./trust.js";
import { startPlugins, stopPlugins } from "../boot/lifecycle.js";
import { mark } from "../boot/marks.js";

export interface CliIO {
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** coil's own options that take a value (`--preset x`), as written on the command line. */
const OWN_WITH_VALUE = new Set(COIL_OPTIONS.filter((o) => o.value).map((o) => `--${o.name}`));

/** What decides which plugins load, read before any loads. */
interface Scan {
  preset?: string;
  plugins: string[];
  /** `-e/--extension` paths, as written. */
  extensions: string[];
  provider?: string;
  model?: string;
  trust: boolean;
  yes: boolean;
  help: boolean;
  codeTrusted?: boolean;
  run?: RunShape;
}

/**
 * Phase 1: only what decides which plugins load. Options after index `after` named in `own` belong to a
 * subcommand (`coil fleet submit --preset team.yaml`), not to coil, and are passed over with their values.
 */
function scan(argv: string[], subcommand?: { after: number; own: ReadonlySet<string> }): Scan {
  const found: Scan = { plugins: [], extensions: [], trust: false, yes: false, help: false };
  let mode: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") break;
    const [flag, inline] =
      arg.startsWith("--") && arg.includes("=")
        ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
        : [arg, undefined];
    if (subcommand && i > subcommand.after && subcommand.own.has(flag)) {
      if (inline === undefined && argv[i + 1] !== undefined && !argv[i + 1]!.startsWith("-")) i++;
      continue;
    }
    if (arg === "-p" || arg === "--print") mode ??= "text";
    if (arg === "-e") {
      const value = argv[++i];
      if (value !== undefined) found.extensions.push(value);
    } else if (flag === "--trust") found.trust = true;
    else if (flag === "--yes") found.yes = true;
    else if (flag === "--help" || flag === "-h") found.help = true;
    else if (OWN_WITH_VALUE.has(flag)) {
      const value = inline ?? argv[++i];
      if (value === undefined) continue;
      if (flag === "--plugin") found.plugins.push(value);
      else if (flag === "--extension") found.extensions.push(value);
      else if (flag === "--mode") mode = value;
      else if (flag === "--preset" || flag === "--provider" || flag === "--model")
        found[flag.slice(2) as "preset"] = value;
    }
  }
  // A print or --mode run skips plugins that serve other modes and subcommands only (boot/load.ts needsPlugin).
  if (mode && !found.help) found.run = { mode, words: argv.filter((a) => !a.startsWith("-")) };
  return found;
}

const sameLoad = (a: Scan, b: Scan) =>
  a.preset === b.preset &&
  a.provider === b.provider &&
  a.model === b.model &&
  a.trust === b.trust &&
  a.plugins.join("\0") === b.plugins.join("\0") &&
  a.extensions.join("\0") === b.extensions.join("\0");

export function version(): string {
  return coilVersion();
}

/** `coil help [command...]` is `coil [command...] --help` (not after `--`: there it is a prompt). */
function helpWords(argv: string[], commandLine?: CommandLine): { argv: string[]; topic?: string[] } {
  const at = firstPositional(argv, commandLine);
  if (at < 0 || argv[at] !== "help" || argv.slice(0, at).includes("--")) return { argv };
  const topic = argv.slice(at + 1).filter((a) => !a.startsWith("-"));
  return { argv: [...argv.slice(0, at), ...argv.slice(at + 1), "--help"], topic };
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
  let { argv, topic } = helpWords(io.argv);
  const cli: CliIO = { ...io, argv };
  let first = scan(argv);
  let host: PluginHost | undefined;
  let stopped = false;
  const stopAll = async () => {
    if (stopped || !host) return;
    stopped = true;
    await echoing(host, io, () => stopPlugins(host!));
  };
  try {
    const at = firstPositional(argv);
    const word = at >= 0 && !argv.slice(0, at).includes("--") ? argv[at] : undefined;
    // coil's own commands need no plugin: `trust`, `untrust`, `preset show` (and their --help).
    if (word === "trust" || word === "untrust" || word === "preset") {
      const parsed = parse(cli, program(cli));
      if (parsed?.kind === "builtin")
        return trustCommand([parsed.name, ...(parsed.dir ? [parsed.dir] : [])], cli, home);
      if (parsed?.kind !== "preset-show") return parsed === undefined ? 0 : 2;
      const trust = await settleTrust(cli, home, first.trust, false);
      return presetCommand(cli, { ...first, trust: trust.trusted, codeTrusted: trust.explicit }, home, parsed.json);
    }
    // Decided without asking when it can be (--trust, a stored answer, nothing to load); otherwise the plugins
    // of the host assembled without trust may decide first (a Pi extension's project_trust), then the user.
    const trustFlag = first.trust;
    let trust = await settleTrust(cli, home, trustFlag, false);
    first.trust = trust.trusted;
    first.codeTrusted = trust.explicit;
    let assembled = await loadPreset(cli, home, first, rebuild);
    host = assembled.host;
    if (trust.undecided) {
      const advice = await adviseTrust(host.services.get(PROJECT_TRUST) as ProjectTrustService | undefined, cli, home);
      trust = advice ?? (await settleTrust(cli, home, first.trust, true));
      if (trust.trusted) {
        await stopPlugins(host);
        first = { ...first, trust: true, codeTrusted: trust.explicit };
        assembled = await loadPreset(cli, home, first, rebuild);
        host = assembled.host;
      }
    }
    // `coil --script r.yaml help mcp`: a plugin flag's value hid the `help` word until the flags were known.
    if (!topic) {
      ({ argv, topic } = helpWords(argv, assembled.commandLine));
      cli.argv = argv;
    }
    // A subcommand's own options are its own (`coil fleet submit --preset p`): load again without them.
    const subAt = firstPositional(argv, assembled.commandLine);
    const named = subAt >= 0 && !argv.slice(0, subAt).includes("--") ? argv[subAt]! : "";
    const leaf = leafOf(argv, subAt, assembled.commandLine.subcommands.get(named));
    if (leaf) {
      const again = scan(argv, { after: subAt, own: new Set((leaf.options ?? []).map((o) => `--${o.name}`)) });
      if (!sameLoad(first, again)) {
        await stopPlugins(assembled.host);
        // the decision stands unless the command line's --trust changed (a subcommand's own options aside)
        const retrust = again.trust === trustFlag ? trust : await settleTrust(cli, home, again.trust, true);
        first = { ...again, trust: retrust.trusted, codeTrusted: retrust.explicit };
        assembled = await loadPreset(cli, home, first, rebuild);
        host = assembled.host;
      }
    }
    const { commandLine, setupDiagnostics } = assembled;
    const commands = [...commandLine.subcommands.names(), ...COIL_COMMANDS];
    if (topic?.length && !commands.includes(topic[0]!)) {
      const near = nearestNames(topic[0]!, commands);
      io.stderr.write(
        `coil help: no command '${topic[0]}'${near.length ? `. Did you mean: ${near.join(", ")}?` : ""}\n`,
      );
      return 2;
    }
    const at2 = firstPositional(argv, commandLine);
    const literal = at2 >= 0 && argv.slice(0, at2).includes("--");
    const parsed = await parseWithHints(
      cli,
      { commandLine, modes: modesOf(host), promptOnly: literal },
      first,
      host,
      home,
    );
    if (typeof parsed === "number") return parsed;
    if (parsed.kind !== "run") {
      // coil's own commands were handled before loading; here only the plugins' remain
      if (parsed.kind !== "subcommand") return 2;
      showSetupDiagnostics(setupDiagnostics, io.stderr, true);
      setFlagValues(commandLine, parsed.root);
      return await parsed.command.run!(parsed.args, cli, parsed.options);
    }
    showSetupDiagnostics(setupDiagnostics, io.stderr, false);
    return await run(cli, parsed, { assembled, first, literal, skipped: trust.skipped });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (first.help) {
      program(cli).cmd.outputHelp();
      io.stderr.write(
        `\ncoil: plugin flags are not listed because the preset failed to load:\n${formatError(error)}\n`,
      );
      return 2;
    }
    io.stderr.write(`coil: ${formatError(error)}\n`);
    return 2;
  } finally {
    await stopAll();
  }
}

/** Parse with commander; undefined when it answered itself (help, version), a CommanderError on a usage error. */
function parse(io: CliIO, built: ReturnType<typeof program>): Parsed | undefined {
  try {
    built.cmd.parse(io.argv, { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError && error.exitCode === 0) return undefined;
    throw error;
  }
  return built.parsed();
}

/**
 * Parse the full command line; on an unknown option, say which built-in plugin would add it, if one does
 * (commander's message otherwise). A number is the exit code when parsing ended the command.
 */
async function parseWithHints(
  io: CliIO,
  options: ProgramOptions,
  first: Scan,
  host: PluginHost,
  home: string,
): Promise<Parsed | number> {
  const errors: string[] = [];
  const quiet: CliIO = { ...io, stderr: { write: (s: string) => errors.push(s) > 0 } as NodeJS.WritableStream };
  const rebuilt = program(quiet, options);
  try {
    rebuilt.cmd.parse(io.argv, { from: "user" });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (error.exitCode === 0) return 0;
    const option = error.code === "commander.unknownOption" ? /'([^']+)'/.exec(error.message)?.[1] : undefined;
    const found = option
      ? await pluginWithFlag(option, new Set(host.plugins.map((p) => p.id)), { cwd: io.cwd, home })
      : undefined;
    if (option && found) io.stderr.write(`coil: ${flagHint(option, found, first.preset ?? "default")}\n`);
    else io.stderr.write(errors.join(""));
    return 2;
  }
  const parsed = rebuilt.parsed();
  return parsed ?? 0;
}

/** A prompt run: the front end for the mode, the prompt with piped stdin, the agent, then the front end. */
async function run(
  io: CliIO,
  parsed: Extract<Parsed, { kind: "run" }>,
  ctx: { assembled: Assembled; first: Scan; literal: boolean; skipped: string },
): Promise<number> {
  const { preset, host, commandLine } = ctx.assembled;
  const opts = parsed.options as { print?: boolean; mode?: string };
  // with -p the words are a prompt by the user's own choice
  const near =
    parsed.prompt.length === 1 && !opts.print && !ctx.literal
      ? nearestCommand(parsed.prompt[0]!, [...commandLine.subcommands.names(), ...COIL_COMMANDS])
      : undefined;
  if (near) {
    io.stderr.write(
      `coil: unknown command '${parsed.prompt[0]}'. Did you mean: coil ${near}?\n(to send '${parsed.prompt[0]}' to the model as a prompt: coil -- ${parsed.prompt[0]})\n`,
    );
    return 2;
  }
  setFlagValues(commandLine, parsed.options);
  for (const layer of preset.layers)
    if (layer.skipped) io.stderr.write(`coil: skipped ${layer.file}: ${layer.skipped}\n${ctx.skipped}`);

  let prompt = parsed.prompt.join(" ").trim() || undefined;
  const terminal = Boolean(io.stdin.isTTY && (io.stdout as { isTTY?: boolean }).isTTY);
  // A prompt opens the interactive UI in a terminal, as `claude "..."` and `pi "..."` do; -p, or a pipe, prints.
  const mode = opts.mode ?? (opts.print || (prompt !== undefined && !terminal) ? "text" : "interactive");
  // Print modes take piped stdin, after the prompt; other front ends (rpc, acp, the TUI) own stdin.
  if ((mode === "text" || mode === "json") && !io.stdin.isTTY) {
    const piped = await readPiped(io.stdin, io.stderr);
    if ("problem" in piped) {
      io.stderr.write(`coil: ${piped.problem}\n`);
      return 2;
    }
    prompt = mergePiped(prompt, piped.text);
  }
  const frontEnd = host.frontEnds.values().find((fe: FrontEnd) => fe.modes.includes(mode));
  if (!frontEnd) {
    throw new CoilError("CONFIG_INVALID", `no front end in this preset serves mode '${mode}'`, {
      hint:
        mode === "interactive"
          ? 'pass a prompt: coil -p "what to do" (the interactive UI is a plugin this preset does not include)'
          : `modes available: ${modesOf(host).join(", ")}`,
    });
  }
  const chosen = flagProvider(commandLine, host, ctx.first);
  const { agent, modelError } = agentForStart(host, chosen ? withProvider(preset, chosen, ctx.first) : preset);
  const modelFromCli = Boolean(ctx.first.model || ctx.first.provider || chosen);
  mark("coil:agent");
  const exit = await echoing(host, io, () => startPlugins(host, agent, io, { mode, prompt, modelFromCli }));
  mark("coil:started");
  if (exit !== undefined) return exit;
  // Without a usable provider the interactive UI still opens, to help add a key (docs/tui.md); other modes stop here.
  if (modelError && !(mode === "interactive" && modelError.code === "PROVIDER_MISSING")) throw modelError;
  // `/name` in print mode names a command (skills, templates, MCP prompts and plugins' commands are registered by now).
  const asked = prompt && !ctx.literal && (mode === "text" || mode === "json") ? slashName(prompt) : undefined;
  if (asked && !host.commands.has(asked)) {
    const near = nearestNames(asked, host.commands.names());
    io.stderr.write(
      `coil: unknown command /${asked}${near.length ? `. Did you mean: ${near.map((n) => `/${n}`).join(", ")}?` : ""}\n(to send it to the model as text: coil -p -- ${JSON.stringify(prompt)})\n`,
    );
    return 2;
  }
  return await host.runFrontEnd(frontEnd, {
    agent,
    cwd: io.cwd,
    mode,
    prompt,
    literal: ctx.literal,
    stdin: io.stdin,
    stdout: io.stdout,
    stderr: io.stderr,
  });
}

/** Plugin flags' parsed values (`--no-x` is commander's x=false). */
function setFlagValues(commandLine: CommandLine, options: Record<string, unknown>): void {
  for (const name of commandLine.flags.names()) {
    commandLine.values[name] = name.startsWith("no-") ? options[camel(name.slice(3))] === false : options[camel(name)];
  }
}

/**
 * The provider a flag given on the command line runs with (`--script` → `scripted`), if any. A `--provider`
 * or `--model` naming another provider, or two such flags wanting different ones, is a usage error.
 */
function flagProvider(commandLine: CommandLine, host: PluginHost, first: Scan): string | undefined {
  let chosen: { provider: string; flag: string } | undefined;
  for (const [name, owned] of commandLine.flags.entries()) {
    const wants = owned.value.provider;
    const value = commandLine.values[name];
    if (!wants || value === undefined || value === false || value === "") continue;
    if (chosen && chosen.provider !== wants)
      throw usage(`--${chosen.flag} runs the ${chosen.provider} provider and --${name} the ${wants} provider`);
    chosen = { provider: wants, flag: name };
  }
  if (!chosen) return undefined;
  const clash = (what: string) =>
    usage(
      `--${chosen.flag} runs the ${chosen.provider} provider, but ${what}`,
      `drop --${chosen.flag} or ${what.split(" ")[0]}`,
    );
  if (first.provider && first.provider !== chosen.provider) throw clash(`--provider names ${first.provider}`);
  if (first.model) {
    const named = providerOf(host.providers.values(), first.model, chosen.provider);
    if (named && named !== chosen.provider) throw clash(`--model ${first.model} is a model of ${named}`);
  }
  return chosen.provider;
}

/**
 * The provider `--model` names: the head of `provider/id`, else a provider listing the id (`prefer` first),
 * else none (the flag's provider resolves it, or says it has none). An unknown provider head is an error.
 */
function providerOf(providers: readonly Provider[], model: string, prefer: string): string | undefined {
  const slash = model.indexOf("/");
  const head = slash > 0 ? model.slice(0, slash) : undefined;
  if (head && providers.some((p) => p.id === head)) return head;
  const listing = providers.filter((p) => p.models?.some((m) => m.id === model));
  if (head && !listing.length) resolveModel(providers, model); // throws: unknown provider
  return listing.find((p) => p.id === prefer)?.id ?? listing[0]?.id;
}

const usage = (detail: string, hint?: string) => new CoilError("CONFIG_INVALID", detail, { hint });

/** The preset with the flag's provider in place of the presets' choice; a model of another provider is dropped. */
function withProvider(preset: ResolvedPreset, provider: string, first: Scan): ResolvedPreset {
  const model = first.model ?? (preset.settings.model?.startsWith(`${provider}/`) ? preset.settings.model : undefined);
  return { ...preset, settings: { ...preset.settings, provider, model } };
}

/** The deepest subcommand the words after `at` name (`fleet submit`), or undefined when `start` is none. */
function leafOf(argv: string[], at: number, start: Subcommand | undefined): Subcommand | undefined {
  let spec = start;
  for (let i = at + 1; spec?.commands?.length && i < argv.length; i++) {
    const child = spec.commands.find((c) => c.name === argv[i]);
    if (!child) break;
    spec = child;
  }
  return spec;
}

/** Resolve the preset and load its plugins (boot's assemble()), installing missing npm packages on first use (each once). */
async function loadPreset(io: CliIO, home: string, first: Scan, rebuild: Rebuild): Promise<Assembled> {
  for (const tried = new Set<string>(); ; ) {
    let assembled: Assembled;
    try {
      // `-e` paths reach the plugins as a service (they are read in setup, before the second parse).
      const extensions = first.extensions.map((e) => resolve(io.cwd, e.replace(/^~(?=$|\/)/, io.env.HOME ?? "~")));
      const services = { ...rebuild.services, [CLI_EXTENSIONS]: extensions };
      assembled = await assemble({ ...assembleOptions(io, home, first), ...rebuild, services });
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

function assembleOptions(io: CliIO, home: string, first: Scan): AssembleOptions {
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

function presetCommand(io: CliIO, first: Scan, home: string, json: boolean): number {
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

function modesOf(host?: PluginHost): string[] {
  const modes = new Set(["text", "json"]);
  for (const fe of host?.frontEnds.values() ?? []) for (const m of fe.modes) modes.add(m);
  return [...modes];
}

/** Index of the first argument that is not an option or an option's value (-1 if none). */
function firstPositional(argv: string[], commandLine?: CommandLine): number {
  const withValue = new Set([
    ...OWN_WITH_VALUE,
    ...(commandLine?.flags.values() ?? [])
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
