/**
 * The summary: how messages are shown to the summariser, the prompts, the cumulative file lists, and
 * the user message that stands for everything summarised (parsed back at the next compaction, so an
 * earlier summary is updated rather than summarised again).
 */
import { textOf, toolCallsOf, type AgentMessage, type UserMessage } from "../../api/index.js";

export const SUMMARY_INTRO = "The conversation before this point was compacted to save context. Summary of it:";

export interface SummaryParts {
  summary: string;
  readFiles: string[];
  modifiedFiles: string[];
}

/** Only this message's own tags could end a section early: neutralise them, leave the rest as written. */
const TAGS = /<(\/?)(summary|read-files|modified-files)>/g;
const esc = (s: string) => s.replace(TAGS, "&lt;$1$2>");
const unesc = (s: string) => s.replace(/&lt;(\/?)(summary|read-files|modified-files)>/g, "<$1$2>");

/** The user message that replaces the summarised messages. */
export function summaryMessage(parts: SummaryParts, timestamp = Date.now()): UserMessage {
  const lists: string[] = [];
  if (parts.readFiles.length) lists.push(`<read-files>\n${parts.readFiles.map(esc).join("\n")}\n</read-files>`);
  if (parts.modifiedFiles.length)
    lists.push(`<modified-files>\n${parts.modifiedFiles.map(esc).join("\n")}\n</modified-files>`);
  const text = [
    SUMMARY_INTRO,
    "",
    `<summary>\n${esc(parts.summary.trim())}\n</summary>`,
    ...(lists.length ? ["", lists.join("\n\n")] : []),
  ].join("\n");
  return { role: "user", content: text, timestamp };
}

/** The parts of an earlier summary message, or undefined when `message` is not one. */
export function parseSummary(message: AgentMessage | undefined): SummaryParts | undefined {
  if (message?.role !== "user") return undefined;
  const text = textOf(message);
  if (!text.startsWith(SUMMARY_INTRO)) return undefined;
  const section = (tag: string) => new RegExp(`<${tag}>\\n([\\s\\S]*?)\\n?</${tag}>`).exec(text)?.[1];
  const list = (tag: string) =>
    (section(tag) ?? "")
      .split("\n")
      .map((l) => unesc(l.trim()))
      .filter(Boolean);
  return {
    summary: unesc(section("summary") ?? "").trim(),
    readFiles: list("read-files"),
    modifiedFiles: list("modified-files"),
  };
}

const READ_TOOLS = new Set(["read"]);
const WRITE_TOOLS = new Set(["write", "edit"]);

/** Files the messages read and changed, through the read/write/edit tools (`path` argument). */
export function filesTouched(messages: readonly AgentMessage[]): { read: string[]; modified: string[] } {
  const read = new Set<string>();
  const modified = new Set<string>();
  for (const m of messages) {
    if (m.role !== "assistant") continue;
    for (const call of toolCallsOf(m)) {
      const path = call.arguments?.path ?? call.arguments?.file_path;
      if (typeof path !== "string" || !path) continue;
      if (READ_TOOLS.has(call.name)) read.add(path);
      else if (WRITE_TOOLS.has(call.name)) modified.add(path);
    }
  }
  return { read: [...read], modified: [...modified] };
}

/** Merge file lists: modified wins over read; order of first appearance. */
export function mergeFiles(
  prev: Pick<SummaryParts, "readFiles" | "modifiedFiles"> | undefined,
  now: { read: string[]; modified: string[] },
): { readFiles: string[]; modifiedFiles: string[] } {
  const modifiedFiles = [...new Set([...(prev?.modifiedFiles ?? []), ...now.modified])];
  const changed = new Set(modifiedFiles);
  const readFiles = [...new Set([...(prev?.readFiles ?? []), ...now.read])].filter((f) => !changed.has(f));
  return { readFiles, modifiedFiles };
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[... ${text.length - max} more characters]`;
}

/** The messages as plain text for the summariser (never as real messages: no pairing rules, no tools needed). */
export function serialize(messages: readonly AgentMessage[], maxChars: number): string {
  const parts: string[] = [];
  for (const m of messages) {
    if (m.role === "user") parts.push(`[user]\n${clip(textOf(m), 8_000)}`);
    else if (m.role === "custom") continue;
    else if (m.role === "assistant") {
      const lines: string[] = [];
      for (const c of m.content) {
        if (c.type === "text" && c.text.trim()) lines.push(clip(c.text, 8_000));
        else if (c.type === "thinking" && c.thinking.trim() && !c.redacted)
          lines.push(`(thinking) ${clip(c.thinking, 2_000)}`);
        else if (c.type === "toolCall")
          lines.push(`(calls ${c.name} ${clip(JSON.stringify(c.arguments ?? {}), 1_000)})`);
      }
      if (m.stopReason === "error" && m.errorMessage) lines.push(`(the reply failed: ${m.errorMessage})`);
      parts.push(`[assistant]\n${lines.join("\n")}`);
    } else {
      parts.push(`[${m.toolName} result${m.isError ? ", error" : ""}]\n${clip(textOf(m), 2_000)}`);
    }
  }
  let text = parts.join("\n\n");
  if (text.length > maxChars) {
    // Too long even clipped: keep the start (the request that began it all) and the newest part.
    const head = Math.floor(maxChars / 4);
    const tail = maxChars - head;
    text = `${text.slice(0, head)}\n\n[... ${text.length - maxChars} characters in the middle left out ...]\n\n${text.slice(text.length - tail)}`;
  }
  return text;
}

export const SUMMARISER_SYSTEM = `You write the working memory of a coding agent. The agent's context is full, so older messages are replaced by your summary; the agent continues from the summary alone. Keep every fact it needs to carry on: exact file paths, function names, commands, error messages, values, decisions and the user's words where they matter. Leave out chatter. Write in English markdown, no preamble.`;

const FORMAT = `Use exactly these sections:

## Goal
What the user wants, in their terms.

## Constraints and preferences
Requirements, preferences and instructions the user gave.

## Progress
### Done
### In progress
### Blocked

## Key decisions
Decisions made and why.

## Next steps
What to do next, in order.

## Critical context
Anything else needed to continue: exact values, error texts, where things are.`;

export function summaryPrompt(o: { conversation: string; previous?: string; instructions?: string }): string {
  const parts: string[] = [];
  if (o.previous) {
    parts.push(
      `An earlier summary covers the conversation before the messages below:\n\n<previous-summary>\n${o.previous}\n</previous-summary>\n`,
    );
    parts.push(
      "Update that summary with the new messages: keep what is still true, add what is new, move finished work to Done, drop what is obsolete. Do not lose facts from the earlier summary that still matter.",
    );
  } else parts.push("Summarise the conversation below.");
  parts.push(`\n<conversation>\n${o.conversation}\n</conversation>\n`);
  parts.push(FORMAT);
  if (o.instructions?.trim())
    parts.push(`\nThe user gave these instructions for this summary: ${o.instructions.trim()}`);
  return parts.join("\n");
}

export function turnPrefixPrompt(conversation: string): string {
  return [
    "The messages below are the early part of the current turn: the user's request and the first steps the agent took on it. The later steps stay in the context verbatim.",
    `\n<conversation>\n${conversation}\n</conversation>\n`,
    "Summarise it briefly under these headings: ## Request (the user's request, quoted when short), ## Steps so far (what was done and found, with file paths and results), ## Still open.",
  ].join("\n");
}
