/**
 * The limits every tool enforces. Tool descriptions interpolate these same constants, so what the
 * model is told and what the code does cannot drift apart.
 */

/** Lines a tool result shows at most (read keeps the head, bash the tail). */
export const MAX_LINES = 2000;
/** Bytes a tool result shows at most. */
export const MAX_BYTES = 50 * 1024;
/** Largest image read returns as image content (providers reject bigger ones). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** Bytes sniffed at the start of a file to tell text, images and binary apart. */
export const SNIFF_BYTES = 8 * 1024;
/** Default and maximum bash timeouts in seconds (plugin options can change both). */
export const DEFAULT_BASH_TIMEOUT_S = 120;
export const MAX_BASH_TIMEOUT_S = 600;
/** Grace between SIGTERM and SIGKILL when a command's process tree is terminated. */
export const DEFAULT_KILL_GRACE_MS = 2000;

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
