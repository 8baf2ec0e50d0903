/**
 * `coil sessions export`: the active branch as Markdown or a standalone HTML page, or the whole
 * tree as JSONL in the current format (a repaired, migrated copy that `--session` can open).
 */
import { FORMAT_VERSION, serialize } from "./format.js";
import type { SessionStore } from "./store.js";
import { subagentRunOf } from "../../lib/subagent-usage.js";
import type { AgentMessage, AssistantMessage, ImageContent, TextContent } from "../../api/index.js";

export type ExportFormat = "md" | "html" | "jsonl";

export function exportSession(store: SessionStore, format: ExportFormat): string {
  if (format === "jsonl") {
    const h = store.header;
    const header = h.version < FORMAT_VERSION ? { ...h, version: FORMAT_VERSION, migratedFrom: h.version } : h;
    return [header, ...store.entries].map((e) => serialize(e)).join("\n") + "\n";
  }
  const blocks = transcript(store);
  return format === "md" ? toMarkdown(store, blocks) : toHtml(store, blocks);
}

interface Block {
  kind: "user" | "assistant" | "thinking" | "tool-call" | "tool-result" | "note";
  title: string;
  text: string;
  error?: boolean;
}

function partsText(content: string | (TextContent | ImageContent)[]): string {
  if (typeof content === "string") return content;
  return content.map((p) => (p.type === "text" ? p.text : `[image ${p.mimeType}]`)).join("\n");
}

function transcript(store: SessionStore): Block[] {
  const blocks: Block[] = [];
  const labelled = (m: AgentMessage) => {
    const id = store.entryIdOf(m);
    const label = id ? store.labels.get(id) : undefined;
    return label ? ` — ${label}` : "";
  };
  for (const m of store.context()) {
    if (m.role === "user") blocks.push({ kind: "user", title: `User${labelled(m)}`, text: partsText(m.content) });
    else if (m.role === "assistant") {
      const a = m as AssistantMessage;
      for (const part of a.content) {
        if (part.type === "text" && part.text)
          blocks.push({
            kind: "assistant",
            title: `Assistant (${a.provider}/${a.model})${labelled(m)}`,
            text: part.text,
          });
        else if (part.type === "thinking" && part.thinking && !part.redacted)
          blocks.push({ kind: "thinking", title: "Thinking", text: part.thinking });
        else if (part.type === "toolCall")
          blocks.push({
            kind: "tool-call",
            title: `Tool call: ${part.name}`,
            text: JSON.stringify(part.arguments, null, 2),
          });
      }
      if (a.stopReason === "error" && a.errorMessage)
        blocks.push({ kind: "note", title: "Error", text: a.errorMessage, error: true });
    } else if (m.role === "toolResult") {
      const child = subagentRunOf(m);
      const via = child
        ? ` (${child.agent} sub-agent${child.session?.file ? `, session ${child.session.file}` : ""})`
        : "";
      blocks.push({
        kind: "tool-result",
        title: `Result: ${m.toolName}${via}${m.isError ? " (error)" : ""}`,
        text: partsText(m.content),
        error: m.isError,
      });
    } else if (m.display) {
      blocks.push({ kind: "note", title: m.customType, text: partsText(m.content) });
    }
  }
  return blocks;
}

function fence(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((x) => x[0].length));
  const f = "`".repeat(longest + 1);
  return `${f}\n${text}\n${f}`;
}

function toMarkdown(store: SessionStore, blocks: Block[]): string {
  const link = subagentLink(store);
  const parent = link
    ? [
        `- sub-agent (${link.agent}) run by the task call \`${link.toolCallId}\` of session \`${link.id}\` (\`${link.path}\`)`,
      ]
    : [];
  const out = [
    `# ${store.name ?? `Session ${store.id}`}`,
    "",
    `- id: \`${store.id}\``,
    `- directory: \`${store.header.cwd}\``,
    `- created: ${store.header.timestamp}`,
    ...parent,
    "",
  ];
  for (const b of blocks) {
    out.push(`## ${b.title}`, "");
    if (b.kind === "user" || b.kind === "assistant" || b.kind === "note") out.push(b.text, "");
    else if (b.kind === "thinking")
      out.push(
        b.text
          .split("\n")
          .map((l) => `> ${l}`)
          .join("\n"),
        "",
      );
    else out.push(fence(b.text), "");
  }
  return out.join("\n").trimEnd() + "\n";
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** A sub-agent's session: the session and task call that ran it. */
function subagentLink(
  store: SessionStore,
): { agent: string; toolCallId: string; id: string; path: string } | undefined {
  const link = store.header.parentSession;
  return link?.toolCallId
    ? { agent: link.agent ?? "?", toolCallId: link.toolCallId, id: link.id, path: link.path }
    : undefined;
}

function toHtml(store: SessionStore, blocks: Block[]): string {
  const title = escapeHtml(store.name ?? `Session ${store.id}`);
  const link = subagentLink(store);
  const body = blocks
    .map((b) => {
      const pre = b.kind === "tool-call" || b.kind === "tool-result" || b.kind === "thinking";
      return `<section class="${b.kind}${b.error ? " error" : ""}"><h2>${escapeHtml(b.title)}</h2>${pre ? `<pre>${escapeHtml(b.text)}</pre>` : `<div class="text">${escapeHtml(b.text)}</div>`}</section>`;
    })
    .join("\n");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
header p { color: #555; margin: 0; }
section { border-left: 4px solid #ccc; padding: 0.25rem 1rem; margin: 1rem 0; }
section h2 { font-size: 0.85rem; text-transform: uppercase; letter-spacing: 0.04em; color: #555; margin: 0.25rem 0; }
section.user { border-color: #2f6fed; } section.assistant { border-color: #1a9e55; }
section.thinking { border-color: #aaa; color: #555; } section.tool-call, section.tool-result { border-color: #b07d1a; }
section.error { border-color: #d33; }
.text { white-space: pre-wrap; } pre { white-space: pre-wrap; background: #f5f5f7; padding: 0.5rem; overflow-x: auto; }
</style>
</head>
<body>
<header><h1>${title}</h1><p>id ${escapeHtml(store.id)} · ${escapeHtml(store.header.cwd)} · created ${escapeHtml(store.header.timestamp)}</p>${link ? `<p>sub-agent (${escapeHtml(link.agent)}) run by the task call ${escapeHtml(link.toolCallId)} of session ${escapeHtml(link.id)} (${escapeHtml(link.path)})</p>` : ""}</header>
<main>
${body}
</main>
</body>
</html>
`;
}
