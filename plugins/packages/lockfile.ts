/**
 * `coil-lock.json`: what is installed in a packages dir, so a teammate (or CI) installing from the same
 * lock gets the same versions. One entry per top-level package: the spec it was installed from, the
 * version, the resolved source and the tarball's integrity, plus what its `"coil"` key offers.
 */
import { existsSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dependencies, npmLockEntry, readJson, type LockedPackage } from "./npm.js";
import { readClaudeLock, type ClaudeLockEntry } from "../../lib/claude-plugins.js";

export const LOCK_FILE = "coil-lock.json";

export interface CoilManifest {
  plugins?: string[];
  presets?: string[];
  preset?: string;
  skills?: string[];
  promptTemplates?: string[];
}

export interface LockEntry extends LockedPackage {
  /** As saved in the packages dir's package.json (`^1.2.0`, `file:../x.tgz`, `github:acme/x`). */
  spec: string;
  /** The package's `"coil"` key (what it offers), if any. */
  coil?: CoilManifest;
  /** False when the package has neither a `"coil"` key nor the `coil-package` keyword. */
  coilPackage: boolean;
}

export interface LockFile {
  lockfileVersion: 1;
  packages: Record<string, LockEntry> /** Installed Claude Code plugins (plugins/packages/claude). */;
  claudePlugins?: Record<string, ClaudeLockEntry>;
}

export function readLock(dir: string): LockFile | undefined {
  const lock = readJson<LockFile>(join(dir, LOCK_FILE));
  return lock && typeof lock.packages === "object" ? lock : undefined;
}

/** The package's own manifest, from node_modules. */
export function manifestOf(
  dir: string,
  name: string,
): { version?: string; coil?: CoilManifest; keywords?: string[]; description?: string } | undefined {
  return readJson(join(dir, "node_modules", name, "package.json"));
}

/** Rebuild the lock from what npm installed (package.json + package-lock.json); returns it. */
export function writeLock(dir: string): LockFile {
  const packages: Record<string, LockEntry> = {};
  for (const [name, spec] of Object.entries(dependencies(dir)).sort(([a], [b]) => a.localeCompare(b))) {
    const npm = npmLockEntry(dir, name);
    const manifest = manifestOf(dir, name);
    if (!npm || !manifest) continue;
    const entry: LockEntry = {
      spec,
      version: npm.version,
      coilPackage: Boolean(manifest.coil) || (manifest.keywords ?? []).includes("coil-package"),
    };
    if (npm.resolved) entry.resolved = npm.resolved;
    if (npm.integrity) entry.integrity = npm.integrity;
    if (npm.link) entry.link = true;
    if (manifest.coil) entry.coil = manifest.coil;
    packages[name] = entry;
  }
  const lock: LockFile = { lockfileVersion: 1, packages };
  // The Claude Code plugins' section is kept as it is (plugins/packages/claude writes it).
  const claude = readClaudeLock(dir);
  if (Object.keys(claude).length) lock.claudePlugins = claude;
  if (existsSync(dir)) {
    const file = join(dir, LOCK_FILE);
    writeFileSync(`${file}.tmp`, JSON.stringify(lock, null, 2) + "\n");
    renameSync(`${file}.tmp`, file);
  }
  return lock;
}
