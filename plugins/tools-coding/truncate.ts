/** Cutting text to the line and byte limits, and cleaning terminal output for the model. */

export interface Cut {
  text: string;
  /** Lines kept (a partial line counts as one). */
  lines: number;
  /** Whether anything was dropped. */
  truncated: boolean;
  /** Which limit cut it, when one did. */
  by?: "lines" | "bytes";
  /** The kept text is part of a single line longer than the byte limit. */
  partialLine: boolean;
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** The last `maxBytes` bytes of `text`, never starting inside a UTF-8 sequence. */
export function lastBytes(text: string, maxBytes: number): string {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= maxBytes) return text;
  let start = buf.length - maxBytes;
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++;
  return buf.subarray(start).toString("utf8");
}

/** Keep the end: at most `maxLines` whole lines and `maxBytes` bytes. */
export function truncateTail(text: string, maxLines: number, maxBytes: number): Cut {
  const lines = splitLines(text);
  const kept: string[] = [];
  let bytes = 0;
  let by: Cut["by"];
  for (let i = lines.length - 1; i >= 0; i--) {
    if (kept.length >= maxLines) {
      by = "lines";
      break;
    }
    const size = Buffer.byteLength(lines[i]!, "utf8") + (kept.length > 0 ? 1 : 0);
    if (bytes + size > maxBytes) {
      by = "bytes";
      if (kept.length === 0) {
        return { text: lastBytes(lines[i]!, maxBytes), lines: 1, truncated: true, by, partialLine: true };
      }
      break;
    }
    kept.push(lines[i]!);
    bytes += size;
  }
  kept.reverse();
  return { text: kept.join("\n"), lines: kept.length, truncated: by !== undefined, by, partialLine: false };
}

// CSI sequences, OSC sequences (ended by BEL or ST), and two-byte escapes.
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[@-Z\\-_]/g;
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

/**
 * Terminal output as the model should read it: escape sequences removed, `\r\n` as `\n`, a line
 * rewritten with `\r` (progress bars) reduced to what a terminal would finally show.
 */
export function sanitizeOutput(text: string): string {
  let out = text.replace(ANSI, "");
  if (out.includes("\r")) {
    out = out
      .replace(/\r+\n/g, "\n")
      .split("\n")
      .map((line) => {
        if (!line.includes("\r")) return line;
        const parts = line.split("\r").filter((p) => p !== "");
        return parts[parts.length - 1] ?? "";
      })
      .join("\n");
  }
  return out.replace(CONTROL, "");
}
