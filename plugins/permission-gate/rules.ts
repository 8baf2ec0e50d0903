/**
 * Permission rules: `tool`, `tool(pattern)` or `*`. The tool part is a glob over tool names; the
 * pattern is matched against what the call acts on:
 * - bash: each simple command of the command line (see shell.ts), with `*` matching anything;
 *   a trailing `:*` also means "this prefix, then nothing or a space and anything" (`npm run test:*`).
 *   A path pattern (`/…`, `~/…`, `$COIL_HOME/…`, or one starting with `**`) also matches a command naming such a path
 *   in one of its words (best effort: the sandbox, not this, is the boundary for commands);
 * - tools with a `path` (read, edit, write, grep, find, ls): the path, as a glob where `*` stays in one
 *   directory and `**` crosses directories (`dir/**` also covers `dir` itself). Relative patterns match
 *   paths inside the working directory (relative to it); `**` at the start also matches anywhere;
 *   `/abs/**`, `~/x/**` and `$COIL_HOME/x` match absolute paths. A path matches when the path as typed
 *   or its real path (symlinks resolved) does;
 * - other tools: any string argument.
 * `read` rules also cover grep, find and ls (they read what they return); a `read` deny rule also covers
 * edit (it reads the file and shows parts of it).
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { splitCommand, withoutAssignments } from "./shell.js";

export interface Rule {
  /** As written in the preset. */
  text: string;
  tool: RegExp;
  /** Undefined: the rule covers every call of the tool. */
  pattern?: string;
  /** `$COIL_HOME` in a path pattern stands for this directory. */
  coilHome?: string;
}

/** A path a call acts on: as typed (`abs`, `rel` when inside the working directory) and resolved (`real`, `realRel`). */
export interface PathSubject {
  kind: "path";
  abs: string;
  rel?: string;
  /** The real path: symlinks resolved, also through a dangling link or a file that does not exist yet. */
  real: string;
  /** `real` relative to the working directory's real path, when inside it. */
  realRel?: string;
  /** Whether the path really lies inside the working directory (judged on real paths). */
  inside: boolean;
}

/** What a call acts on: bash commands, a path, or string arguments. */
export type Subject =
  | { kind: "commands"; items: string[]; cwd?: string }
  | PathSubject
  | { kind: "strings"; items: string[] };

/** Tools that read what they return, besides `read`: `read(...)` rules cover them too. */
export const READING_TOOLS = ["grep", "find", "ls"];

export function parseRule(text: string, coilHome?: string): Rule {
  const m = /^\s*([^()\s]+)\s*(?:\((.*)\))?\s*$/s.exec(text);
  if (!m || (m[2] !== undefined && m[2].trim() === "")) {
    throw new Error(
      `rule '${text}' is not of the form tool, tool(pattern) or * (e.g. bash(git push*), read(**/.env), edit(src/**))`,
    );
  }
  return { text, tool: globToRegExp(m[1]!, false), pattern: m[2]?.trim(), coilHome };
}

/**
 * A glob as an anchored RegExp. In path mode `*` and `?` stay within one path segment and `**`
 * crosses segments (`**\/` may match nothing); otherwise `*` matches any text. `{a,b}` and `[abc]` work.
 */
export function globToRegExp(glob: string, path: boolean): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") {
      if (path && glob[i + 1] === "*") {
        const slash = glob[i + 2] === "/";
        re += slash ? "(?:.*/)?" : ".*";
        i += slash ? 2 : 1;
      } else re += path ? "[^/]*" : ".*";
    } else if (c === "?") re += path ? "[^/]" : ".";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end < 0) re += "\\[";
      else {
        const body = glob
          .slice(i + 1, end)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\");
        re += `[${body}]`;
        i = end;
      }
    } else if (c === "{") {
      const end = glob.indexOf("}", i);
      if (end < 0) re += "\\{";
      else {
        re += `(?:${glob
          .slice(i + 1, end)
          .split(",")
          .map((alt) => globToRegExp(alt, path).source.slice(1, -1))
          .join("|")})`;
        i = end;
      }
    } else re += c.replace(/[.+^$()|\\/]/g, "\\$&");
  }
  return new RegExp(`^${re}$`, "s");
}

function matchCommand(pattern: string, command: string): boolean {
  if (pattern.endsWith(":*")) {
    const prefix = pattern.slice(0, -2);
    if (command === prefix || command.startsWith(`${prefix} `)) return true;
  }
  return globToRegExp(pattern, false).test(command);
}

/** A path pattern made absolute where it names a root (`~/`, `$COIL_HOME`), `/`-separated. */
const expanded = new Map<string, string>();
function expandPattern(rule: Rule): string {
  const key = `${rule.pattern}\0${homedir()}\0${rule.coilHome ?? ""}`;
  let p = expanded.get(key);
  if (p === undefined) {
    p = expandOnce(rule);
    expanded.set(key, p);
  }
  return p;
}

