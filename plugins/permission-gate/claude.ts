/**
 * Claude Code's `permissions` (in ~/.claude/settings.json, .claude/settings.json, .claude/settings.local.json)
 * as the gate's own rules. Rule forms (Claude Code's documented syntax):
 * - `Tool` or `Tool(specifier)`; `Bash(npm run test:*)` (a prefix), `Bash(git * main)` (`*` anywhere,
 *   a trailing ` *` also matching the bare command);
 * - `Read(…)`, `Edit(…)` (every tool that edits: edit and write), `Write(…)`: gitignore-style paths:
 *   `//abs` absolute, `~/x` in the home folder, `/x` from the project root, `x` and `./x` from the
 *   working directory, a pattern without a `/` matching at any depth;
 * - `WebFetch(domain:example.com)`, `mcp__server`, `mcp__server__tool`, `mcp__server__*`, `Task(type)`;
 * - `Grep`, `Glob`, `LS`, `MultiEdit` as their coil tools.
 * What has no coil counterpart is reported (once per run, and in `coil doctor`), never silently dropped.
 * Which parts of a project's files apply depends on trust (lib/claude-settings.ts).
 */
import { isAbsolute } from "node:path";
import type { SettingsFile } from "../../lib/claude-settings.js";
import { parseRule, type Rule } from "./rules.js";

export type ClaudeList = "allow" | "ask" | "deny";

/** Claude Code's tool names and what they are in coil (the tool part of a coil rule). */
const TOOLS: Record<string, string> = {
  Bash: "bash",
  Read: "read",
  Edit: "{edit,write}",
  MultiEdit: "edit",
  Write: "write",
  Grep: "grep",
  Glob: "find",
  LS: "ls",
  Task: "task",
  Agent: "task",
  WebFetch: "web_fetch",
  WebSearch: "web_search",
};
/** Tools coil does not have built in: their rules are kept (a plugin may add the tool) and noted. */
const NOT_BUILT_IN = new Set(["WebFetch", "WebSearch"]);
/** Rule forms coil cannot apply. */
const UNMAPPED: Record<string, string> = {
  NotebookEdit: "coil has no notebook tool",
  NotebookRead: "coil has no notebook tool",
  Skill: "coil's skills are read with the read tool, not a Skill tool",
  SlashCommand: "slash commands are yours to type in coil; the model cannot run them",
  TodoWrite: "coil has no todo tool",
  BashOutput: "coil's bash has no background-output tool",
  KillShell: "coil's bash has no kill tool",
  ExitPlanMode: "plan mode's approval is write_plan in coil",
};

export interface Mapped {
  /** As written in the settings file. */
  claude: string;
  /** The coil rule it became, or undefined when it could not be mapped. */
  rule?: Rule;
  /** That rule as coil writes it. */
  coil?: string;
  /** Why it could not be mapped, or a note (a tool coil lacks). */
  note?: string;
}

/** Escape the characters coil's glob reads as syntax (Claude Code's only wildcard is `*`). */
const literal = (s: string) => s.replace(/[?[\]{}]/g, "\\$&");

