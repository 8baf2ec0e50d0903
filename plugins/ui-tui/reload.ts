/**
 * `/reload`: plugins register once per process, so reloading plugins, skills and prompt templates
 * means running coil again in place, on the same session. The TUI has already stopped (terminal
 * restored) when `restart` runs; it stops every plugin (the session flushes and releases its lock),
 * runs the same script with the same arguments plus `--session <file>`, and exits with the child's code.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { constants } from "node:os";
import { messageOf, type FrontEndContext } from "../../kernel/index.js";
import type { SessionService } from "../session-jsonl/api.js";

/** Flags that choose a session; the reloaded process gets `--session <file>` instead. */
const SESSION_FLAGS = new Set(["-c", "--continue", "-r", "--resume"]);

/** Start-up choices whose state the session records (plan-mode's): a reloaded process takes it from the session. */
const RECORDED_FLAGS = new Set(["--plan"]);

/**
 * The arguments for the reloaded process: `argv` without session choices, plus `--session <file>` when
 * there is one (then without the flags whose state the session holds, or `--plan` would undo an approval).
 */
export function reloadArgs(argv: readonly string[], sessionFile: string | undefined): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (SESSION_FLAGS.has(a) || a.startsWith("--session=") || (sessionFile !== undefined && RECORDED_FLAGS.has(a))) continue;
    if (a === "--session") {
      i++; // and its value
      continue;
    }
    out.push(a);
  }
  if (sessionFile === undefined) return out;
  const end = out.indexOf("--");
  return end < 0 ? [...out, "--session", sessionFile] : [...out.slice(0, end), "--session", sessionFile, ...out.slice(end)];
}

/** The session file the reloaded process should open, if it has one on disk. */
export function sessionFileOf(session: SessionService | undefined): string | undefined {
  const file = session?.persistent ? session.file : undefined;
  return file && existsSync(file) ? file : undefined;
}

/** Stop every plugin, run coil again on `sessionFile`, and exit the process with the child's exit code. */
export async function restart(fe: FrontEndContext, sessionFile: string | undefined): Promise<never> {
  await fe.host.stop();
  const script = process.argv[1]!;
  const args = reloadArgs(process.argv.slice(2), sessionFile);
  const code = await new Promise<number>((done) => {
    const child = spawn(process.execPath, [...process.execArgv, script, ...args], { stdio: "inherit", cwd: process.cwd(), env: process.env });
    // The child owns the terminal now: a Ctrl+C reaching both processes is its to handle; a kill of this one is passed on.
    process.on("SIGINT", () => undefined);
    for (const s of ["SIGTERM", "SIGHUP"] as const) process.on(s, () => child.kill(s));
    child.on("error", (error) => {
      fe.stderr.write(`coil: /reload could not start ${process.execPath} ${script}: ${messageOf(error)}. Run coil${sessionFile ? ` --session ${sessionFile}` : " -c"} to continue.\n`);
      done(1);
    });
    child.on("exit", (exit, signal) => done(exit ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1)));
  });
  process.exit(code);
}