function expandOnce(rule: Rule): string {
  const pattern = rule.pattern!;
  const p = pattern.startsWith("~/")
    ? `${homedir()}${pattern.slice(1)}`
    : /^\$(\{COIL_HOME\}|COIL_HOME)(\/|$)/.test(pattern) && rule.coilHome
      ? pattern.replace(/^\$(\{COIL_HOME\}|COIL_HOME)/, rule.coilHome)
      : pattern.replace(/^\.\//, "");
  return p.split(sep).join("/");
}

/** Compiled path globs (result filtering matches every line of a listing against every rule). */
const compiled = new Map<string, RegExp>();
function pathRegExp(glob: string): RegExp {
  let re = compiled.get(glob);
  if (!re) {
    re = globToRegExp(glob, true);
    compiled.set(glob, re);
  }
  return re;
}

const isPathPattern = (pattern: string) => /^(\/|~\/|\$\{?COIL_HOME|\*\*\/)/.test(pattern);

function matchPath(rule: Rule, subject: PathSubject): boolean {
  const p = expandPattern(rule);
  // `dir/**` covers the folder itself as well as what is in it
  const re = pathRegExp(p);
  const self = p.endsWith("/**") ? pathRegExp(p.slice(0, -3)) : undefined;
  const test = (x: string) => re.test(x) || (self?.test(x) ?? false);
  const views: [string, string | undefined][] = [
    [subject.abs, subject.rel],
    [subject.real, subject.realRel],
  ];
  return views.some(([abs, rel]) => {
    if (p.startsWith("/")) return test(abs);
    if (rel !== undefined && test(rel)) return true;
    return p.startsWith("**/") && test(abs);
  });
}

/** The words of a command that may be paths: quotes dropped, `--opt=value` and redirections split off. */
function pathWords(command: string): string[] {
  const words = command.match(/'[^']*'|"(?:[^"\\]|\\.)*"|\S+/g) ?? [];
  return words.flatMap((w) => {
    const bare = w.replace(/^['"]|['"]$/g, "").replace(/^\d*[<>]+&?/, "");
    const value = bare.includes("=") ? bare.slice(bare.indexOf("=") + 1) : undefined;
    return [bare, value].filter((x): x is string => !!x && !x.startsWith("-") && /[/.~]/.test(x));
  });
}

/** Which tools a rule covers: its own glob, plus grep/find/ls for `read` rules and edit for `read` deny rules. */
export function coversTool(rule: Rule, tool: string, list?: "deny" | "ask" | "allow"): boolean {
  if (rule.tool.test(tool)) return true;
  if (!rule.tool.test("read")) return false;
  return READING_TOOLS.includes(tool) || (list === "deny" && tool === "edit");
}

/** Whether the rule covers this call, judged on one item (one bash command, the path, one string). */
export function ruleMatches(
  rule: Rule,
  tool: string,
  subject: Subject,
  item?: string,
  list?: "deny" | "ask" | "allow",
): boolean {
  if (!coversTool(rule, tool, list)) return false;
  if (rule.pattern === undefined) return true;
  if (subject.kind === "path") return matchPath(rule, subject);
  const items = item !== undefined ? [item] : subject.items;
  if (subject.kind === "strings") return items.some((i) => globToRegExp(rule.pattern!, false).test(i));
  // A file rule for every tool (`*(~/.ssh/**)`) also looks for such paths among a command's words.
  // Deny and ask rules also match the command without the assignments in front (`FOO=1 rm x` is `rm x`);
  // allow rules only as written, so `allow: bash(git status*)` never approves `GIT_DIR=… git status`.
  const forms = (i: string) => (list === "allow" ? [i] : [...new Set([i, withoutAssignments(i)])]);
  return items.some(
    (i) =>
      forms(i).some((f) => matchCommand(rule.pattern!, f)) ||
      (isPathPattern(rule.pattern!) &&
        rule.tool.test("read") &&
        pathWords(i).some((w) => matchPath(rule, pathSubject(w, subject.cwd ?? process.cwd())))),
  );
}

/**
 * The real path of `abs`: symlinks resolved, following a dangling link to where it would write, and
 * for a path that does not exist, its nearest existing ancestor's real path plus the rest.
 */
export function realPathOf(abs: string, depth = 0): string {
  try {
    return realpathSync(abs);
  } catch {
    if (depth > 40) return abs;
    try {
      if (lstatSync(abs).isSymbolicLink()) return realPathOf(resolve(dirname(abs), readlinkSync(abs)), depth + 1);
    } catch {
      // does not exist: resolve the parent
    }
    const parent = dirname(abs);
    return parent === abs ? abs : join(realPathOf(parent, depth + 1), basename(abs));
  }
}

const slash = (p: string) => p.split(sep).join("/");
const within = (root: string, p: string): string | undefined => {
  const rel = relative(root, p);
  return rel === "" ? "." : !rel.startsWith("..") && !isAbsolute(rel) ? slash(rel) : undefined;
};

let lastCwd: [string, string] | undefined;
/** The working directory's real path (asked for once per line of a listing: remembered). */
function realCwd(cwd: string): string {
  if (lastCwd?.[0] !== cwd) lastCwd = [cwd, realPathOf(resolve(cwd))];
  return lastCwd[1];
}

/** A path as typed (relative to `cwd`, `~` expanded) and resolved. */
export function pathSubject(given: string, cwd: string): PathSubject {
  const abs = resolve(
    cwd,
    given === "~" ? homedir() : given.startsWith("~/") ? `${homedir()}${given.slice(1)}` : given,
  );
  const real = realPathOf(abs);
  const realRel = within(realCwd(cwd), real);
  return {
    kind: "path",
    abs: slash(abs),
    rel: within(resolve(cwd), abs),
    real: slash(real),
    realRel,
    inside: realRel !== undefined,
  };
}

/** What a call acts on. */
export function subjectOf(tool: string, args: Record<string, unknown>, cwd: string): Subject {
  if (tool === "bash" && typeof args.command === "string")
    return { kind: "commands", items: splitCommand(args.command), cwd };
  const path =
    typeof args.path === "string" ? args.path : typeof args.file_path === "string" ? args.file_path : undefined;
  if (path !== undefined || READING_TOOLS.includes(tool)) return pathSubject(path ?? ".", cwd);
  return { kind: "strings", items: Object.values(args).filter((v): v is string => typeof v === "string") };
}
