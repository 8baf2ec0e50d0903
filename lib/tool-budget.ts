/**
 * The output budget every built-in tool keeps to, stated once: tool descriptions interpolate these
 * constants, so what the model is told and what the code does cannot drift apart.
 */

/** Lines a tool result shows at most (read keeps the head, bash the tail). */
export const MAX_LINES = 2000;
/** Bytes a tool result shows at most. */
export const MAX_BYTES = 50 * 1024;

/** `51200` → `50 KB`, `1536` → `1.5 KB`. */
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
