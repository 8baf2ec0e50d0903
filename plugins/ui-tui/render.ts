/**
 * Pure text helpers of the TUI: tool-call summaries, result bodies (tail, collapse, coloured diffs),
 * the footer figures and the shell-command output message. No terminal library here, so these are
 * unit-tested directly and cost nothing at start-up.
 */
import {
  usageTotal,
  type AgentMessage,
  type AssistantMessage,
  type ToolResultMessage,
  type Usage,
} from "../../api/index.js";
import { subagentRunOf } from "../../lib/subagent-usage.js";
import { diffWordsWithSpace } from "diff";
import type { DiagnosticsDetails } from "../lsp/api.js";
import { highlight } from "./highlight.js";
import { theme, type ThemeRole } from "./theme.js";

export { setTheme, theme } from "./theme.js";

// ───────────── colours: roles of the active theme (theme.ts); the TUI resets styles at the end of every line ─────────────
const role = (r: ThemeRole) => (s: string) => theme().fg(r, s);
/** Shorthands for the roles the TUI's own renderers use most. */
export const c = {
  bold: (s: string) => theme().bold(s),
  italic: (s: string) => theme().italic(s),
  inverse: (s: string) => theme().inverse(s),
  dim: role("dim"),
  muted: role("muted"),
  error: role("error"),
  success: role("success"),
  warning: role("warning"),
  accent: role("accent"),
  border: role("border"),
  link: role("mdLink"),
  label: role("customMessageLabel"),
  output: role("toolOutput"),
  title: role("toolTitle"),
  fg: (r: ThemeRole, s: string) => theme().fg(r, s),
  bg: (r: ThemeRole, s: string) => theme().bg(r, s),
};

/** Strip SGR and other CSI sequences (for tests and width checks). */
export function plain(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").replace(/\x1b_[^\x07]*\x07/g, "");
}

/** Themes for the library's components (structurally its SelectListTheme and MarkdownTheme). */
export function selectTheme() {
  return {
    selectedPrefix: c.accent,
    selectedText: (s: string) => c.accent(c.bold(s)),
    description: c.dim,
    scrollInfo: c.dim,
    noMatch: c.dim,
  };
}

export function markdownTheme(highlight?: (code: string, lang?: string) => string[] | undefined) {
  const f = (r: ThemeRole) => (s: string) => theme().fg(r, s);
  return {
    heading: (s: string) => c.bold(f("mdHeading")(s)),
    link: f("mdLink"),
    linkUrl: f("mdLinkUrl"),
    code: f("mdCode"),
    codeBlock: f("mdCodeBlock"),
    codeBlockBorder: f("mdCodeBlockBorder"),
    quote: (s: string) => c.italic(f("mdQuote")(s)),
    quoteBorder: f("mdQuoteBorder"),
    hr: f("mdHr"),
    listBullet: f("mdListBullet"),
    bold: c.bold,
    italic: c.italic,
    strikethrough: (s: string) => theme().strikethrough(s),
    underline: (s: string) => theme().underline(s),
    ...(highlight
      ? {
          highlightCode: (code: string, lang?: string) =>
            highlight(code, lang) ?? code.split("\n").map((l) => f("mdCodeBlock")(l)),
        }
      : {}),
  };
}

export { summarizeArgs } from "./summary.js";

/** The text parts of a tool result, joined. */
export function resultText(result: Pick<ToolResultMessage, "content">): string {
  return result.content
    .map((p) => (p.type === "text" ? p.text : `[image ${p.mimeType}]`))
    .join("\n")
    .replace(/\s+$/, "");
}

/** The last `n` lines, with a count of what was cut. */
export function tail(text: string, n: number): { lines: string[]; hidden: number } {
  const lines = text === "" ? [] : text.split("\n");
  return lines.length <= n ? { lines, hidden: 0 } : { lines: lines.slice(-n), hidden: lines.length - n };
}

/** The first `n` lines unless expanded, and how many are hidden. */
export function collapse(lines: readonly string[], n: number, expanded: boolean): { lines: string[]; hidden: number } {
  if (expanded || lines.length <= n) return { lines: [...lines], hidden: 0 };
  return { lines: lines.slice(0, n), hidden: lines.length - n };
}

/** Key names shown in hints; the TUI sets them from the keybindings in force (keybindings.json). */
export const keyHints = { expand: "Ctrl+O", thinking: "Ctrl+T" };

