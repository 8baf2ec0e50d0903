/**
 * Locating edits in a file and applying them. Pure string work, no I/O.
 *
 * Matching runs on the file with CRLF read as LF (so an `oldText` with `\n` matches a CRLF file);
 * replacements are written back with the line ending of the region they replace, so every byte
 * outside the replaced regions stays as it was (mixed endings included).
 */
import { LOOKALIKES } from "../../lib/typed-path.js";

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
  /** Matched only after folding whitespace, quotes, dashes and Unicode compatibility forms. */
  tolerant: boolean;
}

export type EditPlan = { ok: true; text: string; edits: PlannedEdit[] } | { ok: false; message: string };

// Characters a tolerant match treats as their ASCII look-alikes.
const FOLD = new Map<string, string>([
  ...[...LOOKALIKES.singleQuotes].map((c) => [c, "'"] as [string, string]),
  ...[...LOOKALIKES.doubleQuotes].map((c) => [c, '"'] as [string, string]),
  ...[..."\u2010\u2011\u2012\u2013\u2014\u2015\u2212"].map((c) => [c, "-"] as [string, string]),
  ...[...LOOKALIKES.spaces].map((c) => [c, " "] as [string, string]),
]);

/** One non-ASCII character as a tolerant match sees it: look-alikes above, then NFKD (fullwidth `，` is `,`, `ﬁ` is `fi`, `é` is `e` + accent). */
function foldChar(c: string): string {
  const direct = FOLD.get(c);
  if (direct !== undefined) return direct;
  const decomposed = c.normalize("NFKD");
  if (decomposed === c) return c;
  let out = "";
  for (const d of decomposed) out += FOLD.get(d) ?? d;
  return out;
}

const NON_ASCII = /[^\x00-\x7F]/gu;
const TRAILING_BLANKS = /[ \t]+(?=\n|$)/g;

/**
 * Fold look-alike and compatibility characters and drop trailing whitespace on every line. With a
 * map, folded code unit i came from source range `starts[i]`..`ends[i]` (a character can fold to
 * several units, e.g. `ﬁ` to `fi`), so a match in the folded text names an exact source region.
 */
export function fold(text: string, withMap: boolean): { text: string; starts?: Int32Array; ends?: Int32Array } {
  const pieces: string[] = [];
  let starts = new Int32Array(withMap ? text.length + 16 : 0);
  let ends = new Int32Array(withMap ? text.length + 16 : 0);
  let n = 0;
  // `whole`: every unit of `piece` maps to the one source character at `at` (else unit k maps to at + k).
  const push = (piece: string, at: number, whole?: number) => {
    pieces.push(piece);
    if (!withMap) return;
    if (n + piece.length > starts.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(Math.max(a.length * 2, n + piece.length));
        b.set(a);
        return b;
      };
      starts = grow(starts);
      ends = grow(ends);
    }
    for (let k = 0; k < piece.length; k++, n++) {
      starts[n] = whole === undefined ? at + k : at;
      ends[n] = whole === undefined ? at + k + 1 : at + whole;
    }
  };
  let from = 0;
  for (const m of text.matchAll(NON_ASCII)) {
    const folded = foldChar(m[0]);
    if (folded === m[0]) continue;
    if (m.index > from) push(text.slice(from, m.index), from);
    push(folded, m.index, m[0].length);
    from = m.index + m[0].length;
  }
  if (from < text.length) push(text.slice(from), from);
  const joined = pieces.join("");
  // Drop trailing blanks, moving the map entries of what is kept down.
  const kept: string[] = [];
  let w = 0;
  let keepFrom = 0;
  const keep = (a: number, b: number) => {
    kept.push(joined.slice(a, b));
    if (withMap && w !== a) {
      starts.copyWithin(w, a, b);
      ends.copyWithin(w, a, b);
    }
    w += b - a;
  };
  for (const m of joined.matchAll(TRAILING_BLANKS)) {
    keep(keepFrom, m.index);
    keepFrom = m.index + m[0].length;
  }
  keep(keepFrom, joined.length);
  const out = kept.join("");
  return withMap ? { text: out, starts: starts.subarray(0, w), ends: ends.subarray(0, w) } : { text: out };
}

