#!/usr/bin/env node
/**
 * The shipped entry point (compiled to dist/bin/coil.js). `--version` answers without loading
 * anything else; every other command loads the CLI.
 */
import { readFileSync } from "node:fs";
import * as nodeModule from "node:module";

// Node 22.1+ keeps V8's compiled code for coil's modules on disk (NODE_DISABLE_COMPILE_CACHE=1 turns
// it off): later start-ups skip compiling ~2 MB of JavaScript. Older Node compiles every time.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

// Phase marks for the start-up breakdown of bench/harness.mjs (boot/marks.ts); off unless it asks.
const marking = process.env.COIL_BENCH_PHASES !== undefined;
if (marking) performance.mark("coil:bin");
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  process.stdout.write(`${pkg.version}\n`);
} else {
  const { main } = await import("../cli/main.js");
  if (marking) performance.mark("coil:cli");
  const code = await main({
    argv,
    cwd: process.cwd(),
    env: process.env,
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
  });
  // Exit once output is flushed, even if a plugin left a handle open (a closed stdout just exits).
  process.exitCode = code;
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
}
