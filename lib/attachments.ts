/**
 * Image files attached to a prompt: the TUI's `@image.png` and `--image <file>` in print mode.
 * The image type comes from the file's bytes, not its name; the model must take images and the file
 * must be within what providers accept.
 */
import { readFileSync, statSync } from "node:fs";
import type { ImageContent, ModelInfo, TextContent } from "../kernel/index.js";
import { MAX_IMAGE_BYTES, readHeadSync, sniffImage } from "./sniff.js";
import { formatSize } from "./tool-budget.js";

export type ImageAttachment =
  /** A label line and the image block, to put after the prompt's text. */
  | { ok: true; blocks: [TextContent, ImageContent] }
  /** `notImage`: the file is not a PNG, JPEG, GIF or WebP image. */
  | { ok: false; notImage?: boolean; problem: string };

/** The image at `abs` as content blocks for `model`, or why it cannot be attached. `shown` names it in messages. */
export function imageAttachment(abs: string, shown: string, model: ModelInfo): ImageAttachment {
  let size: number;
  let head: Uint8Array;
  try {
    const st = statSync(abs);
    if (!st.isFile()) return { ok: false, notImage: true, problem: `${shown} is not a file` };
    size = st.size;
    head = readHeadSync(abs);
  } catch (error) {
    return { ok: false, notImage: true, problem: `cannot read ${shown}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
  const image = sniffImage(head);
  if (!image) return { ok: false, notImage: true, problem: `${shown} is not a PNG, JPEG, GIF or WebP image` };
  const label = `${image.mimeType}${image.width && image.height ? `, ${image.width}x${image.height}` : ""}, ${formatSize(size)}`;
  if (model.input && !model.input.includes("image")) {
    return { ok: false, problem: `${shown} is an image (${label}); not attached: ${model.provider}/${model.id} does not take images. Pick a model that does (coil models lists each model's input).` };
  }
  if (size > MAX_IMAGE_BYTES) return { ok: false, problem: `${shown} is an image (${label}); not attached: larger than the ${formatSize(MAX_IMAGE_BYTES)} providers accept.` };
  return { ok: true, blocks: [{ type: "text", text: `[image ${shown} (${label})]` }, { type: "image", data: readFileSync(abs).toString("base64"), mimeType: image.mimeType }] };
}