/** A piece of a replaced line; `changed` on the words that differ from the other side. */
export interface DiffWord {
  text: string;
  changed: boolean;
}

/** One line of a unified diff as coil shows it (the TUI here, the HTML export in html.ts). */
export interface DiffRow {
  kind: "hunk" | "note" | "add" | "del" | "ctx";
  /** The line number shown: the old file's for removals, the new file's for the rest (none on hunk and note rows). */
  no?: number;
  /** The line without its `+`/`-`/` ` marker (hunk rows: the whole header; note rows: the text after `\ `). */
  text: string;
  /** For a replaced line, its words, when enough of the line stays the same for word marks to help. */
  words?: DiffWord[];
}

/** The words of a removed/added pair, or undefined when the lines are mostly different (they read better whole). */
function wordPieces(before: string, after: string): [DiffWord[], DiffWord[]] | undefined {
  const parts = diffWordsWithSpace(before, after);
  // Mark words only when at least a third of the line stays the same.
  const same = parts.filter((p) => !p.added && !p.removed).reduce((n, p) => n + p.value.length, 0);
  if (same * 3 < Math.max(before.length, after.length)) return undefined;
  return [
    parts.filter((p) => !p.added).map((p) => ({ text: p.value, changed: Boolean(p.removed) })),
    parts.filter((p) => !p.removed).map((p) => ({ text: p.value, changed: Boolean(p.added) })),
  ];
}

/**
 * A unified diff as rows: line numbers (the new file's for context and additions, the old file's for
 * removals), the words that changed within a replaced line (a run of removals followed by as many
 * additions), hunk headers kept. The `---`/`+++` file lines are left out (the tool line names the file).
 */
export function diffRows(diff: string): DiffRow[] {
  const lines = diff.replace(/\n$/, "").split("\n");
  let oldNo = 0;
  let newNo = 0;
  const rows: DiffRow[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith("+++") || line.startsWith("---")) continue;
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)/.exec(line);
    if (hunk) {
      oldNo = Number(hunk[1]);
      newNo = Number(hunk[2]);
      rows.push({ kind: "hunk", text: line });
    } else if (line.startsWith("\\")) rows.push({ kind: "note", text: line.slice(2) });
    else if (line.startsWith("-")) {
      let end = i;
      while (lines[end + 1]?.startsWith("-")) end++;
      let added = end;
      while (lines[added + 1]?.startsWith("+")) added++;
      const removed = lines.slice(i, end + 1).map((l) => l.slice(1));
      const addedLines = lines.slice(end + 1, added + 1).map((l) => l.slice(1));
      const pairs = removed.length === addedLines.length ? removed.map((r, k) => wordPieces(r, addedLines[k]!)) : [];
      removed.forEach((text, k) => void rows.push({ kind: "del", no: oldNo++, text, words: pairs[k]?.[0] }));
      addedLines.forEach((text, k) => void rows.push({ kind: "add", no: newNo++, text, words: pairs[k]?.[1] }));
      i = added;
    } else if (line.startsWith("+")) rows.push({ kind: "add", no: newNo++, text: line.slice(1) });
    else {
      oldNo++;
      rows.push({ kind: "ctx", no: newNo++, text: line.slice(1) });
    }
  }
  return rows;
}

/**
 * A unified diff as the TUI shows it (diffRows): each line with its number, additions and removals in the
 * diff roles, the changed words of a replaced line on the word roles' background (inverse when colours
 * are off), hunk headers in their role.
 */
export function colorDiff(diff: string): string[] {
  const rows = diffRows(diff);
  const width = Math.max(2, ...rows.map((r) => String(r.no ?? "").length));
  const num = (n: number | undefined) => c.fg("lineNumber", (n === undefined ? "" : String(n)).padStart(width));
  const mark = (role: ThemeRole, text: string) => (theme().level === 0 ? c.inverse(text) : c.bg(role, text));
  const body = (row: DiffRow, role: ThemeRole, word: ThemeRole) =>
    row.words
      ? row.words.map((w) => (w.changed ? mark(word, c.fg(role, w.text)) : c.fg(role, w.text))).join("")
      : c.fg(role, row.text);
  return rows.map((row) => {
    if (row.kind === "hunk") return c.fg("toolDiffHunk", row.text);
    if (row.kind === "note") return c.dim(`${" ".repeat(width)}   ${row.text}`);
    if (row.kind === "del")
      return `${num(row.no)} ${c.fg("toolDiffRemoved", "-")}${body(row, "toolDiffRemoved", "toolDiffRemovedWord")}`;
    if (row.kind === "add")
      return `${num(row.no)} ${c.fg("toolDiffAdded", "+")}${body(row, "toolDiffAdded", "toolDiffAddedWord")}`;
    return `${num(row.no)} ${c.fg("toolDiffContext", ` ${row.text}`)}`;
  });
}

