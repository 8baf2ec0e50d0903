/**
 * One session's file writer: a `SessionTree` (tree.ts: entries, leaf, context) whose appends are
 * written first. Appending writes one complete line with one synchronous write; nothing already
 * written is ever changed.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { dirname, join } from "node:path";
import { errorResult, type AgentMessage } from "../../api/index.js";
import { FORMAT_VERSION, serialize, type NewEntry, type SessionEntry, type SessionHeader } from "./format.js";
import { codeOf, nodeOps, type SessionOps } from "./file-system.js";
import { readSession } from "./reader.js";
import { NOT_EXECUTED_CRASH, SessionTree } from "./tree.js";

export { NOT_EXECUTED_BRANCH, NOT_EXECUTED_CRASH, SessionTree, type SessionState } from "./tree.js";

/** A write (or sync) of the session file failed: the run must stop, loudly. */
export class SessionWriteError extends Error {
  readonly code = "SESSION_WRITE_FAILED";
  constructor(
    readonly file: string,
    cause: unknown,
  ) {
    const why =
      codeOf(cause) === "ENOSPC"
        ? "the disk is full"
        : codeOf(cause) === "EACCES" || codeOf(cause) === "EPERM"
          ? "permission denied"
          : undefined;
    super(`cannot write session ${file}${why ? ` (${why})` : ""}: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
  }
}

/** Model, thinking level and tools in effect at a point of the tree. */
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

/** `<root>/<readable part of the cwd>-<hash>`: readable, and two directories never share a folder. */
export function sessionDirFor(root: string, cwd: string): string {
  const readable =
    cwd
      .replace(/^[/\\]+/, "")
      .replace(/[^A-Za-z0-9._-]+/g, "-")
      .replace(/-+/g, "-")
      .slice(-60) || "root";
  let hash = 0x811c9dc5;
  for (let i = 0; i < cwd.length; i++) hash = Math.imul(hash ^ cwd.charCodeAt(i), 0x01000193) >>> 0;
  return join(root, `${readable}-${hash.toString(16).padStart(8, "0")}`);
}

export function sessionFileName(header: SessionHeader): string {
  return `${header.timestamp.replace(/[:.]/g, "-")}_${header.id}.jsonl`;
}

export function newHeader(cwd: string, extra: Partial<SessionHeader> = {}): SessionHeader {
  return {
    type: "session",
    version: FORMAT_VERSION,
    id: randomUUID(),
    timestamp: new Date().toISOString(),
    cwd,
    ...extra,
  };
}

export interface OpenOptions {
  ops?: SessionOps;
}

// Entry ids come from a pool of random bytes: one call to the system's generator per 128 ids, not one per entry.
let idPool = Buffer.alloc(0);
let idAt = 0;
function randomHex8(): string {
  if (idAt + 4 > idPool.length) {
    idPool = randomBytes(512);
    idAt = 0;
  }
  idAt += 4;
  return idPool.toString("hex", idAt - 4, idAt);
}

/** The session file's writer: a `SessionTree` whose appends go to disk first (see tree.ts for the reading side). */
export class SessionStore extends SessionTree {
  /** Why this store cannot be written (e.g. a newer format version). */
  readOnly?: string;
  /** The last write failure, until the next successful write. */
  failure?: SessionWriteError;

  private fd?: number;
  private headerWritten: boolean;
  private needsNewline = false;
  private dirSynced = true;
  /** Lines were written since the last fsync. */
  private unsynced = false;
  /** A background fsync is running; `again`: more lines came meanwhile. */
  private syncing = false;
  private again = false;
  /** A background fsync failed: taken (and reported) by the next turn. */
  private syncFailure?: SessionWriteError;

  private constructor(
    readonly ops: SessionOps,
    public header: SessionHeader,
    /** Undefined for an in-memory session (`--no-session`). */
    file: string | undefined,
    onDisk: boolean,
  ) {
    super(file);
    this.headerWritten = onDisk;
  }

  /** A new session. With a `dir`, its file is created there on the first append. */
  static create(
    cwd: string,
    dir: string | undefined,
    options: OpenOptions & { header?: Partial<SessionHeader>; file?: string } = {},
  ): SessionStore {
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

  get persistent(): boolean {
    return this.file !== undefined;
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
    this.linkMessage(message, entry.id);
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

  /** fsync the file (end of every turn), when something was written since the last one. */
  sync(): void {
    if (this.fd === undefined || !this.file || !this.unsynced) return;
    try {
      this.ops.fsyncSync(this.fd);
      this.unsynced = false;
      if (!this.dirSynced) {
        // A new file's directory entry must reach the disk too, or a power cut could lose the file
        // (on the thread pool when it can: nothing waits for it, and some file systems cannot do it).
        const dfd = this.ops.openSync(dirname(this.file), "r");
        const done = () => {
          try {
            this.ops.closeSync(dfd);
          } catch {
            // the folder's descriptor only
          }
        };
        if (this.ops.fsync) this.ops.fsync(dfd, done);
        else {
          try {
            this.ops.fsyncSync(dfd);
          } catch {
            // some file systems do not sync directories
          }
          done();
        }
        this.dirSynced = true;
      }
    } catch (cause) {
      this.failure = new SessionWriteError(this.file, cause);
      throw this.failure;
    }
  }

  /**
   * fsync in the background: the next request goes out while the disk flushes. The lines are already
   * written, so a completed turn survives kill -9 either way; a power cut can lose the turns whose
   * fsync had not finished. A failure is kept for `takeSyncFailure`. The first sync of a new file (its
   * folder too) stays in line.
   */
  syncSoon(): void {
    if (this.fd === undefined || !this.file || !this.unsynced) return;
    if (!this.ops.fsync || !this.dirSynced) {
      this.sync();
      return;
    }
    if (this.syncing) {
      this.again = true;
      return;
    }
    const [fd, file] = [this.fd, this.file];
    this.syncing = true;
    this.unsynced = false;
    this.ops.fsync(fd, (error) => {
      this.syncing = false;
      if (this.fd !== fd) {
        // closed meanwhile: close() synced in line and left the fd to be closed here
        try {
          this.ops.closeSync(fd);
        } catch {
          // nothing to lose: the lines were synced
        }
        return;
      }
      if (error) {
        this.unsynced = true;
        this.syncFailure = new SessionWriteError(file, error);
      } else if (this.again) {
        this.again = false;
        this.syncSoon();
      }
    });
  }

  /** The failure of a background fsync since the last call, if any. */
  takeSyncFailure(): SessionWriteError | undefined {
    const failure = this.syncFailure;
    this.syncFailure = undefined;
    return failure;
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      this.sync();
    } finally {
      // Never under a running background fsync: its callback closes the fd then.
      if (!this.syncing) {
        try {
          this.ops.closeSync(this.fd);
        } catch {
          // closing cannot lose data that fsync kept
        }
      }
      this.fd = undefined;
    }
  }

  /** Write this session's header and `entries` into a new file (fork, clone, migration). */
  static writeNew(
    file: string,
    header: SessionHeader,
    entries: readonly SessionEntry[],
    ops: SessionOps = nodeOps,
  ): SessionStore {
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
    const header = newHeader(this.header.cwd || cwd, {
      parentSession: { path: this.file ?? "(memory)", id: this.id },
      migratedFrom: this.header.version,
    });
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
      this.failure = cause instanceof SessionWriteError ? cause : new SessionWriteError(file, cause);
      throw this.failure;
    }
  }

  /** One complete line in one write; a short write (rare) is finished, never left torn. */
  private writeLine(value: unknown): void {
    const text = (this.needsNewline ? "\n" : "") + serialize(value) + "\n";
    const bytes = Buffer.from(text, "utf8");
    try {
      this.unsynced = true;
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

  private newId(): string {
    for (;;) {
      const id = randomHex8();
      if (!this.entry(id)) return id;
    }
  }
}
