/**
 * Finding and validating skills in the Agent Skills format: `<dir>/<name>/SKILL.md` with YAML front
 * matter (`name`, `description`, optional `license`, `compatibility`, `metadata`, `allowed-tools`,
 * `disable-model-invocation`). Invalid skills are returned as problems with the reason; they never
 * stop the others from loading.
 */
import { readdirSync, readFileSync, realpathSync, statSync, type Dirent } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import ignore, { type Ignore } from "ignore";
import { splitFrontMatter } from "../../lib/front-matter.js";

/** Where a skill was found; `extension`: a place a plugin added at run time (a Pi extension's `resources_discover`). */
export type SkillSource = "project" | "user" | "package" | "builtin" | "path" | "extension";

export interface SkillInfo {
  name: string;
  description: string;
  /** Absolute path of SKILL.md. */
  file: string;
  /** The skill's folder (its resources are relative to it). */
  dir: string;
  source: SkillSource;
  license?: string;
  compatibility?: string;
  metadata?: Record<string, unknown>;
  allowedTools?: string[];
  /** Only `/skill:name` loads it; it is left out of the index the model sees. */
  disableModelInvocation: boolean;
  /** Non-fatal remarks (name differs from the folder, a field of the wrong type was ignored). */
  warnings: string[];
}

export interface SkillProblem {
  file: string;
  reason: string;
  /** Names a user may call it by (`/skill:<name>`): its front matter name, if any, and its folder's. */
  names?: string[];
}

export interface SkillRoot {
  dir: string;
  source: SkillSource;
  /** The family the place comes from (`claude`, `pi`, `agents`), when the `compat` option gates it. */
  family?: string;
  /** The `.md` files directly in `dir` are skills too (Pi's `~/.pi/agent/skills` and `.pi/skills`). */
  rootFiles?: boolean;
  /** Only these skill files (a path naming one skill file, as Pi's settings.json `skills` may). */
  files?: string[];
  /** Who added the place at run time (`Pi extension <name>`), shown by /skills and coil doctor. */
  addedBy?: string;
}

export const NAME_MAX = 64;
export const DESCRIPTION_MAX = 1024;
const NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * Parse and check one SKILL.md. Liberal where skills in the wild differ from the spec: a missing `name`
 * takes the folder's, an upper-case or otherwise irregular name, a name unlike its folder's and a
 * description over 1,024 characters load with a warning. Refused: no description, a name that cannot
 * be a command (whitespace, `/`, over 64 characters), front matter that cannot be read at all.
 */
export function parseSkill(file: string, text: string, source: SkillSource): SkillInfo | SkillProblem {
  const { data, error, note } = splitFrontMatter(text);
  const fail = (reason: string): SkillProblem => ({ file, reason, names: namesOf(file, data?.name) });
  if (error) return fail(error);
  if (!data)
    return fail("no front matter: SKILL.md must start with '---', then 'name:' and 'description:', then '---'");
  const warnings: string[] = note ? [note] : [];
  const dir = dirname(file);
  // A skill is a folder's SKILL.md, or (in Pi's own folders) a `.md` file named like the skill.
  const single = basename(file) !== "SKILL.md";
  const folder = single ? basename(file).replace(/\.md$/i, "") : basename(dir);
  const by = single ? "file" : "folder";
  let given = data.name;
  if (given === undefined || given === null || given === "") {
    given = folder;
    warnings.push(`front matter has no 'name'; it is called by its ${by}'s name '${folder}'`);
  }
  if (typeof given !== "string") return fail(`'name' must be a string, not ${typeof given}`);
  let name = given.trim();
  // Claude Code and Pi load a skill whose name cannot be a command (`PDF Tools`) by its folder's name.
  if (/[\s/]/.test(name) || name.length > NAME_MAX) {
    const why = name.length > NAME_MAX ? `is ${name.length} characters (at most ${NAME_MAX})` : "has a space or '/'";
    if (/[\s/]/.test(folder) || folder.length > NAME_MAX || !folder)
      return fail(`'name' '${name}' ${why}, and so does its ${by}'s name, so it cannot be a /skill: command`);
    warnings.push(`its name '${name}' ${why}, so it cannot be a command; it is called by its ${by}'s name '${folder}'`);
    name = folder;
  }
  if (!NAME_PATTERN.test(name))
    warnings.push(
      `'name' '${name}' should be lowercase letters, digits and single hyphens (Agent Skills spec); loaded as it is`,
    );
  const description = data.description;
  if (description === undefined || description === null || (typeof description === "string" && !description.trim()))
    return fail("front matter has no 'description' (required: what the skill does and when to use it)");
  if (typeof description !== "string") return fail(`'description' must be a string, not ${typeof description}`);
  if (description.length > DESCRIPTION_MAX)
    warnings.push(
      `'description' is ${description.length} characters, over the spec's ${DESCRIPTION_MAX}; loaded, and cut in the prompt's index`,
    );
  if (folder !== name && data.name) warnings.push(`its name '${name}' differs from its ${by} '${folder}'`);
  const str = (key: string): string | undefined => {
    const v = data[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === "string") return v;
    warnings.push(`'${key}' must be a string; ignored`);
    return undefined;
  };
  const skill: SkillInfo = {
    name,
    description: description.trim(),
    file,
    dir,
    source,
    disableModelInvocation: false,
    warnings,
  };
  const license = str("license");
  if (license !== undefined) skill.license = license;
  const compatibility = str("compatibility");
  if (compatibility !== undefined) skill.compatibility = compatibility;
  const metadata = data.metadata;
  if (metadata !== undefined && metadata !== null) {
    if (typeof metadata === "object" && !Array.isArray(metadata)) skill.metadata = metadata as Record<string, unknown>;
    else warnings.push("'metadata' must be a mapping; ignored");
  }
  const tools = data["allowed-tools"];
  if (typeof tools === "string") skill.allowedTools = tools.split(/[\s,]+/).filter(Boolean);
  else if (Array.isArray(tools) && tools.every((t) => typeof t === "string")) skill.allowedTools = tools as string[];
  else if (tools !== undefined && tools !== null)
    warnings.push("'allowed-tools' must be a list or a space-separated string; ignored");
  const disable = data["disable-model-invocation"];
  if (typeof disable === "boolean") skill.disableModelInvocation = disable;
  else if (disable !== undefined && disable !== null)
    warnings.push("'disable-model-invocation' must be true or false; ignored");
  return skill;
}