/** Diffs inside a text (a dialog's message, the rewind preview): diff lines coloured, the rest as is. */
export function colorDiffsIn(text: string): string[] {
  let inDiff = false;
  return text.split("\n").map((line) => {
    if (/^(diff --git |--- |\+\+\+ |@@ )/.test(line)) inDiff = true;
    if (!inDiff) return line;
    if (line.startsWith("diff --git") || line.startsWith("+++") || line.startsWith("---") || line.startsWith("index "))
      return c.bold(line);
    if (line.startsWith("@@")) return c.fg("toolDiffHunk", line);
    if (line.startsWith("+")) return c.fg("toolDiffAdded", line);
    if (line.startsWith("-")) return c.fg("toolDiffRemoved", line);
    if (line.startsWith(" ") || line.startsWith("\\")) return c.fg("toolDiffContext", line);
    inDiff = false;
    return line;
  });
}

export const COLLAPSED_LINES = 12;
export const LIVE_TAIL_LINES = 8;

/** Tools whose collapsed output shows its end (where errors are) rather than its start. */
const TAIL_TOOLS = new Set(["bash", "!", "!!"]);

/** "1.2s", "14s", "2m 05s". */
export function formatElapsed(ms: number): string {
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
}

export interface ToolView {
  name?: string;
  args?: Record<string, unknown>;
  running: boolean;
  partial?: string;
  result?: ToolResultMessage;
}

/**
 * The body lines of a tool block: a live tail while it runs; for edits the numbered, coloured diff; for
 * reads the file's lines, numbered and highlighted; bash output collapsed to its last `COLLAPSED_LINES`
 * lines, any other output to its first, unless expanded (Ctrl+O).
 */
export function toolBody(state: ToolView, expanded: boolean): string[] {
  if (state.running) {
    const t = tail(state.partial ?? "", LIVE_TAIL_LINES);
    return [...(t.hidden ? [c.dim(`… ${t.hidden} earlier lines`)] : []), ...t.lines.map((l) => c.output(l))];
  }
  const result = state.result;
  if (!result) return [];
  const details = result.details as { diff?: unknown; startLine?: unknown; endLine?: unknown } | undefined;
  const diff = details?.diff;
  const fromEnd = TAIL_TOOLS.has(state.name ?? result.toolName);
  const withDiff = !result.isError && typeof diff === "string" && !!diff;
  let lines: string[];
  if (withDiff) lines = colorDiff(diff);
  else if (!result.isError && (state.name ?? result.toolName) === "read" && typeof details?.startLine === "number")
    lines = readLines(result, details.startLine, Number(details.endLine), String(state.args?.path ?? ""));
  else lines = splitResult(result);
  // An edit's new errors and warnings (the lsp plugin's details.diagnostics) go under its diff, never collapsed.
  const diagnostics = withDiff ? diagnosticLines(result.details) : [];
  if (expanded || lines.length <= COLLAPSED_LINES) return [...lines, ...diagnostics];
  const hidden = lines.length - COLLAPSED_LINES;
  if (fromEnd)
    return [c.dim(`… ${hidden} earlier lines (${keyHints.expand} to expand)`), ...lines.slice(-COLLAPSED_LINES)];
  return [
    ...lines.slice(0, COLLAPSED_LINES),
    c.dim(`… ${hidden} more lines (${keyHints.expand} to expand)`),
    ...diagnostics,
  ];
}

/** New errors and warnings a language server reported for an edit (the lsp plugin's `details.diagnostics`). */
export function diagnosticLines(details: unknown): string[] {
  const d = (details as { diagnostics?: DiagnosticsDetails } | undefined)?.diagnostics;
  if (!d || !Array.isArray(d.items)) return [];
  const paint = (s: string) => (s === "error" ? c.error : s === "warning" ? c.warning : c.muted);
  const out = d.items.map((i) =>
    paint(i.severity)(`${i.file}:${i.line}:${i.column} ${i.severity} ${i.message}${i.rule ? ` [${i.rule}]` : ""}`),
  );
  if (d.omitted > 0) out.push(c.dim(`… and ${d.omitted} more`));
  if (d.note) out.push(c.dim(`(${d.note})`));
  return out;
}

