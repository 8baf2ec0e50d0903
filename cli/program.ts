/**
 * The commander program: coil's own options (lib/command-line.ts), the flags plugins registered, and every
 * subcommand — coil's own (`trust`, `untrust`, `preset show`) and the plugins' — with their arguments and
 * options, so `--help`, `coil help <command>`, unknown options and missing arguments behave the same
 * everywhere. Parsing only records what was asked (`Parsed`); cli/main.ts runs it.
 */
import { Command, Help, InvalidArgumentError, Option, type Argument } from "commander";
import { COIL_OPTIONS, type CommandLine, type Subcommand, type SubcommandOption } from "../lib/command-line.js";
import { coilVersion } from "../lib/paths.js";
import type { CliIO } from "./main.js";

/** What the command line asked for: a subcommand (with its parsed arguments) or a run (the root's options). */
export type Parsed =
  | { kind: "run"; prompt: string[]; options: Record<string, unknown> }
  | {
      kind: "subcommand";
      path: string[];
      owner: string;
      command: Subcommand;
      args: string[];
      options: Record<string, unknown>;
      /** coil's and the plugins' flags given before the subcommand's name. */
      root: Record<string, unknown>;
    }
  | { kind: "builtin"; name: "trust" | "untrust"; dir?: string }
  | { kind: "preset-show"; json: boolean };

export interface ProgramOptions {
  /** The plugins' flags and subcommands (absent before the preset loads: coil's own options and commands only). */
  commandLine?: CommandLine;
  /** Front-end modes the preset offers (`--mode` choices). */
  modes?: readonly string[];
  /** Leave the subcommands out, so every word is the prompt (the words after `--`). */
  promptOnly?: boolean;
}

/** Width help is written for: the terminal's, else `$COLUMNS`, else 80. */
export function helpWidth(io: Pick<CliIO, "stdout" | "env">): number {
  const columns = (io.stdout as { columns?: number }).columns ?? Number(io.env.COLUMNS);
  return Number.isFinite(columns) && columns >= 20 ? columns : 80;
}

/**
 * Help laid out for the width: a term and its description side by side when the description keeps 40
 * columns, else the description under its term, indented (so 60 columns never split a word).
 */
function configure(cmd: Command, io: CliIO, path: string): Command {
  const width = helpWidth(io);
  return cmd
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      getOutHelpWidth: () => width,
      getErrHelpWidth: () => width,
      outputError: (s, write) => write(`coil${path ? ` ${path}` : ""}: ${s.replace(/^error: /, "")}`),
    })
    .configureHelp({
      helpWidth: width,
      sortSubcommands: false,
      subcommandTerm: (c) =>
        [c.name(), c.commands.length ? "<command>" : argsUsage(c.registeredArguments)].filter(Boolean).join(" "),
      formatItem(term, termWidth, description, helper) {
        if (!description || width - termWidth - 4 >= 40)
          return Help.prototype.formatItem.call(this, term, termWidth, description, helper);
        const text = helper.boxWrap(description, width - 6);
        return `  ${term}\n${text.replace(/^/gm, "      ")}`;
      },
    })
    .helpOption("-h, --help", path ? "show this help" : "show this help (coil help <command>: a command's)")
    .showHelpAfterError(`(coil ${path ? `${path} ` : ""}--help shows the usage)`)
    .exitOverride();
}

function argsUsage(args: readonly Argument[]): string {
  return args
    .map((a) => {
      const name = `${a.name()}${a.variadic ? "..." : ""}`;
      return a.required ? `<${name}>` : `[${name}]`;
    })
    .join(" ");
}

/** Wrap free text (a subcommand's notes) to the help width. */
function wrapped(text: string, io: CliIO): string {
  return new Help().boxWrap(text.trim(), helpWidth(io) - 2);
}

