/**
 * Which bash commands only look. Plan mode allows these (every simple command of a command line must
 * be one); options that write, delete or run other programs make a command not read-only. Best effort:
 * the sandbox, not this list, is the boundary (docs/safety.md).
 */
import { READ_ONLY_COMMANDS, UNSAFE } from "../../lib/shell/read-only-commands.js";

export { READ_ONLY_COMMANDS };
const HARMLESS_TARGETS = new Set(["/dev/null", "&1", "&2", "&-"]);

/** `command` is one simple command (see shell.ts); `programs` are allowed prefixes. */
export function isReadOnlyCommand(command: string, programs: readonly string[] = READ_ONLY_COMMANDS): boolean {
  const bare = command.replace(/'[^']*'|"(?:[^"\\]|\\.)*"/g, "''");
  for (const m of bare.matchAll(/\d*>>?\|?\s*(\S*)/g)) if (!HARMLESS_TARGETS.has(m[1]!)) return false;
  const program = programs.find((p) => bare === p || bare.startsWith(`${p} `));
  return program !== undefined && !UNSAFE[program]?.test(` ${bare.slice(program.length)}`);
}
