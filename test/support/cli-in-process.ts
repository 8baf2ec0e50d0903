/**
 * The built CLI run in the test's own process: dist/cli/main.js's `main(io)`, what dist/bin/coil.js calls,
 * with the arguments, folder, environment and stdin a spawned `coil` would get, and its output collected.
 * For tests about what the command line says and returns (help, usage errors, flags); a test about the
 * process (signals, piped stdin, exit on a handle left open) spawns dist/bin/coil.js instead.
 *
 * Plugins read `process.env` and `process.cwd()` as well as `io.env`/`io.cwd`, so for the run both are the
 * child's and are put back after it. Runs are one at a time (a file's tests run in order in their fork).
 */
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { finished } from "node:stream/promises";
import { pathToFileURL } from "node:url";
import type { CliIO } from "../../cli/main.js";
import { ROOT, requireBuild, type Ran } from "./ecosystem.js";

type Main = (io: CliIO) => Promise<number>;
let loaded: Promise<Main> | undefined;

let running = false;

export async function coilInProcess(cwd: string, args: string[], env: NodeJS.ProcessEnv, input = ""): Promise<Ran> {
  requireBuild();
  loaded ??= (import(pathToFileURL(join(ROOT, "dist", "cli", "main.js")).href) as Promise<{ main: Main }>).then(
    (m) => m.main,
  );
  const main = await loaded;
  if (running) throw new Error("coilInProcess: one run at a time (it swaps process.env and the working folder)");
  running = true;
  const saved = { ...process.env };
  const savedCwd = process.cwd();
  let stdout = "";
  let stderr = "";
  const out = new PassThrough();
  const err = new PassThrough();
  out.on("data", (d: Buffer) => (stdout += d));
  err.on("data", (d: Buffer) => (stderr += d));
  try {
    for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
    for (const [key, value] of Object.entries(env)) if (value !== undefined) process.env[key] = value;
    process.chdir(cwd);
    const stdin = Readable.from(input ? [input] : []);
    const code = await main({ argv: args, cwd, env: process.env, stdin, stdout: out, stderr: err });
    out.end();
    err.end();
    await Promise.all([finished(out), finished(err)]);
    return { code, stdout, stderr };
  } finally {
    process.chdir(savedCwd);
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
    running = false;
  }
}
