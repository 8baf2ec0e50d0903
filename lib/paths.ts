/**
 * Where coil's own files and the user's `$COIL_HOME` are, for boot/ and for plugins that ship or read
 * data (built-in skills, docs, packages, keys). The kernel does no I/O, so these live here.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let root: string | undefined;

/** coil's npm package name (the npm name `coil` belongs to another package); its command is still `coil`. */
export const PACKAGE_NAME = "coil-agent";

/** The package root: the nearest directory above this file whose package.json is named `coil-agent`. */
export function packageRoot(): string {
  if (root) return root;
  const here = fileURLToPath(import.meta.url);
  for (let dir = dirname(here); ; dir = dirname(dir)) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg) && JSON.parse(readFileSync(pkg, "utf8")).name === PACKAGE_NAME) {
      root = dir;
      return dir;
    }
    if (dirname(dir) === dir) throw new Error("coil: cannot find its own package.json above " + here);
  }
}

let version: string | undefined;

/** coil's version, from its package.json. */
export function coilVersion(): string {
  version ??= (JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as { version: string }).version;
  return version;
}

/** `$COIL_HOME`, default `~/.coil` (lib/locations.ts, where every user folder is worked out). */
export { coilHome } from "./locations.js";
