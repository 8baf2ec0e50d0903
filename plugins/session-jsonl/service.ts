/**
 * The `session` service: the open session, kept in step with the agent. Front ends (TUI, RPC) and
 * plugins (compaction, labels, plugin state) use it; the plugin's event taps feed it every message.
 *
 * Longer than ~350 lines on purpose: it is the facade of the contract in api.ts, and most methods are a
 * few lines that keep the open store, its lock and the agent in step (opening, switching, branching).
 * The tree and context live in tree.ts, the file writer in store.ts, listing in catalog.ts.
 */
import { dirname, join } from "node:path";
import {
  CoilError,
  textOf,
  type Agent,
  type AgentEvent,
  type AgentMessage,
  type CliStreams,
  type CustomMessage,
  type PluginContext,
} from "../../api/index.js";
import {
  expandHome,
  latestSession,
  listAll,
  listSessions,
  oneLine,
  resolveSessionRef,
  sessionsRoot,
  type SessionSummary,
} from "./catalog.js";
import { FORMAT_VERSION, type SessionEntry, type SessionHeader } from "./format.js";
import type {
  BranchOptions,
  ChildSession,
  CustomMessageInput,
  SessionInfo,
  SessionService,
  Summarizer,
} from "./api.js";
import { acquireLock, SessionLockedError, type HeldLock } from "./writer-lock.js";
import { codeOf, type SessionOps } from "./file-system.js";
import {
  NOT_EXECUTED_BRANCH,
  NOT_EXECUTED_CRASH,
  SessionStore,
  SessionWriteError,
  sessionDirFor,
  type CompactionInput,
  type SessionState,
} from "./store.js";

export interface ManagerFlags {
  /** From the CLI's start info: print/JSON modes list sessions for `--resume` instead of asking. */
  mode?: string;
  /** `--model`/`--provider` chose the model for this run: do not restore the session's. */
  modelFromCli?: boolean;
  continue?: boolean;
  resume?: boolean;
  session?: string;
  sessionDir?: string;
  noSession?: boolean;
}

interface Opened {
  store: SessionStore;
  lock?: HeldLock;
}

export class SessionManager implements SessionService {
  private current?: SessionStore;
  private lock?: HeldLock;
  private agent?: Agent;
  private io?: CliStreams;
  private root?: string;
  private dir?: string;
  private summarizer?: Summarizer;
  /** A write failure not yet turned into a fatal error. */
  private failure?: SessionWriteError;
  /** appendCompaction was called since the last message: the next `compaction` event is recorded. */
  private compactionRecorded = false;
  private lastModel?: { provider: string; modelId: string };
  /** Custom messages steered into a run, to be stored as custom_message entries when they land. */
  private readonly steered = new WeakMap<object, CustomMessageInput>();
  private readonly exitHook = () => this.lock?.release();
  private flags: ManagerFlags = {};

  constructor(
    private readonly ctx: PluginContext<{ dir?: string; restoreModel: boolean }>,
    private readonly ops: SessionOps,
  ) {}

  // ───────────────────────────── lifecycle ─────────────────────────────

  /** Open or create the session, lock it, repair a crashed tail and load it into the agent. */
  async start(agent: Agent, io: CliStreams, flags: ManagerFlags): Promise<{ exit: number } | undefined> {
    this.agent = agent;
    this.flags = flags;
    this.io = io;
    const cwd = this.ctx.cwd;
    this.root = sessionsRoot(io.env, this.ctx.options.dir, this.ctx.baseDir);
    this.dir = flags.sessionDir ? expandHome(flags.sessionDir, cwd) : sessionDirFor(this.root, cwd);
    if (flags.noSession) {
      this.current = SessionStore.create(cwd, undefined, { ops: this.ops });
      return;
    }
    let file: string | undefined;
    let exists = false;
    if (flags.resume) {
      const picked = await this.pick(io);
      if (typeof picked === "object") return picked;
      file = picked;
      exists = file !== undefined;
    } else if (typeof flags.session === "string" && flags.session) {
      const ref = resolveSessionRef(this.ops, flags.session, cwd, this.dir, this.root);
      if ("error" in ref)
        throw this.ctx.error("SESSION_NOT_FOUND", ref.error, {
          hint: "pass a session file path or the start of a session id",
        });
      file = ref.file;
      exists = ref.exists;
    } else if (flags.continue) {
      file = latestSession(this.ops, this.dir);
      exists = file !== undefined;
      if (!file) this.note(`no earlier session in ${this.dir}; starting a new one`);
    }
    this.adopt(exists ? this.load(file!) : this.fresh(this.dir, file));
    process.once("exit", this.exitHook);
    const closed = this.current!.closeDanglingCalls(NOT_EXECUTED_CRASH);
    if (closed.length) this.note(`closed ${closed.length} tool call(s) left open when the last run stopped`);
    this.restoreModel(agent);
    agent.replaceMessages(this.store.context());
    this.flushWarnings();
  }

