/**
 * system-prompt: assembles `request.system` in `before_request` from blocks, in a fixed order chosen
 * for prompt caching: role → tools → guidelines → coil's docs → skills index → project instructions →
 * appended text → date and working directory. `--system-prompt` / `SYSTEM.md` replace the role,
 * `--append-system-prompt` / `APPEND_SYSTEM.md` add text near the end (docs/context.md).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { Type, definePlugin, type ModelRequest, type SystemBlock, type ToolSpec } from "../../api/index.js";
import { packageRoot } from "../../lib/paths.js";
import { addDoctorSection } from "../../lib/doctor.js";
import type {} from "../context-files/api.js"; // types the `context-files` service
import type {} from "../skills/api.js"; // types the `skills` service
import {
  DEFAULT_ROLE,
  assemble,
  localDate,
  type ProjectFile,
  type PromptInput,
  type SkillEntry,
  type ToolInfo,
} from "./blocks.js";
import { locationsOf } from "../../lib/locations.js";

export { assemble, escapeXml, guidelinesFor, BLOCK_ORDER, DEFAULT_ROLE } from "./blocks.js";

export const SystemPromptOptions = Type.Object({
  /** Replaces the default role text (SYSTEM.md and --system-prompt still win over it). */
  role: Type.Optional(Type.String()),
  /** Text added after the project instructions (before APPEND_SYSTEM.md and --append-system-prompt). */
  append: Type.Optional(Type.String()),
  /** Extra guidelines, one per item. */
  guidelines: Type.Array(Type.String(), { default: [] }),
  /** List the tools, one line each (their `promptSnippet`), in the system prompt. Off by default: the tool definitions sent with every request carry the same. */
  toolList: Type.Boolean({ default: false }),
  /** Point the model at coil's own docs/ folder. */
  docs: Type.Boolean({ default: true }),
  /** Put the current date in the last block. */
  date: Type.Boolean({ default: true }),
});

/** The Services entries this plugin reads, declared structurally (plugins never import each other). */

/** Files read for the prompt, by path: read again only when their size or mtime changes (one stat a prompt). */
const fileCache = new Map<string, { mtimeMs: number; size: number; text: string }>();

function readText(path: string): string | undefined {
  try {
    const st = statSync(path);
    if (!st.isFile()) return undefined;
    const hit = fileCache.get(path);
    if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.text;
    const text = readFileSync(path, "utf8");
    fileCache.set(path, { mtimeMs: st.mtimeMs, size: st.size, text });
    return text;
  } catch {
    fileCache.delete(path);
    return undefined;
  }
}

/** Same length and the same items (compared with ===, or field by field for plain objects). */
function sameList(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((x, i) => {
    const y = b[i];
    if (x === y) return true;
    if (!x || !y || typeof x !== "object" || typeof y !== "object") return false;
    const kx = Object.keys(x);
    return (
      kx.length === Object.keys(y).length &&
      kx.every((k) => {
        const vx = (x as Record<string, unknown>)[k];
        const vy = (y as Record<string, unknown>)[k];
        return vx === vy || (Array.isArray(vx) && Array.isArray(vy) && sameList(vx, vy));
      })
    );
  });
}

