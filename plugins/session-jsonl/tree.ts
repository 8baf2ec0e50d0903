/**
 * The pure side of a session: its entries, the tree they form, the current leaf, and the projections
 * the agent and front ends read — the path to a leaf, the model state in effect there, and the context
 * (the path after its newest compaction, tool calls paired). No file system here: the store (store.ts)
 * extends this with the file writer, and an in-memory session is just this with nothing written.
 */
import {
  errorResult,
  toolCallsOf,
  unansweredCalls,
  type AgentMessage,
  type CustomMessage,
  type ToolCall,
  type UserMessage,
} from "../../api/index.js";
import type { CompactionEntry, CustomMessageEntry, SessionEntry } from "./format.js";

/** Model, thinking level and active tools in effect at an entry. */
export interface SessionState {
  model?: { provider: string; modelId: string };
  thinkingLevel?: string;
  activeTools?: string[];
}

export const NOT_EXECUTED_CRASH =
  "Not executed: coil stopped before this tool finished (the session was resumed after a crash or kill).";
export const NOT_EXECUTED_BRANCH = "Not executed: the conversation was branched at this call, before its result.";
const NOT_EXECUTED_LOST = "Not executed: this result was lost from the session file (a damaged line).";

export class SessionTree {
  /** Entries in file order. */
  readonly entries: SessionEntry[] = [];
  /** Lines skipped or repaired while reading (file:line: what). */
  readonly warnings: string[] = [];
  leafId: string | null = null;
  /** Messages rendered from custom_message entries: converted to user messages for the model. */
  readonly forModel = new WeakSet<object>();

  private readonly byId = new Map<string, SessionEntry>();
  private kids?: Map<string | null, SessionEntry[]>;
  private readonly messageIds = new WeakMap<object, string>();
  private readonly renderedCache = new Map<string, AgentMessage[]>();
  private readonly labelMap = new Map<string, string>();
  private sessionName?: string;
  private readonly reported = new Set<string>();
  private memo?: { key: string; messages: AgentMessage[] };
  private stateMemo?: { key: string; state: SessionState };

  constructor(
    /** Where the entries live, for warnings; undefined for an in-memory session (`--no-session`). */
    readonly file: string | undefined,
  ) {}

  /** A tree of these entries (in file order), its leaf the last one: no file, nothing written. */
  static of(entries: readonly SessionEntry[]): SessionTree {
    const tree = new SessionTree(undefined);
    for (const e of entries) tree.add(e, false);
    tree.leafId = entries.at(-1)?.id ?? null;
    return tree;
  }

  get name(): string | undefined {
    return this.sessionName;
  }

  get labels(): ReadonlyMap<string, string> {
    return this.labelMap;
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
    return {
      ...(model ? { model: { ...model } } : {}),
      ...(thinkingLevel ? { thinkingLevel } : {}),
      ...(activeTools ? { activeTools: [...activeTools] } : {}),
    };
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
        for (const m of this.rendered(e)) {
          messages.push(m);
          ids.push(e.id);
        }
      } else if (e.type === "compaction") {
        const c = e as CompactionEntry;
        let from = messages.length;
        if (c.firstKeptEntryId !== undefined) {
          from = ids.indexOf(c.firstKeptEntryId);
          if (from < 0) {
            this.warnOnce(
              `compaction ${c.id}: its first kept entry ${c.firstKeptEntryId} is not on this path; keeping everything before it`,
            );
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
        this.warnOnce(
          `tool call(s) ${[...pending.keys()].join(", ")} have no result in the file; the model sees an error result instead`,
        );
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
      out = c.messages?.length
        ? c.messages
        : [summaryMessage("The conversation before this point was compacted. Summary of it:", c.summary, ts)];
    } else if (e.type === "branch_summary") {
      out = [
        summaryMessage(
          "The user explored another branch of this conversation and came back here. Summary of that branch:",
          e.summary as string,
          ts,
        ),
      ];
    } else {
      const c = e as CustomMessageEntry;
      const m: CustomMessage = {
        role: "custom",
        customType: c.customType,
        content: c.content,
        display: c.display !== false,
        details: c.details,
        timestamp: ts,
      };
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

  protected warnOnce(message: string): void {
    const line = `${this.file ?? "session"}: ${message}`;
    if (this.reported.has(line)) return;
    this.reported.add(line);
    this.warnings.push(line);
  }

  /** Tie a message object to the entry that stores it. */
  protected linkMessage(message: object, entryId: string): void {
    this.messageIds.set(message, entryId);
  }

  /** Put an entry into the tree (`fromFile`: read from the file, so a lost parent is reported). */
  protected add(entry: SessionEntry, fromFile: boolean): void {
    if (entry.parentId !== null && !this.byId.has(entry.parentId)) {
      // Its parent was lost (a damaged line): hang it under the entry written just before it.
      const previous = this.entries.at(-1)?.id ?? null;
      if (fromFile)
        this.warnings.push(
          `${this.file}: entry ${entry.id} follows ${entry.parentId}, which is missing from the file; it is attached to ${previous ?? "the root"} instead`,
        );
      entry = { ...entry, parentId: previous } as SessionEntry;
    }
    this.entries.push(entry);
    this.byId.set(entry.id, entry);
    if (this.kids) this.indexChild(entry);
    if (entry.type === "message") this.messageIds.set(entry.message as object, entry.id);
    else if (entry.type === "compaction" || entry.type === "branch_summary" || entry.type === "custom_message")
      this.rendered(entry);
    else if (entry.type === "label") {
      if (typeof entry.label === "string" && entry.label) this.labelMap.set(entry.targetId as string, entry.label);
      else this.labelMap.delete(entry.targetId as string);
    } else if (entry.type === "session_info")
      this.sessionName = typeof entry.name === "string" && entry.name ? entry.name : undefined;
  }

  private indexChild(e: SessionEntry): void {
    const list = this.kids!.get(e.parentId);
    if (list) list.push(e);
    else this.kids!.set(e.parentId, [e]);
  }
}

function summaryMessage(intro: string, summary: string, timestamp: number): UserMessage {
  return { role: "user", content: `${intro}\n\n<summary>\n${summary}\n</summary>`, timestamp };
}
