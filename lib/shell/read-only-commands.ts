/**
 * Which bash commands only look: the judgement plan mode, `explore` sub-agents, checkpoints and the
 * permission gate's read-only default share. A command is read-only only if it is read-only with every
 * option, operand and environment it is given:
 * - an environment assignment in front of it (`PATH=.:$PATH ls`, `LD_PRELOAD=./x.so cat`,
 *   `GIT_CONFIG_PARAMETERS=… git status`) never is: it changes what runs;
 * - an output redirection (other than to /dev/null or another descriptor) writes a file;
 * - each program on the list has the options it accepts: for those that have any option that writes
 *   or runs another program (sort, uniq, find, tree, file, rg, the git subcommands) an allowlist, where
 *   anything not on it is not read-only; a word the shell may still expand (`*`, `$X`, `{a,b}`) is not
 *   accepted for them either, since it can turn into such an option or operand.
 * Best effort: the sandbox, not this list, is the boundary (docs/safety.md).
 */
import { isAssignment, parseSimpleCommand, writesFile, type Word } from "./words.js";

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

/**
 * The options a program accepts. `short`: single-letter flags without a value; `valued`: letters taking a
 * value (attached, `-k2`, or the next word); `attached`: letters whose optional value can only be attached
 * (`-M90%`); `long`: `--name` (no value), `--name=` (a value, attached with `=` or the next word) and
 * `--name?` (an optional value, attached with `=` only). `numeric`: `-5` is an option (head, tail).
 * `operands`: at most this many non-option words. `check`: a last look at what was given.
 */
interface Spec {
  short?: string;
  valued?: string;
  attached?: string;
  long?: readonly string[];
  numeric?: boolean;
  operands?: number;
  /** `git branch`: operands need a listing option; find: its predicates. */
  check?: (given: Given) => string | undefined;
  /** Reads its own arguments (find): the option parser is skipped, words go to `check` as operands. */
  custom?: boolean;
}

interface Given {
  options: string[];
  operands: Word[];
}

/** Options that make these programs write or run something, for the message (they are simply not on the lists). */
const WHY: Record<string, string> = {
  "-o": "writes its output to a file",
  "--output": "writes its output to a file",
  "--compress-program": "runs a program",
  "-T": "writes temporary files to a folder",
  "--temporary-directory": "writes temporary files to a folder",
  "--pre": "runs a program on every file",
  "--hostname-bin": "runs a program",
  "--ext-diff": "runs an external diff program",
  "--textconv": "runs text conversion programs",
  "-C": "compiles and writes a magic file",
  "--compile": "compiles and writes a magic file",
  "--show-signature": "runs gpg",
};

const DIFF_LONG = [
  "patch",
  "no-patch",
  "raw",
  "patch-with-raw",
  "patch-with-stat",
  "stat?",
  "compact-summary",
  "numstat",
  "shortstat",
  "dirstat?",
  "cumulative",
  "dirstat-by-file?",
  "summary",
  "name-only",
  "name-status",
  "submodule?",
  "color?",
  "no-color",
  "color-moved?",
  "no-color-moved",
  "color-moved-ws=",
  "no-color-moved-ws",
  "word-diff?",
  "word-diff-regex=",
  "color-words?",
  "renames",
  "no-renames",
  "rename-empty",
  "no-rename-empty",
  "check",
  "ws-error-highlight=",
  "full-index",
  "binary",
  "abbrev?",
  "break-rewrites?",
  "find-renames?",
  "find-copies?",
  "find-copies-harder",
  "irreversible-delete",
  "diff-filter=",
  "find-object=",
  "pickaxe-all",
  "pickaxe-regex",
  "skip-to=",
  "rotate-to=",
  "relative?",
  "no-relative",
  "text",
  "ignore-cr-at-eol",
  "ignore-space-at-eol",
  "ignore-space-change",
  "ignore-all-space",
  "ignore-blank-lines",
  "ignore-matching-lines=",
  "inter-hunk-context=",
  "function-context",
  "exit-code",
  "quiet",
  "ignore-submodules?",
  "src-prefix=",
  "dst-prefix=",
  "no-prefix",
  "default-prefix",
  "line-prefix=",
  "ita-invisible-in-index",
  "minimal",
  "patience",
  "histogram",
  "anchored=",
  "diff-algorithm=",
  "indent-heuristic",
  "no-indent-heuristic",
  "unified=",
  "output-indicator-new=",
  "output-indicator-old=",
  "output-indicator-context=",
  "no-ext-diff",
  "no-textconv",
];
const DIFF_SHORT = "pusazRbwWaD";
const DIFF_VALUED = "USGOIl";
const DIFF_ATTACHED = "BMC";