/** The names a skill that failed to load may be asked for by: its front matter name, then its folder's. */
function namesOf(file: string, name?: unknown): string[] {
  const names = [typeof name === "string" ? name.trim() : "", basename(dirname(file))];
  return [...new Set(names.filter((n) => n && !/\s/.test(n)))];
}

/** A place searched for skills that held SKILL.md files coil did not load, and why (shown by /skills and coil doctor). */
export interface SkippedPlace {
  dir: string;
  reason: string;
}

/** How far below a skipped folder coil looks, only to say that skills are there. */
const PEEK_DEPTH = 6;
/** Ignore files honoured in every folder searched, as Pi honours them. */
const IGNORE_FILES = [".gitignore", ".ignore", ".fdignore"];

/** `.gitignore`-style rules found so far, each relative to the searched root. */
type Rules = { ig: Ignore; root: string };

function addIgnoreFiles(rules: Rules, dir: string): void {
  const prefix = relative(rules.root, dir).split(sep).filter(Boolean).join("/");
  for (const name of IGNORE_FILES) {
    let text: string;
    try {
      text = readFileSync(join(dir, name), "utf8");
    } catch {
      continue;
    }
    const lines = text
      .split(/\r?\n/)
      .map((line) => scoped(line, prefix))
      .filter((line): line is string => line !== undefined);
    if (lines.length) rules.ig.add(lines);
  }
}

/** One ignore-file line made relative to the searched root (a line of `a/b/.gitignore` applies below `a/b/`). */
function scoped(line: string, prefix: string): string | undefined {
  if (!line.trim() || (line.startsWith("#") && !line.startsWith("\\#"))) return undefined;
  const negated = line.startsWith("!");
  let pattern = negated ? line.slice(1) : line.startsWith("\\!") ? line.slice(1) : line;
  if (pattern.startsWith("/")) pattern = pattern.slice(1);
  else if (prefix && !pattern.slice(0, -1).includes("/")) pattern = `**/${pattern}`;
  const full = prefix ? `${prefix}/${pattern}` : pattern;
  return negated ? `!${full}` : full;
}

const ignored = (rules: Rules, path: string, dir: boolean) => {
  const rel = relative(rules.root, path).split(sep).join("/");
  return rel !== "" && !rel.startsWith("..") && rules.ig.ignores(dir ? `${rel}/` : rel);
};

/**
 * Every skill file below `dir`, by Pi's rules: a folder holding a SKILL.md is a skill (its own folders are
 * its resources, not searched), `dir` itself included; other folders are searched at any depth. Dot-folders,
 * `node_modules` and what `.gitignore`, `.ignore` and `.fdignore` files list are not searched; a dot-folder
 * holding a SKILL.md is added to `skipped`, never dropped silently. With `rootFiles` (Pi's own skill
 * folders), the `.md` files directly in `dir` are skills too. A folder reached twice (links) is searched once.
 */
