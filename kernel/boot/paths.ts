/** Where coil's own files live, whether running from source (vitest) or from dist/ (the shipped CLI). */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";

let root: string | undefined;

/** The package root: the nearest directory above this file whose package.json is named "coil". */
export function packageRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg) && JSON.parse(readFileSync(pkg, "utf8")).name === "coil") return (root = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error("coil: cannot find its own package.json above " + fileURLToPath(import.meta.url));
    dir = up;
  }
}

/** `$COIL_HOME`, default `~/.coil`. */
export function coilHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.COIL_HOME || join(homedir(), ".coil");
}

/** A built-in file: compiled `.js` under dist/ when it exists, else the `.ts` source. */
export function builtinModule(...parts: string[]): string | undefined {
  const base = packageRoot();
  const rel = join(...parts);
  const fromDist = fileURLToPath(import.meta.url).startsWith(join(base, "dist") + sep);
  const candidates = fromDist ? [join(base, "dist", `${rel}.js`)] : [join(base, `${rel}.ts`), join(base, "dist", `${rel}.js`)];
  return candidates.find((c) => existsSync(c));
}

/** The list of built-in plugin ids (folders under plugins/). */
export function builtinPluginIds(): string[] {
  const base = packageRoot();
  const ids = new Set<string>();
  for (const dir of [join(base, "plugins"), join(base, "dist", "plugins")]) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSafe(dir)) ids.add(name);
  }
  return [...ids].sort();
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    return [];
  }
}