const LOG_LONG = [
  ...DIFF_LONG,
  "follow",
  "no-decorate",
  "decorate?",
  "decorate-refs=",
  "decorate-refs-exclude=",
  "clear-decorations",
  "source",
  "mailmap",
  "no-mailmap",
  "use-mailmap",
  "no-use-mailmap",
  "full-diff",
  "log-size",
  "max-count=",
  "skip=",
  "since=",
  "after=",
  "until=",
  "before=",
  "since-as-filter=",
  "author=",
  "committer=",
  "grep-reflog=",
  "grep=",
  "all-match",
  "invert-grep",
  "regexp-ignore-case",
  "basic-regexp",
  "extended-regexp",
  "fixed-strings",
  "perl-regexp",
  "remove-empty",
  "merges",
  "no-merges",
  "min-parents=",
  "max-parents=",
  "no-min-parents",
  "no-max-parents",
  "first-parent",
  "exclude-first-parent-only",
  "not",
  "all",
  "branches?",
  "tags?",
  "remotes?",
  "glob=",
  "exclude=",
  "reflog",
  "alternate-refs",
  "single-worktree",
  "ignore-missing",
  "bisect",
  "cherry-mark",
  "cherry-pick",
  "left-only",
  "right-only",
  "cherry",
  "walk-reflogs",
  "merge",
  "boundary",
  "simplify-by-decoration",
  "show-pulls",
  "full-history",
  "dense",
  "sparse",
  "simplify-merges",
  "ancestry-path?",
  "date-order",
  "author-date-order",
  "topo-order",
  "reverse",
  "no-walk?",
  "do-walk",
  "pretty?",
  "format=",
  "abbrev-commit",
  "no-abbrev-commit",
  "oneline",
  "encoding=",
  "expand-tabs?",
  "no-expand-tabs",
  "notes?",
  "no-notes",
  "show-notes?",
  "standard-notes",
  "no-standard-notes",
  "relative-date",
  "date=",
  "parents",
  "children",
  "left-right",
  "graph",
  "show-linear-break?",
  "cc",
  "combined-all-paths",
  "diff-merges=",
  "no-diff-merges",
  "dd",
  "root",
  "show-origin",
  "stdin",
];
const LOG_SHORT = `${DIFF_SHORT}icgmtrEFP`;
const LOG_VALUED = `${DIFF_VALUED}nL`;

/** Git options before the subcommand that change nothing but output. `-c`, `-C`, `--git-dir`, `--exec-path` … are not. */
const GIT_GLOBAL = new Set([
  "--no-pager",
  "-P",
  "--no-optional-locks",
  "--literal-pathspecs",
  "--glob-pathspecs",
  "--noglob-pathspecs",
  "--icase-pathspecs",
  "--no-replace-objects",
]);

