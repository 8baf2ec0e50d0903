/**
 * Prompt templates: markdown files with optional front matter (`description`, `argument-hint`, and
 * Claude Code's `allowed-tools` and `model`) that become `/name args` commands, and where they are found.
 */
import { readdirSync, type Dirent } from "node:fs";
import { join } from "node:path";
import { splitFrontMatter } from "../../lib/front-matter.js";
import { isDir } from "../../lib/claude-plugins.js";
import { packageDirs as sharedPackageDirs, type ProjectPackages } from "../../lib/package-dirs.js";

export { expandTemplate, splitArgs } from "../../lib/command-body.js";

export interface PromptTemplate {
  /**
   * The command name, as Claude Code names it: `[<namespace>:][<folder>:]<file name without .md>`
   * (`.claude/commands/tools/api-scaffold.md` is `tools:api-scaffold`; a plugin's is `plugin:name`).
   */
  name: string;
  description: string;
  argumentHint?: string;
  body: string;
  file: string;
  source: string;
  /** The subfolder a `.claude/commands` template sits in (`frontend` for `frontend/component.md`), shown as Claude Code shows it. */
  folder?: string;
  /** `model` front matter: the model for this command's run only. */
  model?: string;
  /** `allowed-tools` front matter as written (a string or a list). */
  allowedTools?: unknown;
  /** Front matter keys coil reads nothing from (Claude Code's per-command `hooks`), for a note. */
  ignored?: string[];
}

export interface TemplateProblem {
  file: string;
  reason: string;
}

/** A folder of templates. */
export interface TemplateDir {
  dir: string;
  /** `project`, `user`, `package`, `builtin`, `path`, or a caller's own label. */
  source: string;
  /** Look in subfolders too (Claude Code's `.claude/commands/**.md`); a subfolder becomes the template's `folder`. */
  recursive?: boolean;
  /** Prefix of every command name from this folder (`plugin:command`, as Claude Code names plugin commands). */
  namespace?: string;
  /** Whether `` !`cmd` `` lines of these templates may run: false for an untrusted project's files. */
  trusted: boolean;
  /** `${NAME}` values replaced in the bodies (e.g. `CLAUDE_PLUGIN_ROOT` for a Claude Code plugin's commands). */
  vars?: Record<string, string>;
  /** Only these files of the folder (a Claude Code plugin.json naming command files one by one). */
  files?: string[];
}

/** A command name's part: letters, digits, `.`, `_`, `-`, and `:` inside (Claude Code accepts `git:commit.md` as `/git:commit`). */
const NAME = /^[A-Za-z0-9](?:[A-Za-z0-9_.:-]*[A-Za-z0-9_.-])?$/;

export function parseTemplate(
  file: string,
  text: string,
  source: string,
  where: { folder?: string; namespace?: string } = {},
): PromptTemplate | TemplateProblem {
  const base = file.replace(/^.*[\\/]/, "").replace(/\.md$/i, "");
  if (!NAME.test(base) || base.includes("::"))
    return { file, reason: `'${base}' cannot be a command name (letters, digits, '.', '_', '-' and ':' inside)` };
  if (where.folder !== undefined && !where.folder.split(":").every((f) => NAME.test(f)))
    return {
      file,
      reason: `folder '${where.folder}' cannot be part of a command name (letters, digits, '.', '_' and '-')`,
    };
  if (where.namespace !== undefined && !NAME.test(where.namespace))
    return { file, reason: `'${where.namespace}' cannot be a command namespace (letters, digits, '.', '_' and '-')` };
  const { data = {}, body, error } = splitFrontMatter(text);
  if (error) return { file, reason: error };
  const description =
    typeof data.description === "string" && data.description.trim() ? data.description.trim() : firstLine(body);
  const hint = hintText(data["argument-hint"]);
  const model =
    typeof data.model === "string" && data.model.trim() && data.model.trim() !== "inherit"
      ? data.model.trim()
      : undefined;
  const allowed = data["allowed-tools"];
  const ignored = IGNORED.filter((k) => data[k] !== undefined && data[k] !== null);
  return {
    name: [where.namespace, where.folder, base].filter(Boolean).join(":"),
    description,
    ...(hint ? { argumentHint: hint } : {}),
    body: body.trim(),
    file,
    source,
    ...(where.folder ? { folder: where.folder } : {}),
    ...(model ? { model } : {}),
    ...(allowed !== undefined && allowed !== null && allowed !== "" ? { allowedTools: allowed } : {}),
    ...(ignored.length ? { ignored } : {}),
  };
}

/** Front matter Claude Code reads that coil does not act on. */
const IGNORED = ["hooks", "disable-model-invocation"];

/** `argument-hint` as written; YAML reads `[file]` as a list, which is put back in brackets. */
function hintText(value: unknown): string | undefined {
  if (typeof value === "string") return value.trim() || undefined;
  if (Array.isArray(value))
    return value.map((v) => (Array.isArray(v) ? `[${v.join(", ")}]` : `[${String(v)}]`)).join(" ") || undefined;
  return undefined;
}

function firstLine(body: string): string {
  const line =
    body
      .split("\n")
      .map((l) => l.replace(/^#+\s*/, "").trim())
      .find(Boolean) ?? "";
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
}

/** Folders contributed by packages under `$COIL_HOME/packages/node_modules` (`coil.promptTemplates`, else `prompt-templates/`). */
export const packageDirs = (home: string, project?: ProjectPackages): string[] =>
  sharedPackageDirs(home, "promptTemplates", "prompt-templates", project);

/** `*.md` files of one folder (README.md excluded), sorted. */
export function templateFiles(dir: string): string[] {
  return listTemplateFiles(dir, false).map((f) => f.file);
}

/** Deepest subfolder looked into for `recursive` folders. */
const MAX_DEPTH = 8;

/**
 * `*.md` files (README.md excluded) of a folder, sorted, the folder's own files first; with `recursive`,
 * then those of its subfolders (dot-folders skipped), each with its subfolder path joined by `:` (`a:b`).
 */
export function listTemplateFiles(dir: string, recursive: boolean): { file: string; folder?: string }[] {
  const out: { file: string; folder?: string }[] = [];
  const walk = (path: string, folder: string | undefined, depth: number) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      return;
    }
    const subdirs: string[] = [];
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const full = join(path, e.name);
      const dir = e.isDirectory() || (e.isSymbolicLink() && isDir(full));
      if (dir) {
        if (recursive && !e.name.startsWith(".") && depth < MAX_DEPTH) subdirs.push(e.name);
      } else if ((e.isFile() || e.isSymbolicLink()) && /\.md$/i.test(e.name) && !/^readme\.md$/i.test(e.name)) {
        out.push({ file: full, ...(folder ? { folder } : {}) });
      }
    }
    for (const name of subdirs) walk(join(path, name), folder ? `${folder}:${name}` : name, depth + 1);
  };
  walk(dir, undefined, 0);
  return out;
}

/** Replace `${NAME}` for each given name (unknown names are left as written). */
export function expandVars(body: string, vars: Record<string, string> | undefined): string {
  if (!vars) return body;
  return body.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) =>
    Object.hasOwn(vars, name) ? vars[name]! : whole,
  );
}

export { coilHome, packageRoot } from "../../lib/paths.js";
export { splitFrontMatter };
