/**
 * tool-search's contract (types only): the `tool-search` service that `/cost` and front ends ask, and
 * `deferLoading` on tool definitions (an augmentation of the kernel's ToolDefinition, so the kernel does
 * not need to know about tool search).
 */
import type { TSchema } from "../../api/index.js";

export interface ToolSearchStatus {
  /** `auto` (defer above the threshold), `always` or `never`; `ENABLE_TOOL_SEARCH` may have set it. */
  mode: "auto" | "always" | "never";
  /** Whether the main conversation's latest request deferred tools. */
  active: boolean;
  /** Why it did or did not, e.g. `87 deferrable tools, 113,194 bytes: over the threshold of 20,000 bytes`. */
  reason: string;
  /** Deferrable tools whose definitions that request left out. */
  deferred: readonly string[];
  /** Deferrable tools it sent in full: found by a search, used, or pinned by no one. */
  loaded: readonly string[];
}

export interface ToolSearchService {
  /** The search tool's name when it also searches the skills (the skills index then points to it). */
  readonly skillSearch: string | undefined;
  /** The main conversation as of its latest request (before the first one: nothing deferred yet). */
  status(): ToolSearchStatus;
  /**
   * During a `before_request` (after this plugin's tap, stage 90): what changed the tool definitions of
   * this request, e.g. `tool_search loaded mcp__memory__create_entities`; undefined when tool search
   * changed nothing. The cost audit names it as the cause of the cache miss.
   */
  toolsChangedBy(): string | undefined;
}

declare module "coil" {
  interface Services {
    "tool-search": ToolSearchService;
  }
  // The kernel's type parameters, as an augmentation must repeat them (they are not used here).
  interface ToolDefinition<P extends TSchema = TSchema, D = unknown> {
    /**
     * May be left out of requests until the model searches for it, when tool search defers tools (MCP
     * tools set it; false keeps a tool loaded, e.g. an `alwaysLoad` server's). Set by the tool's plugin.
     */
    deferLoading?: boolean;
  }
}
