/**
 * The project a working directory belongs to: its git root (the nearest folder at or above it that holds
 * `.git`, a folder or a worktree's file), else the working directory itself. coil reads the project's
 * `.coil/` (preset, trust, mcp.json), `.claude/settings*.json`, `.mcp.json`, skills and templates from
 * there, so starting coil in a subdirectory finds the same setup as starting it at the root.
 * boot/ (preset layers, trust) and plugins share this one answer.
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** The git root at or above `cwd`, or `undefined` outside a repository. */
export function gitRoot(cwd: string): string | undefined {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** The project root for `cwd`: its git root, else `cwd` itself (absolute). Plugins call it at setup. */
export function projectRoot(cwd: string): string {
  return gitRoot(cwd) ?? resolve(cwd);
}

/** The folders from `cwd` up to its project root, nearest first (only `cwd` outside a repository). */
export function foldersUpToRoot(cwd: string): string[] {
  const root = projectRoot(cwd);
  const out: string[] = [];
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    out.push(dir);
    if (dir === root || dirname(dir) === dir) return out;
  }
}
