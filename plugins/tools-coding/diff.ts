/** A line diff (Myers) rendered as a unified diff, for edit results. */
import { isAbsolute } from "node:path";

type Op = { type: " " | "-" | "+"; text: string };

/** Beyond this many differences the middle is shown as removed-then-added (keeps time and memory bounded). */
const MAX_EDIT_DISTANCE = 2000;

function myers(a: readonly string[], b: readonly string[]): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const v = new Int32Array(2 * max + 3);
  const at = (k: number) => k + max + 1;
  const trace: Int32Array[] = [];
  for (let d = 0; d <= Math.min(max, MAX_EDIT_DISTANCE); d++) {
    trace.push(v.slice(at(-d - 1), at(d + 1) + 1)); // diagonals -(d+1)..d+1 as they were before step d
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[at(k - 1)]! < v[at(k + 1)]!) ? v[at(k + 1)]! : v[at(k - 1)]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[at(k)] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace);
    }
  }
  return undefined;
}

function backtrack(a: readonly string[], b: readonly string[], trace: Int32Array[]): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d >= 0; d--) {
    const saved = trace[d]!;
    const get = (k: number) => saved[k + d + 1]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && get(k - 1) < get(k + 1)) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : get(prevK);
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ type: " ", text: a[x - 1]! });
      x--;
      y--;
    }
    if (d > 0) {
      if (x === prevX) ops.push({ type: "+", text: b[y - 1]! });
      else ops.push({ type: "-", text: a[x - 1]! });
    }
    x = prevX;
    y = prevY;
  }
  return ops.reverse();
}

export interface DiffResult {
  /** Unified diff text (empty when nothing changed). */
  diff: string;
  /** First line (1-based, in the new text) that differs. */
  firstChangedLine?: number;
  added: number;
  removed: number;
}

/** Unified diff of two LF texts, `context` lines around each change; `path` as results show it (relative to the working directory, or absolute). */
export function unifiedDiff(before: string, after: string, path: string, context = 3): DiffResult {
  if (before === after) return { diff: "", added: 0, removed: 0 };
  const a = before.split("\n");
  const b = after.split("\n");
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (
    suffix < a.length - prefix &&
    suffix < b.length - prefix &&
    a[a.length - 1 - suffix] === b[b.length - 1 - suffix]
  )
    suffix++;
  const am = a.slice(prefix, a.length - suffix);
  const bm = b.slice(prefix, b.length - suffix);
  const middle = myers(am, bm) ?? [
    ...am.map((text) => ({ type: "-" as const, text })),
    ...bm.map((text) => ({ type: "+" as const, text })),
  ];
  const ops: Op[] = [
    ...a.slice(0, prefix).map((text) => ({ type: " " as const, text })),
    ...middle,
    ...a.slice(a.length - suffix).map((text) => ({ type: " " as const, text })),
  ];

  // Line numbers (0-based) in the old and new text at each op.
  const oldAt: number[] = [];
  const newAt: number[] = [];
  let oi = 0;
  let ni = 0;
  for (const op of ops) {
    oldAt.push(oi);
    newAt.push(ni);
    if (op.type !== "+") oi++;
    if (op.type !== "-") ni++;
  }
  const changed = ops.flatMap((op, i) => (op.type === " " ? [] : [i]));
  // git's a/ and b/ prefixes only make sense before a relative path; an absolute one is shown as is.
  const relative = !isAbsolute(path);
  const out = [`--- ${relative ? "a/" : ""}${path}`, `+++ ${relative ? "b/" : ""}${path}`];
  let added = 0;
  let removed = 0;
  for (let c = 0; c < changed.length; ) {
    const start = Math.max(0, changed[c]! - context);
    let last = changed[c]!;
    while (c + 1 < changed.length && changed[c + 1]! - last <= 2 * context) last = changed[++c]!;
    c++;
    const end = Math.min(ops.length - 1, last + context);
    let oldCount = 0;
    let newCount = 0;
    const body: string[] = [];
    for (let i = start; i <= end; i++) {
      const op = ops[i]!;
      body.push(op.type + op.text);
      if (op.type !== "+") oldCount++;
      if (op.type !== "-") newCount++;
      if (op.type === "+") added++;
      if (op.type === "-") removed++;
    }
    const oldStart = oldCount === 0 ? oldAt[start]! : oldAt[start]! + 1;
    const newStart = newCount === 0 ? newAt[start]! : newAt[start]! + 1;
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`, ...body);
  }
  const first = changed[0]!;
  return { diff: out.join("\n") + "\n", firstChangedLine: newAt[first]! + 1, added, removed };
}
