/**
 * A hook's `if` field: a permission rule in Claude Code's syntax that a tool call must match for the hook
 * to run (`Bash(git commit:*)`, `Edit(*.ts)`, `Read(./.env)`, `WebFetch(domain:example.com)`,
 * `mcp__github`). Matched as Claude Code 2.1 matches it (observed with 2.1.197 on a local mock): a Bash rule
 * matches when any command of a compound line matches (`echo a && git commit -m x` matches
 * `Bash(git commit:*)` and `Bash(echo *)`); a file rule is a gitignore-style pattern (`ignore`) over the
 * path, relative to the working directory (`./x`, `x`), the project root (`/x`), the home folder (`~/x`) or
 * the filesystem (`//x`).
 */
import { homedir } from "node:os";
import { isAbsolute, relative, resolve, sep } from "node:path";
import ignore from "ignore";

export interface RuleContext {
  cwd: string;
  /** The project root (`/x` patterns are relative to it, as to a settings file's folder in Claude Code). */
  root: string;
  home?: string;
}

const PATH_TOOLS = new Set(["Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "Glob", "Grep", "LS"]);

/** `Name` or `Name(spec)`; undefined when the text is not a rule. */
export function parseRule(rule: string): { tool: string; spec?: string } | undefined {
  const m = /^\s*([\w.*-]+)\s*(?:\(([\s\S]*)\))?\s*$/.exec(rule);
  if (!m) return undefined;
  const spec = m[2]?.trim();
  return { tool: m[1]!, ...(spec ? { spec } : {}) };
}

/** Whether the call (Claude Code's tool name and input shape) matches `rule`. A rule coil cannot read matches nothing. */
export function ruleMatches(rule: string, tool: string, input: Record<string, unknown>, ctx: RuleContext): boolean {
  const r = parseRule(rule);
  if (!r || !toolMatches(r.tool, tool)) return false;
  if (!r.spec || r.spec === "*") return true;
  if (tool === "Bash") return typeof input.command === "string" && bashMatches(r.spec, input.command);
  if (PATH_TOOLS.has(tool)) {
    const path = [input.file_path, input.notebook_path, input.path].find((p): p is string => typeof p === "string");
    return path !== undefined && pathMatches(r.spec, path, ctx);
  }
  if (tool === "WebFetch" && r.spec.startsWith("domain:")) {
    const want = r.spec.slice("domain:".length).trim().toLowerCase();
    try {
      const host = new URL(String(input.url)).hostname.toLowerCase();
      return host === want || host.endsWith(`.${want}`);
    } catch {
      return false;
    }
  }
  // Other tools: the pattern against any of the input's text values (`Task(explore)` and the agent type).
  const re = globRegExp(r.spec);
  return Object.values(input).some((v) => typeof v === "string" && re.test(v));
}

/** Tool names: exact, a `*` glob, or an MCP server prefix (`mcp__github` covers `mcp__github__create_issue`). */
function toolMatches(pattern: string, tool: string): boolean {
  if (pattern === tool) return true;
  if (pattern.startsWith("mcp__") && !pattern.includes("*") && tool.startsWith(`${pattern}__`)) return true;
  return pattern.includes("*") && globRegExp(pattern).test(tool);
}

/** `*` matches anything; the rest is literal. Anchored at both ends. */
function globRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.split("*").map(escapeRegExp).join(".*")}$`, "s");
}

const escapeRegExp = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&");

/** The commands of a shell line: split on `&&`, `||`, `;`, `|`, `&` and newlines outside quotes. */
export function splitCommands(line: string): string[] {
  const out: string[] = [];
  let current = "";
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      current += c;
      if (c === "\\" && quote === '"' && i + 1 < line.length) {
        i++;
        current += line[i];
      } else if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      current += c;
      continue;
    }
    if (c === "\\" && i + 1 < line.length) {
      current += c + line[i + 1];
      i++;
      continue;
    }
    if (c === ";" || c === "\n" || c === "|" || c === "&") {
      out.push(current);
      current = "";
      if ((c === "|" || c === "&") && line[i + 1] === c) i++;
      continue;
    }
    current += c;
  }
  out.push(current);
  return out.map((p) => p.trim().replace(/\s+/g, " ")).filter(Boolean);
}

/** Leading `NAME=value` words of a command (`FOO=bar git push` runs `git push`). */
const ASSIGNMENTS = /^(?:[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|"(?:[^"\\]|\\.)*"|[^\s'"])*\s+)+/;

/**
 * `prefix:*` (the command starts with the prefix as a word), else a `*` glob over the whole command; each
 * command of the line is tested with and without its leading variable assignments.
 */
function bashMatches(spec: string, command: string): boolean {
  const prefix = /^(.*?):\*$/.exec(spec)?.[1]?.trim();
  const test = (part: string) =>
    prefix !== undefined ? part === prefix || part.startsWith(`${prefix} `) : globRegExp(spec).test(part);
  return splitCommands(command).some((part) => test(part) || test(part.replace(ASSIGNMENTS, "")));
}

function pathMatches(spec: string, file: string, ctx: RuleContext): boolean {
  const home = ctx.home ?? (process.env.HOME || homedir());
  let base = ctx.cwd;
  let pattern = spec;
  if (spec.startsWith("//")) {
    base = sep;
    pattern = spec.slice(1);
  } else if (spec.startsWith("~/")) {
    base = home;
    pattern = spec.slice(1);
  } else if (spec.startsWith("/")) base = ctx.root;
  else if (spec.startsWith("./")) pattern = spec.slice(1);
  const abs = isAbsolute(file) ? file : resolve(ctx.cwd, file);
  const rel = relative(base, abs).split(sep).join("/");
  if (!rel || rel.startsWith("..") || isAbsolute(rel)) return false;
  return ignore().add(pattern).ignores(rel);
}
