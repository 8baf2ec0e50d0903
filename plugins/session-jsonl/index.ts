/**
 * session-jsonl: every conversation is an append-only JSONL tree under
 * `$COIL_HOME/sessions/<working directory>/`, written a line at a time as messages happen, synced at
 * the end of every turn, locked against a second writer, and resumed with `-c`, `-r` or `--session`.
 * Registers the `session` service front ends and plugins use (docs/sessions.md).
 */
import { writeFileSync } from "node:fs";
import {
  Type,
  definePlugin,
  emptyUsage,
  messageOf,
  type AgentMessage,
  type AssistantMessage,
  type CliStreams,
  type ModelRequest,
  type UserMessage,
} from "../../api/index.js";
import type { Subcommand, SubcommandOption } from "../../lib/command-line.js";
import { subagentRunOf } from "../../lib/subagent-usage.js";
import { expandHome, listAll, listSessions, resolveSessionRef, sessionsRoot } from "./catalog.js";
import { exportSession, type ExportFormat } from "./export.js";
import { nodeOps, type SessionOps } from "./file-system.js";
import type { SessionStatsService } from "../cost-audit/api.js";
import type { SessionService } from "./api.js";
import { SessionManager, formatList } from "./service.js";
import { SessionStore, sessionDirFor } from "./store.js";

export { FORMAT_VERSION, migrateEntry, type SessionEntry, type SessionHeader } from "./format.js";
export { nodeOps, type SessionOps } from "./file-system.js";
export { readSession } from "./reader.js";
export { acquireLock, lockOwner, SessionLockedError } from "./writer-lock.js";
export { SessionStore, SessionWriteError, sessionDirFor, type CompactionInput, type SessionState } from "./store.js";
export { listSessions, latestSession, type SessionSummary } from "./catalog.js";
export { exportSession } from "./export.js";
export type {
  SessionService,
  BranchOptions,
  SessionInfo,
  Summarizer,
  CustomMessageInput,
  ChildSession,
} from "./api.js";

export const SessionOptions = Type.Object({
  /** Root folder of the sessions (one sub-folder per working directory). Default `$COIL_HOME/sessions`. */
  dir: Type.Optional(Type.String()),
  /** On resume, switch to the model the session last used (unless --model/--provider is given) and its thinking level (unless --thinking is). */
  restoreModel: Type.Boolean({ default: true }),
});

/** The plugin with its file operations injected (tests simulate a full disk through `ops`). */
export function sessionPlugin(deps: { ops?: SessionOps } = {}) {
  const ops = deps.ops ?? nodeOps;
  return definePlugin({
    id: "session-jsonl",
    description: "Sessions as append-only JSONL trees: resume, branches, fork and clone",
    options: SessionOptions,
    setup(ctx) {
      const manager = new SessionManager(ctx, ops);
      ctx.flags.register({
        name: "continue",
        short: "c",
        type: "boolean",
        description: "continue the latest session of this directory",
      });
      ctx.flags.register({
        name: "resume",
        short: "r",
        type: "boolean",
        description: "choose a session to resume (in print mode: list them and exit)",
      });
      ctx.flags.register({
        name: "session",
        type: "string",
        valueName: "path|id",
        description: "open this session file, or the session whose id starts with this",
      });
      ctx.flags.register({
        name: "session-dir",
        type: "string",
        valueName: "dir",
        description: "keep this run's sessions in this folder",
      });
      ctx.flags.register({
        name: "no-session",
        type: "boolean",
        description: "keep the session in memory only (nothing is written)",
      });
      ctx.subcommands.register(
        sessionsSubcommand(ops, ctx.options.dir, ctx.baseDir, () => ctx.services.get("session-stats")),
      );
      ctx.services.provide("session", manager);

      ctx.on("message_end", (event) => manager.onMessage(event.message));
      ctx.on("compaction", (event) => manager.onCompaction(event));
      ctx.on("agent_end", () => manager.endRun());
      ctx.tap(
        "before_request",
        (request) => {
          manager.throwIfFailed();
          return toModel(request, manager);
        },
        { stage: "EARLY" },
      );
      // A failed write stops the run before other turn_end taps; the fsync comes after them all, so
      // what they append for this turn (cost-audit's record) is covered by this turn's one fsync.
      ctx.tap("turn_end", () => manager.throwIfFailed(), { stage: "EARLY" });
      ctx.tap("turn_end", (turn) => manager.endTurn(turn.message.stopReason === "toolUse"), { stage: "FALLBACK" });
      ctx.onStart((agent, io, info) => {
        const str = (name: string) => {
          const v = ctx.flags.get(name);
          return typeof v === "string" && v ? v : undefined;
        };
        return manager.start(agent, io, {
          mode: info.mode,
          modelFromCli: info.modelFromCli,
          continue: ctx.flags.get("continue") === true,
          resume: ctx.flags.get("resume") === true,
          session: str("session"),
          sessionDir: str("session-dir"),
          noSession: ctx.flags.get("no-session") === true,
        });
      });
      ctx.onStop(() => manager.stop());
    },
  });
}

