/**
 * One session: its entries in file order, the tree they form, the current leaf, and the context
 * (the path from the root to the leaf, as messages). Appending writes one complete line with one
 * synchronous write; nothing already written is ever changed.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { dirname, join } from "node:path";
import {
  errorResult,
  toolCallsOf,
  unansweredCalls,
  type AgentMessage,
  type CustomMessage,
  type ToolCall,
  type UserMessage,
} from "../../kernel/index.js";
import {
  FORMAT_VERSION,
  serialize,
  type CompactionEntry,
  type CustomMessageEntry,
  type NewEntry,
  type SessionEntry,
  type SessionHeader,
} from "./format.js";
import { codeOf, nodeOps, type SessionOps } from "./file-system.js";
import { readSession } from "./reader.js";

/** A write (or sync) of the session file failed: the run must stop, loudly. */
export class SessionWriteError extends Error {
  readonly code = "SESSION_WRITE_FAILED";
  constructor(
    readonly file: string,
    cause: unknown,
  ) {
    const why = codeOf(cause) === "ENOSPC" ? "the disk is full" : codeOf(cause) === "EACCES" || codeOf(cause) === "EPERM" ? "permission denied" : undefined;
    super(`cannot write session ${file}${why ? ` (${why})` : ""}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

/** Model, thinking level and tools in effect at a point of the tree. */
export interface SessionState {
  model?: { provider: string; modelId: string };
  thinkingLevel?: string;
  activeTools?: string[];
}

export interface CompactionInput {
  /** Text of the summary (shown in lists and exports; the model sees it when `messages` is absent). */
  summary: string;
  /** The exact messages that replace what was summarised, when the strategy produced messages. */
  messages?: readonly AgentMessage[];
  /** First entry of the previous context that is kept after the summary; absent keeps nothing. */
  firstKeptEntryId?: string;
  tokensBefore: number;
  tokensAfter?: number;
  /** Plugin id of the strategy. */
  by?: string;
  details?: unknown;
}

export const NOT_EXECUTED_CRASH = "Not executed: coil stopped before this tool finished (the session was resumed after a crash or kill).";
export const NOT_EXECUTED_BRANCH = "Not executed: the conversation was branched at this call, before its result.";
const NOT_EXECUTED_LOST = "Not executed: this result was lost from the session file (a damaged line).";

/** `<root>/<readable part of the cwd>-<hash>`: readable, and two directories never share a folder. */
export function sessionDirFor(root: string, cwd: string): string {
  const readable = cwd.replace(/^[/\\]+/, "").replace(/[^A-Za-z0-9._-]+/g, "-").replace(/-+/g, "-").slice(-60) || "root";
  let hash = 0x811c9dc5;
  for (let i = 0; i < cwd.length; i++) hash = Math.imul(hash ^ cwd.charCodeAt(i), 0x01000193) >>> 0;
  return join(root, `${readable}-${hash.toString(16).padStart(8, "0")}`);
}

export function sessionFileName(header: SessionHeader): string {
  return `${header.timestamp.replace(/[:.]/g, "-")}_${header.id}.jsonl`;
}

export function newHeader(cwd: string, extra: Partial<SessionHeader> = {}): SessionHeader {
  return { type: "session", version: FORMAT_VERSION, id: randomUUID(), timestamp: new Date().toISOString(), cwd, ...extra };
}

export interface OpenOptions {
  ops?: SessionOps;
}

export class SessionStore {
  /** Entries in file order. */
  readonly entries: SessionEntry[] = [];
  /** Lines skipped or repaired while reading (file:line: what). */
  readonly warnings: string[] = [];
  leafId: string | null = null;
  /** Why this store cannot be written (e.g. a newer format version). */
  readOnly?: string;
  /** The last write failure, until the next successful write. */
  failure?: SessionWriteError;

  private readonly byId = new Map<string, SessionEntry>();
  private kids?: Map<string | null, SessionEntry[]>;
  private readonly messageIds = new WeakMap<object, string>();
  private readonly renderedCache = new Map<string, AgentMessage[]>();
  /** Messages rendered from custom_message entries: converted to user messages for the model. */
  readonly forModel = new WeakSet<object>();
  private readonly labelMap = new Map<string, string>();
  private sessionName?: string;
  private fd?: number;
  private headerWritten: boolean;
  private needsNewline = false;
  private dirSynced = true;
  private readonly reported = new Set<string>();
  private memo?: { key: string; messages: AgentMessage[] };
  private stateMemo?: { key: string; state: SessionState };

  private constructor(
    readonly ops: SessionOps,
    public header: SessionHeader,
    /** Undefined for an in-memory session (`--no-session`). */
    readonly file: string | undefined,
    onDisk: boolean,
  ) {
    this.headerWritten = onDisk;
  }

  /** A new session. With a `dir`, its file is created there on the first append. */
  static create(cwd: string, dir: string | undefined, options: OpenOptions & { header?: Partial<SessionHeader>; file?: string } = {}): SessionStore {
    const header = newHeader(cwd, options.header);
    const file = options.file ?? (dir ? join(dir, sessionFileName(header)) : undefined);
    return new SessionStore(options.ops ?? nodeOps, header, file, false);
  }

  /** Read an existing session file. Older formats are migrated in memory. */
  static open(file: string, options: OpenOptions = {}): SessionStore {
    const ops = options.ops ?? nodeOps;
    const read = readSession(ops, file);
    const store = new SessionStore(ops, read.header, file, true);
    store.warnings.push(...read.warnings);
    store.needsNewline = read.endsTorn;
    if (read.version > FORMAT_VERSION) {
      store.readOnly = `${file} was written by a newer coil (session format ${read.version}; this coil writes ${FORMAT_VERSION}). Upgrade coil to continue it.`;
    } else if (read.version < FORMAT_VERSION) {
      store.readOnly = `${file} is in the older session format ${read.version}`;
    }
    for (const entry of read.entries) store.add(entry, true);
    store.leafId = read.entries.at(-1)?.id ?? null;
    return store;
  }

  get id(): string {
    return this.header.id;
  }

  get name(): string | undefined {
    return this.sessionName;
  }

  get labels(): ReadonlyMap<string, string> {
    return this.labelMap;
  }

  get persistent(): boolean {
    return this.file !== undefined;
  }

  entry(id: string): SessionEntry | undefined {
    return this.byId.get(id);
  }

  /** Entry that produced this message object (a message, compaction summary, branch summary ...). */
  entryIdOf(message: object): string | undefined {
    return this.messageIds.get(message);
  }

  children(id: string | null): readonly SessionEntry[] {
    if (!this.kids) {
      this.kids = new Map();
      for (const e of this.entries) this.indexChild(e);
    }
    return this.kids.get(id) ?? [];
  }

  /** Entries from the root to `leafId`, in order. */
  path(leafId: string | null = this.leafId): SessionEntry[] {
    // A parent always exists before its child (see add()), so the walk cannot loop.
    const out: SessionEntry[] = [];
    for (let id = leafId; id !== null; ) {
      const e = this.byId.get(id);
      if (!e) break;
      out.push(e);
      id = e.parentId;
    }
    return out.reverse();
  }

  /** Model, thinking level and active tools in effect at `leafId`. */
  state(leafId: string | null = this.leafId): SessionState {
    const key = `${leafId}|${this.entries.length}`;
    if (this.stateMemo?.key !== key) this.stateMemo = { key, state: this.buildState(leafId) };
    const { model, thinkingLevel, activeTools } = this.stateMemo.state;
    return { ...(model ? { model: { ...model } } : {}), ...(thinkingLevel ? { thinkingLevel } : {}), ...(activeTools ? { activeTools: [...activeTools] } : {}) };
  }

  private buildState(leafId: string | null): SessionState {
    const state: SessionState = {};
    for (const e of this.path(leafId)) {
      if (e.type === "model_change") state.model = { provider: e.provider as string, modelId: e.modelId as string };
      else if (e.type === "thinking_level_change") state.thinkingLevel = e.thinkingLevel as string;
      else if (e.type === "active_tools_change") state.activeTools = [...(e.tools as string[])];
      else if (e.type === "message" && (e.message as AgentMessage).role === "assistant" && !state.model) {
        const m = e.message as { provider: string; model: string };
        state.model = { provider: m.provider, modelId: m.model };
      }
    }
    return state;
  }

  /**
   * The messages of the path to `leafId`, after the newest compaction on it, repaired so every tool
   * call has exactly one result right after it and no result lacks its call.
   */
  context(leafId: string | null = this.leafId): AgentMessage[] {
    const raw = this.rawContext(leafId);
    const trailing = unansweredCalls(raw);
    return trailing.length ? [...raw, ...trailing.map((c) => errorResult(c, NOT_EXECUTED_CRASH))] : raw.slice();
  }

  /** Tool calls at the end of the context that have no result (to close before a run goes on). */
  danglingCalls(leafId: string | null = this.leafId): ToolCall[] {
    return unansweredCalls(this.rawContext(leafId));
  }

  private rawContext(leafId: string | null): AgentMessage[] {
    // Resuming asks for the same context several times (dangling calls, model, the agent): compute it once.
    const key = `${leafId}|${this.entries.length}`;
    if (this.memo?.key === key) return this.memo.messages;
    const messages = this.buildContext(leafId);
    this.memo = { key, messages };
    return messages;
  }

  private buildContext(leafId: string | null): AgentMessage[] {
    let messages: AgentMessage[] = [];
    let ids: string[] = [];
    for (const e of this.path(leafId)) {
      if (e.type === "message") {
        messages.push(e.message as AgentMessage);
        ids.push(e.id);
      } else if (e.type === "custom_message" || e.type === "branch_summary") {
        for (const m of this.rendered(e)) (messages.push(m), ids.push(e.id));
      } else if (e.type === "compaction") {
        const c = e as CompactionEntry;
        let from = messages.length;
        if (c.firstKeptEntryId !== undefined) {
          from = ids.indexOf(c.firstKeptEntryId);
          if (from < 0) {
            this.warnOnce(`compaction ${c.id}: its first kept entry ${c.firstKeptEntryId} is not on this path; keeping everything before it`);
            from = 0;
          }
        }
        const prefix = this.rendered(e);
        messages = [...prefix, ...messages.slice(from)];
        ids = [...prefix.map(() => e.id), ...ids.slice(from)];
      }
    }
    return this.repairPairs(messages);
  }

  /** Drop results without their call; give calls whose result was lost a synthetic error result. */
  private repairPairs(messages: AgentMessage[]): AgentMessage[] {
    let out: AgentMessage[] | undefined; // a copy, made at the first change
    let pending: Map<string, ToolCall> | undefined;
    const flush = (i: number) => {
      if (pending && pending.size > 0) {
        out ??= messages.slice(0, i);
        for (const call of pending.values()) out.push(errorResult(call, NOT_EXECUTED_LOST));
        this.warnOnce(`tool call(s) ${[...pending.keys()].join(", ")} have no result in the file; the model sees an error result instead`);
      }
      pending = undefined;
    };
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]!;
      if (m.role === "toolResult") {
        if (pending?.delete(m.toolCallId)) out?.push(m);
        else {
          out ??= messages.slice(0, i);
          this.warnOnce(`tool result ${m.toolCallId} has no matching call right before it; left out of the context`);
        }
        continue;
      }
      if (m.role !== "custom") flush(i);
      if (m.role === "assistant") {
        const calls = toolCallsOf(m);
        if (calls.length) pending = new Map(calls.map((c) => [c.id, c]));
      }
      out?.push(m);
    }
    // Calls still open at the end are the caller's business (see context() and danglingCalls()).
    return out ?? messages;
  }

  /** Messages a compaction, branch summary or custom_message entry stands for (same objects each time). */
  rendered(e: SessionEntry): AgentMessage[] {
    let out = this.renderedCache.get(e.id);
    if (out) return out;
    const ts = Date.parse(e.timestamp) || 0;
    if (e.type === "compaction") {
      const c = e as CompactionEntry;
      out = c.messages?.length ? c.messages : [summaryMessage("The conversation before this point was compacted. Summary of it:", c.summary, ts)];
    } else if (e.type === "branch_summary") {
      out = [summaryMessage("The user explored another branch of this conversation and came back here. Summary of that branch:", e.summary as string, ts)];
    } else {
      const c = e as CustomMessageEntry;
      const m: CustomMessage = { role: "custom", customType: c.customType, content: c.content, display: c.display !== false, details: c.details, timestamp: ts };
      this.forModel.add(m);
      out = [m];
    }
    for (const m of out) this.messageIds.set(m, e.id);
    this.renderedCache.set(e.id, out);
    return out;
  }

  /** Tie a live message to the entry that stores it (a custom message steered into a run). */
  linkRendered(entryId: string, message: AgentMessage): void {
    this.renderedCache.set(entryId, [message]);
    this.messageIds.set(message, entryId);
    if (message.role === "custom") this.forModel.add(message);
  }

  private warnOnce(message: string): void {
    const line = `${this.file ?? "session"}: ${message}`;
    if (this.reported.has(line)) return;
    this.reported.add(line);
    this.warnings.push(line);
  }

  // ───────────────────────────── writing ─────────────────────────────

  /** Append an entry after the current leaf (which it becomes). Throws SessionWriteError on failure. */
  append(partial: NewEntry, parentId: string | null = this.leafId): SessionEntry {
    if (this.readOnly) throw new SessionWriteError(this.file ?? "session", new Error(this.readOnly));
    const { type, ...rest } = partial;
    const entry = { type, id: this.newId(), parentId, timestamp: new Date().toISOString(), ...rest } as SessionEntry;
    this.write(entry);
    this.add(entry, false);
    this.leafId = entry.id;
    return entry;
  }

  appendMessage(message: AgentMessage): SessionEntry {
    const entry = this.append({ type: "message", message });
    this.messageIds.set(message, entry.id);
    return entry;
  }

  appendCompaction(input: CompactionInput): SessionEntry {
    const { messages, ...rest } = input;
    return this.append({ type: "compaction", ...rest, ...(messages?.length ? { messages: [...messages] } : {}) });
  }

  /** Append error results for calls left open at the leaf (after a crash, or branching at a call). */
  closeDanglingCalls(text = NOT_EXECUTED_CRASH): SessionEntry[] {
    return this.danglingCalls().map((call) => this.appendMessage(errorResult(call, text)));
  }

  /** fsync the file (end of every turn). */
  sync(): void {
    if (this.fd === undefined || !this.file) return;
    try {
      this.ops.fsyncSync(this.fd);
      if (!this.dirSynced) {
        // A new file's directory entry must reach the disk too, or a power cut could lose the file.
        const dfd = this.ops.openSync(dirname(this.file), "r");
        try {
          this.ops.fsyncSync(dfd);
        } catch {
          // some file systems do not sync directories
        } finally {
          this.ops.closeSync(dfd);
        }
        this.dirSynced = true;
      }
    } catch (cause) {
      throw (this.failure = new SessionWriteError(this.file, cause));
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      this.sync();
    } finally {
      try {
        this.ops.closeSync(this.fd);
      } catch {
        // closing cannot lose data that fsync kept
      }
      this.fd = undefined;
    }
  }

  /** Write this session's header and `entries` into a new file (fork, clone, migration). */
  static writeNew(file: string, header: SessionHeader, entries: readonly SessionEntry[], ops: SessionOps = nodeOps): SessionStore {
    const store = new SessionStore(ops, header, file, false);
    for (const e of entries) {
      store.write(e);
      store.add(e, false);
    }
    if (entries.length === 0) store.write(undefined);
    store.leafId = entries.at(-1)?.id ?? null;
    store.sync();
    return store;
  }

  /**
   * A new session holding the path from the root to `entryId` (fork; at the leaf it is a clone),
   * recording this one as its parent. In `dir`, or in memory when `dir` is undefined.
   */
  forkTo(entryId: string | null, dir: string | undefined, cwd: string): SessionStore {
    const entries = this.path(entryId);
    const header = newHeader(cwd, { parentSession: { path: this.file ?? "(memory)", id: this.id, entryId } });
    if (!dir) return SessionStore.memory(cwd, entries, header);
    return SessionStore.writeNew(join(dir, sessionFileName(header)), header, entries, this.ops);
  }

  /** Continue an older-format session in a new file of the current format; the original is left as is. */
  migrateTo(dir: string, cwd: string): SessionStore {
    const header = newHeader(this.header.cwd || cwd, { parentSession: { path: this.file ?? "(memory)", id: this.id }, migratedFrom: this.header.version });
    const store = SessionStore.writeNew(join(dir, sessionFileName(header)), header, this.entries, this.ops);
    store.leafId = this.leafId;
    return store;
  }

  /** An in-memory copy holding `entries` (fork and clone of a `--no-session` session). */
  static memory(cwd: string, entries: readonly SessionEntry[], header: Partial<SessionHeader> = {}): SessionStore {
    const store = SessionStore.create(cwd, undefined, { header });
    for (const e of entries) store.add(e, false);
    store.leafId = entries.at(-1)?.id ?? null;
    return store;
  }

  /** Whether anything of this session is on disk yet (a new session's file appears on the first append). */
  get written(): boolean {
    return this.headerWritten;
  }

  private write(value: object | undefined): void {
    const file = this.file;
    if (!file) return;
    try {
      if (this.fd === undefined) {
        if (!this.headerWritten) {
          this.ops.mkdirSync(dirname(file), { recursive: true });
          this.dirSynced = false;
        }
        this.fd = this.ops.openSync(file, "a", 0o600);
      }
      if (!this.headerWritten) {
        this.writeLine(this.header);
        this.headerWritten = true;
      }
      if (value !== undefined) this.writeLine(value);
      this.failure = undefined;
    } catch (cause) {
      throw (this.failure = cause instanceof SessionWriteError ? cause : new SessionWriteError(file, cause));
    }
  }

  /** One complete line in one write; a short write (rare) is finished, never left torn. */
  private writeLine(value: unknown): void {
    const text = (this.needsNewline ? "\n" : "") + serialize(value) + "\n";
    const bytes = Buffer.from(text, "utf8");
    try {
      let done = this.ops.writeSync(this.fd!, bytes);
      while (done < bytes.length) {
        const n = this.ops.writeSync(this.fd!, bytes.subarray(done));
        if (n <= 0) throw new Error(`wrote ${done} of ${bytes.length} bytes`);
        done += n;
      }
      this.needsNewline = false;
    } catch (cause) {
      // Part of the line may be in the file: start the next one on a fresh line.
      this.needsNewline = true;
      throw cause;
    }
  }

  private add(entry: SessionEntry, fromFile: boolean): void {
    if (entry.parentId !== null && !this.byId.has(entry.parentId)) {
      // Its parent was lost (a damaged line): hang it under the entry written just before it.
      const previous = this.entries.at(-1)?.id ?? null;
      if (fromFile) this.warnings.push(`${this.file}: entry ${entry.id} follows ${entry.parentId}, which is missing from the file; it is attached to ${previous ?? "the root"} instead`);
      entry = { ...entry, parentId: previous } as SessionEntry;
    }
    this.entries.push(entry);
    this.byId.set(entry.id, entry);
    if (this.kids) this.indexChild(entry);
    if (entry.type === "message") this.messageIds.set(entry.message as object, entry.id);
    else if (entry.type === "compaction" || entry.type === "branch_summary" || entry.type === "custom_message") this.rendered(entry);
    else if (entry.type === "label") {
      if (typeof entry.label === "string" && entry.label) this.labelMap.set(entry.targetId as string, entry.label);
      else this.labelMap.delete(entry.targetId as string);
    } else if (entry.type === "session_info") this.sessionName = typeof entry.name === "string" && entry.name ? entry.name : undefined;
  }

  private indexChild(e: SessionEntry): void {
    const list = this.kids!.get(e.parentId);
    if (list) list.push(e);
    else this.kids!.set(e.parentId, [e]);
  }

  private newId(): string {
    for (;;) {
      const id = randomBytes(4).toString("hex");
      if (!this.byId.has(id)) return id;
    }
  }
}

function summaryMessage(intro: string, summary: string, timestamp: number): UserMessage {
  return { role: "user", content: `${intro}\n\n<summary>\n${summary}\n</summary>`, timestamp };
}
