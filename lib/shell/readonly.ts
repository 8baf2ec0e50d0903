/**
 * Which bash programs only look: the allowlist plan mode enforces and the permission gate's read-only
 * rules use. Best effort: the sandbox, not this list, is the boundary (docs/safety.md).
 */
export const READ_ONLY_COMMANDS = [
  "ls", "cat", "head", "tail", "wc", "grep", "rg", "find", "tree", "pwd", "echo", "stat", "file", "du", "df", "which", "diff", "sort", "uniq", "cut",
  "git status", "git log", "git diff", "git show", "git branch", "git blame", "git rev-parse", "git ls-files",
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
