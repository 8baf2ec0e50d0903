/**
 * The session file format: one JSON object per line. Line 1 is the header; every later line is an
 * entry with `id`, `parentId`, `type` and `timestamp`. Entries form a tree (a branch is a second
 * child of some entry); nothing is ever rewritten, only appended.
 *
 * Version history:
 * - 1: the linear shape of coil's pre-release builds: entries had no `id`/`parentId` (each followed
 *      the previous line), `model_change` said `model` (not `modelId`) and a compaction pointed at the
 *      first entry it kept by its 0-based index (`firstKeptEntryIndex`).
 * - 2: the tree (this file's types).
 * Older files are migrated in memory while they are read (see `migrateEntry`); they are never
 * rewritten in place.
 */
import type { AgentMessage, TextContent, ImageContent } from "../../api/index.js";

export const FORMAT_VERSION = 2;

export interface SessionHeader {
  type: "session";
  version: number;
  /** Session id (a UUID). */
  id: string;
  /** ISO time the session was created. */
  timestamp: string;
  /** Working directory the session belongs to. */
  cwd: string;
  /**
   * For forks and clones: the session this one was copied from, and the entry it was copied at. For a
   * sub-agent's conversation: the session whose `task` call (`toolCallId`) ran it, and its agent type.
   */
  parentSession?: { path: string; id: string; entryId?: string | null; toolCallId?: string; agent?: string };
  /** Set when this file is a migrated copy of a file written in an older format version. */
  migratedFrom?: number;
}

interface EntryBase {
  type: string;
  /** Unique within the file. */
  id: string;
  /** The entry this one follows; null for a root. */
  parentId: string | null;
  /** ISO time. */
  timestamp: string;
}

/** A message of the conversation (user, assistant, tool result, or a display-only custom message). */
export interface MessageEntry extends EntryBase {
  type: "message";
  message: AgentMessage;
}

export interface ModelChangeEntry extends EntryBase {
  type: "model_change";
  provider: string;
  modelId: string;
}

export interface ThinkingLevelChangeEntry extends EntryBase {
  type: "thinking_level_change";
  thinkingLevel: string;
}

export interface ActiveToolsChangeEntry extends EntryBase {
  type: "active_tools_change";
  /** Names of the tools the model may call from here on. */
  tools: string[];
}

/**
 * A compaction: from here on, the context is `messages` (or one user message made from `summary`)
 * followed by the context that was current before it, starting at `firstKeptEntryId` (none kept when
 * absent), followed by what comes after this entry.
 */
export interface CompactionEntry extends EntryBase {
  type: "compaction";
  summary: string;
  /** The exact messages the strategy put in front of the kept ones; `summary` is then for display. */
  messages?: AgentMessage[];
  firstKeptEntryId?: string;
  tokensBefore: number;
  tokensAfter?: number;
  /** Plugin id of the strategy that compacted. */
  by?: string;
  details?: unknown;
}

/** Summary of a branch the user navigated away from; it reaches the model as a user message. */
export interface BranchSummaryEntry extends EntryBase {
  type: "branch_summary";
  /** The leaf that was left. */
  fromId: string | null;
  summary: string;
  details?: unknown;
}

export interface LabelEntry extends EntryBase {
  type: "label";
  targetId: string;
  /** Absent clears the label. */
  label?: string;
}

export interface SessionInfoEntry extends EntryBase {
  type: "session_info";
  name?: string;
}

/** Plugin state: never reaches the model. */
export interface CustomEntry extends EntryBase {
  type: "custom";
  customType: string;
  data?: unknown;
}

/** A plugin message that reaches the model (as a user message). */
export interface CustomMessageEntry extends EntryBase {
  type: "custom_message";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: unknown;
}

/** An entry of a type this version does not know: kept (it may be a parent), otherwise ignored. */
export interface UnknownEntry extends EntryBase {
  [key: string]: unknown;
}