  /** Release the lock and close the file (process exit). */
  stop(): void {
    try {
      this.current?.close();
    } finally {
      this.lock?.release();
      this.lock = undefined;
      process.off("exit", this.exitHook);
    }
  }

  /** Open a file for writing: take its lock, read it, and continue an older format in a migrated copy. */
  private load(file: string): Opened {
    let regular = false;
    try {
      regular = this.ops.statSync(file).isFile();
    } catch (cause) {
      throw this.ctx.error("SESSION_NOT_FOUND", `session file ${file} does not exist`, { cause });
    }
    if (!regular) throw this.ctx.error("SESSION_INVALID", `${file} is not a regular file`);
    const lock = this.takeLock(file);
    let store: SessionStore;
    try {
      store = SessionStore.open(file, { ops: this.ops });
    } catch (cause) {
      lock.release();
      if (codeOf(cause) === "ENOENT")
        throw this.ctx.error("SESSION_NOT_FOUND", `session file ${file} does not exist`, { cause });
      throw this.ctx.error("SESSION_INVALID", `cannot read session ${file}: ${(cause as Error).message}`, { cause });
    }
    if (store.header.version > FORMAT_VERSION) {
      lock.release();
      throw this.ctx.error("SESSION_TOO_NEW", store.readOnly!, { hint: "upgrade coil, or start a new session" });
    }
    if (store.header.version < FORMAT_VERSION) {
      let migrated: SessionStore;
      try {
        migrated = store.migrateTo(dirname(file), this.ctx.cwd);
      } catch (cause) {
        throw this.ctx.error(
          "SESSION_WRITE_FAILED",
          `cannot write the migrated copy of ${file}: ${(cause as Error).message}`,
          { cause },
        );
      } finally {
        lock.release();
      }
      this.note(
        `${file} is in the older session format ${store.header.version}; continuing in a migrated copy ${migrated.file} (the original is left as it is)`,
      );
      migrated.warnings.push(...store.warnings);
      return { store: migrated, lock: this.takeLock(migrated.file!) };
    }
    return { store, lock };
  }

  /** A new session (its file appears with the first entry); the lock is taken now. */
  private fresh(dir: string | undefined, file?: string): Opened {
    const store = SessionStore.create(this.ctx.cwd, dir, { ops: this.ops, file });
    return { store, lock: store.file ? this.takeLock(store.file) : undefined };
  }

  private takeLock(file: string): HeldLock {
    try {
      this.ops.mkdirSync(dirname(file), { recursive: true });
      return acquireLock(this.ops, file, (message) => this.note(message));
    } catch (cause) {
      if (cause instanceof SessionLockedError) {
        throw this.ctx.error("SESSION_LOCKED", cause.message, {
          hint: `wait for that coil to finish, or start another session (--session-dir, --no-session); if you are sure that process is gone, delete ${file}.lock`,
        });
      }
      throw this.ctx.error("SESSION_WRITE_FAILED", `cannot lock session ${file}: ${(cause as Error).message}`, {
        cause,
        hint: `make ${dirname(file)} writable, choose another folder with --session-dir, or run with --no-session`,
      });
    }
  }

  /** Make `opened` the open session. */
  private adopt(opened: Opened): void {
    this.current = opened.store;
    this.lock = opened.lock;
    this.failure = undefined;
    this.lastModel = opened.store.state().model;
  }

  private restoreModel(agent: Agent): void {
    const { model: recorded, thinkingLevel } = this.store.state();
    if (!this.ctx.options.restoreModel) return;
    // The thinking level the session ran with (the models plugin's thinking.ts records it), unless --thinking chose this run's.
    if (thinkingLevel && this.ctx.flags.get("thinking") === undefined)
      agent.setRequestOptions({ thinking: thinkingLevel as never });
    if (!recorded || this.flags.modelFromCli) return;
    const now = agent.state;
    if (now.provider === recorded.provider && now.model.id === recorded.modelId) return;
    const provider = agent.view.providers.get(recorded.provider);
    if (!provider || (provider.isConfigured && !provider.isConfigured())) {
      this.note(
        `the session used ${recorded.provider}/${recorded.modelId}, which is not available; continuing with ${now.provider}/${now.model.id}`,
      );
      return;
    }
    const model = provider.models?.find((m) => m.id === recorded.modelId) ?? provider.resolveModel?.(recorded.modelId);
    if (model) agent.setModel(provider.id, model);
  }

