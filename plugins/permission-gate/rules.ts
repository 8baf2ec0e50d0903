/**
 * Permission rules: `tool`, `tool(pattern)` or `*`. The tool part is a glob over tool names; the
 * pattern is matched against what the call acts on:
 * - bash: each simple command of the command line (see shell.ts), with `*` matching anything;
 *   a trailing `:*` also means "this prefix, then nothing or a space and anything" (`npm run test:*`).
 *   A deny or ask path pattern of a rule covering `read` (`/…`, `~/…`, `$COIL_HOME/…`, `**\/…`, `.env`, `conf/x`)
 *   also matches a command naming such a path in one of its words (best effort: the sandbox, not this, is
 *   the boundary for commands);
 * - tools with a `path` (read, edit, write, grep, find, ls): the path, as a glob where `*` stays in one
 *   directory and `**` crosses directories (`dir/**` also covers `dir` itself). Relative patterns match
 *   paths inside the working directory (relative to it); `**` at the start also matches anywhere;
 *   `/abs/**`, `~/x/**` and `$COIL_HOME/x` match absolute paths. A path matches when the path as typed
 *   or its real path (symlinks resolved) does;
 * - other tools: any string argument.
 * `read` rules also cover grep, find and ls (they read what they return); a `read` deny rule also covers
 * edit (it reads the file and shows parts of it); `read` deny and ask rules on a path also cover bash
 * commands that name it.
 */
