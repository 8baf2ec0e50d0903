/**
 * Pi's `user_bash` (the user's `!cmd` in the TUI) and `createLocalBashOperations`: an extension's answer
 * turned into the `user-shell` service's, and coil's local command runner in Pi's `BashOperations` shape.
 */
import { spawn } from "../../lib/child-process.js";
import type { UserShellAnswer } from "../../lib/front-end.js";
import type { Operations } from "../tools-coding/api.js";

/** Pi's `BashOperations`: run a command, streaming its output; the exit code (null: a signal ended it). */
export interface PiBashOperations {
  exec(
    command: string,
    cwd: string,
    options: { onData(data: Buffer): void; signal?: AbortSignal; timeout?: number; env?: NodeJS.ProcessEnv },
  ): Promise<{ exitCode: number | null }>;
}

/**
 * `createLocalBashOperations()` as coil serves it: through the `operations` service's `exec` when a plugin
 * provides one (a sandbox confines the command as it confines the bash tool), else bash in its own process
 * group, the whole group ended on abort or `timeout` (seconds, as Pi's bash tool takes it).
 */
export function localBashOperations(operations: () => Partial<Operations> | undefined): PiBashOperations {
  return {
    async exec(command, cwd, options) {
      const controller = new AbortController();
      const abort = () => controller.abort();
      options.signal?.addEventListener("abort", abort, { once: true });
      if (options.signal?.aborted) abort();
      const timer = options.timeout ? setTimeout(abort, options.timeout * 1000) : undefined;
      try {
        const exec = operations()?.exec;
        if (exec) {
          const ran = await exec(command, {
            cwd,
            env: options.env,
            signal: controller.signal,
            onData: (chunk) => options.onData(Buffer.from(chunk)),
          });
          return { exitCode: ran.exitCode };
        }
        return await new Promise((done, fail) => {
          const child = spawn("bash", ["-c", command], {
            cwd,
            env: options.env ?? process.env,
            detached: true,
            stdio: ["ignore", "pipe", "pipe"],
          });
          const kill = () => {
            try {
              if (child.pid) process.kill(-child.pid, "SIGKILL");
            } catch {
              // already gone
            }
          };
          controller.signal.addEventListener("abort", kill, { once: true });
          child.stdout.on("data", (d: Buffer) => options.onData(d));
          child.stderr.on("data", (d: Buffer) => options.onData(d));
          child.on("error", fail);
          child.on("close", (code) => {
            controller.signal.removeEventListener("abort", kill);
            done({ exitCode: code });
          });
        });
      } finally {
        if (timer) clearTimeout(timer);
        options.signal?.removeEventListener("abort", abort);
      }
    },
  };
}

/**
 * A user_bash handler's return as the `user-shell` service's answer: `undefined` (coil runs the command), or
 * exactly one of `{ operations }` (with `exec`) and `{ result }` (`output`, `exitCode`). Anything else throws,
 * naming what was wrong; the caller reports it and does not run the command (it was meant to go elsewhere).
 */
export function userBashAnswer(by: string, value: unknown): UserShellAnswer {
  if (value === undefined || value === null) return undefined;
  const v = value as { operations?: Partial<PiBashOperations>; result?: Record<string, unknown> };
  if (typeof v !== "object" || (v.operations === undefined) === (v.result === undefined))
    throw new Error("a user_bash handler returns undefined, { operations } or { result }, exactly one of the two");
  if (v.operations !== undefined) {
    const ops = v.operations;
    if (typeof ops?.exec !== "function") throw new Error("user_bash's operations has no exec function");
    return {
      by,
      exec: (command, cwd, o) => ops.exec!(command, cwd, { signal: o.signal, onData: (d) => o.onData(d) }),
    };
  }
  const r = v.result!;
  if (typeof r?.output !== "string" || (r.exitCode !== undefined && typeof r.exitCode !== "number"))
    throw new Error("user_bash's result needs output (a string) and exitCode (a number)");
  return {
    by,
    result: {
      output: r.output,
      exitCode: (r.exitCode as number | undefined) ?? null,
      cancelled: r.cancelled === true,
    },
  };
}
