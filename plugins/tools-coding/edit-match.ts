/**
 * Locating edits in a file and applying them. Pure string work, no I/O.
 *
 * Matching runs on the file with CRLF read as LF (so an `oldText` with `\n` matches a CRLF file);
 * replacements are written back with the line ending of the region they replace, so every byte
 * outside the replaced regions stays as it was (mixed endings included).
 */

export interface EditSpec {
  oldText: string;
  newText: string;
}

export interface PlannedEdit {
  /** Index in the call's `edits`. */
  index: number;
  /** Replaced range in the original text (without BOM). */
  start: number;
  end: number;
  replacement: string;
  /** 1-based line where the match starts. */
  line: number;
  /** Matched only after folding whitespace, quotes and dashes. */
  tolerant: boolean;
}

export type EditPlan = { ok: true; text: string; edits: PlannedEdit[] } | { ok: false; message: string };

// Characters a tolerant match treats as their ASCII look-alikes (each maps one code unit to one).
const FOLD = new Map<string, string>([
  ...[..."\u2018\u2019\u201A\u201B\u2032"].map((c) => [c, "'"] as [string, string]),
  ...[..."\u201C\u201D\u201E\u201F\u2033"].map((c) => [c, '"'] as [string, string]),
  ...[..."\u2010\u2011\u2012\u2013\u2014\u2015\u2212"].map((c) => [c, "-"] as [string, string]),
  ...[..."\u00A0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A\u202F\u205F\u3000"].map((c) => [c, " "] as [string, string]),
]);
const FOLD_CHARS = new RegExp(`[${[...FOLD.keys()].join("")}]`, "g");
const TRAILING_BLANKS = /[ \t]+(?=\n|$)/g;

/** Fold look-alike characters and drop trailing whitespace on every line; `map[i]` is the source index of folded char i. */
export function fold(text: string, withMap: boolean): { text: string; map?: Int32Array } {
  // Folding maps one code unit to one, so indices only move where trailing blanks are dropped.
  const replaced = text.replace(FOLD_CHARS, (c) => FOLD.get(c)!);
  const pieces: string[] = [];
  const kept: [start: number, end: number][] = [];
  let from = 0;
  for (const m of replaced.matchAll(TRAILING_BLANKS)) {
    kept.push([from, m.index]);
    from = m.index + m[0].length;
  }
  kept.push([from, replaced.length]);
  let length = 0;
  for (const [start, end] of kept) {
    pieces.push(replaced.slice(start, end));
    length += end - start;
  }
  if (!withMap) return { text: pieces.join("") };
  const map = new Int32Array(length);
  let n = 0;
  for (const [start, end] of kept) for (let i = start; i < end; i++) map[n++] = i;
  return { text: pieces.join(""), map };
}

/** Start indices of every occurrence, overlapping ones included (capped). */
function occurrences(haystack: string, needle: string, cap = 50): number[] {
  const found: number[] = [];
  for (let i = haystack.indexOf(needle); i >= 0 && found.length < cap; i = haystack.indexOf(needle, i + 1)) found.push(i);
  return found;
}

/** Sorted positions of `\n`, for index → line number. */
function newlineIndex(text: string): number[] {
  const at: number[] = [];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) at.push(i);
  return at;
}

