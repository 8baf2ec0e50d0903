/**
 * tools-search: grep, find and ls. grep uses ripgrep when it is on PATH and a built-in search
 * otherwise. Files go through the `operations` service when a plugin provides one, else the local
 * file system (this plugin does not import tools-coding; both read the same service).
 */
import { definePlugin, type ToolDefinition } from "../../api/index.js";
import type {} from "../tools-coding/api.js"; // types the `operations` service
import { createFindTool } from "./find.js";
import { createGrepTool } from "./grep.js";
import { createLsTool } from "./ls.js";
import { resolveSearchOperations } from "./search-backend.js";
import { SearchOptions, type SearchEnv } from "./options.js";

export { SearchOptions } from "./options.js";
export * from "./limits.js";

export default definePlugin({
  id: "tools-search",
  description: "Search tools: grep, find, ls",
  options: SearchOptions,
  setup(ctx) {
    const env: SearchEnv = {
      cwd: ctx.cwd,
      options: ctx.options,
      ops: () => resolveSearchOperations(ctx.services.get("operations")),
    };
    const factories: Record<(typeof ctx.options.tools)[number], (env: SearchEnv) => ToolDefinition> = {
      grep: createGrepTool,
      find: createFindTool,
      ls: createLsTool,
    };
    for (const name of ctx.options.tools) ctx.tools.register(factories[name](env));
  },
});
