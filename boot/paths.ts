/** Where coil's own files live, whether running from source (vitest) or from dist/ (the shipped CLI). */
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { coilHome, packageRoot } from "../lib/paths.js";
import { projectRoot } from "../lib/locations.js";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";

export { coilHome, packageRoot, projectRoot };

/**
 * `$COIL_HOME` holds sessions, trust decisions and API keys: create it private (0700) and tighten one
 * that group or others may enter. A folder that is not ours, or a shared sticky one like /tmp, is left
 * as it is. Returns a warning to show when the folder stays open or cannot be made private.
 */
export function secureCoilHome(home: string): string | undefined {
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    const st = statSync(home);
    if ((st.mode & 0o077) === 0) return undefined;
    const open = `$COIL_HOME ${home} is open to other users (mode ${(st.mode & 0o777).toString(8)}); it holds sessions and keys`;
    if ((st.mode & 0o1000) !== 0 || (process.getuid && st.uid !== process.getuid()))
      return `${open}. It is not yours (or is a shared folder), so coil leaves it: point COIL_HOME at a private folder`;
    chmodSync(home, 0o700);
    return undefined;
  } catch (error) {
    return `cannot make $COIL_HOME ${home} private: ${(error as Error).message}. Check the folder, or point COIL_HOME elsewhere`;
  }
}

/** A built-in file: compiled `.js` under dist/ when it exists, else the `.ts` source. */
export function builtinModule(...parts: string[]): string | undefined {
  const base = packageRoot();
  const rel = join(...parts);
  const dist = join(base, "dist", `${rel}.js`);
  const fromDist = fileURLToPath(import.meta.url).startsWith(join(base, "dist") + sep);
  return (fromDist ? [dist] : [join(base, `${rel}.ts`), dist]).find((c) => existsSync(c));
}

/** The list of built-in plugin ids (folders under plugins/). */
export function builtinPluginIds(): string[] {
  const dirs = [join(packageRoot(), "plugins"), join(packageRoot(), "dist", "plugins")].filter((d) => existsSync(d));
  const ids = dirs.flatMap((d) =>
    readdirSync(d, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name),
  );
  return [...new Set(ids)].sort();
}

/** `node_modules/<name>` in `from` and in every directory above it, nearest first. */
export function nodeModules(name: string, from: string): string[] {
  const up = dirname(from);
  return [join(from, "node_modules", name), ...(up === from ? [] : nodeModules(name, up))];
}