import { lstatSync, readdirSync, readlinkSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { parseSimpleCommand } from "../../lib/shell/words.js";
import { cdTarget } from "../../lib/shell/writes.js";
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
  | {
      kind: "commands";
      items: string[];
      cwd?: string;
      /** Where each item runs, after the `cd`s before it (undefined: a `cd` the gate cannot follow). */
      cwds?: (string | undefined)[];
    }
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
    if (c === "\\" && i + 1 < glob.length && /[*?[\]{}\\]/.test(glob[i + 1]!)) {
      re += `\\${glob[i + 1]}`; // an escaped wildcard is itself
      i++;
    } else if (c === "*") {
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

/** A pattern that names files: absolute, in the home folder, `$COIL_HOME`, `**\/…`, or relative with a `/` or a leading dot. */
const isPathPattern = (pattern: string) => /^(\/|~\/|\$\{?COIL_HOME|\*\*\/|\.)/.test(pattern) || pattern.includes("/");

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

/** `~` at the start and `$HOME` / `${HOME}` anywhere, as the shell would expand them. */
export function expandHome(word: string): string {
  const home = homedir();
  return word.replace(/^~(?=\/|$)/, home).replace(/\$\{HOME\}|\$HOME(?![A-Za-z0-9_])/g, home);
}

/** Where a path starts inside a word: after `=`, `@`, `<`, `:`, `,`, a quote or a parenthesis (`f=@~/.ssh/id_rsa`, `open('/x')`). */
const EMBEDDED = /(?:^|[=@<:,('"\s])((?:~|\.{1,2})?\/[^\s'"()<>;,|&:]*|~(?=$|[\s'"]))/g;

/**
 * The words of a command that may be paths, as the shell would pass them: quotes removed (`~/.net''rc` is
 * `~/.netrc`), `~` and `$HOME` expanded, `--opt=value` and redirection targets split off, and paths inside a
 * word (`-d@~/.netrc`, `f=@$HOME/.ssh/id_rsa`, `open('/home/u/.aws/credentials')`). A word with a glob
 * (`~/.a?s/cred*`) also stands for the files it matches.
 */
export function pathWords(command: string, cwd: string): string[] {
  const { words, redirects } = parseSimpleCommand(command);
  const out = new Set<string>();
  for (const w of [...words, ...redirects.flatMap((r) => (r.target ? [r.target] : []))]) {
    const value = expandHome(w.value);
    const found = [value, value.includes("=") ? value.slice(value.indexOf("=") + 1) : ""];
    for (const m of value.matchAll(EMBEDDED)) found.push(expandHome(m[1]!));
    for (const f of found) {
      if (!f || f.startsWith("-") || !/[/.~]/.test(f)) continue;
      out.add(f);
      if (w.expands && /[*?[]/.test(f)) for (const g of expandGlob(f, cwd)) out.add(g);
    }
  }
  return [...out];
}

/** The existing paths a glob names (as the shell expands it: `*` does not match a leading dot), at most 200. */
export function expandGlob(pattern: string, cwd: string, limit = 200): string[] {
  const abs = resolve(cwd, pattern);
  const segments = abs.split("/").filter(Boolean);
  let current = ["/"];
  for (const seg of segments) {
    const next: string[] = [];
    if (!/[*?[]/.test(seg)) for (const c of current) next.push(join(c, seg));
    else {
      const re = globToRegExp(seg, true);
      for (const c of current) {
        let names: string[] = [];
        try {
          names = readdirSync(c);
        } catch {
          names = [];
        }
        for (const n of names) if (re.test(n) && (!n.startsWith(".") || seg.startsWith("."))) next.push(join(c, n));
        if (next.length > limit) break;
      }
    }
    current = next.slice(0, limit);
    if (!current.length) return [];
  }
  return current.filter((p) => {
    try {
      lstatSync(p);
      return true;
    } catch {
      return false;
    }
  });
}

/** The directory each command of a line runs in: `cd DIR` changes it for the commands after it. */
export function commandDirs(items: readonly string[], cwd: string): (string | undefined)[] {
  const out: (string | undefined)[] = [];
  let current: string | undefined = cwd;
  for (const item of items) {
    out.push(current);
    const cd = cdTarget(item);
    if (!cd) continue;
    current = cd.unknown || !cd.dir ? undefined : resolve(current ?? cwd, expandHome(cd.dir));
  }
  return out;
}

/** Programs that read whole folders: naming a folder that holds a covered file reads it (`tar -c ~/.docker`). */
function readsRecursively(command: string): boolean {
  const { words } = parseSimpleCommand(command);
  let k = 0;
  while (k < words.length && /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(words[k]!.raw)) k++;
  const program = words[k]?.value.replace(/^.*\//, "") ?? "";
  const args = words.slice(k + 1).map((w) => w.value);
  if (/^(tar|bsdtar|zip|7z|7za|cpio|rsync|scp|rg|ag|ack|git)$/.test(program)) return true;
  if (/^(cp|grep|egrep|fgrep|gzip|chmod|chown)$/.test(program))
    return args.some((a) => /^-[a-zA-Z]*[rRa]/.test(a) || /^--(recursive|dereference-recursive|archive)/.test(a));
  if (program === "find") return args.some((a) => /^-(exec|execdir|ok|okdir|fprint0?|fprintf|fls)$/.test(a));
  return false;
}

/** Whether a folder holds what the rule covers: the rule's path, up to its first wildcard, lies below it. */
function holdsCovered(rule: Rule, folder: PathSubject): boolean {
  const p = expandPattern(rule);
  if (!p.startsWith("/")) return false;
  const literal = p.slice(0, p.search(/[*?[{]|$/)).replace(/\/[^/]*$/, "");
  return [folder.abs, folder.real].some((f) => literal === f || literal.startsWith(`${f.replace(/\/$/, "")}/`));
}

/** Which tools a rule covers: its own glob, plus grep/find/ls for `read` rules and edit for `read` deny rules. */
export function coversTool(rule: Rule, tool: string, list?: "deny" | "ask" | "allow"): boolean {
  if (rule.tool.test(tool)) return true;
  if (!rule.tool.test("read")) return false;
  // a read deny or ask rule on a path also covers bash commands naming that path (`cat .env`)
  const bashByPath = tool === "bash" && list !== "allow" && rule.pattern !== undefined && isPathPattern(rule.pattern);
  return READING_TOOLS.includes(tool) || (list === "deny" && tool === "edit") || bashByPath;
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
  if (subject.kind === "strings") {
    // `domain:example.com` (Claude Code's WebFetch rules): a URL argument's host
    if (rule.pattern.startsWith("domain:")) {
      const host = globToRegExp(rule.pattern.slice(7).trim().toLowerCase(), false);
      return items.some((i) => {
        try {
          return host.test(new URL(i).hostname.toLowerCase());
        } catch {
          return false;
        }
      });
    }
    return items.some((i) => globToRegExp(rule.pattern!, false).test(i));
  }
  // Deny and ask rules also match the command without the assignments in front (`FOO=1 rm x` is `rm x`);
  // allow rules only as written, so `allow: bash(git status*)` never approves `GIT_DIR=… git status`.
  const forms = (i: string) => (list === "allow" ? [i] : [...new Set([i, withoutAssignments(i)])]);
  // A deny or ask file rule for every tool (`*(~/.ssh/**)`) also looks for such paths among a command's
  // words, relative to where the command runs (after a `cd`); an allow rule never approves a command that way.
  const pathRule = list !== "allow" && isPathPattern(rule.pattern!) && rule.tool.test("read");
  const base = subject.cwd ?? process.cwd();
  const dirsOf = (i: string): string[] => {
    const dirs = subject.items.flatMap((it, k) => (it !== i ? [] : subject.cwds ? [subject.cwds[k]] : [base]));
    // a `cd` the gate cannot follow: judge relative paths from the working directory and from home
    return [...new Set(dirs.flatMap((d) => (d ? [d] : [base, homedir()])))];
  };
  const namesCovered = (i: string) =>
    dirsOf(i).some((dir) =>
      pathWords(i, dir).some((w) => {
        const p = pathSubject(resolve(dir, w), base);
        return matchPath(rule, p) || (readsRecursively(i) && holdsCovered(rule, p));
      }),
    );
  // A rule for another tool (`read(…)`) judges a command only by the paths it names, never by its text.
  const byText = rule.tool.test(tool);
  return items.some(
    (i) => (byText && forms(i).some((f) => matchCommand(rule.pattern!, f))) || (pathRule && namesCovered(i)),
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
  if (tool === "bash" && typeof args.command === "string") {
    const items = splitCommand(args.command);
    return { kind: "commands", items, cwd, cwds: commandDirs(items, cwd) };
  }
  const path =
    typeof args.path === "string" ? args.path : typeof args.file_path === "string" ? args.file_path : undefined;
  if (path !== undefined || READING_TOOLS.includes(tool)) return pathSubject(path ?? ".", cwd);
  return { kind: "strings", items: Object.values(args).filter((v): v is string => typeof v === "string") };
}
