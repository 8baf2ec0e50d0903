/**
 * What the editor adds to typed text: `@file` attachments (lib/attachments.ts: text inlined, images
 * attached when the model takes them) and completion (slash commands, `@` fuzzy file search, Tab paths).
 */
import { readdirSync, statSync, type Dirent } from "node:fs";
import { homedir } from "node:os";
import { basename, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type * as PiTui from "@mariozechner/pi-tui";
import { readHeadSync, sniffImage } from "../../lib/sniff.js";

export { withAttachments } from "../../lib/attachments.js";

const IMAGE_NAME = /\.(png|jpe?g|gif|webp)$/i;

/**
 * A bracketed paste that is the path of one image file (what dropping a file on most terminals, or
 * pasting a copied file, types): the `@path` reference to insert instead, so the image is attached
 * when the message is sent. Accepts the shapes terminals and file managers paste: quoted, `file://`
 * URLs, and backslash-escaped spaces. Undefined when the paste is anything else (it is pasted as text).
 */
export function pastedImageRef(pasted: string, cwd: string): string | undefined {
  let path = pasted.trim();
  if (!path || path.includes("\n")) return undefined;
  const quoted = /^(['"])(.*)\1$/.exec(path);
  if (quoted) path = quoted[2]!;
  if (path.startsWith("file://")) {
    try {
      path = fileURLToPath(path);
    } catch {
      return undefined;
    }
  } else path = path.replace(/\\(.)/g, "$1");
  if (!IMAGE_NAME.test(path)) return undefined;
  const abs = resolve(cwd, path.startsWith("~/") ? join(homedir(), path.slice(2)) : path);
  try {
    if (!statSync(abs).isFile() || !sniffImage(readHeadSync(abs))) return undefined;
  } catch {
    return undefined;
  }
  const rel = relative(cwd, abs);
  const shown = rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : abs;
  return /\s|"/.test(shown) ? `@"${shown}"` : `@${shown}`;
}

/**
 * Slash commands from the registry, `@` fuzzy file search, and Tab path completion. `commands` is read
 * at each request: commands registered after the editor opened (an MCP server's prompts, once it has
 * connected) are offered too.
 */
export function autocomplete(
  lib: typeof PiTui,
  commands: () => { name: string; description?: string; argumentHint?: string }[],
  cwd: string,
): PiTui.AutocompleteProvider {
  let listed = commands();
  let combined = new lib.CombinedAutocompleteProvider(listed, cwd);
  const current = () => {
    const now = commands();
    const same =
      now.length === listed.length &&
      now.every((c, i) => c.name === listed[i]!.name && c.description === listed[i]!.description);
    if (!same) {
      listed = now;
      combined = new lib.CombinedAutocompleteProvider(listed, cwd);
    }
    return combined;
  };
  let files: string[] | undefined;
  const listFiles = () => (files ??= walk(cwd, 5000));
  return {
    getSuggestions: async (lines, line, col, options) => {
      const before = (lines[line] ?? "").slice(0, col);
      const at = /(?:^|\s)@(\S*)$/.exec(before);
      if (at) {
        const query = at[1]!;
        const found = lib.fuzzyFilter(listFiles(), query, (f) => f).slice(0, 20);
        if (!found.length) return null;
        return {
          prefix: `@${query}`,
          items: found.map((f) => ({ value: `@${f}`, label: basename(f), description: f })),
        };
      }
      return current().getSuggestions(lines, line, col, options);
    },
    applyCompletion: (lines, line, col, item, prefix) => current().applyCompletion(lines, line, col, item, prefix),
    shouldTriggerFileCompletion: (lines, line, col) => current().shouldTriggerFileCompletion(lines, line, col),
  };
}

/** Files under `root` (relative paths), skipping dot-folders and node_modules, up to `max`. */
function walk(root: string, max: number): string[] {
  const out: string[] = [];
  const queue = [root];
  while (queue.length && out.length < max) {
    const dir = queue.shift()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (e.name.startsWith(".") || e.name === "node_modules" || e.name === "dist") continue;
      const abs = join(dir, e.name);
      if (e.isDirectory()) queue.push(abs);
      else out.push(relative(root, abs));
      if (out.length >= max) break;
    }
  }
  return out;
}
