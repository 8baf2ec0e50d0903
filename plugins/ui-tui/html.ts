/**
 * /export's HTML: one self-contained page, static, with no script and nothing fetched. Your messages and
 * the answers with their Markdown rendered (marked), code blocks and read results highlighted by the
 * TUI's highlighter (lowlight, offline), edit and write results with their diff numbered and coloured
 * as in the TUI (render.ts's diffRows), tool calls and results folded in `<details>`. The colours are
 * the built-in light theme's, in a small embedded stylesheet. HTML inside a message is shown as text,
 * never run. Loaded by /export only.
 */
import { textOf, type AgentMessage, type ToolResultMessage } from "../../api/index.js";
import { highlightPieces } from "./highlight.js";
import { diffRows, type DiffRow } from "./render.js";
import { summarizeArgs } from "./summary.js";
import { BUILTIN_THEMES, cssColor, type ThemeRole } from "./theme.js";

export const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** The roles the page colours, each a class of its own (`<span class="syntaxKeyword">`). */
const ROLES: readonly ThemeRole[] = [
  "syntaxComment",
  "syntaxKeyword",
  "syntaxFunction",
  "syntaxVariable",
  "syntaxString",
  "syntaxNumber",
  "syntaxType",
  "syntaxOperator",
  "syntaxPunctuation",
  "toolDiffAdded",
  "toolDiffRemoved",
  "toolDiffContext",
  "toolDiffHunk",
  "lineNumber",
];

function roleStyles(): string {
  const light = BUILTIN_THEMES.light!;
  const rules = ROLES.map((role) => {
    const color = cssColor(light[role]);
    return color ? `.${role}{color:${color}}` : "";
  });
  const word = (role: ThemeRole) => cssColor(light[role]) ?? "transparent";
  rules.push(
    `.toolDiffAddedWord{background:${word("toolDiffAddedWord")}}`,
    `.toolDiffRemovedWord{background:${word("toolDiffRemovedWord")}}`,
  );
  return rules.join("");
}

/** Code as highlighted HTML (escaped), or just escaped when the language is unknown. */
async function codeHtml(code: string, lang: string | undefined): Promise<string> {
  const pieces = await highlightPieces(code, lang);
  if (!pieces) return escapeHtml(code);
  return pieces
    .map((p) => (p.role ? `<span class="${p.role}">${escapeHtml(p.text)}</span>` : escapeHtml(p.text)))
    .join("");
}

/** A unified diff as the TUI draws it: numbered lines, additions and removals coloured, changed words marked. */
export function diffHtml(diff: string): string {
  const rows = diffRows(diff);
  const width = Math.max(2, ...rows.map((r) => String(r.no ?? "").length));
  const num = (n: number | undefined) =>
    `<span class="lineNumber">${(n === undefined ? "" : String(n)).padStart(width)}</span>`;
  const body = (row: DiffRow, word: ThemeRole) =>
    row.words
      ? row.words
          .map((w) => (w.changed ? `<mark class="${word}">${escapeHtml(w.text)}</mark>` : escapeHtml(w.text)))
          .join("")
      : escapeHtml(row.text);
  const lines = rows.map((row) => {
    if (row.kind === "hunk") return `<span class="toolDiffHunk">${escapeHtml(row.text)}</span>`;
    if (row.kind === "note") return `<span class="lineNumber">${" ".repeat(width)}   ${escapeHtml(row.text)}</span>`;
    if (row.kind === "del")
      return `${num(row.no)} <span class="toolDiffRemoved">-${body(row, "toolDiffRemovedWord")}</span>`;
    if (row.kind === "add")
      return `${num(row.no)} <span class="toolDiffAdded">+${body(row, "toolDiffAddedWord")}</span>`;
    return `${num(row.no)} <span class="toolDiffContext"> ${escapeHtml(row.text)}</span>`;
  });
  return `<pre class="diff">${lines.join("\n")}</pre>`;
}

