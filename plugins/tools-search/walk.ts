/** Depth-first directory walk in path order, honouring ignore files and skipping `.git`. Symlinked directories are listed, not entered. */
import { join } from "node:path";
import { ancestorRules, IgnoreRules, rulesIn } from "./ignore.js";
import type { SearchOperations } from "./search-backend.js";

export interface WalkEntry {
  abs: string;
  /** Relative to the walk's root, `/`-separated. */
  rel: string;
  kind: "file" | "directory" | "symlink" | "other";
}

export interface WalkStats {
  /** Directories that could not be listed. */
  unreadable: number;
}

export async function* walk(
  ops: SearchOperations,
  root: string,
  signal: AbortSignal | undefined,
  stats: WalkStats = { unreadable: 0 },
): AsyncGenerator<WalkEntry> {
  const top = new IgnoreRules(await ancestorRules(ops, root));
  async function* visit(dir: string, rel: string, rules: IgnoreRules): AsyncGenerator<WalkEntry> {
    let entries: Awaited<ReturnType<SearchOperations["readdir"]>>;
    try {
      entries = await ops.readdir(dir);
    } catch {
      stats.unreadable++;
      return;
    }
    const here = rules.with(
      await rulesIn(
        ops,
        dir,
        entries.map((e) => e.name),
      ),
    );
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (signal?.aborted) return;
      if (entry.name === ".git") continue;
      const abs = join(dir, entry.name);
      const isDir = entry.kind === "directory";
      if (here.ignored(abs, isDir)) continue;
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      yield { abs, rel: childRel, kind: entry.kind };
      if (isDir) yield* visit(abs, childRel, here);
    }
  }
  yield* visit(root, "", top);
}
