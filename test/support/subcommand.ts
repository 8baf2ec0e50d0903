/**
 * Run a plugin's subcommand in process as `coil <argv...>` would: the command line's own parser
 * (cli/program.ts) reads the arguments, then the subcommand runs. Help and usage errors give 0 and 2.
 */
import { CommanderError } from "commander";
import { program } from "../../cli/program.js";
import type { CliStreams } from "../../api/index.js";
import type { CommandLine } from "../../lib/command-line.js";

export async function runSubcommand(commandLine: CommandLine, argv: string[], io: CliStreams): Promise<number> {
  const built = program({ ...io, argv }, { commandLine });
  try {
    built.cmd.parse(argv, { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    throw error;
  }
  const parsed = built.parsed();
  if (parsed?.kind !== "subcommand") throw new Error(`coil ${argv.join(" ")} is not a plugin's subcommand`);
  return parsed.command.run!(parsed.args, io, parsed.options);
}