  /** `--resume`: list and exit in print mode; otherwise ask on the terminal. */
  private async pick(io: CliStreams): Promise<string | undefined | { exit: number }> {
    const sessions = listSessions(this.ops, [this.dir!]);
    const table = formatList(sessions);
    if (this.flags.mode === "text" || this.flags.mode === "json" || !io.stdin.isTTY) {
      io.stdout.write(
        sessions.length ? `${table}\nresume one with: coil --session <id> ...\n` : `no sessions in ${this.dir}\n`,
      );
      return { exit: 0 };
    }
    if (sessions.length === 0) {
      this.note(`no sessions in ${this.dir}; starting a new one`);
      return undefined;
    }
    io.stderr.write(`${table}\n`);
    const { createInterface } = await import("node:readline"); // only when asking
    const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
    try {
      for (;;) {
        io.stderr.write(`resume which session? [1-${sessions.length}, or an id; empty starts a new one] `);
        const answer = await new Promise<string | undefined>((resolve) => {
          rl.once("line", resolve);
          rl.once("close", () => resolve(undefined));
        });
        const a = answer?.trim() ?? "";
        if (!a) return undefined;
        const n = Number(a);
        if (Number.isInteger(n) && n >= 1 && n <= sessions.length) return sessions[n - 1]!.file;
        const hit = sessions.filter((s) => s.id.startsWith(a));
        if (hit.length === 1) return hit[0]!.file;
        io.stderr.write(hit.length ? `'${a}' matches ${hit.length} sessions\n` : `no session '${a}'\n`);
      }
    } finally {
      rl.close();
    }
  }

  private note(message: string): void {
    if (this.io) this.io.stderr.write(`coil: note: [${this.ctx.id}] ${message}\n`);
    else this.ctx.log.info(message);
  }

  private flushWarnings(): void {
    const store = this.current;
    if (!store || store.warnings.length === 0) return;
    for (const w of store.warnings.splice(0)) {
      if (this.io) this.io.stderr.write(`coil: warning: [${this.ctx.id}] ${w}\n`);
      else this.ctx.log.warn(w);
    }
  }

  // ───────────────────────────── events from the loop ─────────────────────────────

  /** message_end: append the message as one line, right now (synchronously, in order). */
  onMessage(message: AgentMessage): void {
    const store = this.current;
    if (!store || store.entryIdOf(message) !== undefined) return;
    this.compactionRecorded = false;
    try {
      if (message.role === "assistant") this.noteModel(message.provider, message.model);
      else if (!this.lastModel && this.agent) this.noteModel(this.agent.state.provider, this.agent.state.model.id);
      const custom = this.steered.get(message);
      if (custom && message.role === "custom") {
        const entry = store.append({
          type: "custom_message",
          customType: custom.customType,
          content: custom.content,
          display: custom.display !== false,
          details: custom.details,
        });
        store.linkRendered(entry.id, message);
      } else store.appendMessage(message);
    } catch (cause) {
      // Reported by the next before_request or turn_end tap, which ends the run (or by agent_end).
      this.failure = cause instanceof SessionWriteError ? cause : new SessionWriteError(store.file ?? "session", cause);
    }
  }

  /**
   * turn_end (after every other tap): the turn is on disk, or the run stops with SESSION_WRITE_FAILED.
   * In the middle of a tool loop (`more`) the fsync runs in the background and a failure stops the next turn.
   */
  endTurn(more = false): void {
    this.throwIfFailed();
    try {
      if (more) this.current?.syncSoon();
      else this.current?.sync();
    } catch (cause) {
      this.failure = cause as SessionWriteError;
      this.throwIfFailed();
    }
  }

  /** before_request (stage EARLY): never ask the model for more after a write failed. */
  throwIfFailed(): void {
    const failure = this.failure ?? this.current?.takeSyncFailure();
    if (!failure) return;
    this.failure = undefined;
    throw this.ctx.error("SESSION_WRITE_FAILED", failure.message.replace(/^cannot write/, "cannot append to"), {
      fatal: true,
      cause: failure.cause,
      hint: "free disk space or fix the permissions of the sessions folder, then continue with coil --continue",
    });
  }

