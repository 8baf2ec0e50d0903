/**
 * The MCP client's run-time side: the server manager (loaded only when a server is configured), tool
 * lists synced at request boundaries, `@server:uri` mentions, the `mcp` service and `/mcp`. The plugin's
 * setup only registers these methods.
 */
import { join } from "node:path";
import type { ModelRequest, PluginContext, ToolSpec } from "../../api/index.js";
import { coilVersion } from "../../lib/paths.js";
import type { McpService, ServerStatus } from "./api.js";
import { DEFAULT_STARTUP_MS, formatProblem, type loadServers, type ServerConfig } from "./config.js";
import type { McpOptions } from "./index.js";
import type { McpManager } from "./manager.js";
import { Mentions } from "./mentions.js";

type Config = ReturnType<typeof loadServers>;

export class McpClient {
  private manager: McpManager | undefined;
  private ready: Promise<void> = Promise.resolve();
  /** Tool changes wait here for the next request, so the tool set is stable within a turn. */
  private readonly pendingTools = new Set<string>();
  private known = new Set<string>();
  private lastSignature = "[]";
  /** What changed the tools in the current request (see McpService.toolsChangedBy). */
  private changedBy: string | undefined;
  private mentions: Mentions | undefined;

  constructor(
    private readonly ctx: PluginContext<McpOptions>,
    readonly config: Config,
    private readonly home: string,
  ) {}

  private async createManager(servers: ServerConfig[]): Promise<McpManager> {
    const { ctx } = this;
    const { McpManager } = await import("./manager.js");
    const created: McpManager = new McpManager({
      servers,
      cwd: ctx.cwd,
      env: process.env,
      logDir: join(this.home, "logs", "mcp"),
      startupTimeout: ctx.options.startupTimeout,
      toolTimeout: ctx.options.toolTimeout,
      version: version(),
      onChange: (server, what, cause) => {
        if (what === "prompts") {
          try {
            ctx.commands.sync(created.promptCommands());
          } catch (error) {
            ctx.log.error(`prompts of MCP server '${server}' are not commands: ${(error as Error).message}`);
          }
          return;
        }
        this.pendingTools.add(cause === "connected" ? "" : `${cause} from ${server}`);
      },
      report: (level, message) => {
        if (level !== "notice") return ctx.log[level](message);
        // Good news someone may be waiting for: a diagnostic, and on screen where info diagnostics are not shown.
        ctx.log.info(message);
        ctx.services.get("ui")?.notify(message, "info");
      },
    });
    return created;
  }

  /** At start-up: report config problems, start the servers (waited for outside the TUI). */
  async start(mode: string): Promise<void> {
    const { ctx, config } = this;
    for (const p of config.problems) ctx.log.error(`${formatProblem(p)}`);
    for (const n of config.notes ?? []) ctx.log.info(`${formatProblem(n)}`);
    for (const f of config.untrusted)
      ctx.log.warn(
        `MCP servers in ${f} were not started: this project is not trusted (coil trust, or --trust for one run)`,
      );
    if (config.servers.length === 0) return;
    this.manager = await this.createManager(config.servers);
    this.ready = this.manager.startAll();
    // Nobody watches a screen in print, JSON and RPC modes: be connected before the first prompt or command.
    if (mode !== "interactive") await this.ready;
  }

  async stop(): Promise<void> {
    await this.manager?.closeAll();
  }

  /**
   * At each request (a turn boundary), take in tool lists that changed since the last one, and attach
   * resources that user messages mention as `@server:uri`.
   */
  async beforeRequest(request: ModelRequest): Promise<ModelRequest | undefined> {
    this.changedBy = undefined;
    const m = this.manager;
    if (!m) return undefined;
    await this.ready;
    // A list_changed that arrived during the turn is waited for: its tools belong to the next request.
    await m.settled(this.ctx.options.startupTimeout ?? DEFAULT_STARTUP_MS);
    let next = request;
    const tools =
      this.pendingTools.size > 0
        ? this.syncTools(
            m,
            request.tools.map((t) => t.name),
          )
        : undefined;
    if (tools) next = { ...next, tools };
    this.mentions ??= new Mentions(
      () => m.servers(),
      (server, uri) => m.mention(server, uri),
    );
    const messages = await this.mentions.expand(next.messages);
    if (messages !== next.messages) next = { ...next, messages };
    return next === request ? undefined : next;
  }

