// What the bundle imports instead of `picomatch` (scripts/build.mjs): the glob matcher is a CommonJS file of its own,
// dist/vendor/picomatch.cjs, required the first time a pattern is compiled. Only tool-search's `pin` and `defer`
// options use it, so a run without them neither compiles nor evaluates its 0.06 MB.
// Only the call coil's sources make (`picomatch(patterns, options?)`) is here: the default export has none of
// picomatch's own properties (`picomatch.scan`, `.isMatch`...), so a source that needs one adds it here.
import { vendored } from "./vendor-lazy.mjs";

export default function lazyPicomatch(...args) {
  return vendored("picomatch")(...args);
}
