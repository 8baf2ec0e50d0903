/**
 * The command line's contract with plugins: the flags (`--script <file>`) and `coil <name>` subcommands
 * plugins register in setup, coil's own options, which no plugin flag may take, and `CommandLine`: the two
 * registries a host is created with (boot's assemble(), the test kit) and the flag values the CLI parsed.
 * The kernel knows none of this; it hands each plugin the registrars a host's creator declares
 * (`HostOptions.declare`), and the declarations below type them on `PluginContext`.
 */
import { CoilError, type CliStreams, type Declaration, type Registrar } from "../api/index.js";
import { Registry } from "../kernel/registry.js";
import { ShortcutRegistry } from "./shortcuts.js";

export interface FlagSpec {
  /** Long name without dashes, kebab-case (`script` → `--script <value>`). */
  name: string;
  description: string;
  type: "boolean" | "string" | "number";
  /** Placeholder shown in help for string/number flags. */
  valueName?: string;
  /** One-letter alias (`c` → `-c`). coil's own options hold -p, -v and -h. */
  short?: string;
  /**
   * The provider this flag runs with (`--script` → `scripted`): given, it picks that provider for the run
   * over the presets' choice; a `--provider` or `--model` naming another provider is then an error.
   */
  provider?: string;
}

/** An option of a subcommand (`coil checkpoints list --json`), parsed by the command line. */
export interface SubcommandOption {
  /** Long name without dashes (`older-than` → `--older-than <value>`); the key of its value in `options`. */
  name: string;
  description: string;
  /** `boolean` (the default), `string`, `number`, or `list`: a string that may be given several times. */
  type?: "boolean" | "string" | "number" | "list";
  /** Placeholder shown in help (`days`); default `value`. */
  valueName?: string;
  /** One-letter alias; `-h` is help's. */
  short?: string;
  /** The values it accepts; anything else is a usage error (exit 2). */
  choices?: readonly string[];
}

/**
 * A `coil <name> ...` subcommand offered by a plugin (`coil sessions list`). The command line parses its
 * arguments and options, so `--help`, `coil help <name>`, unknown options and missing arguments behave
 * the same for every subcommand (usage on stdout and exit 0; a usage error and exit 2).
 */
export interface Subcommand {
  name: string;
  description: string;
  /** Positional arguments in usage syntax: `<name>` required, `[dir]` optional, `[spec...]` any number. */
  arguments?: string;
  options?: readonly SubcommandOption[];
  /** Text shown after the options in its help (examples, notes). */
  help?: string;
  /** Subcommands of its own (`coil mcp list`, `coil mcp add`); without `run`, one of them is required. */
  commands?: readonly Subcommand[];
  /**
   * Runs with the positional arguments (those after `--` included, in order) and the options given, by
   * name (absent when not given); resolves to the exit code.
   */
  run?(args: string[], io: CliStreams, options: Readonly<Record<string, unknown>>): Promise<number> | number;
}

/** `ctx.flags`: flags are registered in setup; `get` returns the parsed value once the command line is read. */
export interface FlagRegistrar {
  register(flag: FlagSpec): void;
  get(name: string): unknown;
}

declare module "coil" {
  interface PluginContext<O> {
    /** Command-line flags (`--name`): register in setup, read the value with `get` in hooks, tools, `onStart`. */
    flags: FlagRegistrar;
    /** `coil <name>` subcommands. */
    subcommands: Registrar<Subcommand>;
  }
}

/** One of coil's own options (the command line defines them; no plugin flag may take their names). */
export interface CoilOption {
  name: string;
  short?: string;
  /** Placeholder of its value; absent for a switch. */
  value?: string;
  description: string;
  /** It may be given several times (`--plugin`). */
  repeatable?: boolean;
  /** It decides what loads, so it is read before the plugins are (and may follow a subcommand's name). */
  loads?: boolean;
}

export const COIL_OPTIONS: readonly CoilOption[] = [
  { name: "print", short: "p", description: "run the prompt once, print the final answer and exit" },
  {
    name: "mode",
    value: "mode",
    description:
      "front end: text (the final answer), json (every event as a JSON line), interactive (the TUI), and the modes the preset's plugins add",
  },
  {
    name: "preset",
    value: "name|path",
    description: "base preset: a built-in name or a YAML file (default: default)",
    loads: true,
  },
  { name: "provider", value: "id", description: "provider to use (e.g. scripted)", loads: true },
  { name: "model", value: "id", description: "model, as provider/model or a model id", loads: true },
  {
    name: "plugin",
    value: "spec",
    description: "add a plugin for this run (built-in id, path or npm package); repeatable",
    repeatable: true,
    loads: true,
  },
  {
    name: "extension",
    short: "e",
    value: "path",
    description: "load a Pi extension (a .ts/.js file or its folder) for this run; repeatable (docs/pi-extensions.md)",
    repeatable: true,
    loads: true,
  },
  {
    name: "trust",
    description: "load this project's .coil/ preset and code for this run (it runs with your rights)",
    loads: true,
  },
  {
    name: "yes",
    description: "install what the preset names and is missing (npm packages, Claude Code plugins) without asking",
    loads: true,
  },
  { name: "version", short: "v", description: "print the version" },
  { name: "help", short: "h", description: "show this help (coil help <command> for a command's)" },
];

/**
 * The service under which the CLI hands the `-e/--extension` paths (absolute) to the plugins: they are read
 * in setup, before the command line's second pass. The Pi-extension runtime loads them.
 */
