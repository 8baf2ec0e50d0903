/**
 * What every front end (print, TUI, RPC, ACP, a fleet worker) and the command line share, outside the
 * kernel: the exit code a run ends with, the one-line form of a diagnostic, how `/name args` finds
 * its slash command, the `input` service typed text passes before it becomes a prompt, and the
 * `session-guard` service asked before /new, /resume, /fork, /clone and /tree.
 */
import type { ReadonlyRegistry, RunStopReason, SlashCommand } from "../api/index.js";

/**
 * coil's exit code for a run that ended this way: 0 done, 1 error or abort, 3 halted by a stop rule
 * (a guard's limit, a failing done-gate). 2 (usage or configuration) never comes from a run.
 */
export function exitCodeFor(stopReason: RunStopReason): 0 | 1 | 3 {
  if (stopReason === "error" || stopReason === "aborted") return 1;
  return stopReason === "halted" ? 3 : 0;
}

/** One line for a diagnostic event, naming its plugin once: `warn: [plugin x] message`. */
export function formatDiagnostic(d: { level: string; message: string; plugin?: string }): string {
  const named = d.plugin && !d.message.includes(`[plugin ${d.plugin}]`) ? `[plugin ${d.plugin}] ` : "";
  return `${d.level}: ${named}${d.message}`;
}

/** Split `/name args` into the command and its arguments; undefined when `text` is not a registered command. */
export function findCommand(
  registries: { readonly commands: Pick<ReadonlyRegistry<SlashCommand>, "get"> },
  text: string,
): { command: SlashCommand; args: string } | undefined {
  const match = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  const command = match ? registries.commands.get(match[1]!) : undefined;
  return command && { command, args: (match![2] ?? "").trim() };
}

/**
 * The command name `text` asks for when it reads as a slash command (`/name` or `/name args`, the name
 * without another `/`, so `/usr/bin/env` is a path), else undefined.
 */
export function slashName(text: string): string | undefined {
  return /^\/([A-Za-z0-9][\w:.@-]*)(?:\s|$)/.exec(text.trimStart())?.[1];
}

/** Where a prompt came from, as the `input` service hears it. */
export type InputSource = "interactive" | "rpc";

/** The `input` service's answer: the text to send (perhaps rewritten), or that the input was consumed. */
export type InputVerdict = { text: string } | { handled: true; output?: string };

/**
 * The `input` service: a plugin that sees what the user typed before it becomes a prompt (Pi extensions'
 * `input` event). Front ends call it through `filterInput` for text that is not a slash command.
 */
export interface InputService {
  filter(text: string, source: InputSource): Promise<InputVerdict>;
}

/** The typed text after the `input` service (if one is in force), or `{ handled }` when no run should start. */
export async function filterInput(
  service: InputService | undefined,
  text: string,
  source: InputSource,
): Promise<InputVerdict> {
  return service ? service.filter(text, source) : { text };
}

/** A change of session a front end is about to make: /new, /resume, /fork, /clone, /tree (and RPC's). */
export type SessionChange =
  | { kind: "new" }
  | { kind: "resume"; target: string }
  | { kind: "fork"; entryId: string | null; position: "before" | "at" }
  | { kind: "tree"; targetId: string | null; summarize: boolean };

/**
 * The `session-guard` service: a plugin asked before a front end changes the session (Pi extensions'
 * session_before_switch / _fork / _tree), and told after. `before` answers why not (`cancelled`), or for a
 * tree move a summary of the branch left that it wrote itself.
 */
export interface SessionGuardService {
  before(change: SessionChange): Promise<{ cancelled: string } | { summary?: string }>;
  after(change: SessionChange, previousFile: string | undefined): Promise<void>;
}

/** Ask the `session-guard` service (if one is in force) before a session change: why not, or how to go on. */
export async function guardSession(
  service: SessionGuardService | undefined,
  change: SessionChange,
): Promise<{ cancelled?: string; summary?: string }> {
  return service ? service.before(change) : {};
}

/** A command a plugin runs in coil's place for the user's `!cmd`: output as it comes, then the exit code. */
export type UserShellExec = (
  command: string,
  cwd: string,
  o: { onData(chunk: Uint8Array): void; signal: AbortSignal },
) => Promise<{ exitCode: number | null }>;

/**
 * The `user-shell` service's answer for a `!cmd` (`!!cmd`: `excludeFromContext`): nothing (coil runs it as a
 * bash tool call through the gates, as always), the output itself (`result`: nothing runs), or a command
 * runner of the plugin's own (`exec`: a remote shell, a container). `by` names who answered, for the screen;
 * a `cancelled` result (the plugin refused or failed) is shown and, like a refused bash call, not added.
 */
export type UserShellAnswer =
  | { by: string; result: { output: string; exitCode: number | null; cancelled?: boolean } }
  | { by: string; exec: UserShellExec }
  | undefined;

/** The `user-shell` service: asked first about each `!cmd` the user types (Pi extensions' user_bash). */
export interface UserShellService {
  intercept(command: string, o: { excludeFromContext: boolean; cwd: string }): Promise<UserShellAnswer>;
}

declare module "coil" {
  interface Services {
    input: InputService;
    "session-guard": SessionGuardService;
    "user-shell": UserShellService;
  }
}
