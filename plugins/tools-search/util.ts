/** Small helpers grep, find and ls share: paths, cutting output, quoting. */
import { dirname, isAbsolute, relative, sep } from "node:path";
import type { ToolOutput } from "../../api/index.js";
import { resolveTypedPath, similarNames } from "../../lib/typed-path.js";
import type { SearchOperations } from "./search-backend.js";
import { formatSize, MAX_BYTES, MAX_LINES } from "./limits.js";

/** The directory or file a typed path means (default: the working directory); see lib/typed-path.ts. */
export function locatePath(path: string | undefined, cwd: string, ops: SearchOperations): Promise<string> {
  return resolveTypedPath(path?.trim() || ".", cwd, ops);
}

/** " Similar names in dir: a, b." for a path that does not exist, or "". */
export async function similarHint(abs: string, cwd: string, ops: SearchOperations): Promise<string> {
  const similar = await similarNames(ops, abs);
  return similar.length ? ` Similar names in ${displayPath(dirname(abs), cwd)}: ${similar.join(", ")}.` : "";
}

export function displayPath(abs: string, cwd: string): string {
  const rel = relative(cwd, abs);
  if (rel === "") return ".";
  return rel.startsWith("..") || isAbsolute(rel) ? abs : rel.split(sep).join("/");
}

export { shellQuote } from "../../lib/sniff.js";

export function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

export const fail = <D>(text: string): ToolOutput<D> => ({ content: [{ type: "text", text }], isError: true });

/**
 * Join result lines within the byte and line budget; the notices (limit reached, lines cut ...)
 * follow the kept lines. Returns the text and whether the budget cut it.
 */
export function budget(lines: readonly string[], notices: string[]): { text: string; cut: boolean } {
  const kept: string[] = [];
  let bytes = 0;
  let cut = false;
  for (const line of lines) {
    const size = Buffer.byteLength(line, "utf8") + 1;
    if (kept.length >= MAX_LINES || bytes + size > MAX_BYTES) {
      cut = true;
      break;
    }
    kept.push(line);
    bytes += size;
  }
  if (cut)
    notices.unshift(
      `[Output cut at ${kept.length} of ${lines.length} lines (${MAX_LINES} lines / ${formatSize(MAX_BYTES)} limit). Narrow the search with path or glob.]`,
    );
  const tail = notices.length ? `\n\n${notices.join("\n")}` : "";
  return { text: kept.join("\n") + tail, cut };
}
