/** find: paths matching a glob, honouring .gitignore, in path order. */
import { Type } from "typebox";
import { defineTool, messageOf, type ToolDefinition } from "../../api/index.js";
import { globMatcher } from "./glob.js";
import { DEFAULT_FIND_LIMIT } from "./limits.js";
import type { SearchEnv } from "./options.js";
import { budget, codeOf, displayPath, fail, locatePath, similarHint } from "./util.js";
import { walk, type WalkStats } from "./walk.js";

export const FindParams = Type.Object({
  pattern: Type.String({
    minLength: 1,
    description: "'*.ts': names at any depth; 'src/**/*.ts': paths; trailing /: folders only",
  }),
  path: Type.Optional(Type.String({ description: "Folder (default: working directory)" })),
  limit: Type.Optional(Type.Integer({ minimum: 1 })),
});

export interface FindDetails {
  count: number;
  limitReached: boolean;
}

export function createFindTool(env: SearchEnv): ToolDefinition<typeof FindParams, FindDetails> {
  return defineTool({
    name: "find",
    label: "Find",
    description:
      `Find files and folders by glob, recursively, honouring .gitignore: one path a line, folders ending in /, at most ${DEFAULT_FIND_LIMIT} (or limit). ` +
      `Use it instead of find or ls -R in bash.`,
    parameters: FindParams,
    executionMode: "parallel",
    promptSnippet: "find: find files by glob pattern (respects .gitignore)",
    async execute(args, run) {
      const ops = env.ops();
      const root = await locatePath(args.path, env.cwd, ops);
      const shown = displayPath(root, env.cwd);
      try {
        const info = await ops.stat(root);
        if (info.kind !== "directory")
          return fail(`${shown} is not a directory; find searches directories (use read for a file).`);
      } catch (error) {
        return fail(
          codeOf(error) === "ENOENT"
            ? `Directory not found: ${shown}.${await similarHint(root, env.cwd, ops)} Check the path with ls.`
            : `Cannot search ${shown}: ${messageOf(error)}`,
        );
      }
      const limit = args.limit ?? DEFAULT_FIND_LIMIT;
      const matches = globMatcher(args.pattern);
      const found: string[] = [];
      let limitReached = false;
      const stats: WalkStats = { unreadable: 0 };
      for await (const entry of walk(ops, root, run.signal, stats)) {
        const isDir = entry.kind === "directory";
        if (!matches(entry.rel, isDir)) continue;
        if (found.length >= limit) {
          limitReached = true;
          break;
        }
        found.push(displayPath(entry.abs, env.cwd) + (isDir ? "/" : ""));
      }
      const details: FindDetails = { count: found.length, limitReached };
      if (found.length === 0)
        return {
          content: [{ type: "text", text: `No files matching ${JSON.stringify(args.pattern)} in ${shown}.` }],
          details,
        };
      const notices: string[] = [];
      if (limitReached)
        notices.push(
          `[${limit} results limit reached. Use limit=${limit * 2} for more, or a narrower pattern or path.]`,
        );
      if (stats.unreadable)
        notices.push(`[${stats.unreadable} director${stats.unreadable === 1 ? "y" : "ies"} could not be read.]`);
      return { content: [{ type: "text", text: budget(found, notices).text }], details };
    },
  });
}
