/**
 * Finding and validating skills in the Agent Skills format: `<dir>/<name>/SKILL.md` with YAML front
 * matter (`name`, `description`, optional `license`, `compatibility`, `metadata`, `allowed-tools`,
 * `disable-model-invocation`). Invalid skills are returned as problems with the reason; they never
 * stop the others from loading.
 */
import { readdirSync, readFileSync, realpathSync, statSync, type Dirent } from "node:fs";
import { basename, dirname, join } from "node:path";
import { splitFrontMatter } from "../../lib/front-matter.js";

export type SkillSource = "project" | "user" | "package" | "builtin" | "path";

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
}

export const NAME_MAX = 64;
export const DESCRIPTION_MAX = 1024;
const NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_DEPTH = 4;

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
  const folder = basename(dir);
  let given = data.name;
  if (given === undefined || given === null || given === "") {
    given = folder;
    warnings.push(`front matter has no 'name'; it is called by its folder's name '${folder}'`);
  }
  if (typeof given !== "string") return fail(`'name' must be a string, not ${typeof given}`);
  const name = given.trim();
  if (name.length > NAME_MAX) return fail(`'name' is ${name.length} characters; at most ${NAME_MAX} are allowed`);
  if (/[\s/]/.test(name))
    return fail(
      `'name' '${name}' has a space or '/', so it cannot be a /skill: command; use lowercase letters, digits and hyphens`,
    );
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
  if (folder !== name && data.name) warnings.push(`its name '${name}' differs from its folder '${folder}'`);
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

/**
 * Every SKILL.md below `dir` (a folder holding a SKILL.md is a skill; its own sub-folders are its
 * resources), down to MAX_DEPTH levels. Folders below that depth and dot-folders are not searched for
 * skills, but when they hold a SKILL.md the place is added to `skipped`, never dropped silently.
 */
export function findSkillFiles(dir: string, depth = 0, skipped: SkippedPlace[] = []): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  if (depth > 0 && entries.some((e) => e.name === "SKILL.md" && (e.isFile() || e.isSymbolicLink())))
    return [join(dir, "SKILL.md")];
  const out: string[] = [];
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (e.name === "node_modules" || e.name === ".git") continue;
    const path = join(dir, e.name);
    if (!(e.isDirectory() || (e.isSymbolicLink() && isDir(path)))) continue;
    if (e.name.startsWith(".")) {
      if (holdsSkill(path, PEEK_DEPTH))
        skipped.push({
          dir: path,
          reason:
            "found SKILL.md files in a dot-folder, which is not searched; move or link them into the skills folder",
        });
    } else if (depth >= MAX_DEPTH) {
      if (holdsSkill(path, PEEK_DEPTH))
        skipped.push({
          dir: path,
          reason: `found SKILL.md files below the search depth (${MAX_DEPTH} levels); link the skill folders higher up, or add the folder to the skills plugin's paths option`,
        });
    } else out.push(...findSkillFiles(path, depth + 1, skipped));
  }
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
      const files = findSkillFiles(r.dir, 0, skipped);
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