/** find's tests and its actions that only print; every action that runs, deletes or writes a file is left out. */
const FIND_PREDICATES = new Set([
  "-name",
  "-iname",
  "-path",
  "-ipath",
  "-wholename",
  "-iwholename",
  "-regex",
  "-iregex",
  "-type",
  "-xtype",
  "-size",
  "-mtime",
  "-mmin",
  "-atime",
  "-amin",
  "-ctime",
  "-cmin",
  "-used",
  "-newer",
  "-anewer",
  "-cnewer",
  "-perm",
  "-user",
  "-group",
  "-uid",
  "-gid",
  "-links",
  "-inum",
  "-samefile",
  "-lname",
  "-ilname",
  "-fstype",
  "-context",
  "-maxdepth",
  "-mindepth",
  "-regextype",
  "-printf",
]);
const FIND_FLAGS = new Set([
  "-nouser",
  "-nogroup",
  "-empty",
  "-readable",
  "-writable",
  "-executable",
  "-depth",
  "-mount",
  "-xdev",
  "-noleaf",
  "-follow",
  "-daystart",
  "-ignore_readdir_race",
  "-noignore_readdir_race",
  "-true",
  "-false",
  "-prune",
  "-print",
  "-print0",
  "-ls",
  "-quit",
  "-not",
  "!",
  "-a",
  "-and",
  "-o",
  "-or",
  ",",
  "(",
  ")",
  "-H",
  "-L",
  "-P",
]);

function checkFind(given: Given): string | undefined {
  const words = given.operands;
  for (let k = 0; k < words.length; k++) {
    const w = words[k]!;
    if (w.expands) return `\`${w.raw}\` may expand into other words`;
    const v = w.value;
    if (FIND_FLAGS.has(v) || /^-O\d$|^-D\S*$/.test(v)) continue;
    if (FIND_PREDICATES.has(v) || /^-newer[aBcmt][aBcmt]$/.test(v)) {
      k++; // its value
      if (words[k]?.expands) return `\`${words[k]!.raw}\` may expand into other words`;
      continue;
    }
    if (v.startsWith("-"))
      return /^-(exec|execdir|ok|okdir|delete|fprint0?|fprintf|fls)$/.test(v)
        ? `find ${v} runs, deletes or writes files`
        : `find ${v} is not on its read-only list`;
  }
  return undefined;
}

const listing = ["-l", "--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"];

