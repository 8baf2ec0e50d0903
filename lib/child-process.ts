/**
 * `node:child_process`'s process starters, loading the module when a process is first started: it costs ~2 ms of
 * a start-up on Node 20 (with `net` and `dgram`), and a print run whose model answers in text starts none.
 * Same functions, same overloads; import them from here instead of `node:child_process`.
 */
import type * as ChildProcess from "node:child_process";
import { createRequire } from "node:module";

let loaded: typeof ChildProcess | undefined;
const cp = (): typeof ChildProcess => (loaded ??= createRequire(import.meta.url)("node:child_process"));

export const spawn = ((...args: Parameters<typeof ChildProcess.spawn>) =>
  cp().spawn(...args)) as typeof ChildProcess.spawn;
export const spawnSync = ((...args: Parameters<typeof ChildProcess.spawnSync>) =>
  cp().spawnSync(...args)) as typeof ChildProcess.spawnSync;
export const execFile = ((...args: Parameters<typeof ChildProcess.execFile>) =>
  cp().execFile(...args)) as typeof ChildProcess.execFile;
export const execFileSync = ((...args: Parameters<typeof ChildProcess.execFileSync>) =>
  cp().execFileSync(...args)) as typeof ChildProcess.execFileSync;
