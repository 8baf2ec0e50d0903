/**
 * `/reload`: plugins register once per assembly, so reloading plugins, skills and prompt templates means
 * assembling coil again. The TUI has stopped (terminal restored) when `requestReload` runs; it asks the
 * CLI's `reload` service (lib/reload.ts) for a rebuild in this process: every plugin stops (the session
 * flushes and releases its lock), the command line gets `--session <file>` (and the model and thinking
 * level in effect), and the new TUI starts with the editor's history and text handed over in memory.
 */
import { existsSync } from "node:fs";
import type { ReloadService } from "../../lib/reload.js";
import type { SessionService } from "../session-jsonl/api.js";

/** Flags that choose a session; the rebuilt coil gets `--session <file>` instead. */
const SESSION_FLAGS = new Set(["-c", "--continue", "-r", "--resume"]);

/** Start-up choices whose state the session records (plan-mode's): the rebuilt coil takes it from the session. */
const RECORDED_FLAGS = new Set(["--plan"]);

/** Flags (with a value) naming the model and thinking level: the rebuilt coil gets the ones in effect now. */
const NOW_FLAGS = new Set(["--model", "--provider", "--thinking"]);

/** The model (`provider/id`) and thinking level in effect when `/reload` ran: `/model` and `/thinking` outlive it. */
export interface ReloadNow {
  model: string;
  thinking?: string;
}

/**
 * The arguments for the rebuilt coil: `argv` without session choices, plus `--session <file>` when
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

/** The session file the rebuilt coil should open, if it has one on disk. */
export function sessionFileOf(session: SessionService | undefined): string | undefined {
  const file = session?.persistent ? session.file : undefined;
  return file && existsSync(file) ? file : undefined;
}

/** What the editor held, handed to the rebuilt TUI: its history (Up/Down) and unsent text. */
export interface EditorCarry {
  history: string[];
  text: string;
}

/** The editor's carry-over from the TUI before `/reload`, once (undefined on a first start). */
export function takeCarry(reload: ReloadService | undefined): EditorCarry | undefined {
  const data = reload?.handover() as Partial<EditorCarry> | undefined;
  if (!data || typeof data !== "object") return undefined;
  return {
    history: Array.isArray(data.history) ? data.history.filter((h) => typeof h === "string") : [],
    text: typeof data.text === "string" ? data.text : "",
  };
}

/** Ask for coil to be rebuilt in this process on `sessionFile`, once the TUI has returned. */
export function requestReload(
  reload: ReloadService,
  sessionFile: string | undefined,
  now: ReloadNow,
  carry: EditorCarry,
): void {
  reload.request({ args: (argv) => reloadArgs(argv, sessionFile, now), handover: carry });
}
