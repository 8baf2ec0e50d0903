/**
 * What a command or skill body becomes when it runs, in the forms Claude Code and Pi write: argument
 * placeholders (`$ARGUMENTS`, `$1`, `$@`, `${@:N}`), `` !`cmd` `` lines whose output is inlined, and the
 * `allowed-tools` front matter mapped to coil's tool names. Used by prompt-templates and skills.
 */
import { notReadOnly } from "./shell/read-only-commands.js";

/** Split arguments like a shell does: whitespace separates, "double" and 'single' quotes group. */
export function splitArgs(text: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? m[3]!));
  }
  return out;
}

const PLACEHOLDER = /\$\{@:(\d+)(?::(\d+))?\}|\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS\b|\$@|\$([1-9]\d*)/g;

/**
 * Expand `$1`…`$9` (and higher), `$@` (all arguments, one space apart), `$ARGUMENTS` (the text as typed),
 * `$ARGUMENTS[N]` (the Nth argument counting from 0, as Claude Code writes it), `${@:N}` (from the Nth on)
 * and `${@:N:L}` (L arguments from the Nth). Missing arguments expand to nothing; inserted text is never
 * expanded again. `$0` is left as written (Claude Code's documents disagree on it). `used` says whether
 * the body had any placeholder.
 */
export function substituteArguments(body: string, rawArgs: string): { text: string; used: boolean } {
  const args = splitArgs(rawArgs);
  let used = false;
  const text = body.replace(PLACEHOLDER, (match, from?: string, len?: string, index?: string, n?: string) => {
    used = true;
    if (n !== undefined) return args[Number(n) - 1] ?? "";
    if (index !== undefined) return args[Number(index)] ?? "";
    if (from !== undefined) {
      const start = Math.max(0, Number(from) - 1);
      return args.slice(start, len !== undefined ? start + Number(len) : undefined).join(" ");
    }
    return match === "$@" ? args.join(" ") : rawArgs.trim();
  });
  return { text, used };
}

/** A template's expansion: the placeholders above; a body without any gets the arguments as a last paragraph. */
export function expandTemplate(body: string, rawArgs: string): string {
  const { text, used } = substituteArguments(body, rawArgs);
  return !used && rawArgs.trim() ? `${text}\n\n${rawArgs.trim()}` : text;
}

/** `` !`cmd` `` at the start of a line or after whitespace: a command whose output replaces it. */
const SHELL = /(^|[ \t])!`([^`\n]+)`/gm;

/** The `` !`cmd` `` commands in a body, in order. */
export function shellCommands(text: string): string[] {
  return [...text.matchAll(SHELL)].map((m) => m[2]!.trim()).filter(Boolean);
}

/**
 * Replace every `` !`cmd` `` by what `run` gives for it (commands run one after another, in order, each
 * once however often it appears). Text inserted is not searched again.
 */
export async function expandShellCommands(text: string, run: (command: string) => Promise<string>): Promise<string> {
  const outputs = new Map<string, string>();
  for (const command of shellCommands(text)) if (!outputs.has(command)) outputs.set(command, await run(command));
  return text.replace(SHELL, (whole, lead: string, command: string) =>
    command.trim() ? lead + outputs.get(command.trim())! : whole,
  );
}

/** Claude Code's tool names and coil's. */
const CLAUDE_TOOLS: Record<string, string> = {
  Read: "read",
  Bash: "bash",
  Edit: "edit",
  MultiEdit: "edit",
  Write: "write",
  Grep: "grep",
  Glob: "find",
  LS: "ls",
  Task: "task",
};

export interface AllowedTools {
  /** coil tool names the command may use. */
  tools: Set<string>;
  /** When set, bash may only run command lines whose every command starts with one of these. Undefined: any command. */
  bashPrefixes?: string[];
  /** Entries that name no tool coil knows (`WebFetch`, a typo); they are left out. */
  unknown: string[];
}

/**
 * Read `allowed-tools` as Claude Code writes it: a comma-separated string or a list of `Name` or
 * `Name(pattern)` entries (`Bash(git add:*), Read, Edit`). Claude Code names map to coil's (Read→read,
 * Glob→find, ...); coil's own names are accepted as they are. `Bash(prefix:*)` and `Bash(prefix *)` allow
 * commands starting with `prefix`, `Bash(cmd)` that exact command; a plain `Bash` allows any. Patterns of
 * other tools are not enforced (the tool is allowed). `known` is the set of tools the preset has.
 */
export function parseAllowedTools(value: unknown, known: (name: string) => boolean): AllowedTools | undefined {
  const entries = Array.isArray(value)
    ? value.filter((v): v is string => typeof v === "string")
    : typeof value === "string"
      ? splitEntries(value)
      : undefined;
  if (!entries) return undefined;
  const tools = new Set<string>();
  const unknown: string[] = [];
  let prefixes: string[] | undefined = [];
  let anyBash = false;
  for (const raw of entries.map((e) => e.trim()).filter(Boolean)) {
    const m = /^([\w.-]+)\s*(?:\(([\s\S]*)\))?$/.exec(raw);
    const name = m ? (CLAUDE_TOOLS[m[1]!] ?? m[1]!) : undefined;
    if (!m || !name || !(known(name) || CLAUDE_TOOLS[m[1]!])) {
      unknown.push(raw);
      continue;
    }
    tools.add(name);
    if (name !== "bash") continue;
    const pattern = m[2]?.trim();
    if (!pattern || pattern === "*") anyBash = true;
    else prefixes!.push(pattern.replace(/(?::\*|\s*\*)$/, "").trim());
  }
  if (anyBash || !tools.has("bash")) prefixes = undefined;
  return { tools, ...(prefixes ? { bashPrefixes: prefixes.filter(Boolean) } : {}), unknown };
}

/** Split on commas and spaces outside parentheses (`Bash(git add:*), Read Grep` has three entries). */
function splitEntries(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (ch === "(") depth++;
    else if (ch === ")") depth = Math.max(0, depth - 1);
    if (depth === 0 && (ch === "," || /\s/.test(ch))) {
      out.push(current);
      current = "";
    } else current += ch;
  }
  out.push(current);
  return out;
}

/**
 * Why `command` may not run under these bash prefixes, or undefined when it may: every command of the
 * line must start with one of them, and substitutions, subshells and redirections are refused.
 */
export function bashRefusal(command: string, prefixes: readonly string[]): string | undefined {
  if (!prefixes.length) return "no bash command is allowed";
  return notReadOnly(command, prefixes) === undefined
    ? undefined
    : `only commands starting with ${prefixes.map((p) => `\`${p}\``).join(", ")} are allowed (every command of the line, no substitutions or redirections)`;
}