export type KnownEntry =
  | MessageEntry
  | ModelChangeEntry
  | ThinkingLevelChangeEntry
  | ActiveToolsChangeEntry
  | CompactionEntry
  | BranchSummaryEntry
  | LabelEntry
  | SessionInfoEntry
  | CustomEntry
  | CustomMessageEntry;

export type SessionEntry = KnownEntry | UnknownEntry;

/** An entry as a caller hands it to `append`: the store fills in id, parentId and timestamp. */
export type NewEntry = DistributiveOmit<KnownEntry, "id" | "parentId" | "timestamp">;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export const KNOWN_TYPES = new Set([
  "message",
  "model_change",
  "thinking_level_change",
  "active_tools_change",
  "compaction",
  "branch_summary",
  "label",
  "session_info",
  "custom",
  "custom_message",
]);

export function isKnown(entry: SessionEntry): entry is KnownEntry {
  return KNOWN_TYPES.has(entry.type);
}

/** State kept while migrating one file, line by line. */
export interface MigrationState {
  from: number;
  /** v1: ids given so far, by 0-based entry index. */
  ids: string[];
  lastId: string | null;
}

export function migrationState(from: number): MigrationState {
  return { from, ids: [], lastId: null };
}

/**
 * Bring one parsed line of an older file to the current shape. `line` is the 1-based line number,
 * used to make stable ids (`l12`: never valid hex, so it cannot clash with new ids).
 * Returns a reason string when the line cannot be migrated.
 */
export function migrateEntry(raw: Record<string, unknown>, state: MigrationState, line: number): SessionEntry | string {
  let entry = raw;
  if (state.from < 2) {
    if (typeof entry.type !== "string") return "no 'type'";
    const id = typeof entry.id === "string" ? entry.id : `l${line}`;
    const out: Record<string, unknown> = { ...entry, id, parentId: state.lastId };
    if (typeof out.timestamp === "number") out.timestamp = new Date(out.timestamp).toISOString();
    if (typeof out.timestamp !== "string") out.timestamp = new Date(0).toISOString();
    if (out.type === "model_change" && out.modelId === undefined && typeof out.model === "string") {
      out.modelId = out.model;
      delete out.model;
    }
    if (out.type === "compaction" && typeof out.firstKeptEntryIndex === "number") {
      const kept = state.ids[out.firstKeptEntryIndex];
      if (kept !== undefined) out.firstKeptEntryId = kept;
      delete out.firstKeptEntryIndex;
      if (typeof out.tokensBefore !== "number") out.tokensBefore = 0;
      if (typeof out.summary !== "string") out.summary = "";
    }
    state.ids.push(id);
    state.lastId = id;
    entry = out;
  }
  return entry as unknown as SessionEntry;
}

/** JSON for one line. Never throws: values JSON cannot hold (cycles, BigInt) are replaced by text. */
export function serialize(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    const seen = new WeakSet<object>();
    return JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v === "bigint") return v.toString();
      if (v && typeof v === "object") {
        if (seen.has(v)) return "[Circular]";
        seen.add(v);
      }
      return v;
    });
  }
}

/** Is this a plausible entry (after migration)? Returns the problem, or undefined when fine. */
export function entryProblem(value: unknown): string | undefined {
  if (!value || typeof value !== "object" || Array.isArray(value)) return "not a JSON object";
  const e = value as Record<string, unknown>;
  if (typeof e.type !== "string") return "no 'type'";
  if (e.type === "session") return "a second header";
  if (typeof e.id !== "string" || !e.id) return "no 'id'";
  if (e.parentId !== null && typeof e.parentId !== "string") return "no 'parentId'";
  if (e.type === "message") {
    const m = e.message as Record<string, unknown> | undefined;
    if (!m || typeof m !== "object" || typeof m.role !== "string") return "a message entry without a message";
    if (m.role === "assistant" && !Array.isArray(m.content)) return "an assistant message without content";
    if (m.role === "toolResult" && typeof m.toolCallId !== "string") return "a tool result without toolCallId";
  }
  return undefined;
}