export function program(io: CliIO, o: ProgramOptions = {}): { cmd: Command; parsed(): Parsed | undefined } {
  let parsed: Parsed | undefined;
  const cmd = configure(new Command("coil"), io, "")
    .description(
      'A terminal coding agent built as a plugin-first microkernel. In a terminal, `coil "what to do"` opens the interactive UI with that prompt sent, and `coil` alone opens it empty; `coil -p "what to do"` (or any run whose stdin or stdout is not a terminal) runs once and prints the answer. Piped stdin is added to the prompt, after it.',
    )
    .enablePositionalOptions()
    .argument("[prompt...]", "what to do")
    .version(coilVersion(), "-v, --version", "print the version")
    .action((prompt: string[], options: Record<string, unknown>) => {
      parsed = { kind: "run", prompt, options };
    });
  for (const own of COIL_OPTIONS) {
    if (own.name === "help" || own.name === "version") continue;
    const option = coilOption(own.name);
    if (own.name === "mode" && o.modes) option.choices(o.modes);
    cmd.addOption(option);
  }
  for (const [, flag] of o.commandLine?.flags.entries() ?? []) {
    const f = flag.value;
    const long = f.short ? `-${f.short}, --${f.name}` : `--${f.name}`;
    const option = new Option(
      f.type === "boolean" ? long : `${long} <${f.valueName ?? "value"}>`,
      `${f.description} [${flag.owner}]`,
    );
    if (f.type === "number") option.argParser(number);
    cmd.addOption(option);
  }
  if (o.promptOnly) return { cmd, parsed: () => parsed };
  cmd.helpCommand("help [command...]", "show a command's usage and options");

  for (const [name, owned] of o.commandLine?.subcommands.entries() ?? [])
    addSubcommand(cmd, io, [name], owned.value, owned.owner, true, (p) => {
      parsed = p;
    });

  configure(cmd.command("trust"), io, "trust")
    .description("trust a project (default: this directory's): its .coil/ preset and code may load")
    .argument("[dir]", "a directory of the project")
    .action((dir?: string) => {
      parsed = { kind: "builtin", name: "trust", dir };
    });
  configure(cmd.command("untrust"), io, "untrust")
    .description("forget that a project is trusted")
    .argument("[dir]", "a directory of the project")
    .action((dir?: string) => {
      parsed = { kind: "builtin", name: "untrust", dir };
    });
  const preset = configure(cmd.command("preset"), io, "preset").description("inspect presets").helpCommand(false);
  const show = configure(preset.command("show"), io, "preset show")
    .description("print the resolved preset and the file each value came from")
    .option("--json", "print JSON instead of annotated YAML")
    .addHelpText(
      "after",
      `\n${wrapped("coil's --preset, --plugin, --provider, --model and --trust may follow it: the preset is shown as a run with them would resolve it.", io)}\n`,
    )
    .action((options: { json?: boolean }) => {
      parsed = { kind: "preset-show", json: options.json === true };
    });
  addLoadingOptions(show, ["json"]);
  return { cmd, parsed: () => parsed };
}

function coilOption(name: string): Option {
  const own = COIL_OPTIONS.find((c) => c.name === name)!;
  const flags = `${own.short ? `-${own.short}, ` : ""}--${own.name}${own.value ? ` <${own.value}>` : ""}`;
  const option = new Option(flags, own.description);
  if (own.repeatable) option.argParser((v: string, all: string[] = []) => [...all, v]);
  return option;
}

/**
 * coil's options that decide what loads (`--trust`, `--preset`, ...), accepted after a subcommand's name
 * too (`coil install x --trust`) unless the subcommand has an option of that name: then it is the subcommand's.
 */
function addLoadingOptions(cmd: Command, own: readonly string[]): void {
  for (const c of COIL_OPTIONS) if (c.loads && !own.includes(c.name)) cmd.addOption(coilOption(c.name).hideHelp());
}

const number = (value: string): number => {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) throw new InvalidArgumentError(`'${value}' is not a number`);
  return n;
};

function optionOf(spec: SubcommandOption): Option {
  const long = `${spec.short ? `-${spec.short}, ` : ""}--${spec.name}`;
  const type = spec.type ?? "boolean";
  const option = new Option(type === "boolean" ? long : `${long} <${spec.valueName ?? "value"}>`, spec.description);
  if (type === "number") option.argParser(number);
  if (type === "list") option.argParser((v: string, all: string[] = []) => [...all, v]);
  if (spec.choices) option.choices(spec.choices);
  return option;
}

function addSubcommand(
  parent: Command,
  io: CliIO,
  path: string[],
  spec: Subcommand,
  owner: string,
  top: boolean,
  done: (p: Parsed) => void,
): void {
  const cmd = configure(parent.command(spec.name), io, path.join(" "))
    .description(top ? `${spec.description} [${owner}]` : spec.description)
    .enablePositionalOptions();
  // one `help` command, coil's own: `coil help mcp add`
  cmd.helpCommand(false);
  const options = spec.options ?? [];
  for (const option of options) cmd.addOption(optionOf(option));
  if (spec.help) cmd.addHelpText("after", `\n${wrapped(spec.help, io)}\n`);
  for (const child of spec.commands ?? []) addSubcommand(cmd, io, [...path, child.name], child, owner, false, done);
  if (!spec.run) return;
  if (spec.arguments) cmd.arguments(spec.arguments);
  addLoadingOptions(
    cmd,
    options.map((o) => o.name),
  );
  cmd.action((...given: unknown[]) => {
    const self = given.at(-1) as Command;
    const values = self.opts();
    const parsedOptions: Record<string, unknown> = {};
    for (const option of options) {
      const key = self.options.find((o) => o.long === `--${option.name}`)!.attributeName();
      if (values[key] !== undefined) parsedOptions[option.name] = values[key];
    }
    let root = self;
    while (root.parent) root = root.parent;
    done({
      kind: "subcommand",
      path,
      owner,
      command: spec,
      args: [...self.args],
      options: parsedOptions,
      root: root.opts(),
    });
  });
}
