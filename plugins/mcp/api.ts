/** The `mcp` service: what other plugins (a front end's status line, a dashboard) may ask the MCP client. */

export interface ServerStatus {
  name: string;
  /** The file that configured it, or `preset`. */
  source: string;
  /** `stdio`, `http` (Streamable HTTP) or `sse`. */
  transport: string;
  status: "pending" | "connecting" | "connected" | "failed" | "closed";
  /** coil names of its tools (`mcp__<server>__<tool>`). */
  tools: string[];
  /** Slash commands of its prompts. */
  prompts: string[];
  /** Why it failed, when it did. */
  error?: string;
}

export interface McpService {
  /** Every configured server and its state (waits for start-up to settle). */
  status(): Promise<ServerStatus[]>;
  /** Close and connect one server again; resolves to a one-line outcome. */
  reconnect(name: string): Promise<string>;
  /**
   * During a `before_request` (after stage EARLY): what changed the MCP tools for this request, e.g.
   * `MCP notifications/tools/list_changed from github`; undefined when they did not change. The cost
   * audit names it as the cause of a cache miss.
   */
  toolsChangedBy(): string | undefined;
  /**
   * Connect servers given at run time (e.g. by an editor over ACP `session/new`), beside the configured ones;
   * a server with the same name is replaced. Resolves once they connected or failed; their tools join at
   * the next request. `source` names who gave them (shown by /mcp).
   */
  addServers(servers: readonly RuntimeServer[], source: string): Promise<ServerStatus[]>;
}

/** A server handed over at run time: a command (stdio) or a URL (Streamable HTTP, or `sse`). */
export type RuntimeServer =
  | { name: string; command: string; args?: readonly string[]; env?: Readonly<Record<string, string>> }
  | { name: string; url: string; headers?: Readonly<Record<string, string>>; transport?: "http" | "sse" };

declare module "coil" {
  interface Services {
    mcp: McpService;
  }
}
