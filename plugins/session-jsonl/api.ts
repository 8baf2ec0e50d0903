/**
 * session-jsonl's contract (types only): the `session` service front ends and other plugins use.
 * Import it with `import type { SessionService } from "../session-jsonl/api.js"` (a package plugin:
 * from its own copy of these types); importing this file also types `ctx.services.get("session")`.
 */
import type { AgentMessage, CustomMessage, ImageContent, TextContent } from "../../api/index.js";
import type { SessionSummary } from "./catalog.js";
import type { CustomEntry, MessageEntry, SessionEntry, SessionHeader } from "./format.js";
import type { CompactionInput, SessionState } from "./store.js";

export type { CompactionInput, CustomEntry, MessageEntry, SessionEntry, SessionHeader, SessionState, SessionSummary };

/** Turns the messages of an abandoned branch into summary text (a compaction plugin can provide one). */
export type Summarizer = (
  messages: readonly AgentMessage[],
  options: { instructions?: string; signal: AbortSignal },
) => Promise<string>;

/**
 * The `branch-summary` service: summarises a branch the user is leaving (`/tree`, `branch(…, { summarize })`).
 * A compaction plugin provides it (compaction-summary does, with its model and prompt); the session uses it
 * when no summariser was set with `setSummarizer`.
 */
export interface BranchSummaryService {
  summarize: Summarizer;
}

export interface BranchOptions {
  /** Summary text of the branch being left; stored as a branch_summary entry the model sees. */
  summary?: string;
  /** Produce the summary with the registered summariser (or the compaction strategies). */
  summarize?: boolean;
  /** Extra instructions for the summariser. */
  instructions?: string;
  signal?: AbortSignal;
}

/** A sub-agent's session being written (see `createChild`). */
export interface ChildSession {
  readonly id: string;
  /** Undefined when the parent is in memory (`--no-session`). */
  readonly file: string | undefined;
  append(message: AgentMessage): void;
  /** fsync and close the file. */
  close(): void;
}

export interface SessionInfo {
  id: string;
  /** Undefined for an in-memory session. */
  file?: string;
  leafId: string | null;
}

export interface CustomMessageInput {
  customType: string;
  content: string | (TextContent | ImageContent)[];
  /** Whether front ends show it (default true). */
  display?: boolean;
  details?: unknown;
}

/** What front ends and plugins call. Methods that change the active path keep the agent in step. */
export interface SessionService {
  /** False with `--no-session`: entries live in memory only. */
  readonly persistent: boolean;
  /** The session file (undefined in memory). A new session's file appears with its first entry. */
  readonly file: string | undefined;
  readonly id: string;
  readonly header: SessionHeader;
  readonly cwd: string;
  readonly name: string | undefined;
  /** The current leaf: the next entry is appended after it. */
  readonly leafId: string | null;
  /** Lines skipped or repaired while reading, with file and line number. */
  readonly warnings: readonly string[];
  /** Every entry, in file order (all branches). */
  entries(): readonly SessionEntry[];
  entry(id: string): SessionEntry | undefined;
  /** Entries whose parent is `id` (null: the roots), for tree views. */
  children(id: string | null): readonly SessionEntry[];
  /** Entries from the root to `leafId` (default: the current leaf). */
  path(leafId?: string | null): readonly SessionEntry[];
  /** The context the model gets: the active path after its newest compaction, tool calls paired. */
  context(leafId?: string | null): AgentMessage[];
  /** Model, thinking level and active tools in effect at `leafId`. */
  state(leafId?: string | null): SessionState;
  labels(): ReadonlyMap<string, string>;
  /** The entry a message in the agent's history came from. */
  entryIdOf(message: AgentMessage): string | undefined;
  /** Whether this custom message reaches the model (it came from `appendCustomMessage`). */
  isForModel(message: AgentMessage): boolean;
  /** Messages of a run are appended automatically; use this only for messages outside a run. */
  appendMessage(message: AgentMessage): SessionEntry;
  appendModelChange(provider: string, modelId: string): SessionEntry;
  appendThinkingLevelChange(thinkingLevel: string): SessionEntry;
  appendActiveToolsChange(tools: readonly string[]): SessionEntry;
  /** Record a compaction (a compaction strategy calls this from its `compact` tap). */
  appendCompaction(compaction: CompactionInput): SessionEntry;
  /** Plugin state: stored, never sent to the model. */
  appendCustom(customType: string, data?: unknown): SessionEntry;
  /** A plugin message the model sees (as a user message). While a run is going it is steered in. */
  appendCustomMessage(input: CustomMessageInput): CustomMessage;
  /** Label an entry (a bookmark in tree views); no label clears it. */
  setLabel(entryId: string, label?: string): SessionEntry;
  setName(name: string): SessionEntry;
  /** Move the leaf to `entryId` (null: before the first entry), optionally leaving a summary of the branch left. */
  branch(entryId: string | null, options?: BranchOptions): Promise<SessionEntry | undefined>;
  /** A new session file holding the path up to `entryId`, recording this one as its parent; switches to it. */
  fork(entryId: string | null, options?: { switch?: boolean }): SessionInfo;
  /** A new session file with the active branch; switches to it. */
  clone(options?: { switch?: boolean }): SessionInfo;
  /** Switch to another session (path or id prefix), e.g. a front end's /resume. */
  open(ref: string): SessionInfo;
  /** Start a new, empty session (a front end's /new). */
  newSession(): SessionInfo;
  /**
   * A sub-agent's conversation as its own session file in `subagents/` beside this one, its header linking
   * back here (`parentSession` with the `task` call id). Not the open session: it never changes the agent.
   */
  createChild(link: { toolCallId: string; agent: string }): ChildSession;
  /** Sessions of a working directory (default: this one), newest first; `all` lists every directory. */
  list(options?: { cwd?: string; all?: boolean }): SessionSummary[];
  setSummarizer(summarizer: Summarizer | undefined): void;
  /** fsync now (the plugin does it at the end of every turn). */
  flush(): void;
}

declare module "coil" {
  interface Services {
    session: SessionService;
    "branch-summary": BranchSummaryService;
  }
}
