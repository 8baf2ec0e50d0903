/**
 * Pure mappings between coil's shapes and ACP's: tool kinds, titles and locations, stop reasons, prompt
 * content blocks, plan entries, and a session's history replayed as `session/update`s. No I/O here, and
 * only types from the SDK, so this file never loads it.
 */
import { isAbsolute, relative, resolve } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import type {
  AgentMessage,
  ImageContent,
  RunStopReason,
  SlashCommand,
  TextContent,
  ToolResultMessage,
} from "../../api/index.js";

const KINDS: Record<string, acp.ToolKind> = {
  read: "read",
  edit: "edit",
  write: "edit",
  bash: "execute",
  grep: "search",
  find: "search",
  ls: "search",
  web_fetch: "fetch",
  fetch: "fetch",
  write_plan: "think",
  task: "think",
};

/** The ACP kind of a coil tool: read/edit/execute/search/fetch/think, `other` for the rest (MCP tools, plugins' own). */
export function toolKind(name: string): acp.ToolKind {
  return KINDS[name] ?? (/fetch|http|url|web/i.test(name) && !name.startsWith("mcp__") ? "fetch" : "other");
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);
const pathArg = (args: Record<string, unknown>) => str(args.path) ?? str(args.file_path);

/** A short title for the editor's tool card, e.g. `Read src/a.ts`, `Run npm test`. */
export function toolTitle(name: string, args: Record<string, unknown>, cwd: string): string {
  const path = pathArg(args);
  const shown = path ? display(path, cwd) : undefined;
  switch (name) {
    case "read":
      return shown ? `Read ${shown}` : "Read";
    case "edit":
      return shown ? `Edit ${shown}` : "Edit";
    case "write":
      return shown ? `Write ${shown}` : "Write";
    case "bash":
      return str(args.command) ? `Run ${oneLine(args.command as string)}` : "Run a command";
    case "grep":
      return `Search for ${JSON.stringify(str(args.pattern) ?? "")}${shown ? ` in ${shown}` : ""}`;
    case "find":
      return `Find ${str(args.pattern) ?? str(args.glob) ?? "files"}${shown ? ` in ${shown}` : ""}`;
    case "ls":
      return `List ${shown ?? "."}`;
    case "write_plan":
      return "Write the plan";
    case "task":
      return str(args.description) ? `Task: ${oneLine(args.description as string)}` : "Sub-agent task";
    default:
      return shown ? `${name} ${shown}` : name;
  }
}

/** Files a call touches, as absolute paths with the line it starts at when the arguments say. */
export function toolLocations(
  name: string,
  args: Record<string, unknown>,
  cwd: string,
  details?: unknown,
): acp.ToolCallLocation[] {
  const path =
    pathArg(args) ??
    (typeof (details as { path?: unknown })?.path === "string" ? (details as { path: string }).path : undefined);
  if (!path || name === "bash") return [];
  const abs = absolute(path, cwd);
  const d = details as { firstChangedLine?: unknown; startLine?: unknown } | undefined;
  const line =
    typeof d?.firstChangedLine === "number"
      ? d.firstChangedLine
      : typeof d?.startLine === "number"
        ? d.startLine
        : typeof args.offset === "number"
          ? args.offset
          : undefined;
  return [{ path: abs, ...(line !== undefined ? { line } : {}) }];
}

export function absolute(path: string, cwd: string): string {
  const home = process.env.HOME;
  if (home && (path === "~" || path.startsWith("~/"))) return resolve(home, path.slice(2));
  return isAbsolute(path) ? path : resolve(cwd, path.replace(/^@/, ""));
}

function display(path: string, cwd: string): string {
  const abs = absolute(path, cwd);
  const rel = relative(cwd, abs);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : abs;
}

function oneLine(text: string, max = 80): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A tool result as ACP content blocks (text and images). */
export function resultContent(result: ToolResultMessage): acp.ToolCallContent[] {
  return result.content.map((c) => ({
    type: "content" as const,
    content:
      c.type === "text"
        ? { type: "text" as const, text: c.text }
        : { type: "image" as const, data: c.data, mimeType: c.mimeType },
  }));
}

/**
 * How a coil run ended, in ACP terms. `halted` (a guard's budget or another stop rule) becomes
 * `max_turn_requests`; an error is not a stop reason: the prompt request fails with it instead.
 */
export function stopReasonOf(reason: RunStopReason): acp.StopReason | undefined {
  switch (reason) {
    case "length":
      return "max_tokens";
    case "refusal":
      return "refusal";
    case "aborted":
      return "cancelled";
    case "halted":
      return "max_turn_requests";
    case "error":
      return undefined;
    default:
      return "end_turn";
  }
}

