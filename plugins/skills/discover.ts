/**
 * Finding and validating skills in the Agent Skills format: `<dir>/<name>/SKILL.md` with YAML front
 * matter (`name`, `description`, optional `license`, `compatibility`, `metadata`, `allowed-tools`,
 * `disable-model-invocation`). Invalid skills are returned as problems with the reason; they never
 * stop the others from loading.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
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
}

export const NAME_MAX = 64;
export const DESCRIPTION_MAX = 1024;
const NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_DEPTH = 4;


/** Parse and check one SKILL.md. */
export function parseSkill(file: string, text: string, source: SkillSource): SkillInfo | SkillProblem {
  const { data, error } = splitFrontMatter(text);
  const fail = (reason: string): SkillProblem => ({ file, reason, names: namesOf(file, data?.name) });
  if (error) return fail(error);
  if (!data) return fail("no front matter: SKILL.md must start with '---', then 'name:' and 'description:', then '---'");
  const warnings: string[] = [];
  const name = data.name;
  if (name === undefined || name === null || name === "") return fail("front matter has no 'name'");
  if (typeof name !== "string") return fail(`'name' must be a string, not ${typeof name}`);
  if (name.length > NAME_MAX) return fail(`'name' is ${name.length} characters; at most ${NAME_MAX} are allowed`);
  if (!NAME_PATTERN.test(name)) return fail(`'name' '${name}' must be lowercase letters, digits and single hyphens, not starting or ending with a hyphen`);
  const description = data.description;
  if (description === undefined || description === null || (typeof description === "string" && !description.trim())) return fail("front matter has no 'description' (required: what the skill does and when to use it)");
  if (typeof description !== "string") return fail(`'description' must be a string, not ${typeof description}`);
  if (description.length > DESCRIPTION_MAX) return fail(`'description' is ${description.length} characters; at most ${DESCRIPTION_MAX} are allowed`);
  const dir = dirname(file);
  if (basename(dir) !== name) warnings.push(`its name '${name}' differs from its folder '${basename(dir)}'`);
  const str = (key: string): string | undefined => {
    const v = data[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === "string") return v;
    warnings.push(`'${key}' must be a string; ignored`);
    return undefined;
  };
  const skill: SkillInfo = { name, description: description.trim(), file, dir, source, disableModelInvocation: false, warnings };
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
  else if (tools !== undefined && tools !== null) warnings.push("'allowed-tools' must be a list or a space-separated string; ignored");
  const disable = data["disable-model-invocation"];
  if (typeof disable === "boolean") skill.disableModelInvocation = disable;
  else if (disable !== undefined && disable !== null) warnings.push("'disable-model-invocation' must be true or false; ignored");
  return skill;
}

/** The names a skill that failed to load may be asked for by: its front matter name, then its folder's. */
function namesOf(file: string, name?: unknown): string[] {
  const names = [typeof name === "string" ? name.trim() : "", basename(dirname(file))];
  return [...new Set(names.filter((n) => n && !/\s/.test(n)))];
}

/** Every SKILL.md below `dir` (a folder holding a SKILL.md is a skill; its own sub-folders are its resources). */
export function findSkillFiles(dir: string, depth = 0): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  if (depth > 0 && entries.some((e) => e.name === "SKILL.md" && (e.isFile() || e.isSymbolicLink()))) return [join(dir, "SKILL.md")];
  if (depth >= MAX_DEPTH) return [];
  const out: string[] = [];
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (e.name.startsWith(".") || e.name === "node_modules") continue;
    if (e.isDirectory() || (e.isSymbolicLink() && isDir(join(dir, e.name)))) out.push(...findSkillFiles(join(dir, e.name), depth + 1));
  }
  return out;
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

/** Scans the roots; a SKILL.md is re-read only when its size or mtime changed. First name wins. */
export class SkillCatalog {
  private readonly cache = new Map<string, Cached>();
  skills: SkillInfo[] = [];
  problems: SkillProblem[] = [];

  constructor(private readonly roots: () => SkillRoot[]) {}

  scan(): this {
    const skills: SkillInfo[] = [];
    const problems: SkillProblem[] = [];
    const byName = new Map<string, SkillInfo>();
    const seenFiles = new Set<string>();
    for (const r of this.roots()) {
      for (const file of findSkillFiles(r.dir)) {
        if (seenFiles.has(file)) continue;
        seenFiles.add(file);
        const result = this.read(file, r.source);
        if ("reason" in result) {
          problems.push(result);
          continue;
        }
        const twin = byName.get(result.name);
        if (twin) {
          problems.push({ file, reason: `skill '${result.name}' is already defined by ${twin.file}, which takes precedence; this one is ignored` });
          continue;
        }
        byName.set(result.name, result);
        skills.push(result);
      }
    }
    this.skills = skills;
    this.problems = problems;
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

export { coilHome, packageRoot } from "../../lib/paths.js";
export { splitFrontMatter };