const SPECS: Record<string, Spec | "any"> = {
  // No option of these writes a file or runs another program (GNU coreutils, grep, diffutils).
  ls: "any",
  cat: "any",
  head: "any",
  tail: "any",
  wc: "any",
  grep: "any",
  pwd: "any",
  echo: "any",
  stat: "any",
  du: "any",
  df: "any",
  which: "any",
  diff: "any",
  cut: "any",
  sort: {
    short: "bdfgiMhnRrVcCmsuz",
    valued: "ktS",
    long: [
      "ignore-leading-blanks",
      "dictionary-order",
      "ignore-case",
      "general-numeric-sort",
      "ignore-nonprinting",
      "month-sort",
      "human-numeric-sort",
      "numeric-sort",
      "random-sort",
      "reverse",
      "version-sort",
      "check?",
      "merge",
      "stable",
      "unique",
      "zero-terminated",
      "debug",
      "key=",
      "field-separator=",
      "buffer-size=",
      "parallel=",
      "sort=",
      "random-source=",
      "files0-from=",
      "batch-size=",
    ],
  },
  uniq: {
    short: "cdDiuz",
    valued: "fsw",
    long: [
      "count",
      "repeated",
      "all-repeated?",
      "group?",
      "ignore-case",
      "unique",
      "zero-terminated",
      "skip-fields=",
      "skip-chars=",
      "check-chars=",
    ],
    operands: 1, // a second operand is the file it writes
  },
  find: { custom: true, check: checkFind },
  tree: {
    short: "adlfxiqNQpugshDFvtcUrnCASJX",
    valued: "LPI",
    long: [
      "noreport",
      "charset=",
      "filelimit=",
      "gitignore",
      "matchdirs",
      "ignore-case",
      "prune",
      "info",
      "sort=",
      "dirsfirst",
      "filesfirst",
      "du",
      "si",
      "inodes",
      "device",
      "timefmt=",
      "fromfile",
      "metafirst",
      "hyperlink",
      "nolinks",
    ],
  },
  file: {
    short: "bcEhiklLNnprsSzZ0",
    valued: "eFfP",
    long: [
      "brief",
      "mime",
      "mime-type",
      "mime-encoding",
      "apple",
      "extension",
      "dereference",
      "no-dereference",
      "keep-going",
      "raw",
      "special-files",
      "uncompress",
      "uncompress-noreport",
      "print0",
      "no-pad",
      "no-buffer",
      "preserve-date",
      "exclude=",
      "exclude-quiet=",
      "separator=",
      "files-from=",
      "parameter=",
    ],
  },
  rg: {
    short: "iSswxvclLnNHIoqpuaz0FUPbh.",
    valued: "efgtTABCmjMrEd",
    long: [
      "regexp=",
      "file=",
      "glob=",
      "iglob=",
      "type=",
      "type-not=",
      "type-add=",
      "type-clear=",
      "after-context=",
      "before-context=",
      "context=",
      "max-count=",
      "threads=",
      "max-columns=",
      "replace=",
      "encoding=",
      "max-depth=",
      "max-filesize=",
      "ignore-file=",
      "sort=",
      "sortr=",
      "color=",
      "colors=",
      "context-separator=",
      "field-context-separator=",
      "field-match-separator=",
      "path-separator=",
      "engine=",
      "regex-size-limit=",
      "dfa-size-limit=",
      "ignore-case",
      "smart-case",
      "case-sensitive",
      "word-regexp",
      "line-regexp",
      "invert-match",
      "count",
      "count-matches",
      "files",
      "files-with-matches",
      "files-without-match",
      "line-number",
      "no-line-number",
      "with-filename",
      "no-filename",
      "only-matching",
      "quiet",
      "pretty",
      "unrestricted",
      "text",
      "search-zip",
      "null",
      "null-data",
      "fixed-strings",
      "multiline",
      "multiline-dotall",
      "pcre2",
      "byte-offset",
      "hidden",
      "no-hidden",
      "no-ignore",
      "no-ignore-dot",
      "no-ignore-exclude",
      "no-ignore-files",
      "no-ignore-global",
      "no-ignore-parent",
      "no-ignore-vcs",
      "no-require-git",
      "follow",
      "no-follow",
      "json",
      "no-json",
      "vimgrep",
      "heading",
      "no-heading",
      "column",
      "no-column",
      "trim",
      "no-trim",
      "stats",
      "no-stats",
      "type-list",
      "no-messages",
      "no-config",
      "one-file-system",
      "passthru",
      "crlf",
      "no-unicode",
      "binary",
      "no-binary",
      "block-buffered",
      "line-buffered",
      "max-columns-preview",
      "include-zero",
      "debug",
      "trace",
      "version",
      "help",
    ],
  },
  "git status": {
    short: "sbvz",
    attached: "u",
    long: [
      "short",
      "branch",
      "porcelain?",
      "long",
      "verbose",
      "untracked-files?",
      "ignored?",
      "ignore-submodules?",
      "column?",
      "no-column",
      "ahead-behind",
      "no-ahead-behind",
      "renames",
      "no-renames",
      "find-renames?",
      "show-stash",
      "null",
    ],
  },
  "git log": { short: LOG_SHORT, valued: LOG_VALUED, attached: DIFF_ATTACHED, long: LOG_LONG, numeric: true },
  "git show": { short: LOG_SHORT, valued: LOG_VALUED, attached: DIFF_ATTACHED, long: LOG_LONG, numeric: true },
  "git diff": {
    short: DIFF_SHORT,
    valued: DIFF_VALUED,
    attached: DIFF_ATTACHED,
    long: [...DIFF_LONG, "cached", "staged", "merge-base", "no-index"],
    numeric: true,
  },
  "git branch": {
    short: "arvil",
    long: [
      "all",
      "remotes",
      "list",
      "verbose",
      "show-current",
      "ignore-case",
      "color?",
      "no-color",
      "column?",
      "no-column",
      "omit-empty",
      "abbrev?",
      "no-abbrev",
      "sort=",
      "format=",
      "contains?",
      "no-contains?",
      "merged?",
      "no-merged?",
      "points-at=",
    ],
    // git branch NAME creates a branch: operands only as patterns of a listing
    check: (g) =>
      g.operands.length && !g.options.some((o) => listing.includes(o.replace(/=.*/, "")))
        ? `\`git branch ${g.operands[0]!.raw}\` creates a branch (list with --list)`
        : undefined,
  },
  "git blame": {
    short: "bltfnsepcw",
    valued: "LS",
    attached: "CM",
    long: [
      "root",
      "show-stats",
      "progress",
      "no-progress",
      "porcelain",
      "line-porcelain",
      "incremental",
      "score-debug",
      "show-name",
      "show-number",
      "show-email",
      "abbrev?",
      "color-lines",
      "color-by-age",
      "minimal",
      "first-parent",
      "reverse=",
      "contents=",
      "date=",
      "ignore-rev=",
      "ignore-revs-file=",
      "encoding=",
    ],
  },
  // No option of these writes or runs anything.
  "git rev-parse": "any",
  "git ls-files": "any",
};

