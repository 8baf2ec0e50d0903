/**
 * read: a text file's lines (head kept, continuation offset given), or an image. Streams the file,
 * so an offset deep into a huge file costs time, not memory.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { Type } from "typebox";
import { defineTool, type ToolDefinition, type ToolOutput } from "../../api/index.js";
import type { FileInfo } from "./api.js";
import { describeFsError } from "./errors.js";
import { formatSize, MAX_BYTES, MAX_IMAGE_BYTES, MAX_LINES, SNIFF_BYTES } from "./limits.js";
import { localOperations, type Operations } from "./local-operations.js";
import type { ToolEnv } from "./options.js";
import { acceptFilePath, displayPath, locatePath } from "./paths.js";
import { expandPath } from "../../lib/typed-path.js";
import { shellQuote, sniffBinary, sniffImage, type ImageKind } from "../../lib/sniff.js";

export const ReadParams = Type.Object({
  path: Type.String({ description: "Relative to the working directory, ~/..., or absolute" }),
  offset: Type.Optional(Type.Integer({ minimum: 1, description: "First line, 1-based" })),
  limit: Type.Optional(Type.Integer({ minimum: 1, description: `Most lines (at most ${MAX_LINES})` })),
});

export interface ReadDetails {
  path: string;
  kind: "text" | "image";
  /** Text: the lines shown and the file's line count. */
  startLine?: number;
  endLine?: number;
  totalLines?: number;
  /** Text: what cut the result short, if anything did. */
  truncatedBy?: "lines" | "bytes" | "limit" | "long-line";
  /** Image: type and size. */
  mimeType?: string;
  width?: number;
  height?: number;
  bytes?: number;
}

const fail = (text: string): ToolOutput<ReadDetails> => ({ content: [{ type: "text", text }], isError: true });

export function createReadTool(env: ToolEnv): ToolDefinition<typeof ReadParams, ReadDetails> {
  return defineTool({
    name: "read",
    label: "Read",
    description:
      `Read a text file as plain lines (no line numbers), at most ${MAX_LINES} lines or ${formatSize(MAX_BYTES)}; a cut result names the offset to continue with. ` +
      `PNG, JPEG, GIF and WebP images up to ${formatSize(MAX_IMAGE_BYTES)} come back as images. Use it instead of cat, head, tail or sed in bash.`,
    parameters: ReadParams,
    executionMode: "parallel",
    prepareArguments: acceptFilePath,
    promptSnippet: "read: read a text file (head kept, continue with offset) or view an image",
    promptGuidelines: [
      `Read a file before you edit it; read shows at most ${MAX_LINES} lines, so continue with the offset it names.`,
    ],
    async execute(args, run) {
      const ops = env.ops();
      if (ops.stat === localOperations.stat && ops.readStream === localOperations.readStream) {
        const fast = readLocalSmall(env, ops, args, run.signal);
        if (fast) return fast instanceof Promise ? await fast : fast;
      }
      const abs = await locatePath(args.path, env.cwd, ops);
      const shown = displayPath(abs, env.cwd);
      let info: FileInfo;
      try {
        info = await ops.stat(abs);
      } catch (error) {
        return fail(await describeFsError(error, abs, "read", ops, env.cwd));
      }
      if (info.kind === "directory")
        return fail(`${shown} is a directory, not a file. Use ls to list it, or find to search in it.`);
      if (info.kind !== "file")
        return fail(`${shown} is not a regular file (a device, socket or pipe); read only reads files.`);

      let sample: Uint8Array;
      try {
        sample = await readHead(ops, abs, Math.min(SNIFF_BYTES, info.size));
      } catch (error) {
        return fail(await describeFsError(error, abs, "read", ops, env.cwd));
      }
      const image = sniffImage(sample);
      if (image) return readImage(env, ops, abs, shown, image, info.size);
      const binary = sniffBinary(sample, shown);
      if (binary) return binaryFile(shown, binary, info.size);
      try {
        const lines = new TextLines(args.offset ?? 1, args.limit);
        for await (const chunk of ops.readStream(abs)) {
          if (run.signal.aborted) throw new Error("aborted");
          lines.push(chunk);
        }
        return lines.result(abs, shown);
      } catch (error) {
        if (run.signal.aborted) throw error;
        return fail(await describeFsError(error, abs, "read", ops, env.cwd));
      }
    },
  });
}

/** Files up to this size are read by the local backend with synchronous calls on one descriptor. */
export const SYNC_READ_BYTES = 1 << 20;
const CHUNK_BYTES = 64 * 1024;