function firstLine(text: string): string {
  const line =
    text
      .split("\n")
      .find((l) => l.trim())
      ?.trim() ?? "";
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

export default definePlugin({
  id: "system-prompt",
  description: "Assembles the system prompt: role, tools, guidelines, docs, skills, project instructions",
  options: SystemPromptOptions,
  setup(ctx) {
    const o = ctx.options;
    ctx.flags.register({
      name: "system-prompt",
      type: "string",
      valueName: "text|file",
      description: "replace the role part of the system prompt (text, or a file to read)",
    });
    ctx.flags.register({
      name: "append-system-prompt",
      type: "string",
      valueName: "text|file",
      description: "append text (or a file's content) to the system prompt",
    });

    // The files below are looked up once per prompt (agent_start forgets them): the turns of a run stat
    // nothing, and a file the user edits or creates between prompts is read at the next one. The project
    // root is found once (a walk up to `/` for `.git`).
    let perPrompt = new Map<string, string | undefined>();
    ctx.on("agent_start", () => {
      perPrompt = new Map();
    });
    const oncePerPrompt = (key: string, read: () => string | undefined): string | undefined => {
      if (!perPrompt.has(key)) perPrompt.set(key, read());
      return perPrompt.get(key);
    };
    let root: string | undefined;
    const projectDir = () => {
      root ??= locationsOf(ctx).projectRoot;
      return root;
    };
    const flagText = (name: string): string | undefined => {
      const v = ctx.flags.get(name);
      if (typeof v !== "string" || !v) return undefined;
      const path = resolve(ctx.cwd, v);
      return (v.length < 4096 && readText(path)) || v;
    };
    const home = () => locationsOf(ctx).coilHome;
    /**
     * Where `SYSTEM.md` / `APPEND_SYSTEM.md` are looked for, first found wins: `.coil/` at the project root,
     * Pi's `.pi/` in the working directory (as Pi looks), `$COIL_HOME`, Pi's `~/.pi/agent` (`compat.pi`).
     */
    const places = (name: string) => {
      const pi = ctx.services.get("skills")?.compat.pi !== false;
      return [
        join(projectDir(), ".coil", name),
        ...(pi ? [join(ctx.cwd, ".pi", name)] : []),
        join(home(), name),
        ...(pi ? [join(locationsOf(ctx).piAgentDir, name)] : []),
      ];
    };
    const layeredFile = (name: string) => places(name).find((f) => readText(f) !== undefined);
    const layered = (name: string) => {
      for (const file of places(name)) {
        const text = readText(file);
        if (text !== undefined) return text;
      }
      return undefined;
    };
    addDoctorSection(ctx, {
      title: "system prompt",
      report: () => {
        const role = ctx.flags.get("system-prompt") ? "--system-prompt" : layeredFile("SYSTEM.md");
        const append = layeredFile("APPEND_SYSTEM.md");
        return [
          `role: ${role ?? (o.role ? "the role option" : "coil's built-in role")}`,
          `append: ${[o.append ? "the append option" : "", append ?? ""].filter(Boolean).join(", ") || "nothing"}`,
          `SYSTEM.md and APPEND_SYSTEM.md are looked for in, first found wins: ${places("SYSTEM.md")
            .map((f) => dirname(f))
            .join(", ")}`,
        ].join("\n");
      },
    });

    let docs: { dir: string; files: string[] } | undefined | null = null;
    const docsInfo = () => {
      if (docs !== null) return docs;
      const dir = packageRoot() && join(packageRoot()!, "docs");
      let files: string[] = [];
      try {
        files = dir
          ? readdirSync(dir)
              .filter((f) => f.endsWith(".md"))
              .sort()
          : [];
      } catch {
        files = [];
      }
      docs = dir && files.length ? { dir, files } : undefined;
      return docs;
    };

    const toolInfo = (spec: ToolSpec): ToolInfo => {
      const def = ctx.tools.get(spec.name);
      return {
        name: spec.name,
        snippet: def?.promptSnippet?.trim() || `${spec.name}: ${firstLine(spec.description)}`,
        guidelines: def?.promptGuidelines ?? [],
      };
    };

    /** The blocks for a request, from what is available right now. Exposed for tests through the service. */
    const build = (request: ModelRequest) => {
      const tools = request.tools.map(toolInfo);
      const canRead = tools.some((t) => t.name === "read" || t.name === "bash");
      const skillsService = ctx.services.get("skills");
      // The skills plugin's index keeps to its budget (descriptions cut, the whole index capped).
      const index = canRead && skillsService ? skillsService.index() : undefined;
      const skills: SkillEntry[] = index?.skills ?? [];
      const contextService = ctx.services.get("context-files");
      const project: ProjectFile[] = contextService
        ? contextService.files().map((f) => ({ path: f.path, content: f.content }))
        : [];
      const role =
        oncePerPrompt("role", () => flagText("system-prompt") ?? layered("SYSTEM.md")) ?? o.role ?? DEFAULT_ROLE;
      const append = [
        o.append ?? "",
        oncePerPrompt("append", () => layered("APPEND_SYSTEM.md")) ?? "",
        oncePerPrompt("append-flag", () => flagText("append-system-prompt")) ?? "",
      ];
      const input: PromptInput = {
        role,
        tools,
        toolList: o.toolList,
        guidelines: o.guidelines,
        docs: o.docs ? docsInfo() : undefined,
        skills,
        skillsLevel: index?.level,
        skillsSearch:
          index?.searchTool && request.tools.some((t) => t.name === index.searchTool) ? index.searchTool : undefined,
        project,
        append,
        date: o.date ? localDate() : undefined,
        cwd: ctx.cwd,
        foreign: request.system,
      };
      // Nothing changed since the last request: the same blocks (same object), not a rebuilt copy.
      const prev = last?.input;
      const same =
        prev &&
        prev.role === input.role &&
        prev.date === input.date &&
        prev.docs === input.docs &&
        sameList(prev.append, input.append) &&
        sameList(prev.tools, input.tools) &&
        sameList(prev.skills, input.skills) &&
        prev.skillsLevel === input.skillsLevel &&
        prev.skillsSearch === input.skillsSearch &&
        sameList(prev.project, input.project) &&
        sameList(prev.foreign, input.foreign);
      if (!same) last = { input, blocks: assemble(input) };
      return last!.blocks;
    };
    let last: { input: PromptInput; blocks: SystemBlock[] } | undefined;

    // LATE: plugins that filter tools (plan mode, active tools) run before, so the prompt matches
    // the tools the provider really gets.
    ctx.tap("before_request", (request) => ({ ...request, system: build(request) }), { stage: "LATE" });
  },
});
