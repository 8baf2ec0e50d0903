/** Diagnostics as coil shows them, and which of them an edit introduced. No LSP code is loaded here. */
import { isAbsolute, relative } from "node:path";
import type { DiagnosticItem, DiagnosticsDetails, Severity } from "./api.js";

/** The parts of an LSP diagnostic coil reads. */
export interface LspDiagnostic {
  range: { start: { line: number; character: number } };
  severity?: number;
  message: string;
  code?: number | string;
  source?: string;
}

const SEVERITIES: Severity[] = ["error", "warning", "info", "hint"];
export const severityOf = (d: LspDiagnostic): Severity => SEVERITIES[(d.severity ?? 1) - 1] ?? "error";
const MESSAGE_MAX = 400;

/** A path as results name it: relative to `cwd` when inside it. */
export function shownPath(abs: string, cwd: string): string {
  const rel = relative(cwd, abs);
  return rel === "" || rel.startsWith("..") || isAbsolute(rel) ? abs : rel;
}

/** The rule: a TypeScript error number as `TS2322`, other codes as they are. */
export function ruleOf(d: LspDiagnostic): string | undefined {
  if (d.code === undefined || d.code === "") return undefined;
  if (typeof d.code === "number" && /^(typescript|ts)$/i.test(d.source ?? "")) return `TS${d.code}`;
  return String(d.code);
}

export function toItem(d: LspDiagnostic, file: string, cwd: string, server: string): DiagnosticItem {
  let message = d.message.replace(/\s*\n\s*/g, " ").trim();
  if (message.length > MESSAGE_MAX) message = `${message.slice(0, MESSAGE_MAX)}…`;
  return {
    file: shownPath(file, cwd),
    line: d.range.start.line + 1,
    column: d.range.start.character + 1,
    severity: severityOf(d),
    message,
    rule: ruleOf(d),
    server,
  };
}

export const formatItem = (i: DiagnosticItem): string =>
  `${i.file}:${i.line}:${i.column} ${i.severity} ${i.message}${i.rule ? ` [${i.rule}]` : ""}`;

const key = (d: LspDiagnostic) =>
  `${d.severity ?? 1}\u0000${ruleOf(d) ?? ""}\u0000${d.message.replace(/\s+/g, " ").trim()}`;
const serious = (d: LspDiagnostic) => (d.severity ?? 1) <= 2;

/**
 * The errors and warnings in `after` that `before` did not have. Positions are ignored (an edit moves
 * lines), so a diagnostic counts as old while `before` has one more of the same severity, rule and text.
 */
export function introduced(before: readonly LspDiagnostic[], after: readonly LspDiagnostic[]): LspDiagnostic[] {
  const left = new Map<string, number>();
  for (const d of before.filter(serious)) left.set(key(d), (left.get(key(d)) ?? 0) + 1);
  const out: LspDiagnostic[] = [];
  for (const d of after.filter(serious)) {
    const n = left.get(key(d)) ?? 0;
    if (n > 0) left.set(key(d), n - 1);
    else out.push(d);
  }
  return out;
}

/** How many errors and warnings of `before` are gone in `after`. */
export function resolvedCount(before: readonly LspDiagnostic[], after: readonly LspDiagnostic[]): number {
  return introduced(after, before).length;
}

/** Errors first, then by file and position. */
export function sortItems(items: DiagnosticItem[]): DiagnosticItem[] {
  const rank = (s: Severity) => SEVERITIES.indexOf(s);
  return [...items].sort(
    (a, b) =>
      rank(a.severity) - rank(b.severity) || a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column,
  );
}

/** What is appended to an edit's result for the model: nothing when there is nothing new and nothing to say. */
export function resultText(d: DiagnosticsDetails): string {
  const lines: string[] = [];
  if (d.items.length > 0) {
    const errors = d.items.filter((i) => i.severity === "error").length;
    const counts =
      d.omitted > 0 ? `${d.items.length + d.omitted} new problems` : countText(errors, d.items.length - errors);
    lines.push(`Language server: ${counts} after this change:`);
    for (const i of d.items) lines.push(formatItem(i));
    if (d.omitted > 0) lines.push(`… and ${d.omitted} more (the lsp tool lists a file's diagnostics)`);
  }
  if (d.note) lines.push(`(Language server: ${d.note})`);
  return lines.join("\n");
}

function countText(errors: number, warnings: number): string {
  const parts: string[] = [];
  if (errors) parts.push(`${errors} new error${errors === 1 ? "" : "s"}`);
  if (warnings) parts.push(`${warnings} new warning${warnings === 1 ? "" : "s"}`);
  return parts.join(" and ");
}