export function findSkillFiles(dir: string, skipped: SkippedPlace[] = [], o: { rootFiles?: boolean } = {}): string[] {
  const rules: Rules = { ig: ignore(), root: dir };
  const seen = new Set<string>();
  const out: string[] = [];
  const walk = (path: string, top: boolean) => {
    const real = realOf(path);
    if (seen.has(real)) return;
    seen.add(real);
    let entries: Dirent[];
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      return;
    }
    addIgnoreFiles(rules, path);
    const skill = entries.find(
      (e) => e.name === "SKILL.md" && (e.isFile() || (e.isSymbolicLink() && isFile(join(path, e.name)))),
    );
    if (skill && !ignored(rules, join(path, skill.name), false)) {
      out.push(join(path, "SKILL.md"));
      return;
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (e.name === "node_modules" || e.name === ".git") continue;
      const full = join(path, e.name);
      const folder = e.isDirectory() || (e.isSymbolicLink() && isDir(full));
      if (!folder) {
        if (top && o.rootFiles && /\.md$/i.test(e.name) && e.name !== "SKILL.md" && !/^readme\.md$/i.test(e.name)) {
          if ((e.isFile() || isFile(full)) && !ignored(rules, full, false)) out.push(full);
        }
        continue;
      }
      if (ignored(rules, full, true)) continue;
      if (e.name.startsWith(".")) {
        if (holdsSkill(full, PEEK_DEPTH))
          skipped.push({
            dir: full,
            reason:
              "found SKILL.md files in a dot-folder, which is not searched (as in Pi); move or link them into the skills folder",
          });
        continue;
      }
      walk(full, false);
    }
  };
  walk(dir, true);
  return out;
}

/** Whether any SKILL.md lies at most `levels` folders below `dir` (for reporting only). */
function holdsSkill(dir: string, levels: number): boolean {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  if (entries.some((e) => e.name === "SKILL.md")) return true;
  if (levels <= 0) return false;
  return entries.some(
    (e) =>
      e.name !== "node_modules" &&
      e.name !== ".git" &&
      (e.isDirectory() || (e.isSymbolicLink() && isDir(join(dir, e.name)))) &&
      holdsSkill(join(dir, e.name), levels - 1),
  );
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export { packageDirs } from "../../lib/package-dirs.js";

interface Cached {
  key: string;
  result: SkillInfo | SkillProblem;
}

/** A skill not used because an earlier one has its name (first wins); shown by /skills. */
export interface ShadowedSkill {
  name: string;
  file: string;
  /** The SKILL.md that is used. */
  by: string;
}

/** Scans the roots; a SKILL.md is re-read only when its size or mtime changed. First name wins. */
export class SkillCatalog {
  private readonly cache = new Map<string, Cached>();
  skills: SkillInfo[] = [];
  problems: SkillProblem[] = [];
  shadowed: ShadowedSkill[] = [];
  skipped: SkippedPlace[] = [];
  /** The roots of the last scan, with how many skills each gave (for /skills and coil doctor). */
  searched: (SkillRoot & { found: number; exists: boolean })[] = [];
  /** How many times the roots were scanned (coil doctor shows it; a run scans at most once). */
  scans = 0;

  constructor(private readonly roots: () => SkillRoot[]) {}

  scan(): this {
    this.scans++;
    const skills: SkillInfo[] = [];
    const problems: SkillProblem[] = [];
    const shadowed: ShadowedSkill[] = [];
    const skipped: SkippedPlace[] = [];
    const searched: SkillCatalog["searched"] = [];
    const byName = new Map<string, SkillInfo>();
    const seenFiles = new Set<string>();
    for (const r of this.roots()) {
      const files = r.files ?? findSkillFiles(r.dir, skipped, { rootFiles: r.rootFiles });
      let found = 0;
      for (const file of files) {
        const real = realOf(file);
        if (seenFiles.has(real)) continue;
        seenFiles.add(real);
        const result = this.read(file, r.source);
        if ("reason" in result) {
          problems.push(result);
          continue;
        }
        const twin = byName.get(result.name);
        if (twin) {
          shadowed.push({ name: result.name, file, by: twin.file });
          continue;
        }
        byName.set(result.name, result);
        skills.push(result);
        found++;
      }
      searched.push({ ...r, found, exists: found > 0 || isDir(r.dir) });
    }
    Object.assign(this, { skills, problems, shadowed, skipped, searched });
    return this;
  }

  private read(file: string, source: SkillSource): SkillInfo | SkillProblem {
    let key: string;
    try {
      const st = statSync(file);
      key = `${st.size}:${st.mtimeMs}:${source}`;
    } catch (error) {
      return { file, reason: `cannot read it: ${(error as Error).message}`, names: namesOf(file) };
    }
    const hit = this.cache.get(file);
    if (hit?.key === key) return hit.result;
    let result: SkillInfo | SkillProblem;
    try {
      result = parseSkill(file, readFileSync(file, "utf8"), source);
    } catch (error) {
      result = { file, reason: `cannot read it: ${(error as Error).message}`, names: namesOf(file) };
    }
    this.cache.set(file, { key, result });
    return result;
  }
}

/** The real path (a skill linked from two places, e.g. ~/.claude/skills and ~/.agents/skills, is one skill). */
function realOf(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

export { coilHome, packageRoot } from "../../lib/paths.js";
export { splitFrontMatter };