/**
 * The local backend's path for a path that exists as typed and a file of at most SYNC_READ_BYTES: one
 * open (non-blocking, so a FIFO cannot hang it), one fstat, the reads and one close, all synchronous —
 * no thread-pool round trip per call, and the file is stat'ed and opened once. Undefined when it does not
 * apply (the path needs the typed-path lookup, the file is large, an image, or open failed): the general
 * path then handles it, with its own error messages. Reading 1 MiB synchronously takes about a millisecond.
 */
function readLocalSmall(
  env: ToolEnv,
  ops: Operations,
  args: { path: string; offset?: number; limit?: number },
  signal: AbortSignal,
): ToolOutput<ReadDetails> | Promise<ToolOutput<ReadDetails>> | undefined {
  const abs = expandPath(args.path, env.cwd);
  let fd: number;
  try {
    fd = openSync(abs, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch {
    return undefined;
  }
  const shown = displayPath(abs, env.cwd);
  try {
    const info = fstatSync(fd);
    if (info.isDirectory())
      return fail(`${shown} is a directory, not a file. Use ls to list it, or find to search in it.`);
    if (!info.isFile())
      return fail(`${shown} is not a regular file (a device, socket or pipe); read only reads files.`);
    if (info.size > SYNC_READ_BYTES) return undefined;
    // A fresh buffer per read (kept lines point into it); a short read is the end of a regular file.
    const want = Math.min(info.size + 1, CHUNK_BYTES);
    let buffer = Buffer.allocUnsafe(want);
    let n = readSync(fd, buffer, 0, want, null);
    const sample = buffer.subarray(0, Math.min(SNIFF_BYTES, n));
    const image = sniffImage(sample);
    if (image) return readImage(env, ops, abs, shown, image, info.size);
    const binary = sniffBinary(sample, shown);
    if (binary) return binaryFile(shown, binary, info.size);
    if (signal.aborted) throw new Error("aborted");
    const lines = new TextLines(args.offset ?? 1, args.limit);
    for (;;) {
      if (n > 0) lines.push(buffer.subarray(0, n));
      if (n < buffer.length) break;
      buffer = Buffer.allocUnsafe(CHUNK_BYTES);
      n = readSync(fd, buffer, 0, CHUNK_BYTES, null);
    }
    return lines.result(abs, shown);
  } catch (error) {
    if (signal.aborted) throw error;
    return describeFsError(error, abs, "read", ops, env.cwd).then(fail);
  } finally {
    closeSync(fd);
  }
}

function binaryFile(shown: string, binary: { what?: string; suggestion: string }, size: number) {
  return fail(
    `${shown} is a binary file${binary.what ? ` (${binary.what})` : ""}, ${formatSize(size)}; read shows text and images only. ` +
      `Inspect it with bash instead, e.g. \`${binary.suggestion}\`.`,
  );
}

async function readHead(ops: Operations, abs: string, bytes: number): Promise<Uint8Array> {
  if (bytes <= 0) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let have = 0;
  for await (const chunk of ops.readStream(abs, { start: 0, end: bytes - 1 })) {
    chunks.push(chunk);
    have += chunk.length;
    if (have >= bytes) break;
  }
  return Buffer.concat(chunks).subarray(0, bytes);
}

async function readImage(
  env: ToolEnv,
  ops: Operations,
  abs: string,
  shown: string,
  image: ImageKind,
  size: number,
): Promise<ToolOutput<ReadDetails>> {
  const dims = image.width && image.height ? `, ${image.width}x${image.height}` : "";
  const label = `${image.mimeType}${dims}, ${formatSize(size)}`;
  const details: ReadDetails = {
    path: abs,
    kind: "image",
    mimeType: image.mimeType,
    width: image.width,
    height: image.height,
    bytes: size,
  };
  if (!env.options.images) {
    return {
      content: [
        {
          type: "text",
          text: `${shown} is an image (${label}). Image input is turned off (tools-coding option images: false), so it is not shown.`,
        },
      ],
      details,
    };
  }
  if (size > MAX_IMAGE_BYTES) {
    return fail(
      `${shown} is an image (${label}), larger than the ${formatSize(MAX_IMAGE_BYTES)} that can be sent to the model. ` +
        `Make a smaller copy with bash (e.g. \`convert ${shellQuote(shown)} -resize 1600x1600 /tmp/small.png\`) and read that.`,
    );
  }
  const data = Buffer.from(await ops.readFile(abs)).toString("base64");
  return {
    content: [
      { type: "text", text: `Read image ${shown} (${label})` },
      { type: "image", data, mimeType: image.mimeType },
    ],
    details,
  };
}

const decoder = new TextDecoder("utf-8");

/**
 * The text of a file fed chunk by chunk: lines from `start` are collected (within the line and byte
 * limits), all of them are counted. Kept lines point into the chunks: a caller must not refill one.
 */
class TextLines {
  private readonly wanted: number;
  private readonly out: string[] = [];
  private outBytes = 0;
  private collecting = true;
  private stop: ReadDetails["truncatedBy"];
  private longLine?: { line: number; bytes: number };
  /** Number of the line being read. */
  private line = 1;
  /** Bytes were seen after the last newline. */
  private lineStarted = false;
  private parts: Uint8Array[] = [];
  /** Bytes of the current line (counted even when not kept). */
  private partBytes = 0;
  private first = true;

  constructor(
    private readonly start: number,
    private readonly limit: number | undefined,
  ) {
    this.wanted = Math.min(limit ?? MAX_LINES, MAX_LINES);
  }

  push(raw: Uint8Array): void {
    let chunk = raw;
    if (this.first) {
      this.first = false;
      if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3); // UTF-8 BOM
    }
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(10, pos);
      const end = nl < 0 ? chunk.length : nl;
      if (end > pos) {
        this.lineStarted = true;
        if (this.collecting && this.line >= this.start) {
          if (this.partBytes <= MAX_BYTES) this.parts.push(chunk.subarray(pos, end));
          this.partBytes += end - pos;
        }
      }
      if (nl < 0) break;
      this.endLine();
      pos = nl + 1;
    }
  }

  private endLine(): void {
    if (this.collecting && this.line >= this.start) {
      if (this.partBytes > MAX_BYTES) {
        if (this.out.length === 0) this.longLine = { line: this.line, bytes: this.partBytes };
        this.stop = this.out.length === 0 ? "long-line" : "bytes";
        this.collecting = false;
      } else {
        const parts = this.parts;
        let text = decoder.decode(parts.length === 1 ? parts[0] : Buffer.concat(parts));
        if (text.endsWith("\r")) text = text.slice(0, -1);
        const size = Buffer.byteLength(text, "utf8") + (this.out.length > 0 ? 1 : 0);
        if (this.outBytes + size > MAX_BYTES) {
          this.stop = "bytes";
          this.collecting = false;
        } else {
          this.out.push(text);
          this.outBytes += size;
          if (this.out.length >= this.wanted) {
            this.stop = this.limit !== undefined && this.limit <= MAX_LINES ? "limit" : "lines";
            this.collecting = false;
          }
        }
      }
    }
    this.parts = [];
    this.partBytes = 0;
    this.lineStarted = false;
    this.line++;
  }

  result(abs: string, shown: string): ToolOutput<ReadDetails> {
    if (this.lineStarted) this.endLine();
    const { start, out, longLine, stop } = this;
    const total = this.line - 1;
    const details: ReadDetails = { path: abs, kind: "text", totalLines: total };
    if (total === 0) return { content: [{ type: "text", text: `(${shown} is empty)` }], details };
    if (start > total) {
      return fail(
        `offset ${start} is past the end of ${shown}, which has ${total} line${total === 1 ? "" : "s"}. Use an offset from 1 to ${total}.`,
      );
    }
    if (longLine) {
      const cut = `sed -n '${longLine.line}p' ${shellQuote(shown)} | head -c ${MAX_BYTES}`;
      return {
        content: [
          {
            type: "text",
            text: `[Line ${longLine.line} of ${shown} is ${formatSize(longLine.bytes)}, more than the ${formatSize(MAX_BYTES)} read can show at once. See part of it with bash: ${cut}]`,
          },
        ],
        details: { ...details, startLine: longLine.line, endLine: longLine.line, truncatedBy: "long-line" },
      };
    }
    const last = start + out.length - 1;
    let text = out.join("\n");
    if (last < total) {
      const why = stop === "bytes" ? ` (${formatSize(MAX_BYTES)} limit)` : "";
      text += `\n\n[Showing lines ${start}-${last} of ${total}${why}. Use offset=${last + 1} to continue.]`;
    }
    return {
      content: [{ type: "text", text }],
      details: { ...details, startLine: start, endLine: last, truncatedBy: last < total ? stop : undefined },
    };
  }
}
