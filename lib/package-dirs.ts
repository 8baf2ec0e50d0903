/** Folders installed coil packages contribute (skills, agents, ...), from their package.json `coil` field. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

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
  for (const name of names.sort()) {
    const dir = join(base, name);
    let pkg: { coil?: Record<string, unknown> };
    try {
      pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    } catch {
      continue;
    }
    if (!pkg.coil || typeof pkg.coil !== "object") continue;
    const listed = pkg.coil[key];
    if (Array.isArray(listed)) out.push(...listed.filter((p): p is string => typeof p === "string").map((p) => join(dir, p)));
    else if (isDir(join(dir, fallback))) out.push(join(dir, fallback));
  }
  return out;
}
