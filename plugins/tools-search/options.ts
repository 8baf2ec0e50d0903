/** tools-search options and what each tool receives from the plugin. */
import { Type, type Static } from "typebox";
import type { SearchOperations } from "./search-backend.js";

export const SEARCH_TOOL_NAMES = ["grep", "find", "ls"] as const;

export const SearchOptions = Type.Object({
  /** Which tools to register (default: all three). */
  tools: Type.Array(Type.Union([Type.Literal("grep"), Type.Literal("find"), Type.Literal("ls")]), {
    default: [...SEARCH_TOOL_NAMES],
    uniqueItems: true,
  }),
  /** Use ripgrep for grep when `rg` is on PATH; false always uses the built-in search. */
  ripgrep: Type.Boolean({ default: true }),
});
export type SearchOptions = Static<typeof SearchOptions>;

export interface SearchEnv {
  cwd: string;
  ops(): Required<SearchOperations>;
  options: SearchOptions;
}