/** A Claude Code path specifier as a coil path pattern. */
function pathPattern(spec: string, root: string): string | undefined {
  if (spec.startsWith("!") || spec.includes("\\")) return undefined;
  let p: string;
  if (spec.startsWith("//")) p = spec.slice(1);
  else if (spec.startsWith("~/")) p = spec;
  else if (spec.startsWith("/")) p = `${root}${spec}`;
  else {
    const rel = spec.replace(/^\.\//, "");
    // gitignore: a pattern without a slash (other than a trailing one) matches at any depth
    p = /\//.test(rel.replace(/\/$/, "")) || spec.startsWith("./") ? rel : `**/${rel}`;
  }
  if (p.endsWith("/")) p = `${p}**`;
  return p;
}

/** One Claude Code rule as a coil rule (the rule's text names the file it came from). */
export function mapClaudeRule(text: string, file: string, root: string): Mapped {
  const m = /^\s*([A-Za-z_][\w*-]*)\s*(?:\((.*)\))?\s*$/s.exec(text);
  if (!m) return { claude: text, note: "not of the form Tool or Tool(specifier)" };
  const [, name, spec] = m as unknown as [string, string, string | undefined];
  const label = `${text} (${file})`;
  const make = (coil: string, note?: string): Mapped => {
    try {
      const rule = parseRule(coil);
      return { claude: text, coil, rule: { ...rule, text: label }, ...(note ? { note } : {}) };
    } catch (e) {
      return { claude: text, note: (e as Error).message };
    }
  };
  if (name.startsWith("mcp__")) {
    if (spec !== undefined) return { claude: text, note: "an MCP rule takes no specifier" };
    const parts = name.split("__");
    return make(parts.length === 2 ? `${name}__*` : name);
  }
  if (UNMAPPED[name]) return { claude: text, note: UNMAPPED[name] };
  const tool = TOOLS[name];
  if (!tool) return { claude: text, note: `coil has no tool that Claude Code's ${name} maps to` };
  const lacks = NOT_BUILT_IN.has(name)
    ? `coil has no built-in ${name} tool; the rule applies to a ${tool} tool a plugin adds`
    : undefined;
  if (spec === undefined || spec.trim() === "" || spec.trim() === "*") return make(tool, lacks);
  const s = spec.trim();
  if (name === "Bash") {
    // `npm run test:*` is coil's own prefix form; a trailing ` *` also matches the bare command
    const body = s.endsWith(":*")
      ? `${literal(s.slice(0, -2))}:*`
      : / \*$/.test(s) && s.indexOf("*") === s.length - 1
        ? `${literal(s.slice(0, -2))}:*`
        : literal(s);
    return make(`bash(${body})`);
  }
  if (name === "WebFetch") {
    if (!s.startsWith("domain:")) return { claude: text, note: "WebFetch rules take domain:<host>" };
    return make(`${tool}(${s})`, lacks);
  }
  if (name === "WebSearch") return { claude: text, note: "WebSearch rules take no specifier" };
  if (tool === "task") return make(`task(${literal(s)})`);
  const p = pathPattern(s, root);
  if (!p) return { claude: text, note: "negated or escaped path patterns are not supported" };
  return make(`${tool}(${p})`);
}

export interface ClaudePermissions {
  rules: Record<ClaudeList, Rule[]>;
  /** The mode the files ask for (coil's name) and the file, when one does. */
  mode?: { mode: string; file: string; refuseAsks?: boolean };
  directories: { path: string; file: string }[];
  /** Every rule as read, mapped or not, for /permissions and coil doctor. */
  mapped: (Mapped & { list: ClaudeList; file: string; applied: boolean })[];
  /** What could not be applied, one line each (warned once per run). */
  problems: string[];
  /** What an untrusted project's files asked for that was left out. */
  skipped: string[];
}

const MODES: Record<string, string> = {
  default: "default",
  acceptEdits: "accept-edits",
  plan: "plan",
  bypassPermissions: "yolo",
  dontAsk: "default",
};

/**
 * The `permissions` of the settings files. Deny and ask rules always apply (they only restrict); allow
 * rules, `defaultMode` and `additionalDirectories` from the project's files only when it is trusted, and
 * `bypassPermissions` only from your own file.
 */
export function claudePermissions(files: readonly SettingsFile[], root: string, trusted: boolean): ClaudePermissions {
  const out: ClaudePermissions = {
    rules: { allow: [], ask: [], deny: [] },
    directories: [],
    mapped: [],
    problems: [],
    skipped: [],
  };
  for (const f of files) {
    if (f.error) {
      out.problems.push(`${f.path}: cannot read it (${f.error}); its permissions are not applied`);
      continue;
    }
    const perms = f.data?.permissions;
    if (!perms || typeof perms !== "object") continue;
    const p = perms as Record<string, unknown>;
    const own = f.scope === "user" || trusted;
    for (const list of ["deny", "ask", "allow"] as const) {
      const entries = p[list];
      if (entries === undefined) continue;
      if (!Array.isArray(entries)) {
        out.problems.push(`${f.path}: permissions.${list} is not a list; ignored`);
        continue;
      }
      for (const e of entries) {
        if (typeof e !== "string") {
          out.problems.push(`${f.path}: permissions.${list} entry ${JSON.stringify(e)} is not a string; ignored`);
          continue;
        }
        const m = mapClaudeRule(e, f.path, root);
        const applied = m.rule !== undefined && (list !== "allow" || own);
        out.mapped.push({ ...m, list, file: f.path, applied });
        if (!m.rule) out.problems.push(`${f.path}: permissions.${list} rule ${e} is not applied: ${m.note}`);
        else if (!applied) out.skipped.push(`${list} ${e}`);
        else out.rules[list].push(m.rule);
      }
    }
    const mode = p.defaultMode;
    if (typeof mode === "string") {
      const coil = MODES[mode];
      if (!coil) out.problems.push(`${f.path}: defaultMode ${mode} has no coil counterpart; the preset's mode is kept`);
      else if (!own) out.skipped.push(`defaultMode ${mode}`);
      else if (mode === "bypassPermissions" && f.scope !== "user")
        out.problems.push(
          `${f.path}: defaultMode bypassPermissions is taken only from your own ~/.claude/settings.json`,
        );
      else out.mode = { mode: coil, file: f.path, ...(mode === "dontAsk" ? { refuseAsks: true } : {}) };
    }
    const dirs = p.additionalDirectories;
    if (Array.isArray(dirs)) {
      for (const d of dirs) {
        if (typeof d !== "string") continue;
        if (!own) out.skipped.push(`additionalDirectories ${d}`);
        else out.directories.push({ path: isAbsolute(d) || d.startsWith("~") ? d : `${root}/${d}`, file: f.path });
      }
    }
  }
  return out;
}
