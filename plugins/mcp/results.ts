/**
 * MCP results as coil tool output: text, images (image blocks), embedded resources and resource links
 * (text naming their URI), audio (a note), `structuredContent` (JSON text when nothing else says it),
 * `isError`. Text keeps to the shared tool output budget (lib/tool-budget.ts).
 */
import type { ImageContent, TextContent, ToolOutput } from "../../api/index.js";
import { formatSize, MAX_BYTES, MAX_LINES } from "../../lib/tool-budget.js";

type Block = { type: string; [key: string]: unknown };
type ResourceContents = { uri: string; mimeType?: string; text?: string; blob?: string };

export interface McpResultDetails {
  server: string;
  tool: string;
  structuredContent?: unknown;
  /** Bytes of text the server sent, when more than the budget. */
  truncatedFrom?: number;
}

const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp)$/;

/** One resource's contents (`resources/read`, or embedded in a tool result). */
export function resourceBlock(r: ResourceContents): TextContent | ImageContent {
  if (typeof r.text === "string")
    return { type: "text", text: `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ""}]\n${r.text}` };
  if (typeof r.blob === "string" && r.mimeType && IMAGE_TYPES.test(r.mimeType))
    return { type: "image", data: r.blob, mimeType: r.mimeType };
  const bytes = typeof r.blob === "string" ? Math.floor((r.blob.length * 3) / 4) : 0;
  return {
    type: "text",
    text: `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ""}: ${formatSize(bytes)} of binary data, not shown]`,
  };
}

/** Map MCP content blocks to coil content. */
export function mapContent(blocks: readonly Block[]): (TextContent | ImageContent)[] {
  const out: (TextContent | ImageContent)[] = [];
  for (const b of blocks) {
    if (b.type === "text") out.push({ type: "text", text: String(b.text ?? "") });
    else if (b.type === "image" && typeof b.data === "string")
      out.push({ type: "image", data: b.data, mimeType: String(b.mimeType ?? "image/png") });
    else if (b.type === "audio")
      out.push({
        type: "text",
        text: `[audio (${String(b.mimeType ?? "unknown type")}), ${formatSize(Math.floor(String(b.data ?? "").length * 0.75))}: not shown]`,
      });
    else if (b.type === "resource" && b.resource && typeof b.resource === "object")
      out.push(resourceBlock(b.resource as ResourceContents));
    else if (b.type === "resource_link") {
      const desc = b.description ? ` — ${String(b.description)}` : "";
      out.push({
        type: "text",
        text: `[resource link] ${String(b.name ?? b.uri)}: ${String(b.uri)}${b.mimeType ? ` (${String(b.mimeType)})` : ""}${desc} (read it with mcp_read_resource)`,
      });
    } else out.push({ type: "text", text: `[${b.type} content: ${JSON.stringify(b).slice(0, 500)}]` });
  }
  return out;
}

/** Keep text within MAX_BYTES and MAX_LINES in total, cutting the tail, and say what was cut. */
export function withinBudget(
  content: (TextContent | ImageContent)[],
  hint: string,
): { content: (TextContent | ImageContent)[]; truncatedFrom?: number } {
  const texts = content.filter((c): c is TextContent => c.type === "text");
  const totalBytes = texts.reduce((n, c) => n + Buffer.byteLength(c.text), 0);
  const totalLines = texts.reduce((n, c) => n + c.text.split("\n").length, 0);
  if (totalBytes <= MAX_BYTES && totalLines <= MAX_LINES) return { content };
  let bytes = 0;
  let lines = 0;
  let full = false;
  const out: (TextContent | ImageContent)[] = [];
  for (const c of content) {
    if (c.type !== "text") {
      if (!full) out.push(c);
      continue;
    }
    if (full) continue;
    const kept: string[] = [];
    for (const line of c.text.split("\n")) {
      const size = Buffer.byteLength(line) + 1;
      if (bytes + size > MAX_BYTES || lines + 1 > MAX_LINES) {
        // A single huge line still shows its start.
        if (kept.length === 0 && bytes < MAX_BYTES)
          kept.push(
            Buffer.from(line)
              .subarray(0, MAX_BYTES - bytes)
              .toString("utf8")
              .replace(/\uFFFD$/, ""),
          );
        full = true;
        break;
      }
      kept.push(line);
      bytes += size;
      lines++;
    }
    out.push({ type: "text", text: kept.join("\n") });
  }
  out.push({
    type: "text",
    text: `[output truncated: the result had ${formatSize(totalBytes)} in ${totalLines} lines; showing the first ${formatSize(Math.min(bytes, MAX_BYTES))} (limit ${formatSize(MAX_BYTES)} or ${MAX_LINES} lines). ${hint}]`,
  });
  return { content: out, truncatedFrom: totalBytes };
}

/** A `tools/call` result as tool output. */
export function toToolOutput(
  result: Record<string, unknown>,
  server: string,
  tool: string,
): ToolOutput<McpResultDetails> {
  const blocks = Array.isArray(result.content) ? (result.content as Block[]) : [];
  let content = mapContent(blocks);
  const structured = result.structuredContent;
  if (structured !== undefined && !content.some((c) => c.type === "text" && c.text.trim()))
    content.push({ type: "text", text: JSON.stringify(structured, null, 2) });
  if (!Array.isArray(result.content) && "toolResult" in result)
    content.push({ type: "text", text: JSON.stringify(result.toolResult, null, 2) });
  if (content.length === 0)
    content = [{ type: "text", text: result.isError ? "(the tool failed without a message)" : "(no output)" }];
  const budget = withinBudget(
    content,
    "Ask the tool for less (a narrower query, a page or a limit) if you need the rest.",
  );
  return {
    content: budget.content,
    isError: result.isError === true,
    details: {
      server,
      tool,
      ...(structured !== undefined ? { structuredContent: structured } : {}),
      ...(budget.truncatedFrom ? { truncatedFrom: budget.truncatedFrom } : {}),
    },
  };
}
