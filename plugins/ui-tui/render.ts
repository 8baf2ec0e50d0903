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
} from "../../kernel/index.js";
import { subagentRunOf } from "../../lib/subagent-usage.js";
import type { DiagnosticsDetails } from "../lsp/api.js";

// ───────────── colours (SGR; the TUI resets styles at the end of every line) ─────────────
const sgr = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;
export const c = {
  bold: sgr(1, 22),
  dim: sgr(2, 22),
  italic: sgr(3, 23),
  red: sgr(31, 39),
  green: sgr(32, 39),
  yellow: sgr(33, 39),
  blue: sgr(34, 39),
  magenta: sgr(35, 39),
  cyan: sgr(36, 39),
  gray: sgr(90, 39),
  inverse: sgr(7, 27),
};

/** Strip SGR and other CSI sequences (for tests and width checks). */
export function plain(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").replace(/\x1b_[^\x07]*\x07/g, "");
}

/** Themes for the library's components (structurally its SelectListTheme and MarkdownTheme). */
export function selectTheme() {
  return {
    selectedPrefix: c.cyan,
    selectedText: (s: string) => c.cyan(c.bold(s)),
    description: c.dim,
    scrollInfo: c.dim,
    noMatch: c.dim,
  };
}

export function markdownTheme() {
  return {
    heading: (s: string) => c.bold(c.cyan(s)),
    link: c.blue,
    linkUrl: c.dim,
    code: c.yellow,
    codeBlock: c.green,
    codeBlockBorder: c.gray,
    quote: c.italic,
    quoteBorder: c.gray,
    hr: c.gray,
    listBullet: c.cyan,
    bold: c.bold,
    italic: c.italic,
    strikethrough: (s: string) => `\x1b[9m${s}\x1b[29m`,
    underline: (s: string) => `\x1b[4m${s}\x1b[24m`,
  };
}

// ───────────── tool calls ─────────────
function firstLine(text: string): string {
  const lines = text.split("\n");
  return lines.length > 1 ? `${lines[0]} …` : (lines[0] ?? "");
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : undefined;
}

/** One line saying what a tool call does: `$ npm test`, `src/a.ts:10-40`, `/TODO/ in src`. */
export function summarizeArgs(tool: string, args: Record<string, unknown>): string {
  const path = str(args.path) ?? str(args.file_path) ?? str(args.file);
  switch (tool) {
    case "bash":
      return `$ ${firstLine(str(args.command) ?? "")}`;
    case "read": {
      const from = Number(args.offset ?? 0);
      const limit = Number(args.limit ?? 0);
      const range = from || limit ? `:${from || 1}${limit ? `-${(from || 1) + limit - 1}` : ""}` : "";
      return `${path ?? "?"}${range}`;
    }
    case "edit": {
      const edits = Array.isArray(args.edits) ? args.edits.length : 1;
      return `${path ?? "?"}${edits > 1 ? ` (${edits} edits)` : ""}`;
    }
    case "write": {
      const text = str(args.content);
      return `${path ?? "?"}${text !== undefined ? ` (${text.split("\n").length} lines)` : ""}`;
    }
    case "grep":
      return `/${str(args.pattern) ?? ""}/${path ? ` in ${path}` : ""}${args.glob ? ` ${str(args.glob)}` : ""}`;
    case "find":
      return `${str(args.pattern) ?? str(args.glob) ?? ""}${path ? ` in ${path}` : ""}`;
    case "ls":
      return path ?? ".";
    case "task":
      return `${str(args.agent) ?? "general"}: ${firstLine(str(args.description) ?? "")}`;
  }
  const parts = Object.entries(args).map(
    ([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(firstLine(v)) : JSON.stringify(v)}`,
  );
  return parts.join(" ");
}

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

/** A unified diff with additions green, removals red and hunk headers cyan. */
export function colorDiff(diff: string): string[] {
  return diff
    .replace(/\n$/, "")
    .split("\n")
    .map((line) => {
      if (line.startsWith("+++") || line.startsWith("---")) return c.bold(line);
      if (line.startsWith("@@")) return c.cyan(line);
      if (line.startsWith("+")) return c.green(line);
      if (line.startsWith("-")) return c.red(line);
      return c.dim(line);
    });
}

export const COLLAPSED_LINES = 12;
export const LIVE_TAIL_LINES = 8;

/**
 * The body lines of a tool block: a live tail while it runs, a coloured diff for edits, and otherwise
 * the output collapsed to `COLLAPSED_LINES` unless expanded (Ctrl+O).
 */
export function toolBody(
  state: { running: boolean; partial?: string; result?: ToolResultMessage },
  expanded: boolean,
): string[] {
  if (state.running) {
    const t = tail(state.partial ?? "", LIVE_TAIL_LINES);
    return [...(t.hidden ? [c.dim(`… ${t.hidden} earlier lines`)] : []), ...t.lines.map((l) => c.gray(l))];
  }
  const result = state.result;
  if (!result) return [];
  const diff = (result.details as { diff?: unknown } | undefined)?.diff;
  const withDiff = !result.isError && typeof diff === "string" && !!diff;
  const lines = withDiff ? colorDiff(diff) : splitResult(result);
  const shown = collapse(lines, COLLAPSED_LINES, expanded);
  const out = shown.lines;
  if (shown.hidden) out.push(c.dim(`… ${shown.hidden} more lines (Ctrl+O to expand)`));
  // The result's text (which the diff replaces) lists them too; under a diff they are drawn from the details.
  if (withDiff) out.push(...diagnosticLines(result.details));
  return out;
}

/** New errors and warnings a language server reported for an edit (the lsp plugin's `details.diagnostics`). */
export function diagnosticLines(details: unknown): string[] {
  const d = (details as { diagnostics?: DiagnosticsDetails } | undefined)?.diagnostics;
  if (!d || !Array.isArray(d.items)) return [];
  const paint = (s: string) => (s === "error" ? c.red : s === "warning" ? c.yellow : c.gray);
  const out = d.items.map((i) =>
    paint(i.severity)(`${i.file}:${i.line}:${i.column} ${i.severity} ${i.message}${i.rule ? ` [${i.rule}]` : ""}`),
  );
  if (d.omitted > 0) out.push(c.dim(`… and ${d.omitted} more`));
  if (d.note) out.push(c.dim(`(${d.note})`));
  return out;
}

function splitResult(result: ToolResultMessage): string[] {
  const text = resultText(result);
  if (!text) return [];
  const paint = result.isError ? c.red : c.gray;
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

/** The footer's figures line: model · context % · tokens in/out · cache · cost · session name. */
export function footerLine(info: {
  model: string;
  thinking?: string;
  contextWindow: number;
  messages: readonly AgentMessage[];
  sessionName?: string;
}): string {
  const t = usageTotals(info.messages);
  const pct = contextPercent(info.messages, info.contextWindow);
  const parts = [
    info.thinking ? `${info.model} · ${info.thinking}` : info.model,
    `ctx ${pct === undefined ? "0" : pct < 10 ? pct.toFixed(1) : pct.toFixed(0)}%/${formatTokens(info.contextWindow)}`,
    `↑${formatTokens(t.input)} ↓${formatTokens(t.output)}`,
    `cache ${formatTokens(t.cacheRead)}`,
    `$${t.cost.toFixed(t.cost >= 1 ? 2 : 3)}`,
  ];
  if (info.sessionName) parts.push(info.sessionName);
  return parts.join(" · ");
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
