/**
 * Which bash commands only look. Plan mode allows these (every simple command of a command line must
 * be one); options that write, delete or run other programs make a command not read-only. Best effort:
 * the sandbox, not this list, is the boundary (docs/safety.md). plugins/plan-mode keeps a copy.
 */
export const READ_ONLY_COMMANDS = [
  "ls", "cat", "head", "tail", "wc", "grep", "rg", "find", "tree", "pwd", "echo", "stat", "file", "du", "df", "which", "diff", "sort", "uniq", "cut",
  "git status", "git log", "git diff", "git show", "git branch", "git blame", "git rev-parse", "git ls-files",
];

/** Options that make an otherwise read-only program write, delete or execute. */
const UNSAFE: Record<string, RegExp> = {
  find: /\s-(?:exec|execdir|ok|okdir|delete|fprint0?|fprintf|fls)\b/,
  sort: /\s(?:-o|--output)\b/,
  rg: /\s--pre\b/,
  tree: /\s-o\b/,
  "git branch": /\s(?:-[dDmMcCu]|--delete|--move|--copy|--set-upstream-to|--unset-upstream|--edit-description)\b/,
  "git diff": /\s--output\b/,
  "git log": /\s--output\b/,
  "git show": /\s--output\b/,
};
const HARMLESS_TARGETS = new Set(["/dev/null", "&1", "&2", "&-"]);

/** `command` is one simple command (see shell.ts); `programs` are allowed prefixes. */
export function isReadOnlyCommand(command: string, programs: readonly string[] = READ_ONLY_COMMANDS): boolean {
  const bare = command.replace(/'[^']*'|"(?:[^"\\]|\\.)*"/g, "''");
  for (const m of bare.matchAll(/\d*>>?\|?\s*(\S*)/g)) if (!HARMLESS_TARGETS.has(m[1]!)) return false;
  const program = programs.find((p) => bare === p || bare.startsWith(`${p} `));
  return program !== undefined && !UNSAFE[program]?.test(` ${bare.slice(program.length)}`);
}
