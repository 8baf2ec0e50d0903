/**
 * context-files: project instructions from `AGENTS.md` (else `CLAUDE.md`) in `$COIL_HOME`, then in each
 * folder from the repository root (the filesystem root outside a repository) down to the working
 * directory. The `context-files` service hands them to the system-prompt plugin, re-read when they
 * change, with a size cap and a visible truncation note (docs/context.md).
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { Type, definePlugin } from "../../kernel/index.js";
import type { ContextFile } from "./api.js";

export type { ContextFile, ContextFilesService } from "./api.js";

export const ContextFilesOptions = Type.Object({
  /** File names looked for in each folder; the first that exists is used. */
  names: Type.Array(Type.String({ minLength: 1 }), { default: ["AGENTS.md", "CLAUDE.md"], minItems: 1 }),
  /** Also read the file in `$COIL_HOME` (your own instructions for every project). */
  home: Type.Boolean({ default: true }),
  /** Bytes kept of one file. */
  maxBytesPerFile: Type.Integer({ minimum: 256, default: 32_768 }),
  /** Bytes kept of all files together; the files nearest the working directory get the budget first. */
  maxBytesTotal: Type.Integer({ minimum: 256, default: 98_304 }),
});


/** The folders to look in: the repository root (a folder holding `.git`) or `/`, down to `cwd`. */
export function folderChain(cwd: string): string[] {
  const up: string[] = [];
  let repo: number | undefined;
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    up.push(dir);
    if (repo === undefined && existsSync(join(dir, ".git"))) repo = up.length;
    if (dirname(dir) === dir) break;
  }
  return up.slice(0, repo ?? up.length).reverse();
}

interface Read {
  key: string;
  text: string;
}

export default definePlugin({
  id: "context-files",
  description: "AGENTS.md / CLAUDE.md project instructions",
  options: ContextFilesOptions,
  setup(ctx) {
    const o = ctx.options;
    const cache = new Map<string, Read>();
    const chain = folderChain(ctx.cwd);

    const read = (path: string): { text: string; bytes: number } | undefined => {
      let st;
      try {
        st = statSync(path);
        if (!st.isFile()) return undefined;
      } catch {
        return undefined;
      }
      const key = `${st.size}:${st.mtimeMs}`;
      const hit = cache.get(path);
      if (hit?.key === key) return { text: hit.text, bytes: st.size };
      try {
        const text = readFileSync(path, "utf8");
        cache.set(path, { key, text });
        return { text, bytes: st.size };
      } catch (error) {
        ctx.log.warn(`cannot read ${path}: ${(error as Error).message}`);
        return undefined;
      }
    };
    const first = (dir: string) => {
      for (const name of o.names) {
        const path = join(dir, name);
        const got = read(path);
        if (got) return { path, ...got };
      }
      return undefined;
    };

    const files = (): ContextFile[] => {
      const home = process.env.COIL_HOME || join(homedir(), ".coil");
      const found = [...(o.home ? [first(home)] : []), ...chain.map(first)].filter((f): f is NonNullable<typeof f> => f !== undefined);
      const unique = found.filter((f, i) => found.findIndex((g) => g.path === f.path) === i);
      // The nearest files matter most: give them the budget first, then show them in order.
      let budget = o.maxBytesTotal;
      const kept = new Map<string, ContextFile>();
      for (const f of [...unique].reverse()) {
        const limit = Math.max(0, Math.min(o.maxBytesPerFile, budget));
        const buf = Buffer.from(f.text, "utf8");
        if (buf.length <= limit) {
          kept.set(f.path, { path: f.path, content: f.text, truncated: false, bytes: f.bytes });
          budget -= buf.length;
          continue;
        }
        const cut = buf.subarray(0, limit).toString("utf8").replace(/\uFFFD$/, "");
        const note = `[coil: ${f.path} is ${buf.length} bytes; only the first ${Buffer.byteLength(cut)} are shown (size cap). Read the file for the rest.]`;
        kept.set(f.path, { path: f.path, content: cut ? `${cut}\n\n${note}` : note, truncated: true, bytes: f.bytes });
        budget -= Buffer.byteLength(cut);
      }
      return unique.map((f) => kept.get(f.path)!);
    };
    ctx.services.provide("context-files", { files });
  },
});
