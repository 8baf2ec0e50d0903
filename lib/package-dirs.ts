/** Folders installed coil packages contribute (skills, agents, ...), from their package.json `coil` field. */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isDir } from "./claude-plugins.js";
import { disabledPackages } from "./preset-file.js";

/** A trusted project, whose `.coil/packages` (`coil install --project`) contribute too. */
export interface ProjectPackages {
  /** The project root (lib/project.ts). */
  root: string;
  trusted: boolean;
}

/**
 * Folders installed packages contribute: packages whose package.json has a `coil` field list them in
 * `coil.<key>` (default: `<fallback>/` when it exists). The project's packages (`<root>/.coil/packages`,
 * only while the project is trusted) come first, then the user's (`$COIL_HOME/packages`). A package
 * disabled in its scope's preset file (`coil disable`: `- npm:<name>: false`) contributes nothing.
 */
export function packageDirs(home: string, key: string, fallback: string, project?: ProjectPackages): string[] {
  const scopes = project?.trusted ? [join(project.root, ".coil")] : [];
  return [...scopes, home].flatMap((scope) =>
    scopeDirs(join(scope, "packages"), join(scope, "preset.yaml"), key, fallback),
  );
}

function scopeDirs(packages: string, presetFile: string, key: string, fallback: string): string[] {
  const base = join(packages, "node_modules");
  const names: string[] = [];
  try {
    for (const e of readdirSync(base, { withFileTypes: true })) {
      if (e.name.startsWith(".")) continue;
      if (e.name.startsWith("@")) {
        try {
          for (const s of readdirSync(join(base, e.name))) names.push(`${e.name}/${s}`);
        } catch {
          // not a scope folder
        }
      } else names.push(e.name);
    }
  } catch {
    return [];
  }
  const out: string[] = [];
  const disabled = disabledPackages(presetFile);
  for (const name of names.sort()) {
    if (disabled.has(name)) continue;
    const dir = join(base, name);
    let pkg: { coil?: Record<string, unknown> };
    try {
      pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    } catch {
      continue;
    }
    if (!pkg.coil || typeof pkg.coil !== "object") continue;
    out.push(...contentDirs(dir, pkg.coil, key, fallback));
  }
  return out;
}

/** The folders one package (at `dir`, with its `coil` key) lists in `coil.<key>`, else `<fallback>/` when it exists. */
export function contentDirs(dir: string, coil: Record<string, unknown>, key: string, fallback: string): string[] {
  const listed = coil[key];
  if (Array.isArray(listed)) return listed.filter((p): p is string => typeof p === "string").map((p) => join(dir, p));
  return isDir(join(dir, fallback)) ? [join(dir, fallback)] : [];
}
