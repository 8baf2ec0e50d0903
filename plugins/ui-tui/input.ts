/**
 * What the editor adds to typed text: `@file` attachments (lib/attachments.ts: text inlined, images
 * attached when the model takes them) and completion (slash commands, `@` fuzzy file search, Tab paths).
 */
import { readdirSync } from "node:fs";
import { basename, join, relative } from "node:path";
import type * as PiTui from "@mariozechner/pi-tui";

export { withAttachments } from "../../lib/attachments.js";

/** Slash commands from the registry, `@` fuzzy file search, and Tab path completion. */
export function autocomplete(lib: typeof PiTui, commands: { name: string; description?: string; argumentHint?: string }[], cwd: string): PiTui.AutocompleteProvider {
  const combined = new lib.CombinedAutocompleteProvider(commands, cwd);
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
        return { prefix: `@${query}`, items: found.map((f) => ({ value: `@${f}`, label: basename(f), description: f })) };
      }
      return combined.getSuggestions(lines, line, col, options);
    },
    applyCompletion: (lines, line, col, item, prefix) => combined.applyCompletion(lines, line, col, item, prefix),
    shouldTriggerFileCompletion: (lines, line, col) => combined.shouldTriggerFileCompletion(lines, line, col),
  };
}

/** Files under `root` (relative paths), skipping dot-folders and node_modules, up to `max`. */
function walk(root: string, max: number): string[] {
  const out: string[] = [];
  const queue = [root];
  while (queue.length && out.length < max) {
    const dir = queue.shift()!;
    let entries;
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
