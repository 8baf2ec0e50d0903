/** The `lsp` tool: diagnostics of a file or the workspace, definition, references and hover. Read-only. */
import { readFile } from "node:fs/promises";
import { Type } from "typebox";
import { defineTool, type ToolDefinition, type ToolOutput } from "../../api/index.js";
import { expandPath } from "../../lib/typed-path.js";
import type { DiagnosticItem } from "./api.js";
import { formatItem, shownPath } from "./format.js";
import type { LspRuntime } from "./runtime.js";

export const LspParams = Type.Object({
  action: Type.Enum(["diagnostics", "definition", "references", "hover"], {
    description:
      "diagnostics: errors and warnings of `path`, or of every file the servers know when `path` is left out; definition, references, hover: of the symbol at `line` (with `symbol` or `column`) in `path`",
  }),
  path: Type.Optional(Type.String({ description: "The file" })),
  line: Type.Optional(Type.Integer({ minimum: 1, description: "1-based line of the symbol" })),
  symbol: Type.Optional(
    Type.String({ description: "The symbol as written on that line (its first occurrence is used)" }),
  ),
  column: Type.Optional(Type.Integer({ minimum: 1, description: "1-based column of the symbol, instead of `symbol`" })),
});

export interface LspToolEnv {
  cwd: string;
  /** The runtime, loaded on first use. */
  runtime(): Promise<LspRuntime>;
  /** ms a call waits for a server (its start-up included). */
  timeout: number;
  /** Languages the servers handle, for the description. */
  languages: () => string[];
}

const MAX_LOCATIONS = 50;
const MAX_HOVER = 4000;

const text = (t: string, isError = false): ToolOutput => ({ content: [{ type: "text", text: t }], isError });

interface Range {
  start: { line: number; character: number };
}
interface Location {
  uri?: string;
  range?: Range;
  targetUri?: string;
  targetSelectionRange?: Range;
  targetRange?: Range;
}

export function createLspTool(env: LspToolEnv): ToolDefinition<typeof LspParams> {
  return defineTool({
    name: "lsp",
    label: "LSP",
    description:
      "Ask the project's language servers (type checkers): a file's errors and warnings, or where a symbol is defined, where it is used, and its type and documentation. " +
      "Edits and writes already report the errors they introduce; use this to check a file you did not change, or to navigate code by meaning rather than by text.",
    parameters: LspParams,
    readOnly: true,
    executionMode: "parallel",
    promptSnippet: "lsp: language-server diagnostics, go-to-definition, find-references and hover",
    async execute(args) {
      const deadline = Date.now() + env.timeout;
      const runtime = await env.runtime();
      if (args.action === "diagnostics" && !args.path) {
        const r = await runtime.workspaceDiagnostics(deadline);
        const lines = r.items.map(formatItem);
        const head =
          r.files === 0
            ? "No file has been opened in a language server in this session, so there is nothing to report yet; give a path."
            : `${r.items.length ? `${r.items.length} problem${r.items.length === 1 ? "" : "s"}` : "No errors or warnings"} in the ${r.files} file${r.files === 1 ? "" : "s"} the language servers have open (not the whole project: run its type checker for that).`;
        return text([head, ...cap(lines, MAX_LOCATIONS), ...r.notes.map((n) => `(${n})`)].join("\n"));
      }
      if (!args.path) return text(`The ${args.action} action needs a path.`, true);
      const file = expandPath(args.path, env.cwd);
      const shown = shownPath(file, env.cwd);
      if (!runtime.handles(file))
        return text(
          `No language server is configured for ${shown} (servers here handle: ${env.languages().join(", ") || "nothing"}).`,
          true,
        );
      if (args.action === "diagnostics") {
        const r = await runtime.fileDiagnostics(file, deadline);
        if (r.items.length === 0 && r.notes.length > 0) return text(r.notes.join("\n"), true);
        const head = r.items.length ? summary(r.items, shown) : `No errors or warnings in ${shown}.`;
        return {
          content: [
            {
              type: "text",
              text: [head, ...cap(r.items.map(formatItem), MAX_LOCATIONS), ...r.notes.map((n) => `(${n})`)].join("\n"),
            },
          ],
          details: { items: r.items },
        };
      }
      if (args.line === undefined)
        return text(`The ${args.action} action needs a line (and a symbol or column).`, true);
      const source = await readFile(file, "utf8").catch(() => undefined);
      if (source === undefined) return text(`${shown} does not exist or cannot be read.`, true);
      const lines = source.split("\n");
      const lineText = lines[args.line - 1];
      if (lineText === undefined)
        return text(`${shown} has ${lines.length} lines; there is no line ${args.line}.`, true);
      const character = columnOf(lineText, args.symbol, args.column);
      if (character === undefined)
        return text(`'${args.symbol}' does not occur on line ${args.line} of ${shown}: ${lineText.trim()}`, true);
      const position = { line: args.line - 1, character };
      const at = `${shown}:${args.line}:${character + 1}`;
      const method =
        args.action === "definition"
          ? "textDocument/definition"
          : args.action === "references"
            ? "textDocument/references"
            : "textDocument/hover";
      const r = await runtime.ask<unknown>(
        file,
        method,
        (uri) => ({
          textDocument: { uri },
          position,
          ...(args.action === "references" ? { context: { includeDeclaration: true } } : {}),
        }),
        deadline,
      );
      if (r.result === undefined) {
        const why = r.notes.length ? ` (${r.notes.join("; ")})` : "";
        return text(`No ${args.action} found at ${at}${why}.`, r.notes.length > 0);
      }
      if (args.action === "hover") {
        const body = hoverText(r.result);
        return text(body ? clip(body, MAX_HOVER) : `No hover information at ${at}.`);
      }
      const locations = (Array.isArray(r.result) ? r.result : [r.result]) as Location[];
      const listed = await Promise.all(locations.slice(0, MAX_LOCATIONS).map((l) => describeLocation(l, env.cwd)));
      const more = locations.length > MAX_LOCATIONS ? [`… and ${locations.length - MAX_LOCATIONS} more`] : [];
      const noun = args.action === "definition" ? "Definition" : "References";
      return text([`${noun} of the symbol at ${at} (${locations.length}):`, ...listed, ...more].join("\n"));
    },
  });
}

