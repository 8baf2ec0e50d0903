/** Telling images, binary files and text apart from a file's first bytes (the read tool, the TUI's @file). */
import { closeSync, openSync, readSync } from "node:fs";

/** Largest image sent to the model as image content (providers reject bigger ones). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** Bytes sniffed at the start of a file to tell text, images and binary apart. */
export const SNIFF_BYTES = 8 * 1024;

/** The first `bytes` bytes of a local file. */
export function readHeadSync(file: string, bytes = SNIFF_BYTES): Uint8Array {
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(bytes);
    return buf.subarray(0, readSync(fd, buf, 0, bytes, 0));
  } finally {
    closeSync(fd);
  }
}

export interface ImageKind {
  mimeType: "image/png" | "image/jpeg" | "image/gif" | "image/webp";
  width?: number;
  height?: number;
}

const be16 = (b: Uint8Array, i: number) => (b[i]! << 8) | b[i + 1]!;
const le16 = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8);
const be32 = (b: Uint8Array, i: number) => ((b[i]! << 24) >>> 0) + (b[i + 1]! << 16) + (b[i + 2]! << 8) + b[i + 3]!;
const le24 = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16);
const ascii = (b: Uint8Array, i: number, n: number) => String.fromCharCode(...b.subarray(i, i + n));

/** The image type by magic number (not by extension), with its size when the header gives it. */
export function sniffImage(b: Uint8Array): ImageKind | undefined {
  if (
    b.length >= 8 &&
    b[0] === 0x89 &&
    ascii(b, 1, 3) === "PNG" &&
    b[4] === 0x0d &&
    b[5] === 0x0a &&
    b[6] === 0x1a &&
    b[7] === 0x0a
  ) {
    return b.length >= 24 && ascii(b, 12, 4) === "IHDR"
      ? { mimeType: "image/png", width: be32(b, 16), height: be32(b, 20) }
      : { mimeType: "image/png" };
  }
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff)
    return { mimeType: "image/jpeg", ...jpegSize(b) };
  if (b.length >= 6 && (ascii(b, 0, 6) === "GIF87a" || ascii(b, 0, 6) === "GIF89a")) {
    return b.length >= 10
      ? { mimeType: "image/gif", width: le16(b, 6), height: le16(b, 8) }
      : { mimeType: "image/gif" };
  }
  if (b.length >= 12 && ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 4) === "WEBP")
    return { mimeType: "image/webp", ...webpSize(b) };
  return undefined;
}

function jpegSize(b: Uint8Array): { width?: number; height?: number } {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return {};
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++;
      continue;
    }
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: be16(b, i + 5), width: be16(b, i + 7) };
    }
    i += 2 + be16(b, i + 2);
  }
  return {};
}

function webpSize(b: Uint8Array): { width?: number; height?: number } {
  const chunk = b.length >= 16 ? ascii(b, 12, 4) : "";
  if (chunk === "VP8X" && b.length >= 30) return { width: le24(b, 24) + 1, height: le24(b, 27) + 1 };
  if (chunk === "VP8L" && b.length >= 25) {
    const bits = b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24);
    return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8 " && b.length >= 30) return { width: le16(b, 26) & 0x3fff, height: le16(b, 28) & 0x3fff };
  return {};
}

export interface BinaryKind {
  /** A short name when the format is known (`PDF document`, `ZIP archive` ...). */
  what?: string;
  /** A command that shows something useful instead. */
  suggestion: string;
}

const KNOWN: [test: (b: Uint8Array) => boolean, what: string, suggestion: (p: string) => string][] = [
  [(b) => ascii(b, 0, 5) === "%PDF-", "PDF document", (p) => `pdftotext ${p} - | head -200`],
  [
    (b) => b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04,
    "ZIP archive (or a zip-based format: jar, docx, xlsx)",
    (p) => `unzip -l ${p}`,
  ],
  [(b) => b[0] === 0x1f && b[1] === 0x8b, "gzip archive", (p) => `gzip -dc ${p} | head -200`],
  [(b) => b[0] === 0x7f && ascii(b, 1, 3) === "ELF", "ELF executable", (p) => `file ${p}`],
  [(b) => ascii(b, 0, 15) === "SQLite format 3", "SQLite database", (p) => `sqlite3 ${p} .schema`],
  [
    (b) => (b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff),
    "UTF-16 text",
    (p) => `iconv -f UTF-16 -t UTF-8 ${p} | head -200`,
  ],
];

/** Binary when the sample has a NUL byte or is mostly not UTF-8; undefined for text. */
export function sniffBinary(sample: Uint8Array, path: string): BinaryKind | undefined {
  const quoted = shellQuote(path);
  for (const [test, what, suggestion] of KNOWN)
    if (sample.length >= 4 && test(sample)) return { what, suggestion: suggestion(quoted) };
  const nul = sample.indexOf(0) >= 0;
  if (!nul) {
    const text = new TextDecoder("utf-8").decode(sample);
    let bad = 0;
    for (const ch of text) if (ch === "\uFFFD") bad++;
    // a sample cut mid-character costs at most one replacement; real text in UTF-8 has none
    if (bad <= 1 || bad / Math.max(1, text.length) < 0.1) return undefined;
  }
  return { suggestion: `file ${quoted} && xxd ${quoted} | head -50` };
}

export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
