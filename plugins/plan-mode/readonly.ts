/**
 * Plan mode's bash allowlist: a command line may run only if every command in it starts with a
 * read-only program (lib/shell/readonly.ts) and nothing else can run. Stricter than the permission
 * gate's splitter: substitutions, subshells, backgrounding and output redirections other than to
 * /dev/null are refused outright.
 */
import { READ_ONLY_COMMANDS, UNSAFE } from "../../lib/shell/readonly.js";

export { READ_ONLY_COMMANDS };

/** Why `command` is not read-only, or undefined when it is. */
export function notReadOnly(command: string, programs: readonly string[] = READ_ONLY_COMMANDS): string | undefined {
  // Quoted text is data; blank it out (double quotes still expand $( ) and backticks, so keep those).
  const bare = command.replace(/'[^']*'/g, "''").replace(/"(?:[^"\\$`]|\\.)*"/g, '""').replace(/\d*>\s*\/dev\/null|\d*>&\d/g, " ");
  if (/[`$]\(|`|[()<>]|&(?!&)/.test(bare.replace(/&&/g, " "))) return "it uses substitution, a subshell, backgrounding or a redirection";
  for (const part of bare.split(/&&|\|\||[|;\n]/).map((p) => p.trim().replace(/\s+/g, " ")).filter(Boolean)) {
    const program = programs.find((p) => part === p || part.startsWith(`${p} `));
    if (!program) return `\`${part.split(" ")[0]}\` is not on the read-only list (${programs.join(", ")})`;
    if (UNSAFE[program]?.test(` ${part.slice(program.length)}`)) return `\`${part}\` uses an option that writes or runs other programs`;
  }
  return undefined;
}