/** A read's lines, numbered from `start`, highlighted by the file's name; notes after them stay dim. */
function readLines(result: ToolResultMessage, start: number, end: number, path: string): string[] {
  const all = resultText(result).split("\n");
  const count = Number.isFinite(end) && end >= start ? end - start + 1 : all.length;
  const code = all.slice(0, count);
  const painted = highlight(code.join("\n"), path) ?? code.map((l) => c.output(l));
  const width = String(start + code.length - 1).length;
  return [
    ...painted.map((l, i) => `${c.fg("lineNumber", String(start + i).padStart(width))} ${l}`),
    ...all.slice(count).map((l) => c.dim(l)),
  ];
}

function splitResult(result: ToolResultMessage): string[] {
  const text = resultText(result);
  if (!text) return [];
  const paint = result.isError ? c.error : c.output;
  return text.split("\n").map((l) => paint(l));
}

// ───────────── footer ─────────────
/** 1234 → 1.2k, 1234567 → 1.2M. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export interface Totals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost: number;
}

/** Usage summed over every assistant message, and the sub-agents' usage their `task` results carry. */
export function usageTotals(messages: readonly AgentMessage[]): Totals {
  const t: Totals = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0 };
  for (const m of messages) {
    const u: Usage | undefined = m.role === "assistant" ? m.usage : subagentRunOf(m)?.usage;
    if (!u) continue;
    t.input += u.input;
    t.output += u.output;
    t.cacheRead += u.cacheRead;
    t.cacheWrite += u.cacheWrite;
    t.cost += u.cost?.total ?? 0;
  }
  return t;
}

/** Context used: the last assistant usage (what the provider counted) against the window, in percent. */
export function contextPercent(messages: readonly AgentMessage[], contextWindow: number): number | undefined {
  const last = [...messages]
    .reverse()
    .find(
      (m): m is AssistantMessage => m.role === "assistant" && m.stopReason !== "error" && m.stopReason !== "aborted",
    );
  if (!last || !contextWindow) return undefined;
  return (usageTotal(last.usage) / contextWindow) * 100;
}

/** The footer's figures, each with an id so a narrow footer can drop the least important first. */
export function footerParts(info: {
  model: string;
  thinking?: string;
  contextWindow: number;
  messages: readonly AgentMessage[];
  sessionName?: string;
}): { id: string; text: string }[] {
  const t = usageTotals(info.messages);
  const pct = contextPercent(info.messages, info.contextWindow);
  const parts = [
    { id: "model", text: info.model },
    ...(info.thinking ? [{ id: "thinking", text: info.thinking }] : []),
    {
      id: "context",
      text: `ctx ${pct === undefined ? "0" : pct < 10 ? pct.toFixed(1) : pct.toFixed(0)}%/${formatTokens(info.contextWindow)}`,
    },
    { id: "tokens", text: `↑${formatTokens(t.input)} ↓${formatTokens(t.output)}` },
    { id: "cache", text: `cache ${formatTokens(t.cacheRead)}` },
    { id: "cost", text: `$${t.cost.toFixed(t.cost >= 1 ? 2 : 3)}` },
  ];
  if (info.sessionName) parts.push({ id: "session", text: info.sessionName });
  return parts;
}

/** The footer's figures line: model · thinking · context % · tokens in/out · cache · cost · session name. */
export function footerLine(info: Parameters<typeof footerParts>[0]): string {
  return footerParts(info)
    .map((p) => p.text)
    .join(" · ");
}

// ───────────── shell commands (`!cmd`) ─────────────
/** What `!cmd` adds to the context. */
export function shellMessageText(command: string, output: string, exitCode: number | null): string {
  const status = exitCode === 0 ? "" : `\n(exit code ${exitCode ?? "killed"})`;
  return `I ran \`${command}\` in the shell. Output:\n\`\`\`\n${output.replace(/\n$/, "")}\n\`\`\`${status}`;
}

/** Messages of an abort, back as editor text (steering and follow-ups in queue order). */
export function messagesToEditorText(messages: readonly AgentMessage[]): string {
  return messages
    .map((m) =>
      m.role === "user"
        ? typeof m.content === "string"
          ? m.content
          : m.content.map((p) => (p.type === "text" ? p.text : "")).join("")
        : "",
    )
    .filter(Boolean)
    .join("\n");
}
