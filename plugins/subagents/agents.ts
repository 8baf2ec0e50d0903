/**
 * Agent types: the built-ins `general` and `explore`, and agent files in Claude Code's format
 * (markdown, front matter `name`, `description`, `tools`, `model`; the body is the system prompt) from
 * installed packages, `~/.claude/agents`, `$COIL_HOME/agents`, and the project's `.claude/agents` and
 * `.coil/agents`. A later location overrides an earlier one with the same name.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { splitFrontMatter } from "../../lib/front-matter.js";
import { packageDirs } from "../../lib/package-dirs.js";
import { claudePluginAgents } from "../../lib/claude-plugins.js";

export type AgentSource = "builtin" | "package" | "user" | "project";

export interface AgentType {
  name: string;
  description: string;
  /** Tool names the agent may use; undefined inherits the parent's tools. */
  tools?: readonly string[];
  /** `inherit` (or undefined), an alias such as `sonnet`, or `provider/id`. */
  model?: string;
  /** Replaces the role part of the system prompt. */
  prompt?: string;
  /** bash runs read-only commands only. */
  readOnlyBash?: boolean;
  source: AgentSource;
  file?: string;
}

export interface AgentProblem {
  file: string;
  reason: string;
}

const EXPLORE_PROMPT = `You are an exploration sub-agent. Another agent gave you a question about this code base; find the answer and report it. Search widely with grep, find and ls, read the files that matter, and use bash only for read-only commands (ls, cat, git log, ...). You cannot change anything. Your final message is all the other agent sees: state what you found with file paths and line numbers, quote the few lines that prove it, and say what you could not find. Be complete but brief.`;

export const BUILTIN_AGENTS: readonly AgentType[] = Object.freeze([
  {
    name: "general",
    description:
      "General-purpose, with your tools (except task): research, multi-step changes, running and fixing tests.",
    source: "builtin",
  },
  {
    name: "explore",
    description:
      "Read-only explorer (read, grep, find, ls, read-only bash): finds where or how something is in the code, with file paths.",
    tools: ["read", "grep", "find", "ls", "bash"],
    prompt: EXPLORE_PROMPT,
    readOnlyBash: true,
    source: "builtin",
  },
]);

/** Claude Code tool names → coil's. Unknown names pass through lowercased. */
const CLAUDE_TOOLS: Record<string, string> = { glob: "find", ls: "ls", multiedit: "edit", task: "task", agent: "task" };

export function toolName(name: string): string {
  const lower = name.trim().toLowerCase();
  return CLAUDE_TOOLS[lower] ?? lower;
}

/** Parse one agent file. */
export function parseAgentFile(text: string, file: string, source: AgentSource): AgentType | AgentProblem {
  const { data, body, error } = splitFrontMatter(text);
  if (error) return { file, reason: error };
  if (!data)
    return { file, reason: "no front matter: an agent file starts with ---, then name and description, then ---" };
  const name = data.name;
  if (typeof name !== "string" || !/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(name))
    return { file, reason: "'name' must be a word of letters, digits, '-', '_' or '.'" };
  if (typeof data.description !== "string" || !data.description.trim())
    return { file, reason: "'description' is missing: the model picks agents by it" };
  let tools: string[] | undefined;
  if (data.tools !== undefined && data.tools !== null) {
    const raw = Array.isArray(data.tools)
      ? data.tools
      : typeof data.tools === "string"
        ? data.tools.split(",")
        : undefined;
    if (!raw || raw.some((t) => typeof t !== "string"))
      return { file, reason: "'tools' must be a comma-separated list of tool names" };
    tools = [...new Set((raw as string[]).map(toolName).filter(Boolean))];
  }
  const model = data.model === undefined || data.model === null ? undefined : String(data.model).trim();
  if (!body.trim()) return { file, reason: "the body (the agent's system prompt) is empty" };
  return {
    name,
    description: data.description.trim().replace(/\s+/g, " "),
    tools,
    model: model || undefined,
    prompt: body.trim(),
    source,
    file,
  };
}

function agentFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((n) => n.endsWith(".md"))
      .sort()
      .map((n) => join(dir, n))
      .filter((f) => statSync(f).isFile());
  } catch {
    return [];
  }
}

export interface Locations {
  cwd: string;
  home: string;
  /** The user's home directory (for `~/.claude/agents`). */
  userHome?: string;
  packages: boolean;
  /** Extra folders (options), read last. */
  extra?: readonly string[];
  /** Whether the project is trusted: its installed Claude Code plugins (`.coil/claude-plugins`) contribute agents too. */
  trusted?: boolean;
}

/** The folders searched, lowest precedence first. */
export function agentDirs(l: Locations): { dir: string; source: AgentSource }[] {
  return [
    ...(l.packages
      ? packageDirs(l.home, "agents", "agents", { root: l.cwd, trusted: l.trusted === true }).map((dir) => ({
          dir,
          source: "package" as const,
        }))
      : []),
    { dir: join(l.userHome ?? homedir(), ".claude", "agents"), source: "user" },
    { dir: join(l.home, "agents"), source: "user" },
    { dir: join(l.cwd, ".claude", "agents"), source: "project" },
    { dir: join(l.cwd, ".coil", "agents"), source: "project" },
    ...(l.extra ?? []).map((dir) => ({ dir, source: "project" as const })),
  ];
}

/** Built-ins, then every agent file; a later definition of a name replaces an earlier one. */
export function discoverAgents(l: Locations): { agents: AgentType[]; problems: AgentProblem[] } {
  const byName = new Map<string, AgentType>(BUILTIN_AGENTS.map((a) => [a.name, a]));
  const problems: AgentProblem[] = [];
  // Installed Claude Code plugins' agents, named `<plugin>:<name>` as Claude Code names them.
  for (const { file, plugin } of l.packages
    ? claudePluginAgents({ home: l.home, cwd: l.cwd, trusted: l.trusted })
    : []) {
    const parsed = parseAgentFile(readFileSync(file, "utf8"), file, "package");
    if ("reason" in parsed) problems.push(parsed);
    else byName.set(`${plugin}:${parsed.name}`, { ...parsed, name: `${plugin}:${parsed.name}` });
  }
  for (const { dir, source } of agentDirs(l)) {
    for (const file of agentFiles(dir)) {
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch (error) {
        problems.push({ file, reason: `cannot read: ${(error as Error).message}` });
        continue;
      }
      const parsed = parseAgentFile(text, file, source);
      if ("reason" in parsed) problems.push(parsed);
      else byName.set(parsed.name, parsed);
    }
  }
  return { agents: [...byName.values()], problems };
}