export const CLI_EXTENSIONS = "cli-extensions";

declare module "coil" {
  interface Services {
    "cli-extensions": readonly string[];
  }
}

/** Names of subcommands the command line itself defines (plugins cannot take them). */
export const COIL_COMMANDS: readonly string[] = ["trust", "untrust", "preset", "help"];

const NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/**
 * The registries a host's creator declares on one host: `new PluginHost({ declare: cli.declarations })`.
 * Flags and subcommands registered by plugins land in `flags` and `subcommands`; `values` holds the parsed
 * flag values (the CLI, or the SDK's `flags` option, sets it before the run). The keyboard shortcuts
 * (`ctx.registerShortcut`, lib/shortcuts.ts) ride along, so every host built this way has them too.
 */
export class CommandLine {
  readonly flags = new Registry<FlagSpec>("flag");
  readonly subcommands = new Registry<Subcommand>("subcommand");
  readonly shortcuts = new ShortcutRegistry();
  values: Record<string, unknown> = {};
  readonly declarations: Readonly<Record<string, Declaration>> = {
    ...this.shortcuts.declarations,
    flags: (plugin): FlagRegistrar => ({
      register: (flag) => {
        plugin.guard();
        this.checkFlag(flag, plugin.id);
        this.flags.register(flag.name, flag, plugin.id, plugin.source);
      },
      get: (name) => this.values[name],
    }),
    subcommands: (plugin): Registrar<Subcommand> => ({
      register: (command) => {
        plugin.guard();
        checkSubcommand(command, plugin.id, true);
        this.subcommands.register(command.name, command, plugin.id, plugin.source);
      },
      get: (name) => this.subcommands.get(name),
      names: () => this.subcommands.names(),
    }),
  };

  /** A flag that takes a name (long, short or `--no-` form) of coil's own options or of another plugin's flag is refused. */
  private checkFlag(flag: FlagSpec, owner: string): void {
    const fail = (detail: string, hint: string) => {
      throw new CoilError("REGISTRY_DUPLICATE", detail, { plugin: owner, hint });
    };
    if (!flag || typeof flag.name !== "string" || !NAME.test(flag.name))
      throw new CoilError("PLUGIN_INVALID", `flag name '${flag?.name}' must be kebab-case (--like-this)`, {
        plugin: owner,
      });
    const own = COIL_OPTIONS.find((o) => o.name === flag.name || `no-${o.name}` === flag.name);
    if (own) fail(`flag --${flag.name} is coil's own option --${own.name}`, "choose another name for the flag");
    if (flag.short !== undefined) {
      if (!/^[a-zA-Z]$/.test(flag.short))
        throw new CoilError("PLUGIN_INVALID", `flag -${flag.short} (for --${flag.name}) must be one letter`, {
          plugin: owner,
        });
      const coil = COIL_OPTIONS.find((o) => o.short === flag.short);
      if (coil)
        fail(
          `flag -${flag.short} (for --${flag.name}) is coil's own -${flag.short} (--${coil.name})`,
          "choose another letter",
        );
      const taken = this.flags.entries().find(([, f]) => f.value.short === flag.short);
      if (taken)
        fail(
          `flag -${flag.short} (for --${flag.name}) is already -${flag.short} of --${taken[0]}, registered by plugin ${taken[1].owner}`,
          "choose another letter",
        );
    }
    // `--no-x` is commander's negation of `--x`: the pair belongs to one plugin.
    const pair = flag.name.startsWith("no-") ? flag.name.slice(3) : `no-${flag.name}`;
    const other = this.flags.owner(pair);
    if (other && other !== owner)
      fail(
        `flag --${flag.name} would negate --${pair}, registered by plugin ${other}`,
        "choose another name for the flag",
      );
  }
}

function checkSubcommand(command: Subcommand, owner: string, top: boolean): void {
  const invalid = (detail: string) => new CoilError("PLUGIN_INVALID", detail, { plugin: owner });
  if (!command || typeof command.name !== "string" || !NAME.test(command.name))
    throw invalid(`subcommand name '${command?.name}' must be kebab-case`);
  if (top && COIL_COMMANDS.includes(command.name))
    throw new CoilError("REGISTRY_DUPLICATE", `subcommand '${command.name}' is coil's own command`, {
      plugin: owner,
      hint: "choose another name for the subcommand",
    });
  if (!command.run && !command.commands?.length)
    throw invalid(`subcommand '${command.name}' needs a run function or subcommands of its own`);
  if ("usage" in command)
    throw new CoilError(
      "PLUGIN_INVALID",
      `subcommand '${command.name}' has a 'usage' text: subcommands declare their 'arguments' and 'options' now, and the command line parses them`,
      { plugin: owner, hint: "see docs/plugins.md#subcommands" },
    );
  const seen = new Set<string>();
  for (const option of command.options ?? []) {
    if (!NAME.test(option.name) || option.name === "help" || option.short === "h")
      throw invalid(`option --${option.name} of subcommand '${command.name}' is not a kebab-case name other than help`);
    if (seen.has(option.name) || (option.short && seen.has(`-${option.short}`)))
      throw invalid(`subcommand '${command.name}' has option --${option.name} twice`);
    seen.add(option.name);
    if (option.short) seen.add(`-${option.short}`);
  }
  for (const child of command.commands ?? []) checkSubcommand(child, owner, false);
}