export default sessionPlugin();

/** Custom messages from `appendCustomMessage` reach the model as user messages. */
function toModel(request: ModelRequest, session: SessionService): ModelRequest | undefined {
  if (!request.messages.some((m) => session.isForModel(m))) return undefined;
  const messages = request.messages.map((m): AgentMessage => {
    if (m.role !== "custom" || !session.isForModel(m)) return m;
    return { role: "user", content: m.content, timestamp: m.timestamp } satisfies UserMessage;
  });
  return { ...request, messages };
}

/** A plugin that renders `coil sessions stats` (cost-audit provides it as the `session-stats` service). */

/** Token and cost totals of the active branch, when no plugin renders the stats. */
function basicStats(store: SessionStore, json: boolean): string {
  // Replies, and the sub-agents' usage their task results carry.
  const replies = store.path().flatMap((e): Pick<AssistantMessage, "usage">[] => {
    if (e.type !== "message") return [];
    const m = e.message as AgentMessage;
    const child = subagentRunOf(m);
    return m.role === "assistant"
      ? [m]
      : child
        ? Array.from({ length: child.requests }, (_, i) => ({ usage: i === 0 ? child.usage : emptyUsage() }))
        : [];
  });
  const sum = (f: (m: Pick<AssistantMessage, "usage">) => number) => replies.reduce((s, m) => s + f(m), 0);
  const totals = {
    requests: replies.length,
    input: sum((m) => m.usage.input),
    cacheRead: sum((m) => m.usage.cacheRead),
    cacheWrite: sum((m) => m.usage.cacheWrite),
    output: sum((m) => m.usage.output),
    cost: sum((m) => m.usage.cost?.total ?? 0),
  };
  if (json) return JSON.stringify({ totals }, null, 2);
  return `session ${store.id}: ${totals.requests} requests, ${totals.input} input, ${totals.cacheRead} cache read, ${totals.cacheWrite} cache write, ${totals.output} output tokens, $${totals.cost.toFixed(4)}`;
}