const summary = (items: DiagnosticItem[], shown: string) => {
  const errors = items.filter((i) => i.severity === "error").length;
  return `${errors} error${errors === 1 ? "" : "s"}, ${items.length - errors} other diagnostic${items.length - errors === 1 ? "" : "s"} in ${shown}:`;
};

const cap = (lines: string[], n: number) =>
  lines.length > n ? [...lines.slice(0, n), `… and ${lines.length - n} more`] : lines;
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}\n[cut: ${s.length} characters]` : s);

/** The 0-based UTF-16 column of `symbol` on the line (the occurrence nearest `column`), or of `column`. */
export function columnOf(line: string, symbol?: string, column?: number): number | undefined {
  if (symbol) {
    const hits: number[] = [];
    for (let i = line.indexOf(symbol); i >= 0; i = line.indexOf(symbol, i + 1)) hits.push(i);
    if (hits.length === 0) return undefined;
    if (column === undefined) return hits[0];
    return hits.reduce((best, h) => (Math.abs(h - (column - 1)) < Math.abs(best - (column - 1)) ? h : best));
  }
  if (column !== undefined) return Math.min(column - 1, line.length);
  const first = line.search(/\S/);
  return Math.max(first, 0);
}

async function describeLocation(l: Location, cwd: string): Promise<string> {
  const uri = l.targetUri ?? l.uri ?? "";
  const range = l.targetSelectionRange ?? l.range ?? l.targetRange;
  let path = uri;
  try {
    path = uri.startsWith("file:") ? decodeURIComponent(new URL(uri).pathname) : uri;
  } catch {
    // keep the URI
  }
  const line = (range?.start.line ?? 0) + 1;
  const where = `${shownPath(path, cwd)}:${line}:${(range?.start.character ?? 0) + 1}`;
  const source = await readFile(path, "utf8").catch(() => undefined);
  const snippet = source?.split("\n")[line - 1]?.trim();
  return snippet ? `${where}: ${snippet.length > 200 ? `${snippet.slice(0, 200)}…` : snippet}` : where;
}

/** Hover contents (MarkupContent, a MarkedString or a list of them) as plain text. */
export function hoverText(result: unknown): string {
  const contents = (result as { contents?: unknown } | null)?.contents;
  const one = (c: unknown): string => {
    if (typeof c === "string") return c;
    if (c && typeof c === "object") {
      const o = c as { value?: unknown; language?: string };
      if (typeof o.value === "string") return o.language ? `\`\`\`${o.language}\n${o.value}\n\`\`\`` : o.value;
    }
    return "";
  };
  const parts = Array.isArray(contents) ? contents.map(one) : [one(contents)];
  return parts
    .filter(Boolean)
    .join("\n\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