  /** agent_end: sync, and report a failure that came after the last turn. */
  endRun(): void {
    try {
      this.current?.sync();
    } catch (cause) {
      this.failure = cause as SessionWriteError;
    }
    if (this.failure) {
      this.ctx.log.error(`SESSION_WRITE_FAILED ${this.failure.message}`);
      this.failure = undefined;
    }
    this.flushWarnings();
  }

  /** `compaction` event: record it, unless the strategy already did through appendCompaction. */
  onCompaction(event: Extract<AgentEvent, { type: "compaction" }>): void {
    if (this.compactionRecorded) {
      this.compactionRecorded = false;
      return;
    }
    const store = this.current;
    const view = this.agent?.state.messages;
    if (!store || !view) return;
    const before = store.context();
    let prefix = view.length;
    for (let i = 0; i < view.length; i++) {
      if (store.entryIdOf(view[i]!) !== undefined) {
        prefix = i;
        break;
      }
    }
    let messages = view.slice(0, prefix);
    let firstKeptEntryId: string | undefined;
    if (prefix < view.length) {
      const first = view[prefix]!;
      const id = store.entryIdOf(first)!;
      const at = before.indexOf(first);
      const same =
        at >= 0 &&
        before.findIndex((m) => store.entryIdOf(m) === id) === at &&
        before.length - at === view.length - prefix &&
        view.every((m, i) => i < prefix || before[at + i - prefix] === m);
      if (same) firstKeptEntryId = id;
      else messages = view.slice(); // cannot be expressed as "keep from entry X": store the whole view
    }
    try {
      store.appendCompaction({
        summary: messages.map((m) => textOf(m)).join("\n\n"),
        messages,
        firstKeptEntryId,
        tokensBefore: event.tokensBefore,
        tokensAfter: event.tokensAfter,
        by: event.by,
      });
    } catch (cause) {
      this.failure = cause as SessionWriteError;
    }
  }

  // ───────────────────────────── the service ─────────────────────────────

  private get store(): SessionStore {
    if (!this.current) {
      throw new CoilError(
        "SESSION_NOT_OPEN",
        "the session is not open yet: it opens when coil starts (PluginHost.start)",
        { plugin: this.ctx.id },
      );
    }
    return this.current;
  }

  get persistent(): boolean {
    return this.store.persistent;
  }
  get file(): string | undefined {
    return this.store.file;
  }
  get id(): string {
    return this.store.id;
  }
  get header(): SessionHeader {
    return this.store.header;
  }
  get cwd(): string {
    return this.ctx.cwd;
  }
  get name(): string | undefined {
    return this.store.name;
  }
  get leafId(): string | null {
    return this.store.leafId;
  }
  get warnings(): readonly string[] {
    return this.store.warnings;
  }
  entries(): readonly SessionEntry[] {
    return this.store.entries;
  }
  entry(id: string): SessionEntry | undefined {
    return this.store.entry(id);
  }
  children(id: string | null): readonly SessionEntry[] {
    return this.store.children(id);
  }
  path(leafId?: string | null): readonly SessionEntry[] {
    return this.store.path(leafId === undefined ? this.store.leafId : leafId);
  }
  context(leafId?: string | null): AgentMessage[] {
    return this.store.context(leafId === undefined ? this.store.leafId : leafId);
  }
  state(leafId?: string | null): SessionState {
    return this.store.state(leafId === undefined ? this.store.leafId : leafId);
  }
  labels(): ReadonlyMap<string, string> {
    return this.store.labels;
  }
  entryIdOf(message: AgentMessage): string | undefined {
    return this.current?.entryIdOf(message);
  }
  isForModel(message: AgentMessage): boolean {
    return message.role === "custom" && (this.current?.forModel.has(message) === true || this.steered.has(message));
  }

