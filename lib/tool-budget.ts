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
  const text =
    value >= 100 || Number.isInteger(value) ? String(Math.round(value)) : value.toFixed(1).replace(/\.0$/, "");
  return `${text} ${units[unit]}`;
}

/** Keep the start of `text` within MAX_LINES lines and MAX_BYTES bytes (never cutting a UTF-8 sequence). */
export function cutHead(
  text: string,
  maxLines = MAX_LINES,
  maxBytes = MAX_BYTES,
): { text: string; truncated: boolean; totalLines: number } {
  const lines = text.split("\n");
  const kept: string[] = [];
  let bytes = 0;
  for (const line of lines) {
    if (kept.length >= maxLines) break;
    const size = Buffer.byteLength(line, "utf8") + (kept.length > 0 ? 1 : 0);
    if (bytes + size > maxBytes) {
      if (kept.length === 0)
        kept.push(
          Buffer.from(line, "utf8")
            .subarray(0, maxBytes)
            .toString("utf8")
            .replace(/\uFFFD$/, ""),
        );
      break;
    }
    kept.push(line);
    bytes += size;
  }
  const out = kept.join("\n");
  return { text: out, truncated: out.length < text.length, totalLines: lines.length };
}