/** Start indices of every occurrence, overlapping ones included (capped). */
function occurrences(haystack: string, needle: string, cap = 50): number[] {
  const found: number[] = [];
  for (let i = haystack.indexOf(needle); i >= 0 && found.length < cap; i = haystack.indexOf(needle, i + 1))
    found.push(i);
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

/** Where several matches are: distinct lines in order, with 1-based columns where a line has more than one. */
function placesList(places: readonly { line: number; column: number }[]): string {
  const byLine = new Map<number, number[]>();
  for (const p of places) {
    const columns = byLine.get(p.line);
    if (columns) columns.push(p.column);
    else byLine.set(p.line, [p.column]);
  }
  const columns = (list: number[]) => list.slice(0, 10).join(", ") + (list.length > 10 ? " and more" : "");
  const lines = [...byLine.keys()].sort((a, b) => a - b);
  if (lines.length === 1) {
    const list = byLine.get(lines[0]!)!;
    return list.length > 1 ? `line ${lines[0]}, columns ${columns(list)}` : `line ${lines[0]}`;
  }
  const parts = lines.slice(0, 10).map((line) => {
    const list = byLine.get(line)!;
    return list.length > 1 ? `${line} (columns ${columns(list)})` : String(line);
  });
  return `lines ${parts.join(", ")}${lines.length > 10 ? " and more" : ""}`;
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
  const placeOf = (n: number) => {
    const line = lineOf(n);
    return { line, column: n - (line === 1 ? 0 : newlines[line - 2]! + 1) + 1 };
  };
  let folded: ReturnType<typeof fold> | undefined;

  const name = (i: number) => (edits.length === 1 ? "oldText" : `edits[${i}].oldText`);
  const planned: (Omit<PlannedEdit, "replacement" | "start" | "end"> & {
    nStart: number;
    nEnd: number;
    newText: string;
  })[] = [];

  for (const [i, edit] of edits.entries()) {
    const oldText = lf(edit.oldText);
    const newText = lf(edit.newText);
    if (oldText === "")
      return {
        ok: false,
        message: `${name(i)} is empty. Give the exact text to replace (to create or overwrite a whole file, use write).`,
      };
    const exact = occurrences(text, oldText);
    if (exact.length === 1) {
      planned.push({
        index: i,
        nStart: exact[0]!,
        nEnd: exact[0]! + oldText.length,
        newText,
        line: lineOf(exact[0]!),
        tolerant: false,
      });
      continue;
    }
    if (exact.length > 1) {
      return {
        ok: false,
        message: `${name(i)} matches ${exact.length === 50 ? "50 or more" : exact.length} places in ${shown} (${placesList(exact.map(placeOf))}); it must match exactly one. Include more surrounding lines to make it unique.`,
      };
    }
    folded ??= fold(text, true);
    const needle = fold(oldText, false).text;
    // A match must not begin or end inside what one character folded to (`cafe` is not `café`).
    const starts = folded.starts!;
    const whole = (f: number) =>
      (f === 0 || starts[f - 1] !== starts[f]) &&
      (f + needle.length >= starts.length || starts[f + needle.length] !== starts[f + needle.length - 1]);
    const loose = needle === "" ? [] : occurrences(folded.text, needle).filter(whole);
    if (loose.length === 1) {
      const nStart = folded.starts![loose[0]!]!;
      const nEnd = folded.ends![loose[0]! + needle.length - 1]!;
      planned.push({ index: i, nStart, nEnd, newText, line: lineOf(nStart), tolerant: true });
      continue;
    }
    if (loose.length > 1) {
      const places = loose.map((f) => placeOf(folded!.starts![f]!));
      return {
        ok: false,
        message: `${name(i)} was not found exactly in ${shown}; ignoring whitespace and quote differences it matches ${loose.length} places (${placesList(places)}). Re-read those lines and copy the text exactly, with enough context to match one place.`,
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
      return {
        ok: false,
        message: `${which} changes nothing: its newText is the same as the text it replaces at line ${p.line} of ${shown}. Give the new text, or drop the edit.`,
      };
    }
    pieces.push(original.slice(cursor, start), replacement);
    cursor = end;
    result.push({ index: p.index, start, end, replacement, line: p.line, tolerant: p.tolerant });
  }
  pieces.push(original.slice(cursor));
  return { ok: true, text: pieces.join(""), edits: result.sort((x, y) => x.index - y.index) };
}

/** Similarity budget: line pairs compared when looking for the text closest to a missing oldText. */
const MAX_COMPARISONS = 400_000;
/** Below this average line similarity (0..1) nothing is shown as "closest". */
const CLOSE_ENOUGH = 0.5;
const SHOWN_LINES = 20;

const BUCKETS = 4096;
const hashBigram = (text: string, i: number) => (text.charCodeAt(i) * 31 + text.charCodeAt(i + 1)) & (BUCKETS - 1);

/** Hashed character-bigram counts of a line, to compare many file lines against it without allocating. */
function bigramCounts(text: string): { counts: Int32Array; total: number } {
  const counts = new Int32Array(BUCKETS);
  for (let i = 0; i + 1 < text.length; i++) counts[hashBigram(text, i)]!++;
  return { counts, total: Math.max(0, text.length - 1) };
}

const scratch = new Int32Array(BUCKETS);

/** Dice coefficient of `line`'s bigrams and `wanted`'s (1 for equal texts, 0 for nothing in common). */
function similarity(line: string, wanted: string, grams: { counts: Int32Array; total: number }): number {
  if (line === wanted) return 1;
  if (line.length < 2 || wanted.length < 2) return 0;
  let common = 0;
  for (let i = 0; i + 1 < line.length; i++) {
    const h = hashBigram(line, i);
    if (scratch[h]! < grams.counts[h]!) common++;
    scratch[h]!++;
  }
  for (let i = 0; i + 1 < line.length; i++) scratch[hashBigram(line, i)] = 0;
  return (2 * common) / (line.length - 1 + grams.total);
}

/** The window of lines most like oldText (line by line, whitespace runs collapsed), shown numbered. */
function notFoundHint(text: string, oldText: string): string {
  const rows = text.split("\n");
  const wanted = oldText.replace(/\n$/, "").split("\n");
  const norm = (s: string) => s.replace(/\s+/g, " ").trim();
  const normRows = rows.map(norm);
  const normWanted = wanted.map(norm);
  const compared = Math.max(1, Math.min(wanted.length, Math.floor(MAX_COMPARISONS / rows.length)));
  const grams = normWanted.slice(0, compared).map(bigramCounts);
  let best = -1;
  let bestScore = 0;
  for (let s = 0; s < rows.length; s++) {
    let score = 0;
    for (let k = 0; k < compared; k++) score += similarity(normRows[s + k] ?? "", normWanted[k]!, grams[k]!);
    score /= compared;
    if (score > bestScore) {
      bestScore = score;
      best = s;
    }
  }
  if (best < 0 || bestScore < CLOSE_ENOUGH) {
    return " The file may have changed since you read it. Re-read it with read and copy oldText exactly, including indentation and whitespace.";
  }
  const last = Math.min(rows.length, best + wanted.length) - 1;
  const range = last > best ? `lines ${best + 1}-${last + 1}` : `line ${best + 1}`;
  let differs = "";
  if (wanted.length > 1) {
    const k = wanted.findIndex((line, j) => rows[best + j] !== line);
    if (k >= 0) differs = `, and differs from oldText first at line ${best + k + 1}`;
  }
  const from = Math.max(0, best - 1);
  const to = Math.min(rows.length - 1, last + 1, from + SHOWN_LINES - 1);
  const numbered: string[] = [];
  for (let r = from; r <= to; r++) {
    const row = rows[r]!;
    numbered.push(`${String(r + 1).padStart(6)}\t${row.length > 200 ? row.slice(0, 200) + "…" : row}`);
  }
  if (to < last + 1 && to < rows.length - 1) numbered.push("   ...");
  return ` The closest text is at ${range}${differs}:\n${numbered.join("\n")}\nCopy oldText exactly from the file (without these line numbers), including indentation and whitespace.`;
}
