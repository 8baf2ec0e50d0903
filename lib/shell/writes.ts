/**
 * The files a simple command writes, as far as its words say: output redirections, and the operands of
 * programs whose job is to write (cp's destination, mv's sources and destination, tee, touch, rm, sed -i,
 * curl -o …). The permission gate's `project` mode asks before a command writes outside the project.
 * Best effort: an interpreter (`python -c`, `node -e`), a script or `make` writes what its code writes,
 * and `cd $DIR` leaves later relative paths unknown; the sandbox is the boundary.
 */
import { parseSimpleCommand, writesFile, type Word } from "./words.js";

/** Programs that write every path operand. */
const ALL_OPERANDS = new Set([
  "tee",
  "touch",
  "mkdir",
  "rm",
  "rmdir",
  "shred",
  "truncate",
  "chmod",
  "chown",
  "chgrp",
  "unlink",
  "mkfifo",
  "mknod",
  "mv",
]);
/** Programs whose last operand (or `-t DIR`) is the destination. */
const DESTINATION = new Set(["cp", "install", "ln", "rsync", "scp"]);
/** Options whose value is a file or folder written to. */
const OUTPUT_OPTIONS: Record<string, RegExp> = {
  curl: /^(-o|--output|--output-dir|-c|--cookie-jar|-D|--dump-header|--trace|--trace-ascii|--stderr)$/,
  wget: /^(-O|--output-document|-P|--directory-prefix|-o|--output-file|-a|--append-output)$/,
  tar: /^(-C|--directory)$/,
  unzip: /^-d$/,
  sort: /^(-o|--output)$/,
  git: /^(-C)$/,
};

/** The value of `--opt=value`, `-ovalue` or the next word, for an option `re` matches. */
function optionValues(args: Word[], re: RegExp): string[] {
  const out: string[] = [];
  for (let k = 0; k < args.length; k++) {
    const v = args[k]!.value;
    const eq = v.indexOf("=");
    if (v.startsWith("--") && eq > 0 && re.test(v.slice(0, eq))) out.push(v.slice(eq + 1));
    else if (re.test(v) && k + 1 < args.length) out.push(args[++k]!.value);
    else if (/^-[A-Za-z]./.test(v) && !v.startsWith("--") && re.test(v.slice(0, 2))) out.push(v.slice(2));
  }
  return out;
}

const operands = (args: Word[]) => {
  const out: string[] = [];
  let end = false;
  for (const a of args) {
    if (!end && a.value === "--") end = true;
    else if (end || !a.value.startsWith("-") || a.value === "-") out.push(a.value);
  }
  return out;
};

/**
 * The paths `command` (one simple command, as splitCommand gives it) writes, as written (`~`, `$HOME`
 * not expanded), with `unknown` when it writes a path the shell computes (`> $OUT`).
 */
export function writeTargets(command: string): { paths: string[]; unknown: boolean } {
  const { words, redirects } = parseSimpleCommand(command);
  const paths: string[] = [];
  let unknown = false;
  for (const r of redirects) {
    if (!writesFile(r) || !r.target) continue;
    if (r.target.expands && !/^(~|\$HOME|\$\{HOME\})(\/|$)/.test(r.target.raw)) unknown = true;
    paths.push(r.target.value);
  }
  let k = 0;
  while (k < words.length && /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(words[k]!.raw)) k++;
  const program = words[k]?.value.replace(/^.*\//, "");
  const args = words.slice(k + 1);
  if (!program) return { paths, unknown };
  if (ALL_OPERANDS.has(program)) paths.push(...operands(args));
  if (DESTINATION.has(program)) {
    const t = optionValues(args, /^(-t|--target-directory)$/);
    const ops = operands(args);
    paths.push(...(t.length ? t : ops.slice(-1)));
  }
  if (
    (program === "sed" || program === "perl") &&
    args.some((a) => /^-[a-zA-Z]*i/.test(a.value) || a.value.startsWith("--in-place"))
  ) {
    // the script is the first operand unless -e/-f gave it (their values are not files written)
    const rest = args.filter((_, i) => !/^-(e|f)$|^--(expression|file)$/.test(args[i - 1]?.value ?? ""));
    const ops = operands(rest);
    const scripted = args.some((a) => /^-(e|f)$|^--(expression|file)/.test(a.value));
    paths.push(...(scripted ? ops : ops.slice(1)));
  }
  if (program === "dd") for (const a of args) if (a.value.startsWith("of=")) paths.push(a.value.slice(3));
  const re = OUTPUT_OPTIONS[program];
  if (re) paths.push(...optionValues(args, re));
  if (program === "git" && args[0]?.value === "clone") paths.push(...operands(args.slice(1)).slice(1, 2));
  if (args.some((a) => a.expands) && (ALL_OPERANDS.has(program) || DESTINATION.has(program))) unknown = true;
  return { paths: paths.filter((p) => p !== "" && p !== "-"), unknown };
}

/** `cd DIR` (or `pushd DIR`): where the next commands run, `~` for home; undefined when it is not a cd. */
export function cdTarget(command: string): { dir?: string; unknown: boolean } | undefined {
  const { words } = parseSimpleCommand(command);
  const name = words[0]?.value;
  if (name !== "cd" && name !== "pushd") return undefined;
  const args = words.slice(1).filter((w) => !/^-[LPe@]+$/.test(w.value));
  if (!args.length) return { dir: "~", unknown: false };
  const w = args[0]!;
  if (w.value === "-" || (w.expands && !/^(~|\$HOME|\$\{HOME\})(\/|$)/.test(w.raw))) return { unknown: true };
  return { dir: w.value, unknown: false };
}