  appendMessage(message: AgentMessage): SessionEntry {
    this.compactionRecorded = false;
    return this.store.appendMessage(message);
  }
  appendModelChange(provider: string, modelId: string): SessionEntry {
    this.lastModel = { provider, modelId };
    return this.store.append({ type: "model_change", provider, modelId });
  }
  appendThinkingLevelChange(thinkingLevel: string): SessionEntry {
    return this.store.append({ type: "thinking_level_change", thinkingLevel });
  }
  appendActiveToolsChange(tools: readonly string[]): SessionEntry {
    return this.store.append({ type: "active_tools_change", tools: [...tools] });
  }
  appendCompaction(compaction: CompactionInput): SessionEntry {
    const entry = this.store.appendCompaction(compaction);
    this.compactionRecorded = true;
    return entry;
  }
  appendCustom(customType: string, data?: unknown): SessionEntry {
    return this.store.append({ type: "custom", customType, data });
  }
  appendCustomMessage(input: CustomMessageInput): CustomMessage {
    const agent = this.agent;
    if (agent?.state.isRunning) {
      const message: CustomMessage = {
        role: "custom",
        customType: input.customType,
        content: input.content,
        display: input.display !== false,
        details: input.details,
        timestamp: Date.now(),
      };
      this.steered.set(message, input);
      agent.steer(message);
      return message;
    }
    const entry = this.store.append({
      type: "custom_message",
      customType: input.customType,
      content: input.content,
      display: input.display !== false,
      details: input.details,
    });
    this.syncAgent();
    return this.store.rendered(entry)[0] as CustomMessage;
  }
  setLabel(entryId: string, label?: string): SessionEntry {
    if (!this.store.entry(entryId)) throw this.unknownEntry(entryId);
    return this.store.append({ type: "label", targetId: entryId, ...(label ? { label } : {}) });
  }
  setName(name: string): SessionEntry {
    return this.store.append({ type: "session_info", name });
  }

  async branch(entryId: string | null, options: BranchOptions = {}): Promise<SessionEntry | undefined> {
    this.assertIdle("branch");
    const store = this.store;
    if (entryId !== null && !store.entry(entryId)) throw this.unknownEntry(entryId);
    const from = store.leafId;
    let summary = options.summary;
    if (summary === undefined && options.summarize) {
      const left = this.abandoned(from, entryId);
      if (left.length) summary = await this.summarize(left, options);
    }
    store.leafId = entryId;
    store.closeDanglingCalls(NOT_EXECUTED_BRANCH);
    const entry = summary ? store.append({ type: "branch_summary", fromId: from, summary }) : undefined;
    this.syncAgent();
    return entry;
  }

  fork(entryId: string | null, options: { switch?: boolean } = {}): SessionInfo {
    if (options.switch !== false) this.assertIdle("fork");
    const store = this.store;
    if (entryId !== null && !store.entry(entryId)) throw this.unknownEntry(entryId);
    let next: SessionStore;
    try {
      next = store.forkTo(entryId, store.persistent ? this.dirFor(store) : undefined, this.ctx.cwd);
    } catch (cause) {
      throw this.ctx.error("SESSION_WRITE_FAILED", `cannot write the forked session: ${(cause as Error).message}`, {
        cause,
      });
    }
    const info = { id: next.id, file: next.file, leafId: next.leafId };
    if (options.switch === false) next.close();
    else this.switchTo({ store: next, lock: next.file ? this.takeLock(next.file) : undefined }, NOT_EXECUTED_BRANCH);
    return info;
  }

  clone(options: { switch?: boolean } = {}): SessionInfo {
    return this.fork(this.store.leafId, options);
  }

  open(ref: string): SessionInfo {
    this.assertIdle("open another session");
    const dir =
      this.dir ??
      sessionDirFor(this.root ?? sessionsRoot(process.env, this.ctx.options.dir, this.ctx.baseDir), this.ctx.cwd);
    const resolved = resolveSessionRef(this.ops, ref, this.ctx.cwd, dir, this.root ?? dirname(dir));
    if ("error" in resolved) throw this.ctx.error("SESSION_NOT_FOUND", resolved.error);
    if (this.current?.file === resolved.file) return this.info();
    this.switchTo(resolved.exists ? this.load(resolved.file) : this.fresh(dir, resolved.file), NOT_EXECUTED_CRASH);
    return this.info();
  }

  newSession(): SessionInfo {
    this.assertIdle("start a new session");
    const store = this.store;
    this.switchTo(
      store.persistent
        ? this.fresh(this.dirFor(store))
        : { store: SessionStore.create(this.ctx.cwd, undefined, { ops: this.ops }) },
      NOT_EXECUTED_CRASH,
    );
    return this.info();
  }

