/**
 * What a run loaded, from the module URLs bench/record-loads.mjs wrote: a dependency counts as loaded when
 * a module of it came from node_modules, or when a loaded dist/ file bundles it (esbuild marks each bundled
 * module with a `// node_modules/<package>/...` comment).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export function loadedPackage(loads: string, pkg: string): boolean {
  const urls = loads.split("\n").filter((u) => u.startsWith("file:"));
  if (urls.some((u) => u.includes(`/node_modules/${pkg}/`))) return true;
  return urls
    .filter((u) => u.includes("/dist/") && u.endsWith(".js"))
    .some((u) => readFileSync(fileURLToPath(u), "utf8").includes(`// node_modules/${pkg}/`));
}

/** Whether a loaded dist/ file bundles this source file of coil's (esbuild marks it `// plugins/x/y.ts`). */
export function loadedSource(loads: string, source: string): boolean {
  return loads
    .split("\n")
    .filter((u) => u.startsWith("file:") && u.includes("/dist/") && u.endsWith(".js"))
    .some((u) => readFileSync(fileURLToPath(u), "utf8").includes(`\n// ${source}\n`));
}