/**
 * A prompt's content blocks as the user message's parts: text as is, images as images, a resource link as a
 * line naming it (the model reads it with its tools), an embedded resource as its text in a fenced block.
 */
export function promptParts(blocks: readonly acp.ContentBlock[], cwd: string): (TextContent | ImageContent)[] {
  const parts: (TextContent | ImageContent)[] = [];
  for (const b of blocks) {
    if (b.type === "text") parts.push({ type: "text", text: b.text });
    else if (b.type === "image") parts.push({ type: "image", data: b.data, mimeType: b.mimeType });
    else if (b.type === "resource_link")
      parts.push({ type: "text", text: `[${b.title ?? b.name}](${b.uri})${linkPath(b.uri, cwd)}` });
    else if (b.type === "resource") {
      const r = b.resource;
      const where = `${r.uri}${linkPath(r.uri, cwd)}`;
      if ("text" in r) parts.push({ type: "text", text: `<context uri="${r.uri}">\n${r.text}\n</context>` });
      else if (r.mimeType?.startsWith("image/")) parts.push({ type: "image", data: r.blob, mimeType: r.mimeType });
      else
        parts.push({
          type: "text",
          text: `(attached binary resource ${where}${r.mimeType ? `, ${r.mimeType}` : ""}: not readable as text)`,
        });
    } else
      parts.push({ type: "text", text: `(an ${b.type} attachment was left out: coil does not take ${b.type} input)` });
  }
  return parts;
}

function linkPath(uri: string, cwd: string): string {
  if (!uri.startsWith("file://")) return "";
  try {
    const path = decodeURIComponent(new URL(uri).pathname);
    return ` (file ${display(path, cwd)})`;
  } catch {
    return "";
  }
}

/** The single text of a prompt when it is only text (slash commands are recognised in it). */
export function promptText(blocks: readonly acp.ContentBlock[]): string | undefined {
  return blocks.every((b) => b.type === "text") ? blocks.map((b) => (b as { text: string }).text).join("") : undefined;
}

/** Checkbox lines of a Markdown plan as plan entries; `- [x]` is completed, the first open one in progress. */
export function planEntries(markdown: string): acp.PlanEntry[] {
  const entries: acp.PlanEntry[] = [];
  let current = false;
  for (const line of markdown.split("\n")) {
    const m = /^\s*[-*] \[([ xX])\]\s*(.*)$/.exec(line);
    if (!m) continue;
    const done = m[1] !== " ";
    const status: acp.PlanEntryStatus = done ? "completed" : current ? "pending" : "in_progress";
    if (!done) current = true;
    entries.push({ content: m[2]!.trim(), priority: "medium", status });
  }
  return entries;
}

export function commandsOf(commands: readonly SlashCommand[]): acp.AvailableCommand[] {
  return commands.map((c) => ({
    name: c.name,
    description: c.description,
    ...(c.argumentHint ? { input: { hint: c.argumentHint } } : {}),
  }));
}

/** A session's history as the updates that show it again (session/load). */
export function replay(messages: readonly AgentMessage[], cwd: string): acp.SessionUpdate[] {
  const results = new Map<string, ToolResultMessage>();
  for (const m of messages) if (m.role === "toolResult") results.set(m.toolCallId, m);
  const out: acp.SessionUpdate[] = [];
  for (const m of messages) {
    if (m.role === "user" || (m.role === "custom" && m.display)) {
      const parts = typeof m.content === "string" ? [{ type: "text" as const, text: m.content }] : m.content;
      for (const p of parts)
        out.push({
          sessionUpdate: "user_message_chunk",
          content:
            p.type === "text" ? { type: "text", text: p.text } : { type: "image", data: p.data, mimeType: p.mimeType },
        });
    } else if (m.role === "assistant") {
      for (const part of m.content) {
        if (part.type === "text" && part.text)
          out.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: part.text } });
        else if (part.type === "thinking" && part.thinking && !part.redacted)
          out.push({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: part.thinking } });
        else if (part.type === "toolCall") {
          const result = results.get(part.id);
          out.push({
            sessionUpdate: "tool_call",
            toolCallId: part.id,
            title: toolTitle(part.name, part.arguments, cwd),
            kind: toolKind(part.name),
            status: !result || result.isError ? "failed" : "completed",
            rawInput: part.arguments,
            locations: toolLocations(part.name, part.arguments, cwd, result?.details),
            content: result ? resultContent(result) : [],
          });
        }
      }
    }
  }
  return out;
}