/**
 * git branch's `--contains`, `--merged` … take the next word as their commit when it is not an option;
 * elsewhere `--name?` takes a value only when attached.
 */
const NEXT_WORD_OPTIONAL = new Set(["contains", "no-contains", "merged", "no-merged"]);

/** Why `args` (the words after the program) are not read-only under `spec`, or undefined. */
function checkArgs(program: string, spec: Spec, args: Word[]): string | undefined {
  const given: Given = { options: [], operands: [] };
  if (spec.custom) return spec.check?.({ options: [], operands: args });
  const longs = new Map<string, "none" | "value" | "optional">();
  for (const l of spec.long ?? [])
    longs.set(l.replace(/[=?]$/, ""), l.endsWith("=") ? "value" : l.endsWith("?") ? "optional" : "none");
  const notOnList = (opt: string) =>
    `\`${program} ${opt}\` ${WHY[opt] ?? "is not on the read-only list of its options"}`;
  let endOfOptions = false;
  for (let k = 0; k < args.length; k++) {
    const w = args[k]!;
    if (w.expands) return `\`${w.raw}\` may expand into other words or options`;
    const v = w.value;
    if (endOfOptions || v === "-" || !v.startsWith("-")) {
      given.operands.push(w);
      continue;
    }
    if (v === "--") {
      endOfOptions = true;
      continue;
    }
    if (v.startsWith("--")) {
      const eq = v.indexOf("=");
      const name = v.slice(2, eq < 0 ? undefined : eq);
      const kind = longs.get(name);
      if (!kind || (kind === "none" && eq >= 0)) return notOnList(`--${name}`);
      given.options.push(v);
      const nextIsValue = kind === "value" || (NEXT_WORD_OPTIONAL.has(name) && program === "git branch");
      if (eq < 0 && nextIsValue && k + 1 < args.length && !(kind !== "value" && args[k + 1]!.value.startsWith("-"))) {
        if (args[k + 1]!.expands) return `\`${args[k + 1]!.raw}\` may expand into other words or options`;
        k++;
      }
      continue;
    }
    if (spec.numeric && /^-\d+$/.test(v)) {
      given.options.push(v);
      continue;
    }
    // a cluster of short options: -rn, -k2, -oFILE
    for (let c = 1; c < v.length; c++) {
      const letter = v[c]!;
      if (spec.short?.includes(letter)) continue;
      if (spec.attached?.includes(letter)) break; // the rest is its value
      if (spec.valued?.includes(letter)) {
        if (c === v.length - 1) {
          if (k + 1 < args.length && args[k + 1]!.expands)
            return `\`${args[k + 1]!.raw}\` may expand into other words or options`;
          k++; // the value is the next word
        }
        break;
      }
      return notOnList(`-${letter}`);
    }
    given.options.push(v);
  }
  if (spec.operands !== undefined && given.operands.length > spec.operands)
    return `\`${program}\` with ${given.operands.length} operands writes to the last one`;
  return spec.check?.(given);
}

/**
 * The read-only entries `words` start with, longest first: an entry's words must be the command's first
 * words (for git, after output-only global options such as `--no-pager`), none of them expanding.
 */