/** `coil sessions list | export | stats` (the command line parses the arguments). */
function sessionsSubcommand(
  ops: SessionOps,
  dirOption: string | undefined,
  baseDir: string,
  stats: () => SessionStatsService | undefined,
): Subcommand {
  const sessionDir: SubcommandOption = {
    name: "session-dir",
    type: "string",
    valueName: "dir",
    description: "the folder of the sessions (default: this directory's under $COIL_HOME/sessions)",
  };
  const json: SubcommandOption = { name: "json", description: "print JSON" };
  const run =
    (action: string) =>
    (args: string[], io: CliStreams, options: Readonly<Record<string, unknown>>): number =>
      sessionsCommand(action, args[0], options as SessionsOptions, io, ops, dirOption, baseDir, stats);
  return {
    name: "sessions",
    description: "this directory's sessions: list, export and stats",
    commands: [
      {
        name: "list",
        description: "list the sessions, newest first",
        options: [{ name: "all", description: "of every directory" }, json, sessionDir],
        run: run("list"),
      },
      {
        name: "export",
        arguments: "<id|path>",
        description: "write a session as markdown, HTML or JSONL",
        options: [
          {
            name: "format",
            type: "string",
            valueName: "format",
            choices: ["md", "html", "jsonl"],
            description: "md (default), html or jsonl",
          },
          { name: "out", type: "string", valueName: "file", description: "write to this file, not stdout" },
          sessionDir,
        ],
        run: run("export"),
      },
      {
        name: "stats",
        arguments: "<id|path>",
        description: "token and cost totals of a session's active branch",
        options: [json, sessionDir],
        run: run("stats"),
      },
    ],
  };
}

interface SessionsOptions {
  all?: boolean;
  json?: boolean;
  format?: string;
  out?: string;
  "session-dir"?: string;
}

function sessionsCommand(
  action: string,
  ref: string | undefined,
  values: SessionsOptions,
  io: CliStreams,
  ops: SessionOps,
  dirOption: string | undefined,
  baseDir: string,
  stats: () => SessionStatsService | undefined = () => undefined,
): number {
  const root = sessionsRoot(io.env, dirOption, baseDir);
  const dir = values["session-dir"] ? expandHome(values["session-dir"], io.cwd) : sessionDirFor(root, io.cwd);
  if (action === "list") {
    const sessions = values.all ? listAll(ops, root) : listSessions(ops, [dir]);
    if (values.json) io.stdout.write(JSON.stringify(sessions, null, 2) + "\n");
    else if (sessions.length === 0) io.stdout.write(`no sessions in ${values.all ? root : dir}\n`);
    else
      io.stdout.write(
        formatList(sessions) +
          (values.all ? "\n" + sessions.map((s, i) => `${String(i + 1).padStart(3)}  ${s.cwd}`).join("\n") : "") +
          "\n",
      );
    return 0;
  }
  if (action === "stats") {
    const found = resolveSessionRef(ops, ref!, io.cwd, dir, root);
    if ("error" in found || !found.exists) {
      io.stderr.write(`coil sessions stats: ${"error" in found ? found.error : `${found.file} does not exist`}\n`);
      return 1;
    }
    let store: SessionStore;
    try {
      store = SessionStore.open(found.file, { ops });
    } catch (error) {
      io.stderr.write(`coil sessions stats: cannot read ${found.file}: ${messageOf(error)}\n`);
      return 1;
    }
    for (const w of store.warnings) io.stderr.write(`coil: warning: ${w}\n`);
    const renderer = stats();
    const text = renderer
      ? renderer.render(store.path(), { json: values.json === true, title: `session ${store.id} (${found.file})` })
      : basicStats(store, values.json === true);
    io.stdout.write(text.endsWith("\n") ? text : text + "\n");
    return 0;
  }
  if (action === "export") {
    const format = (values.format ?? "md") as ExportFormat;
    const found = resolveSessionRef(ops, ref!, io.cwd, dir, root);
    if ("error" in found || !found.exists) {
      io.stderr.write(`coil sessions export: ${"error" in found ? found.error : `${found.file} does not exist`}\n`);
      return 1;
    }
    let store: SessionStore;
    try {
      store = SessionStore.open(found.file, { ops });
    } catch (error) {
      io.stderr.write(`coil sessions export: cannot read ${found.file}: ${messageOf(error)}\n`);
      return 1;
    }
    for (const w of store.warnings) io.stderr.write(`coil: warning: ${w}\n`);
    const text = exportSession(store, format);
    if (values.out) {
      const out = expandHome(values.out, io.cwd);
      writeFileSync(out, text);
      io.stderr.write(`wrote ${out}\n`);
    } else io.stdout.write(text);
    return 0;
  }
  throw new Error(`coil sessions: no action '${action}'`);
}
