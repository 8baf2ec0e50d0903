// What the bundle imports instead of `yaml` (scripts/build.mjs): the YAML parser is a CommonJS file of its own,
// dist/vendor/yaml.cjs, required the first time a YAML file is read. A run on the built-in presets (compiled to
// JSON) with plain front matter reads none, so it neither compiles nor evaluates the parser's 0.26 MB.
// Only the names coil's sources import from "yaml" are here; a new one fails the build (esbuild: no such export).
import { vendored } from "./vendor-lazy.mjs";

const load = () => vendored("yaml");
export const parse = (...args) => load().parse(...args);
export const parseDocument = (...args) => load().parseDocument(...args);
export const isMap = (node) => load().isMap(node);
export const isScalar = (node) => load().isScalar(node);
export const isSeq = (node) => load().isSeq(node);
// `new LineCounter()` and `new Document(...)` construct the parser's own classes (a constructor that returns an object).
export function LineCounter(...args) {
  return new (load().LineCounter)(...args);
}
export function Document(...args) {
  return new (load().Document)(...args);
}