function matchPrograms(words: Word[], programs: readonly string[]): { program: string; args: Word[] }[] {
  const out: { program: string; args: Word[] }[] = [];
  for (const program of programs) {
    const parts = program.split(" ");
    let k = 0;
    let ok = true;
    for (let p = 0; p < parts.length && ok; p++) {
      // git's global options sit between `git` and the subcommand
      if (p === 1 && parts[0] === "git") while (k < words.length && GIT_GLOBAL.has(words[k]!.value)) k++;
      const w = words[k];
      ok = w !== undefined && !w.expands && w.value === parts[p];
      k++;
    }
    if (ok) out.push({ program, args: words.slice(k) });
  }
  return out.sort((a, b) => b.program.split(" ").length - a.program.split(" ").length);
}

/**
 * Why one simple command (a part of a command line, as splitCommand gives it: substitutions are `$(…)`)
 * is not read-only, or undefined when it is. `programs` are the allowed entries (`ls`, `git status`);
 * entries this file has no option list for (a preset's own, a command's `allowed-tools`) accept any options.
 */
export function readOnlyRefusal(command: string, programs: readonly string[] = READ_ONLY_COMMANDS): string | undefined {
  const { words, redirects } = parseSimpleCommand(command);
  const writing = redirects.find(writesFile);
  if (writing) return `it redirects output to ${writing.target ? `\`${writing.target.raw}\`` : "a file"}`;
  if (words.length === 0) return redirects.length ? "it only redirects" : undefined;
  const assignment = words.find((w, k) => k === 0 && isAssignment(w));
  if (assignment)
    return `it sets \`${assignment.raw}\` for the command: an environment assignment in front of a command is never read-only`;
  const found = matchPrograms(words, programs);
  if (!found.length) return `\`${words[0]!.raw}\` is not on the read-only list (${programs.join(", ")})`;
  // Any entry that accepts it will do (a preset may list `git` as a whole besides `git branch`).
  let first: string | undefined;
  for (const { program, args } of found) {
    const spec = SPECS[program];
    const why = spec === undefined || spec === "any" ? undefined : checkArgs(program, spec, args);
    if (why === undefined) return undefined;
    first ??= why;
  }
  return first;
}

/** Whether one simple command is read-only (see readOnlyRefusal). */
export function isReadOnlyCommand(command: string, programs: readonly string[] = READ_ONLY_COMMANDS): boolean {
  return readOnlyRefusal(command, programs) === undefined;
}

/**
 * Why a whole command line is not read-only (plan mode, `explore` sub-agents, checkpoints), or undefined
 * when it is. Stricter than the gate's per-part judgement: substitutions, subshells, backgrounding and
 * redirections other than to /dev/null or between descriptors are refused outright, then every part
 * must pass readOnlyRefusal.
 */
export function notReadOnly(command: string, programs: readonly string[] = READ_ONLY_COMMANDS): string | undefined {
  // Quoted text is data; blank it out (double quotes still expand $( ) and backticks, so keep those).
  const bare = command
    .replace(/'[^']*'/g, "''")
    .replace(/"(?:[^"\\$`]|\\.)*"/g, '""')
    .replace(/\d*>\s*\/dev\/null|\d*>&\d/g, " ");
  if (/[`$]\(|`|[()<>]|&(?!&)/.test(bare.replace(/&&/g, " ")))
    return "it uses substitution, a subshell, backgrounding or a redirection";
  for (const part of splitParts(command)) {
    const why = readOnlyRefusal(part, programs);
    if (why) return why;
  }
  return undefined;
}

/** The parts of a command line between `&&`, `||`, `|`, `;` and newlines, quotes respected. */
function splitParts(command: string): string[] {
  const out: string[] = [];
  let cur = "";
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < command.length && command[j] !== c) j += c === '"' && command[j] === "\\" ? 2 : 1;
      cur += command.slice(i, j + 1);
      i = j;
    } else if (c === "\\") {
      cur += command.slice(i, i + 2);
      i++;
    } else if (c === ";" || c === "\n" || c === "|" || (c === "&" && command[i + 1] === "&")) {
      if (cur.trim()) out.push(cur.trim());
      cur = "";
      if ((c === "|" && command[i + 1] === "|") || c === "&") i++;
    } else cur += c;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}