  createChild(link: { toolCallId: string; agent: string }): ChildSession {
    const parent = this.store;
    const dir = parent.persistent ? join(this.dirFor(parent), "subagents") : undefined;
    const store = SessionStore.create(this.ctx.cwd, dir, {
      ops: this.ops,
      header: {
        parentSession: {
          path: parent.file ?? "(memory)",
          id: parent.id,
          toolCallId: link.toolCallId,
          agent: link.agent,
        },
      },
    });
    const fail = (cause: unknown) =>
      this.ctx.error(
        "SESSION_WRITE_FAILED",
        `cannot write sub-agent session ${store.file}: ${(cause as Error).message}`,
        { cause },
      );
    return {
      id: store.id,
      file: store.file,
      append: (message) => {
        try {
          store.appendMessage(message);
        } catch (cause) {
          throw fail(cause);
        }
      },
      close: () => {
        try {
          store.close();
        } catch (cause) {
          throw fail(cause);
        }
      },
    };
  }

  list(options: { cwd?: string; all?: boolean } = {}): SessionSummary[] {
    const root = this.root ?? sessionsRoot(process.env, this.ctx.options.dir, this.ctx.baseDir);
    if (options.all) return listAll(this.ops, root);
    const dir = options.cwd ? sessionDirFor(root, options.cwd) : (this.dir ?? sessionDirFor(root, this.ctx.cwd));
    return listSessions(this.ops, [dir]);
  }

  setSummarizer(summarizer: Summarizer | undefined): void {
    this.summarizer = summarizer;
  }

  flush(): void {
    this.store.sync();
  }

  // ───────────────────────────── helpers ─────────────────────────────

  private dirFor(store: SessionStore): string {
    return store.file ? dirname(store.file) : this.dir!;
  }

  private info(): SessionInfo {
    return { id: this.store.id, file: this.store.file, leafId: this.store.leafId };
  }

  private switchTo(next: Opened, danglingText: string): void {
    const old = this.current;
    const oldLock = this.lock;
    this.adopt(next);
    try {
      old?.close();
    } catch {
      // the old session's last sync failed; that was reported when it happened
    }
    oldLock?.release();
    next.store.closeDanglingCalls(danglingText);
    if (this.agent) this.restoreModel(this.agent);
    this.syncAgent();
    this.flushWarnings();
  }

  private syncAgent(): void {
    if (this.agent && !this.agent.state.isRunning) this.agent.replaceMessages(this.store.context());
  }

  private assertIdle(what: string): void {
    if (this.agent?.state.isRunning)
      throw this.ctx.error("AGENT_BUSY", `cannot ${what} while a run is going; wait for it to end or abort it`);
  }

  private unknownEntry(id: string): CoilError {
    return this.ctx.error("SESSION_ENTRY_NOT_FOUND", `session ${this.store.id} has no entry '${id}'`);
  }

  private noteModel(provider: string, modelId: string): void {
    const last = this.lastModel;
    if (last && last.provider === provider && last.modelId === modelId) return;
    this.lastModel = { provider, modelId };
    this.store.append({ type: "model_change", provider, modelId });
  }

  /** Messages on the branch being left, after the point where it meets the target. */
  private abandoned(from: string | null, to: string | null): AgentMessage[] {
    const store = this.store;
    const keep = new Set(store.path(to).map((e) => e.id));
    const left = store.path(from).filter((e) => !keep.has(e.id));
    if (left.length === 0) return [];
    const leftIds = new Set(left.map((e) => e.id));
    return store.context(from).filter((m) => {
      const id = store.entryIdOf(m);
      return id !== undefined && leftIds.has(id);
    });
  }

  private async summarize(messages: AgentMessage[], options: BranchOptions): Promise<string> {
    const signal = options.signal ?? new AbortController().signal;
    const instructions =
      options.instructions ??
      "Summarise this branch of the conversation, which the user is leaving: goals, decisions, findings, files touched, open questions.";
    const summarizer = this.summarizer ?? this.ctx.services.get("branch-summary")?.summarize;
    if (summarizer) return summarizer(messages, { instructions, signal });
    throw this.ctx.error("NO_SUMMARIZER", "cannot summarise the branch: the preset has no branch-summary service", {
      hint: "pass the summary text yourself, or add a compaction plugin (compaction-summary provides it)",
    });
  }
}

export function formatList(sessions: readonly SessionSummary[]): string {
  const rows = sessions.map((s, i) => {
    const when = new Date(s.modified).toISOString().replace("T", " ").slice(0, 16);
    const title = s.name
      ? `${s.name}${s.firstMessage ? ` — ${s.firstMessage}` : ""}`
      : (s.firstMessage ?? "(no messages)");
    return `${String(i + 1).padStart(3)}  ${s.id.slice(0, 8)}  ${when}  ${String(s.messages).padStart(5)}  ${oneLine(title, 70)}`;
  });
  return [`  #  id        modified (UTC)    msgs  name / first message`, ...rows].join("\n");
}
