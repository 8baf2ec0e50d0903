/**
 * `@path` references in a prompt (the TUI's editor, prompt templates) and `--image <file>` in print mode:
 * text files are inlined inside `<file>`, images (PNG, JPEG, GIF, WebP, by their bytes) attached as image
 * blocks when the model takes them. Other binary files, files over the size limit and images the model
 * cannot take are left out with a notice; the model can still inspect them with its tools.
 */
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { ImageContent, ModelInfo, PromptInput, TextContent } from "../api/index.js";
import { MAX_IMAGE_BYTES, readHeadSync, sniffBinary, sniffImage } from "./sniff.js";
import { formatSize } from "./tool-budget.js";

/** Largest text file inlined by an `@path` reference. */
export const MAX_ATTACH_BYTES = 200_000;

export interface Attachments {
  /** `<file path="...">` blocks of the text files. */
  files: string[];
  /** Image blocks, each after a text line naming it. */
  images: (TextContent | ImageContent)[];
}

/**
 * The files `@path` tokens in `text` name, relative to `cwd` (`@"with spaces"` quoted). A token that names
 * no file is left as typed. `refuse` may veto a resolved path (returns why), e.g. a path outside the project.
 */
export function collectAttachments(
  text: string,
  cwd: string,
  model: ModelInfo | undefined,
  warn: (message: string) => void,
  refuse?: (abs: string) => string | undefined,
): Attachments {
  const files: string[] = [];
  const images: (TextContent | ImageContent)[] = [];
  for (const m of text.matchAll(/(?:^|\s)@("([^"]+)"|\S+)/g)) {
    const rel = m[2] ?? m[1]!;
    const abs = resolve(cwd, rel);
    let size: number;
    let head: Uint8Array;
    try {
      const st = statSync(abs);
      if (!st.isFile()) continue;
      size = st.size;
      head = readHeadSync(abs);
    } catch {
      continue; // not a file: leave the text as typed
    }
    const why = refuse?.(abs);
    if (why) {
      warn(`@${rel}: not attached: ${why}.`);
      continue;
    }
    if (sniffImage(head)) {
      const attached = imageBlocks(abs, `@${rel}`, model, size, head);
      if (attached.ok) images.push(...attached.blocks);
      else warn(attached.problem);
      continue;
    }
    const binary = sniffBinary(head, rel);
    if (binary) {
      warn(
        `@${rel} is a binary file${binary.what ? ` (${binary.what})` : ""}; not attached. The model can inspect it with its tools.`,
      );
      continue;
    }
    if (size > MAX_ATTACH_BYTES) {
      warn(`@${rel} is ${size} bytes; not attached (limit ${MAX_ATTACH_BYTES}). The model can read it with its tools.`);
      continue;
    }
    files.push(`<file path="${rel}">\n${readFileSync(abs, "utf8").replace(/\n$/, "")}\n</file>`);
  }
  return { files, images };
}

/** `text` followed by its attachments: a string when there are only text files, else a user message with image blocks. */
export function attachmentsPrompt(text: string, { files, images }: Attachments): PromptInput {
  const body = files.length ? `${text}\n\n${files.join("\n\n")}` : text;
  if (!images.length) return body;
  return { role: "user", content: [{ type: "text", text: body }, ...images], timestamp: Date.now() };
}

/** `text` with the files its `@path` tokens name attached. */
export function withAttachments(
  text: string,
  cwd: string,
  model: ModelInfo,
  warn: (message: string) => void,
): PromptInput {
  return attachmentsPrompt(text, collectAttachments(text, cwd, model, warn));
}

export type ImageAttachment =
  /** A label line and the image block, to put after the prompt's text. */
  | { ok: true; blocks: [TextContent, ImageContent] }
  /** `notImage`: the file is not a PNG, JPEG, GIF or WebP image. */
  | { ok: false; notImage?: boolean; problem: string };

/** The image at `abs` as content blocks for `model`, or why it cannot be attached. `shown` names it in messages. */
export function imageAttachment(abs: string, shown: string, model: ModelInfo | undefined): ImageAttachment {
  let size: number;
  let head: Uint8Array;
  try {
    const st = statSync(abs);
    if (!st.isFile()) return { ok: false, notImage: true, problem: `${shown} is not a file` };
    size = st.size;
    head = readHeadSync(abs);
  } catch (error) {
    return {
      ok: false,
      notImage: true,
      problem: `cannot read ${shown}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    };
  }
  return imageBlocks(abs, shown, model, size, head);
}

/** The checks and blocks of `imageAttachment` for a file whose size and first bytes are already read. */
function imageBlocks(
  abs: string,
  shown: string,
  model: ModelInfo | undefined,
  size: number,
  head: Uint8Array,
): ImageAttachment {
  const image = sniffImage(head);
  if (!image) return { ok: false, notImage: true, problem: `${shown} is not a PNG, JPEG, GIF or WebP image` };
  const label = `${image.mimeType}${image.width && image.height ? `, ${image.width}x${image.height}` : ""}, ${formatSize(size)}`;
  if (model?.input && !model.input.includes("image")) {
    return {
      ok: false,
      problem: `${shown} is an image (${label}); not attached: ${model.provider}/${model.id} does not take images. Pick a model that does (coil models lists each model's input).`,
    };
  }
  if (size > MAX_IMAGE_BYTES)
    return {
      ok: false,
      problem: `${shown} is an image (${label}); not attached: larger than the ${formatSize(MAX_IMAGE_BYTES)} providers accept.`,
    };
  return {
    ok: true,
    blocks: [
      { type: "text", text: `[image ${shown} (${label})]` },
      { type: "image", data: readFileSync(abs).toString("base64"), mimeType: image.mimeType },
    ],
  };
}
