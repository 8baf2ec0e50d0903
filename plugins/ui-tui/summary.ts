/** One-line summaries of tool calls, for the transcript and /tree (no dependencies: commands use it at start-up). */
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
