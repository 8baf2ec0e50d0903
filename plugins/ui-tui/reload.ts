/**
 * `/reload`: plugins register once per process, so reloading plugins, skills and prompt templates
 * means running coil again in place, on the same session. The TUI has already stopped (terminal
 * restored) when `restart` runs; it stops every plugin (the session flushes and releases its lock),
 * runs the same script with the same arguments plus `--session <file>` (and the model and thinking level
 * in effect), hands the editor's history and text over through a private file, and exits with the child's code.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import { messageOf, type FrontEndContext } from "../../kernel/index.js";
import type { SessionService } from "../session-jsonl/api.js";

/** Flags that choose a session; the reloaded process gets `--session <file>` instead. */
const SESSION_FLAGS = new Set(["-c", "--continue", "-r", "--resume"]);

/** Start-up choices whose state the session records (plan-mode's): a reloaded process takes it from the session. */
const RECORDED_FLAGS = new Set(["--plan"]);

/** Flags (with a value) naming the model and thinking level: the reloaded process gets the ones in effect now. */
const NOW_FLAGS = new Set(["--model", "--provider", "--thinking"]);

/** The model (`provider/id`) and thinking level in effect when `/reload` ran: `/model` and `/thinking` outlive the restart. */
export interface ReloadNow {
  model: string;
  thinking?: string;
}

/**
 * The arguments for the reloaded process: `argv` without session choices, plus `--session <file>` when
 * there is one (then without the flags whose state the session holds, or `--plan` would undo an approval).
 * With `now`, the model and thinking flags typed at start are replaced by the ones in effect.
 */
export function reloadArgs(argv: readonly string[], sessionFile: string | undefined, now?: ReloadNow): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      out.push(...argv.slice(i));
      break;
    }
    const flag = a.split("=", 1)[0]!;
    if (SESSION_FLAGS.has(a) || a.startsWith("--session=") || (sessionFile !== undefined && RECORDED_FLAGS.has(a)))
      continue;
    if (a === "--session" || (now && NOW_FLAGS.has(a))) {
      i++; // and its value
      continue;
    }
    if (now && NOW_FLAGS.has(flag)) continue;
    out.push(a);
  }
  const extra = [
    ...(now ? ["--model", now.model, ...(now.thinking ? ["--thinking", now.thinking] : [])] : []),
    ...(sessionFile !== undefined ? ["--session", sessionFile] : []),
  ];
  const end = out.indexOf("--");
  return end < 0 ? [...out, ...extra] : [...out.slice(0, end), ...extra, ...out.slice(end)];
}

/** The session file the reloaded process should open, if it has one on disk. */
export function sessionFileOf(session: SessionService | undefined): string | undefined {
  const file = session?.persistent ? session.file : undefined;
  return file && existsSync(file) ? file : undefined;
}

/** What the editor held, handed to the reloaded process: its history (Up/Down) and unsent text. */
export interface EditorCarry {
  history: string[];
  text: string;
}

/** Names the file (private, read once) holding the editor's carry-over for the reloaded process. */
export const CARRY_ENV = "COIL_TUI_CARRY";

function writeCarry(carry: EditorCarry): string {
  const file = join(mkdtempSync(join(tmpdir(), "coil-reload-")), "editor.json");
  writeFileSync(file, JSON.stringify(carry), { mode: 0o600 });
  return file;
}

/** In the reloaded process: the editor's carry-over, once (the file and the variable are removed). */
export function takeCarry(env: NodeJS.ProcessEnv = process.env): EditorCarry | undefined {
  const file = env[CARRY_ENV];
  if (!file) return undefined;
  delete env[CARRY_ENV];
  try {
    const data = JSON.parse(readFileSync(file, "utf8")) as Partial<EditorCarry>;
    return {
      history: Array.isArray(data.history) ? data.history.filter((h) => typeof h === "string") : [],
      text: typeof data.text === "string" ? data.text : "",
    };
  } catch {
    return undefined; // gone or unreadable: start with an empty editor
  } finally {
    rmSync(join(file, ".."), { recursive: true, force: true });
  }
}

/** Stop every plugin, run coil again on `sessionFile`, and exit the process with the child's exit code. */
export async function restart(
  fe: FrontEndContext,
  sessionFile: string | undefined,
  now?: ReloadNow,
  carry?: EditorCarry,
): Promise<never> {
  await fe.stopPlugins();
  const script = process.argv[1]!;
  const args = reloadArgs(process.argv.slice(2), sessionFile, now);
  const carried = carry ? writeCarry(carry) : undefined;
  const env = carried ? { ...process.env, [CARRY_ENV]: carried } : process.env;
  const code = await new Promise<number>((done) => {
    const child = spawn(process.execPath, [...process.execArgv, script, ...args], {
      stdio: "inherit",
      cwd: process.cwd(),
      env,
    });
    // The child owns the terminal now: a Ctrl+C reaching both processes is its to handle; a kill of this one is passed on.
    process.on("SIGINT", () => undefined);
    for (const s of ["SIGTERM", "SIGHUP"] as const) process.on(s, () => child.kill(s));
    child.on("error", (error) => {
      fe.stderr.write(
        `coil: /reload could not start ${process.execPath} ${script}: ${messageOf(error)}. Run coil${sessionFile ? ` --session ${sessionFile}` : " -c"} to continue.\n`,
      );
      done(1);
    });
    child.on("exit", (exit, signal) => done(exit ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1)));
  });
  // the new process removed it on start; not if it never started
  if (carried) rmSync(join(carried, ".."), { recursive: true, force: true });
  process.exit(code);
}
