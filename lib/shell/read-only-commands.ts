/**
 * Which bash programs only look: the allowlist plan mode enforces and the permission gate's read-only
 * rules use. Best effort: the sandbox, not this list, is the boundary (docs/safety.md).
 */
export const READ_ONLY_COMMANDS = [
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "grep",
  "rg",
  "find",
  "tree",
  "pwd",
  "echo",
  "stat",
  "file",
  "du",
  "df",
  "which",
  "diff",
  "sort",
  "uniq",
  "cut",
  "git status",
  "git log",
  "git diff",
  "git show",
  "git branch",
  "git blame",
  "git rev-parse",
  "git ls-files",
];

/** Options that make an otherwise read-only program write, delete or execute. */
export const UNSAFE: Record<string, RegExp> = {
  find: /\s-(?:exec|execdir|ok|okdir|delete|fprint0?|fprintf|fls)\b/,
  sort: /\s(?:-o|--output)\b/,
  rg: /\s--pre\b/,
  tree: /\s-o\b/,
  "git branch": /\s(?:-[dDmMcCu]|--delete|--move|--copy|--set-upstream-to|--unset-upstream|--edit-description)\b/,
  "git diff": /\s--output\b/,
  "git log": /\s--output\b/,
  "git show": /\s--output\b/,
};

/**
 * Why `command` is not read-only, or undefined when it is (plan mode, `explore` sub-agents). A command
 * line may run only if every command in it starts with a read-only program and nothing else can run:
 * substitutions, subshells, backgrounding and output redirections other than to /dev/null are refused.
 */
export function notReadOnly(command: string, programs: readonly string[] = READ_ONLY_COMMANDS): string | undefined {
  // Quoted text is data; blank it out (double quotes still expand $( ) and backticks, so keep those).
  const bare = command
    .replace(/'[^']*'/g, "''")
    .replace(/"(?:[^"\\$`]|\\.)*"/g, '""')
    .replace(/\d*>\s*\/dev\/null|\d*>&\d/g, " ");
  if (/[`$]\(|`|[()<>]|&(?!&)/.test(bare.replace(/&&/g, " ")))
    return "it uses substitution, a subshell, backgrounding or a redirection";
  for (const part of bare
    .split(/&&|\|\||[|;\n]/)
    .map((p) => p.trim().replace(/\s+/g, " "))
    .filter(Boolean)) {
    const program = programs.find((p) => part === p || part.startsWith(`${p} `));
    if (!program) return `\`${part.split(" ")[0]}\` is not on the read-only list (${programs.join(", ")})`;
    if (UNSAFE[program]?.test(` ${part.slice(program.length)}`))
      return `\`${part}\` uses an option that writes or runs other programs`;
  }
  return undefined;
}
