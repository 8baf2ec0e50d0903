/**
 * The limits grep, find and ls enforce; their descriptions interpolate these constants. The byte
 * and line budgets are the same as the coding tools' (tools-coding/limits.ts; a test keeps them equal).
 */

/** Bytes a result shows at most. */
export const MAX_BYTES = 50 * 1024;
/** Lines a result shows at most. */
export const MAX_LINES = 2000;
/** Characters of one matching line grep shows; longer lines are cut around the match. */
export const MAX_LINE_CHARS = 500;
/** Default number of results. */
export const DEFAULT_GREP_LIMIT = 100;
export const DEFAULT_FIND_LIMIT = 1000;
export const DEFAULT_LS_LIMIT = 500;
/** The built-in grep skips files larger than this (ripgrep has no such limit). */
export const MAX_SEARCH_FILE_BYTES = 32 * 1024 * 1024;

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const text = value >= 100 || Number.isInteger(value) ? String(Math.round(value)) : value.toFixed(1).replace(/\.0$/, "");
  return `${text} ${units[unit]}`;
}
