/**
 * The unified diff of an edit result, computed by jsdiff (`diff` on npm): hunk headers and "\ No newline
 * at end of file" markers as git writes them, so `git apply` takes the diff as it is.
 */
import { isAbsolute } from "node:path";
import { structuredPatch, type StructuredPatchHunk } from "diff";

/** Beyond this many differing lines jsdiff gives up and the changed middle is shown as removed-then-added. */
const MAX_EDIT_LENGTH = 1500;

export interface DiffResult {
  /** Unified diff text (empty when nothing changed). */
  diff: string;
  /** First line (1-based, in the new text) that differs. */
  firstChangedLine?: number;
  added: number;
  removed: number;
}

/** Lines of `text` with their end kept apart, the way jsdiff counts them (a last line without "\n" is marked). */
function linesOf(text: string): { lines: string[]; noEol: boolean } {
  if (text === "") return { lines: [], noEol: false };
  const noEol = !text.endsWith("\n");
  return { lines: (noEol ? text : text.slice(0, -1)).split("\n"), noEol };
}

/** One hunk that replaces everything between the common first and last lines (jsdiff's search was too long). */
function replaceHunk(before: string, after: string, context: number): StructuredPatchHunk {
  const a = linesOf(before);
  const b = linesOf(after);
  let prefix = 0;
  while (prefix < a.lines.length && prefix < b.lines.length && a.lines[prefix] === b.lines[prefix]) prefix++;
  const start = Math.max(0, prefix - context);
  const mark = "\\ No newline at end of file";
  const removed = a.lines.slice(prefix).map((l) => `-${l}`);
  const added = b.lines.slice(prefix).map((l) => `+${l}`);
  if (a.noEol) removed.push(mark);
  if (b.noEol) added.push(mark);
  return {
    oldStart: start + 1,
    oldLines: a.lines.length - start,
    newStart: start + 1,
    newLines: b.lines.length - start,
    lines: [...a.lines.slice(start, prefix).map((l) => ` ${l}`), ...removed, ...added],
  };
}

/** Unified diff of two LF texts, `context` lines around each change; `path` as results show it (relative to the working directory, or absolute). */
export function unifiedDiff(before: string, after: string, path: string, context = 3): DiffResult {
  if (before === after) return { diff: "", added: 0, removed: 0 };
  const patch = structuredPatch(path, path, before, after, "", "", { context, maxEditLength: MAX_EDIT_LENGTH });
  const hunks = patch?.hunks ?? [replaceHunk(before, after, context)];
  // git's a/ and b/ prefixes only make sense before a relative path; an absolute one is shown as is.
  const relative = !isAbsolute(path);
  const out = [`--- ${relative ? "a/" : ""}${path}`, `+++ ${relative ? "b/" : ""}${path}`];
  let added = 0;
  let removed = 0;
  let firstChangedLine: number | undefined;
  for (const h of hunks) {
    // An empty side starts at the line before it (git's convention: "-0,0" for a new file's hunk).
    const oldStart = h.oldLines === 0 ? h.oldStart - 1 : h.oldStart;
    const newStart = h.newLines === 0 ? h.newStart - 1 : h.newStart;
    out.push(`@@ -${oldStart},${h.oldLines} +${newStart},${h.newLines} @@`, ...h.lines);
    let line = h.newStart;
    for (const l of h.lines) {
      if (l.startsWith("+")) added++;
      if (l.startsWith("-")) removed++;
      if (firstChangedLine === undefined && (l.startsWith("+") || l.startsWith("-"))) firstChangedLine = line;
      if (l.startsWith(" ") || l.startsWith("+")) line++;
    }
  }
  return { diff: `${out.join("\n")}\n`, firstChangedLine, added, removed };
}
