/**
 * Claude Code's settings files, read in one place: `~/.claude/settings.json` (user), and at the project
 * root `.claude/settings.json` (project, shared) and `.claude/settings.local.json` (local, yours). The
 * permission gate reads `permissions`, boot reads `env` and `model`, hooks-claude reads `hooks`. A file is
 * parsed once per state (size and modification time). Project files are text anyone can commit: what
 * they may change follows the project trust rules (docs/safety.md): restrictions always apply, what
 * loosens (allow rules, a mode, extra directories, environment variables) only in a trusted project.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "./locations.js";
import { userHome } from "./locations.js";

export type SettingsScope = "user" | "project" | "local";

export interface SettingsFile {
  scope: SettingsScope;
  path: string;
  exists: boolean;
  /** The parsed object (absent when the file is missing or broken). */
  data?: Record<string, unknown>;
  /** Why it could not be read (not JSON, not an object). */
  error?: string;
}

const cache = new Map<string, { key: string; read: Omit<SettingsFile, "scope" | "path"> }>();

/** A settings-shaped JSON file (also a plugin's hooks.json), parsed once per state. */
export function readSettingsFile(path: string): Omit<SettingsFile, "scope" | "path"> {
  let key: string;
  try {
    const st = statSync(path);
    key = `${st.size}:${st.mtimeMs}:${st.ino}`;
  } catch {
    cache.delete(path);
    return { exists: false };
  }
  const hit = cache.get(path);
  if (hit?.key === key) return hit.read;
  let read: Omit<SettingsFile, "scope" | "path">;
  try {
    const data = JSON.parse(readFileSync(path, "utf8")) as unknown;
    read =
      data && typeof data === "object" && !Array.isArray(data)
        ? { exists: true, data: data as Record<string, unknown> }
        : { exists: true, error: "not a JSON object" };
  } catch (error) {
    read = { exists: true, error: (error as Error).message };
  }
  cache.set(path, { key, read });
  return read;
}

/** The user's home as Claude Code sees it (lib/locations.ts). */
export { userHome };

/** The three files, lowest precedence first: user, project, local (a project at the home folder has no project files of its own). */
export function claudeSettingsFiles(cwd: string, home = userHome()): SettingsFile[] {
  const user = join(home, ".claude", "settings.json");
  const root = projectRoot(cwd);
  const files: { scope: SettingsScope; path: string }[] = [
    { scope: "user", path: user },
    { scope: "project", path: join(root, ".claude", "settings.json") },
    { scope: "local", path: join(root, ".claude", "settings.local.json") },
  ];
  return files.filter((f, i) => i === 0 || f.path !== user).map((f) => ({ ...f, ...readSettingsFile(f.path) }));
}

/** Settings of a file, for a key, when it has the right shape. */
const objectAt = (f: SettingsFile, key: string): Record<string, unknown> | undefined => {
  const v = f.data?.[key];
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
};

export interface ClaudeEnv {
  /** Variables to set, with the file each came from (local over project over user). */
  vars: Record<string, { value: string; file: string }>;
  /** Files whose `env` was not applied (an untrusted project), for a notice. */
  skipped: string[];
}

/** `env` of the settings files: the user's always, the project's only when it is trusted. */
export function claudeEnv(cwd: string, trusted: boolean, home = userHome()): ClaudeEnv {
  const vars: ClaudeEnv["vars"] = {};
  const skipped: string[] = [];
  for (const f of claudeSettingsFiles(cwd, home)) {
    const env = objectAt(f, "env");
    if (!env) continue;
    if (f.scope !== "user" && !trusted) {
      skipped.push(f.path);
      continue;
    }
    for (const [k, v] of Object.entries(env)) {
      if (typeof v === "string" || typeof v === "number" || typeof v === "boolean")
        vars[k] = { value: String(v), file: f.path };
    }
  }
  return { vars, skipped };
}

/**
 * Set the `env` of the settings files in `env` (process.env): variables already set there win (the
 * environment coil was started with is the more specific). Returns what was set and what was skipped.
 */
export function applyClaudeEnv(
  cwd: string,
  trusted: boolean,
  env: Record<string, string | undefined> = process.env,
): { set: string[]; kept: string[]; skipped: string[] } {
  const { vars, skipped } = claudeEnv(cwd, trusted, userHome(env));
  const set: string[] = [];
  const kept: string[] = [];
  for (const [k, { value }] of Object.entries(vars)) {
    if (env[k] !== undefined && env[k] !== value) kept.push(k);
    else if (env[k] === undefined) {
      env[k] = value;
      set.push(k);
    }
  }
  return { set, kept, skipped };
}

/**
 * The model Claude Code would start with when coil's own configuration names none: `ANTHROPIC_MODEL`,
 * else the `model` of the settings files (local over project over user). Claude Code's aliases map onto
 * Anthropic models (`opus`, `sonnet`, `haiku`; `sonnet[1m]` and `opusplan` by their model); `default`
 * means Claude Code's own choice and is left to coil's.
 */
export function claudeModel(
  cwd: string,
  env: Record<string, string | undefined> = process.env,
): { model: string; source: string; note?: string } | undefined {
  const pick = (raw: string, source: string) => {
    const value = raw.trim();
    if (!value || value === "default") return undefined;
    let id = value.replace(/\[1m\]$/i, "");
    let note =
      id !== value ? `${value}: the 1M-token context window is the provider's to offer; ${id} is used` : undefined;
    if (id === "opusplan") {
      id = "opus";
      note = "opusplan (Opus while planning, Sonnet after) is not a coil mode; opus is used";
    }
    return { model: id.includes("/") ? id : `anthropic/${id}`, source, ...(note ? { note } : {}) };
  };
  const fromEnv = env.ANTHROPIC_MODEL ? pick(env.ANTHROPIC_MODEL, "ANTHROPIC_MODEL") : undefined;
  if (fromEnv) return fromEnv;
  const files = claudeSettingsFiles(cwd, userHome(env)).reverse();
  for (const f of files) {
    const m = f.data?.model;
    if (typeof m === "string") return pick(m, f.path);
  }
  return undefined;
}