/** A tool result: its text; an edit's or write's diff (details.diff) under it; a read's file content highlighted. */
async function resultHtml(m: ToolResultMessage, path: string | undefined): Promise<string> {
  const details = m.details as { diff?: unknown; startLine?: unknown } | undefined;
  const text = textOf(m as never);
  const label = `${escapeHtml(m.toolName)} result${m.isError ? " (error)" : ""}`;
  const diff = !m.isError && typeof details?.diff === "string" && details.diff ? details.diff : undefined;
  if (diff)
    return `<details class="result" open><summary>${label}: ${escapeHtml(text.split("\n")[0] ?? "")}</summary>${diffHtml(diff)}</details>`;
  const read = !m.isError && m.toolName === "read" && typeof details?.startLine === "number";
  const pre = read ? await codeHtml(text, path) : escapeHtml(text);
  return `<details class="result${m.isError ? " error" : ""}"><summary>${label}</summary><pre>${pre}</pre></details>`;
}

/** History as one self-contained HTML page (for /export). */
export async function toHtml(messages: readonly AgentMessage[], title: string): Promise<string> {
  const { Marked } = await import("marked");
  // Code blocks are highlighted before rendering (marked's renderer is synchronous), keyed by their text.
  const blocks = new Map<string, string>();
  const marked = new Marked({
    gfm: true,
    breaks: false,
    async: true,
    walkTokens: async (token) => {
      if (token.type !== "code") return;
      const lang = (token as { lang?: string }).lang?.split(/\s/)[0] || undefined;
      const key = `${lang ?? ""}\u0000${token.text}`;
      if (!blocks.has(key)) blocks.set(key, await codeHtml(token.text, lang));
    },
  });
  marked.use({
    renderer: {
      html: (token) => escapeHtml(token.text),
      code: (token) => {
        const lang = token.lang?.split(/\s/)[0] || undefined;
        const inner = blocks.get(`${lang ?? ""}\u0000${token.text}`) ?? escapeHtml(token.text);
        return `<pre><code${lang ? ` class="language-${escapeHtml(lang)}"` : ""}>${inner}</code></pre>\n`;
      },
    },
  });
  const md = async (text: string) => (await marked.parse(text)) as string;
  const paths = new Map<string, string>();
  const out: string[] = [];
  for (const m of messages) {
    if (m.role === "user") out.push(`<section class="user"><h2>You</h2>${await md(textOf(m))}</section>`);
    else if (m.role === "assistant") {
      const parts: string[] = [];
      for (const p of m.content) {
        if (p.type === "text" && p.text.trim()) parts.push(await md(p.text));
        else if (p.type === "thinking" && p.thinking.trim())
          parts.push(`<details class="thinking"><summary>thinking</summary>${await md(p.thinking)}</details>`);
        else if (p.type === "toolCall") {
          const path = (p.arguments as { path?: unknown }).path;
          if (typeof path === "string") paths.set(p.id, path);
          parts.push(
            `<div class="call"><b>${escapeHtml(p.name)}</b> <code>${escapeHtml(summarizeArgs(p.name, p.arguments))}</code></div>`,
          );
        }
      }
      if (m.stopReason === "error") parts.push(`<p class="error">✗ ${escapeHtml(m.errorMessage ?? "error")}</p>`);
      out.push(
        `<section class="assistant"><h2>${escapeHtml(`${m.provider}/${m.model}`)}</h2>${parts.join("\n")}</section>`,
      );
    } else if (m.role === "toolResult") out.push(await resultHtml(m, paths.get(m.toolCallId)));
    else if (m.display)
      out.push(
        `<section class="note">${await md(typeof m.content === "string" ? m.content : textOf(m as never))}</section>`,
      );
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;background:#fafafa}
h1{font-size:1.3rem}h2{font-size:.8rem;text-transform:uppercase;letter-spacing:.05em;color:#666;margin:0 0 .3rem}
section{background:#fff;border:1px solid #e3e3e3;border-radius:8px;padding:.8rem 1rem;margin:.8rem 0}
section.user{background:#eef4ff;border-color:#cfdcf5}pre,code{font:13px/1.4 ui-monospace,monospace}
pre{background:#f3f3f3;padding:.6rem;border-radius:6px;overflow:auto}details{margin:.4rem 0}
.call{color:#555;margin:.3rem 0}.error{color:#b00020}.thinking{color:#666}mark{color:inherit;border-radius:2px}
${roleStyles()}
</style></head><body>
<h1>${escapeHtml(title)}</h1>
${out.join("\n")}
</body></html>
`;
}
