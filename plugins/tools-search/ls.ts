/** ls: one directory's entries, sorted, with / after directories. */
import { join } from "node:path";
import { Type } from "typebox";
import { defineTool, messageOf, type ToolDefinition } from "../../api/index.js";
import { DEFAULT_LS_LIMIT } from "./limits.js";
import type { SearchEnv } from "./options.js";
import type { SearchOperations } from "./search-backend.js";
import { budget, codeOf, displayPath, fail, locatePath, similarHint } from "./util.js";

export const LsParams = Type.Object({
  path: Type.Optional(Type.String({ description: "Default: working directory" })),
  limit: Type.Optional(Type.Integer({ minimum: 1 })),
});

export interface LsDetails {
  count: number;
  total: number;
}

export function createLsTool(env: SearchEnv): ToolDefinition<typeof LsParams, LsDetails> {
  return defineTool({
    name: "ls",
    label: "List",
    description: `List a folder, sorted, dotfiles included, folders ending in /; at most ${DEFAULT_LS_LIMIT} entries (or limit). Not recursive.`,
    parameters: LsParams,
    executionMode: "parallel",
    promptSnippet: "ls: list a directory",
    async execute(args) {
      const ops = env.ops();
      const dir = await locatePath(args.path, env.cwd, ops);
      const shown = displayPath(dir, env.cwd);
      let entries: Awaited<ReturnType<SearchOperations["readdir"]>>;
      try {
        const info = await ops.stat(dir);
        if (info.kind !== "directory") return fail(`${shown} is a file, not a directory; use read to see it.`);
        entries = await ops.readdir(dir);
      } catch (error) {
        const code = codeOf(error);
        if (code === "ENOENT")
          return fail(
            `Directory not found: ${shown}.${await similarHint(dir, env.cwd, ops)} List its parent, or use find to locate it.`,
          );
        if (code === "EACCES" || code === "EPERM") return fail(`Permission denied: cannot list ${shown}.`);
        return fail(`Cannot list ${shown}: ${messageOf(error)}`);
      }
      const limit = args.limit ?? DEFAULT_LS_LIMIT;
      entries.sort((a, b) => {
        const x = a.name.toLowerCase();
        const y = b.name.toLowerCase();
        return x < y ? -1 : x > y ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
      });
      const names: string[] = [];
      for (const entry of entries.slice(0, limit)) {
        let isDir = entry.kind === "directory";
        if (entry.kind === "symlink")
          isDir = await ops.stat(join(dir, entry.name)).then(
            (s) => s.kind === "directory",
            () => false,
          );
        names.push(entry.name + (isDir ? "/" : ""));
      }
      const details: LsDetails = { count: names.length, total: entries.length };
      if (entries.length === 0) return { content: [{ type: "text", text: `(${shown} is empty)` }], details };
      const notices: string[] = [];
      if (entries.length > limit)
        notices.push(
          `[Showing ${limit} of ${entries.length} entries. Use limit=${entries.length} to see all, or find to filter.]`,
        );
      return { content: [{ type: "text", text: budget(names, notices).text }], details };
    },
  });
}
