/**
 * Permission rules: `tool`, `tool(pattern)` or `*`. The tool part is a glob over tool names; the
 * pattern is matched against what the call acts on:
 * - bash: each simple command of the command line (see shell.ts), with `*` matching anything;
 *   a trailing `:*` also means "this prefix, then nothing or a space and anything" (`npm run test:*`);
 * - tools with a `path` (read, edit, write, grep, find, ls): the path, as a glob where `*` stays in one
 *   directory and `**` crosses directories. Relative patterns match paths inside the working directory
 *   (relative to it); `**` at the start also matches anywhere; `/abs/**` and `~/x/**` match absolute paths;
 * - other tools: any string argument.
 */
import { homedir } from "node:os";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { splitCommand } from "./shell.js";

export interface Rule {
  /** As written in the preset. */
  text: string;
  tool: RegExp;
  /** Undefined: the rule covers every call of the tool. */
  pattern?: string;
}

/** What a call acts on: bash commands, a path, or string arguments. */
export type Subject = { kind: "commands"; items: string[] } | { kind: "path"; abs: string; rel?: string } | { kind: "strings"; items: string[] };

export function parseRule(text: string): Rule {
  const m = /^\s*([^()\s]+)\s*(?:\((.*)\))?\s*$/s.exec(text);
  if (!m || (m[2] !== undefined && m[2].trim() === "")) {
    throw new Error(`rule '${text}' is not of the form tool, tool(pattern) or * (e.g. bash(git push*), read(**/.env), edit(src/**))`);
  }
  return { text, tool: globToRegExp(m[1]!, false), pattern: m[2]?.trim() };
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
        const body = glob.slice(i + 1, end).replace(/^!/, "^").replace(/\\/g, "\\\\");
        re += `[${body}]`;
        i = end;
      }
    } else if (c === "{") {
      const end = glob.indexOf("}", i);
      if (end < 0) re += "\\{";
      else {
        re += `(?:${glob.slice(i + 1, end).split(",").map((alt) => globToRegExp(alt, path).source.slice(1, -1)).join("|")})`;
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

function matchPath(pattern: string, subject: { abs: string; rel?: string }): boolean {
  const p = pattern.startsWith("~/") ? `${homedir()}${pattern.slice(1)}` : pattern.replace(/^\.\//, "");
  const re = globToRegExp(p.split(sep).join("/"), true);
  if (isAbsolute(p)) return re.test(subject.abs);
  if (subject.rel !== undefined && re.test(subject.rel)) return true;
  return p.startsWith("**/") && re.test(subject.abs);
}

/** Whether the rule covers this call, judged on one item (one bash command, the path, one string). */
export function ruleMatches(rule: Rule, tool: string, subject: Subject, item?: string): boolean {
  if (!rule.tool.test(tool)) return false;
  if (rule.pattern === undefined) return true;
  if (subject.kind === "path") return matchPath(rule.pattern, subject);
  const items = item !== undefined ? [item] : subject.items;
  return items.some((i) => (subject.kind === "commands" ? matchCommand(rule.pattern!, i) : globToRegExp(rule.pattern!, false).test(i)));
}

/** What a call acts on. */
export function subjectOf(tool: string, args: Record<string, unknown>, cwd: string): Subject {
  if (tool === "bash" && typeof args.command === "string") return { kind: "commands", items: splitCommand(args.command) };
  const path = typeof args.path === "string" ? args.path : typeof args.file_path === "string" ? args.file_path : undefined;
  if (path !== undefined || ["grep", "find", "ls"].includes(tool)) {
    const given = path ?? ".";
    const abs = resolve(cwd, given.startsWith("~/") ? `${homedir()}${given.slice(1)}` : given);
    const rel = relative(cwd, abs);
    const inside = rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
    return { kind: "path", abs: abs.split(sep).join("/"), rel: inside ? rel.split(sep).join("/") || "." : undefined };
  }
  return { kind: "strings", items: Object.values(args).filter((v): v is string => typeof v === "string") };
}
