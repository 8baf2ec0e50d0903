/**
 * read: a text file's lines (head kept, continuation offset given), or an image. Streams the file,
 * so an offset deep into a huge file costs time, not memory.
 */
import { Type } from "typebox";
import { defineTool, type ToolDefinition, type ToolOutput } from "../../api/index.js";
import type { FileInfo } from "./api.js";
import { describeFsError } from "./errors.js";
import { formatSize, MAX_BYTES, MAX_IMAGE_BYTES, MAX_LINES, SNIFF_BYTES } from "./limits.js";
import type { Operations } from "./local-operations.js";
import type { ToolEnv } from "./options.js";
import { acceptFilePath, displayPath, locatePath } from "./paths.js";
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
      if (binary) {
        return fail(
          `${shown} is a binary file${binary.what ? ` (${binary.what})` : ""}, ${formatSize(info.size)}; read shows text and images only. ` +
            `Inspect it with bash instead, e.g. \`${binary.suggestion}\`.`,
        );
      }
      try {
        return await readText(ops, abs, shown, args.offset ?? 1, args.limit, run.signal);
      } catch (error) {
        if (run.signal.aborted) throw error;
        return fail(await describeFsError(error, abs, "read", ops, env.cwd));
      }
    },
  });
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

/** Stream the file once: collect lines from `start`, count all of them. */
async function readText(
  ops: Operations,
  abs: string,
  shown: string,
  start: number,
  limit: number | undefined,
  signal: AbortSignal,
): Promise<ToolOutput<ReadDetails>> {
  const wanted = Math.min(limit ?? MAX_LINES, MAX_LINES);
  const out: string[] = [];
  let outBytes = 0;
  let collecting = true;
  let stop: ReadDetails["truncatedBy"];
  let longLine: { line: number; bytes: number } | undefined;

  let line = 1; // number of the line being read
  let lineStarted = false; // bytes seen after the last newline
  let parts: Uint8Array[] = [];
  let partBytes = 0; // bytes of the current line (counted even when not kept)
  let first = true;

  const endLine = () => {
    if (collecting && line >= start) {
      if (partBytes > MAX_BYTES) {
        if (out.length === 0) longLine = { line, bytes: partBytes };
        stop = out.length === 0 ? "long-line" : "bytes";
        collecting = false;
      } else {
        let text = decoder.decode(parts.length === 1 ? parts[0] : Buffer.concat(parts));
        if (text.endsWith("\r")) text = text.slice(0, -1);
        const size = Buffer.byteLength(text, "utf8") + (out.length > 0 ? 1 : 0);
        if (outBytes + size > MAX_BYTES) {
          stop = "bytes";
          collecting = false;
        } else {
          out.push(text);
          outBytes += size;
          if (out.length >= wanted) {
            stop = limit !== undefined && limit <= MAX_LINES ? "limit" : "lines";
            collecting = false;
          }
        }
      }
    }
    parts = [];
    partBytes = 0;
    lineStarted = false;
    line++;
  };

  for await (const raw of ops.readStream(abs)) {
    if (signal.aborted) throw new Error("aborted");
    let chunk = raw;
    if (first) {
      first = false;
      if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3); // UTF-8 BOM
    }
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(10, pos);
      const end = nl < 0 ? chunk.length : nl;
      if (end > pos) {
        lineStarted = true;
        if (collecting && line >= start) {
          if (partBytes <= MAX_BYTES) parts.push(chunk.subarray(pos, end));
          partBytes += end - pos;
        }
      }
      if (nl < 0) break;
      endLine();
      pos = nl + 1;
    }
  }
  if (lineStarted) endLine();
  const total = line - 1;

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
