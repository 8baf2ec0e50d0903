// The loader of scripts/<name>-lazy.mjs, the modules the bundle imports instead of a dependency kept out of it
// (scripts/build.mjs): `vendored(name)` requires dist/vendor/<name>.cjs the first time it is called.
import { createRequire } from "node:module";
import { join } from "node:path";
import { packageRoot } from "../lib/paths.ts";

const loaded = new Map();
export function vendored(name) {
  if (!loaded.has(name))
    loaded.set(name, createRequire(import.meta.url)(join(packageRoot(), "dist", "vendor", `${name}.cjs`)));
  return loaded.get(name);
}