  /** Sync the servers' tools into the registry; the request's new tool list, or undefined when nothing changed. */
  private syncTools(m: McpManager, requested: readonly string[]): ToolSpec[] | undefined {
    const { ctx } = this;
    const causes = [...this.pendingTools].filter(Boolean);
    this.pendingTools.clear();
    const defs = m.toolDefinitions();
    const signature = JSON.stringify(defs.map((t) => [t.name, t.description, t.parameters]));
    if (signature === this.lastSignature) return undefined; // nothing really changed: keep the request as it is
    this.lastSignature = signature;
    ctx.tools.sync(defs);
    const names = new Set(defs.map((t) => t.name));
    const added = [...names].filter((n) => !this.known.has(n));
    const removed = [...this.known].filter((n) => !names.has(n));
    this.known = names;
    if (causes.length) {
      this.changedBy = `MCP ${causes.join(", ")}`;
      const diff = [...added.map((n) => `+${n}`), ...removed.map((n) => `-${n}`)].join(" ");
      ctx.log.info(`MCP tools changed (${causes.join(", ")})${diff ? `: ${diff}` : ": descriptions or schemas"}`);
    }
    // Registry order, minus what an earlier tap removed from the request.
    const keep = new Set(requested);
    return ctx.tools
      .names()
      .filter((n) => keep.has(n) || names.has(n))
      .map((n) => ctx.tools.get(n)!)
      .map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
  }

  readonly service: McpService = {
    status: async () => {
      await this.ready;
      return this.manager?.status() ?? [];
    },
    addServers: async (servers, source) => {
      await this.ready;
      const configs: ServerConfig[] = servers.map((s) => ({
        name: s.name,
        source,
        transport:
          "command" in s
            ? { type: "stdio", command: s.command, args: [...(s.args ?? [])], env: { ...s.env } }
            : { type: s.transport ?? "http", url: s.url, headers: { ...s.headers } },
      }));
      if (!this.manager) {
        this.manager = await this.createManager([]);
        this.ready = Promise.resolve();
      }
      await this.manager.add(configs);
      for (const c of configs) this.pendingTools.add(`${c.name} added by ${source}`);
      return this.manager.status().filter((st) => configs.some((c) => c.name === st.name));
    },
    toolsChangedBy: () => this.changedBy,
    reconnect: async (name) => {
      if (!this.manager) return "no MCP servers are configured";
      await this.ready;
      const outcome = await this.manager.reconnect(name);
      this.pendingTools.add(`reconnect of ${name}`);
      return outcome;
    },
  };

  /** `/mcp` and `/mcp reconnect <name>`. */
  async command(args: string): Promise<string> {
    const [word, name] = args.trim().split(/\s+/);
    if (word === "reconnect") return name ? this.service.reconnect(name) : "usage: /mcp reconnect <name>";
    if (word) return `usage: /mcp  or  /mcp reconnect <name>`;
    const list = await this.service.status();
    return formatStatus(list, this.config.problems.map(formatProblem), this.config.untrusted);
  }
}

function formatStatus(list: readonly ServerStatus[], problems: string[], untrusted: string[]): string {
  const lines: string[] = [];
  if (list.length === 0)
    lines.push("No MCP servers configured. Add one: coil mcp add <name> -- <command...>  (docs/mcp.md)");
  else lines.push(`MCP servers (${list.length}):`);
  for (const s of list) {
    const counts = s.status === "connected" ? `  ${s.tools.length} tools, ${s.prompts.length} prompts` : "";
    lines.push(`  ${s.name}  ${s.status}  ${s.transport}${counts}  (${s.source})`);
    if (s.error) lines.push(`    last error: ${s.error.split("\n")[0]}`);
  }
  for (const p of problems) lines.push(`  config problem: ${p}`);
  for (const f of untrusted) lines.push(`  not started (project not trusted): ${f}`);
  if (list.some((s) => s.status === "failed")) lines.push("Retry one with /mcp reconnect <name>.");
  return lines.join("\n");
}

const version = coilVersion;
