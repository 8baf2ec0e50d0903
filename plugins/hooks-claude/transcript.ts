/**
 * The `transcript_path` hooks receive: the session's conversation as Claude Code writes it, one JSON
 * object a line (`type: "user"` / `"assistant"` with Anthropic-style `message` objects, `uuid` and
 * `parentUuid` chaining them). Brought up to date before each hook runs, by appending the messages not
 * written yet; a file is read once (on resume, its earlier lines are kept and not written again).
 */
import { randomUUID } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import type { AgentMessage, AssistantMessage, ImageContent, TextContent } from "../../api/index.js";
import { claudeToolInput, claudeToolName } from "./mapping.js";

const STOP_REASONS: Record<string, string> = {
  stop: "end_turn",
  toolUse: "tool_use",
  length: "max_tokens",
  refusal: "refusal",
  pause: "pause_turn",
};

const media = (c: TextContent | ImageContent) =>
  c.type === "text"
    ? { type: "text", text: c.text }
    : { type: "image", source: { type: "base64", media_type: c.mimeType, data: c.data } };

/** A coil message as Claude Code's `message` object and entry type; undefined for what the model never sees. */
export function claudeMessage(
  m: AgentMessage,
  cwd: string,
): { type: "user" | "assistant"; message: Record<string, unknown> } | undefined {
  if (m.role === "user")
    return {
      type: "user",
      message: { role: "user", content: typeof m.content === "string" ? m.content : m.content.map(media) },
    };
  if (m.role === "toolResult") {
    return {
      type: "user",
      message: {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: m.toolCallId, content: m.content.map(media), is_error: m.isError },
        ],
      },
    };
  }
  if (m.role !== "assistant") return undefined;
  const a = m as AssistantMessage;
  const content = a.content.map((c) =>
    c.type === "text"
      ? { type: "text", text: c.text }
      : c.type === "thinking"
        ? c.redacted
          ? { type: "redacted_thinking", data: c.signature ?? "" }
          : { type: "thinking", thinking: c.thinking, signature: c.signature ?? "" }
        : {
            type: "tool_use",
            id: c.id,
            name: claudeToolName(c.name),
            input: claudeToolInput(c.name, c.arguments ?? {}, cwd),
          },
  );
  const usage = {
    input_tokens: a.usage.input,
    output_tokens: a.usage.output,
    cache_creation_input_tokens: a.usage.cacheWrite,
    cache_read_input_tokens: a.usage.cacheRead,
  };
  return {
    type: "assistant",
    message: {
      type: "message",
      role: "assistant",
      model: a.model,
      content,
      stop_reason: STOP_REASONS[a.stopReason] ?? null,
      stop_sequence: null,
      usage,
    },
  };
}

export class Transcript {
  private readonly uuids = new WeakMap<AgentMessage, string>();
  /** uuids already in the file, read once when the file is first written by this process. */
  private present: Set<string> | undefined;
  private last: string | null = null;

  constructor(
    readonly file: string,
    readonly sessionId: string,
    private readonly cwd: string,
    /** The session entry id of a message, so a resumed session's lines keep their uuids. */
    private readonly idOf: (m: AgentMessage) => string | undefined,
  ) {}

  /** Append the messages of `history` not in the file yet. */
  update(history: readonly AgentMessage[]): void {
    if (!this.present) this.present = this.read();
    let out = "";
    for (const m of history) {
      if (m.role === "custom") continue;
      let uuid = this.uuids.get(m);
      if (!uuid) {
        uuid = this.idOf(m) ?? randomUUID();
        this.uuids.set(m, uuid);
      }
      if (this.present.has(uuid)) {
        this.last = uuid;
        continue;
      }
      const entry = claudeMessage(m, this.cwd);
      if (!entry) continue;
      out += `${JSON.stringify({ parentUuid: this.last, isSidechain: false, userType: "external", cwd: this.cwd, sessionId: this.sessionId, version: "coil", ...entry, uuid, timestamp: new Date(m.timestamp).toISOString() })}\n`;
      this.present.add(uuid);
      this.last = uuid;
    }
    if (!out) return;
    mkdirSync(dirname(this.file), { recursive: true });
    appendFileSync(this.file, out);
  }

  private read(): Set<string> {
    const seen = new Set<string>();
    if (!existsSync(this.file)) return seen;
    for (const line of readFileSync(this.file, "utf8").split("\n")) {
      try {
        const uuid = (JSON.parse(line) as { uuid?: unknown }).uuid;
        if (typeof uuid === "string") seen.add(uuid);
      } catch {
        // a torn line from a crash: skipped
      }
    }
    return seen;
  }
}
