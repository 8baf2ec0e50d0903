// Module hook (node --import): appends every resolved module URL to $COIL_BENCH_LOADS, so the
// benchmark can show which dependencies a run really loaded.
import { register } from "node:module";

register(
  "data:text/javascript," +
    encodeURIComponent(`
import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (process.env.COIL_BENCH_LOADS) appendFileSync(process.env.COIL_BENCH_LOADS, result.url + "\\n");
  return result;
}`),
);
