/**
 * The system prompt as blocks, in an order chosen for prompt caching: the most stable and largest
 * first, the most volatile last. Same input, same bytes: no clock finer than the date, no random ids,
 * tools and skills sorted by name.
 */
import type { SystemBlock } from "../../api/index.js";
import { escapeXml, renderSkillIndex, type SkillIndexLevel } from "../../lib/skill-index.js";

/** Ids of the blocks this plugin writes, in order. Blocks from other plugins go before `append`. */
export const BLOCK_ORDER = ["role", "tools", "guidelines", "docs", "skills", "project", "append", "env"] as const;
export type BlockId = (typeof BLOCK_ORDER)[number];

export interface ToolInfo {
  name: string;
  snippet: string;
  guidelines: readonly string[];
}

export interface SkillEntry {
  name: string;
  description: string;
  location: string;
}

export interface ProjectFile {
  path: string;
  content: string;
}

export interface PromptInput {
  role: string;
  tools: readonly ToolInfo[];
  /** List the tools with their snippets in a `tools` block (the tool definitions sent with the request already describe them). */
  toolList?: boolean;
  /** Extra guidelines from the preset. */
  guidelines: readonly string[];
  docs?: { dir: string; files: readonly string[] };
  skills: readonly SkillEntry[];
  /** The skills index's form (see the skills plugin's SkillIndex); `full` when unset. */
  skillsLevel?: SkillIndexLevel;
  /** The tool this request offers that searches the skills' full descriptions. */
  skillsSearch?: string;
  project: readonly ProjectFile[];
  append: readonly string[];
  /** `YYYY-MM-DD`, or undefined to leave the date out. */
  date?: string;
  cwd: string;
  /** Blocks other plugins (or the agent's options) put in the request. */
  foreign: readonly SystemBlock[];
}

export const DEFAULT_ROLE = `You are coil, a coding agent in the user's terminal: you read and change code, run commands, debug, explain and review.

Work in small, checked steps: read the code before changing it, make the smallest change that fits the existing style, and verify it (build, tests) when you can. When something fails, find the cause from the error instead of guessing. Ask when a request is ambiguous and a wrong guess would be costly. Be concise: say what you did and found, with file paths.`;

export { escapeXml };

const SEARCH_TOOLS = ["grep", "find", "ls"];
const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Guidelines that depend on which tools are active, then the tools' own, deduplicated. */
export function guidelinesFor(tools: readonly ToolInfo[], extra: readonly string[]): string[] {
  const has = (n: string) => tools.some((t) => t.name === n);
  const out: string[] = [];
  if (has("bash") && !SEARCH_TOOLS.some(has)) out.push("Use bash for file listing and search (ls, rg, find).");
  if (has("bash") && !has("read")) out.push("Use bash (cat, sed -n, head) to read files.");
  if (!has("bash") && !has("edit") && !has("write") && tools.length > 0)
    out.push("You cannot change files or run commands in this session: describe the changes you would make instead.");
  for (const t of [...tools].sort(byName)) out.push(...t.guidelines);
  out.push(...extra);
  return [...new Set(out.map((g) => g.trim()).filter(Boolean))];
}

export function assemble(input: PromptInput): SystemBlock[] {
  const blocks: SystemBlock[] = [];
  const add = (id: string, text: string) => {
    if (text.trim()) blocks.push({ id, text: text.trimEnd() });
  };
  add("role", input.role);
  const tools = [...input.tools].sort(byName);
  if (input.toolList && tools.length)
    add("tools", `Tools you can call:\n${tools.map((t) => `- ${t.snippet}`).join("\n")}`);
  const guidelines = guidelinesFor(tools, input.guidelines);
  if (guidelines.length) add("guidelines", `Guidelines:\n${guidelines.map((g) => `- ${g}`).join("\n")}`);
  if (input.docs?.files.length) {
    add(
      "docs",
      `coil's own documentation is in ${input.docs.dir}/ (one .md file per topic); read it only when asked about coil itself.`,
    );
  }
  add("skills", renderSkillIndex(input.skills, input.skillsLevel ?? "full", input.skillsSearch));
  if (input.project.length) {
    add(
      "project",
      `Project instructions (follow them; the later, more specific files take precedence):\n\n${input.project.map((f) => `## ${f.path}\n\n${f.content.trim()}`).join("\n\n")}`,
    );
  }
  const mine = new Set<string>(BLOCK_ORDER);
  for (const b of input.foreign) if (!mine.has(b.id) && b.text.trim()) blocks.push(b);
  add(
    "append",
    input.append
      .map((a) => a.trim())
      .filter(Boolean)
      .join("\n\n"),
  );
  add(
    "env",
    [input.date ? `Current date: ${input.date}` : "", `Working directory: ${input.cwd}`].filter(Boolean).join("\n"),
  );
  return blocks;
}

/** The local date as YYYY-MM-DD. */
export function localDate(now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${now.getFullYear()}-${p(now.getMonth() + 1)}-${p(now.getDate())}`;
}