/** Count of values in sorted `list` below `value`. */
function countBelow(list: readonly number[], value: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const lf = (s: string) => s.replace(/\r\n/g, "\n");

function linesList(lines: number[]): string {
  const shown = lines.slice(0, 10).join(", ");
  return lines.length > 10 ? `${shown} and more` : shown;
}

/** Match every edit against `original` (BOM already removed) and build the new text. */
export function planEdits(original: string, edits: readonly EditSpec[], shown: string): EditPlan {
  // The file as LF, and where each removed \r was (as the index of its \n in the LF text).
  const crlf: number[] = [];
  for (let i = original.indexOf("\r\n"); i >= 0; i = original.indexOf("\r\n", i + 2)) crlf.push(i - crlf.length);
  const text = crlf.length ? lf(original) : original;
  const toOriginal = (n: number) => n + countBelow(crlf, n);
  const newlines = newlineIndex(text);
  const lineOf = (n: number) => countBelow(newlines, n) + 1;
  let folded: { text: string; map?: Int32Array } | undefined;

  const name = (i: number) => (edits.length === 1 ? "oldText" : `edits[${i}].oldText`);
  const planned: (Omit<PlannedEdit, "replacement" | "start" | "end"> & { nStart: number; nEnd: number; newText: string })[] = [];

  for (const [i, edit] of edits.entries()) {
    const oldText = lf(edit.oldText);
    const newText = lf(edit.newText);
    if (oldText === "") return { ok: false, message: `${name(i)} is empty. Give the exact text to replace (to create or overwrite a whole file, use write).` };
    const exact = occurrences(text, oldText);
    if (exact.length === 1) {
      planned.push({ index: i, nStart: exact[0]!, nEnd: exact[0]! + oldText.length, newText, line: lineOf(exact[0]!), tolerant: false });
      continue;
    }
    if (exact.length > 1) {
      return {
        ok: false,
        message: `${name(i)} matches ${exact.length === 50 ? "50 or more" : exact.length} places in ${shown} (lines ${linesList(exact.map(lineOf))}); it must match exactly one. Include more surrounding lines to make it unique.`,
      };
    }
    folded ??= fold(text, true);
    const needle = fold(oldText, false).text;
    const loose = needle === "" ? [] : occurrences(folded.text, needle);
    if (loose.length === 1) {
      const map = folded.map!;
      const nStart = map[loose[0]!]!;
      const nEnd = map[loose[0]! + needle.length - 1]! + 1;
      planned.push({ index: i, nStart, nEnd, newText, line: lineOf(nStart), tolerant: true });
      continue;
    }
    if (loose.length > 1) {
      const lines = loose.map((f) => lineOf(folded!.map![f]!));
      return {
        ok: false,
        message: `${name(i)} was not found exactly in ${shown}; ignoring whitespace and quote differences it matches ${loose.length} places (lines ${linesList(lines)}). Re-read those lines and copy the text exactly, with enough context to match one place.`,
      };
    }
    return { ok: false, message: `${name(i)} was not found in ${shown}.${notFoundHint(text, oldText)}` };
  }

  const sorted = [...planned].sort((x, y) => x.nStart - y.nStart);
  for (let k = 1; k < sorted.length; k++) {
    const prev = sorted[k - 1]!;
    const next = sorted[k]!;
    if (next.nStart < prev.nEnd) {
      const [x, y] = prev.index < next.index ? [prev, next] : [next, prev];
      return {
        ok: false,
        message: `edits[${x.index}] and edits[${y.index}] overlap in ${shown} (lines ${x.line}-${lineOf(x.nEnd - 1)} and ${y.line}-${lineOf(y.nEnd - 1)}). Every edit is matched against the original file; merge overlapping edits into one.`,
      };
    }
  }

  const lfCount = newlines.length;
  const fileEol = crlf.length > lfCount - crlf.length ? "\r\n" : "\n";
  const result: PlannedEdit[] = [];
  const pieces: string[] = [];
  let cursor = 0;
  for (const p of sorted) {
    const start = toOriginal(p.nStart);
    const end = toOriginal(p.nEnd);
    const region = original.slice(start, end);
    const eol = region.includes("\r\n") ? "\r\n" : region.includes("\n") ? "\n" : fileEol;
    const replacement = eol === "\n" ? p.newText : p.newText.replace(/\n/g, eol);
    if (replacement === region) {
      const which = edits.length === 1 ? "The edit" : `edits[${p.index}]`;
      return { ok: false, message: `${which} changes nothing: its newText is the same as the text it replaces at line ${p.line} of ${shown}. Give the new text, or drop the edit.` };
    }
    pieces.push(original.slice(cursor, start), replacement);
    cursor = end;
    result.push({ index: p.index, start, end, replacement, line: p.line, tolerant: p.tolerant });
  }
  pieces.push(original.slice(cursor));
  return { ok: true, text: pieces.join(""), edits: result.sort((x, y) => x.index - y.index) };
}

function notFoundHint(text: string, oldText: string): string {
  const first = oldText.split("\n").map((l) => l.trim()).find((l) => l.length >= 4);
  if (first) {
    const lines: number[] = [];
    const rows = text.split("\n");
    for (let i = 0; i < rows.length && lines.length < 10; i++) if (rows[i]!.includes(first)) lines.push(i + 1);
    if (lines.length > 0) {
      return ` Its first line "${first.length > 80 ? first.slice(0, 80) + "…" : first}" occurs at line ${lines.join(", ")}, but the following lines differ. Re-read that part with read (offset=${Math.max(1, lines[0]! - 2)}) and copy the text exactly.`;
    }
  }
  return " The file may have changed since you read it. Re-read it with read and copy oldText exactly, including indentation and whitespace.";
}
