/** Folders installed coil packages contribute (skills, agents, ...), from their package.json `coil` field. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { disabledPackages } from "./preset-file.js";

const isDir = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/**
 * Folders an installed package contributes: packages under `$COIL_HOME/packages/node_modules` whose
 * package.json has a `coil` field list them in `coil.<key>` (default: `<fallback>/` when it exists).
 * A package the user disabled (`coil disable`: `- npm:<name>: false` in `$COIL_HOME/preset.yaml`) contributes nothing.
 */
export function packageDirs(home: string, key: string, fallback: string): string[] {
  const base = join(home, "packages", "node_modules");
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
  const disabled = disabledPackages(join(home, "preset.yaml"));
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
