/**
 * Project trust: a project's `.coil/` code loads only once the user trusts that directory. Trust is
 * stored in `$COIL_HOME/trust.json`, keyed by the directory's real path and a hash of what would load
 * (every file under `.coil/` except sessions/, plans/ and node_modules/ folders, path plugins the project
 * preset names elsewhere, `.claude/settings*.json` hook commands, `.mcp.json` and Pi's `.pi/settings.json`); a change to any of them makes coil
 * ask again. Symlinks are followed and hashed by what they point to (and where); a link whose target
 * lies outside the project is never trusted from the prompt, only by `coil trust` or `--trust`.
 * See docs/safety.md. Asking the user and `coil trust` live in cli/trust.ts.
 */
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  writeFileSync,
  type Dirent,
} from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { resolvePreset } from "./preset.js";

type Store = Record<string, { hash: string; trustedAt: string }>;
/** Written by plugins while coil runs (never code), and installed packages (their lock file is hashed instead). */
const STATE_DIRS = new Set(["sessions", "plans"]);

/** The files that would load from `dir`, absolute and sorted (empty when the project has no `.coil/`). */
export function projectFiles(dir: string, home: string): string[] {
  const coil = join(dir, ".coil");
  // Claude Code hook settings are commands too (hooks-claude runs them), `.mcp.json` starts servers (mcp), and
  // Pi's `.pi/settings.json` picks the model and adds skill and prompt folders (lib/pi-settings.ts).
  const claude = [".claude/settings.json", ".claude/settings.local.json", ".mcp.json", ".pi/settings.json"]
    .map((f) => join(dir, f))
    .filter((f) => existsSync(f));
  if (!existsSync(coil) || resolve(coil) === resolve(home)) return claude;
  const walk = (d: string, realDir: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => {
      const path = join(d, e.name);
      const kind = kindOf(e, path);
      if (kind === "file") return [path];
      if (kind !== "directory" || (d === coil && STATE_DIRS.has(e.name)) || e.name === "node_modules") return [];
      const real = realpathSync(path);
      // A link back to a folder on the way here (or above it) would loop: skip it.
      return real === realDir || realDir.startsWith(real + sep) ? [] : walk(path, real);
    });
  const files = new Set([...walk(coil, realpathSync(coil)), ...claude]);
  try {
    const project = resolvePreset({ cwd: dir, home, trust: true }).entries;
    const base = new Set(resolvePreset({ cwd: dir, home, trust: false }).entries.map((e) => e.key));
    for (const e of project) if (e.kind === "path" && !base.has(e.key) && existsSync(e.key)) files.add(e.key);
  } catch {
    // a broken preset is still hashed by its bytes; loading it will report the error
  }
  return [...files].sort();
}

/** A directory entry's kind, following a symlink (a dangling link is neither). */
function kindOf(e: Dirent, path: string): "file" | "directory" | undefined {
  if (!e.isSymbolicLink()) return e.isFile() ? "file" : e.isDirectory() ? "directory" : undefined;
  try {
    const s = statSync(path);
    return s.isFile() ? "file" : s.isDirectory() ? "directory" : undefined;
  } catch {
    return undefined;
  }
}

/** The real path of a file when a symlink leads there (on the way or at the end), else undefined. */
function linkTarget(file: string): string | undefined {
  const real = realpathSync(file);
  return real === resolve(file) ? undefined : real;
}

const outside = (dir: string, real: string) => {
  const rel = relative(dir, real);
  return rel.startsWith("..") || isAbsolute(rel);
};

/** Files reached through a symlink whose real path lies outside `dir`, with that path. */
export function linksLeaving(dir: string, files: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of files) {
    const real = linkTarget(f);
    if (real !== undefined && outside(realpathSync(dir), real)) out.set(f, real);
  }
  return out;
}

/** SHA-256 over each file's name, the real path a link leads to, its size and its bytes. */
export function fingerprint(dir: string, files: readonly string[]): string {
  const h = createHash("sha256");
  for (const f of files)
    h.update(`${relative(dir, f)}\0${linkTarget(f) ?? ""}\0${statSync(f).size}\0`).update(readFileSync(f));
  return h.digest("hex");
}

export type { Store };
const storeFile = (home: string) => join(home, "trust.json");
/** The files, one a line, relative to `dir`, with links that leave the project marked. */
export const listOf = (dir: string, files: readonly string[]) => {
  const leaving = linksLeaving(dir, files);
  return files
    .map((f) => `  ${relative(dir, f)}${leaving.has(f) ? ` -> ${leaving.get(f)} (outside the project)` : ""}`)
    .join("\n");
};
export function readStore(home: string): Store {
  try {
    return JSON.parse(readFileSync(storeFile(home), "utf8")).projects ?? {};
  } catch {
    return {};
  }
}
export function writeStore(home: string, projects: Store): void {
  mkdirSync(home, { recursive: true });
  writeFileSync(`${storeFile(home)}.tmp`, JSON.stringify({ version: 1, projects }, null, 2) + "\n", { mode: 0o600 });
  renameSync(`${storeFile(home)}.tmp`, storeFile(home)); // never a half-written store
}
