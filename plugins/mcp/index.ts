/**
 * mcp: an MCP client. Servers from `.mcp.json` (trusted projects), `.coil/mcp.json`, `$COIL_HOME/mcp.json`
 * and the `servers` option connect in parallel at start; their tools become `mcp__<server>__<tool>`, their
 * prompts `/mcp__<server>__<prompt>` commands, their resources readable with `mcp_read_resource`.
 * `/mcp` shows them; `coil mcp ...` edits the configuration. The SDK loads only when a server is
 * configured. See docs/mcp.md.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { definePlugin, Stage, Type, type Static, type ToolSpec } from "../../kernel/index.js";
import { coilHome, packageRoot } from "../../lib/paths.js";
import type { McpService, ServerStatus } from "./api.js";
import { mcpCommand } from "./cli.js";
import { formatProblem, loadServers, type ServerConfig } from "./config.js";
import type { McpManager } from "./manager.js";
import { Mentions } from "./mentions.js";

export type { McpService, ServerStatus } from "./api.js";

export const McpOptions = Type.Object({
  /** Servers in `.mcp.json` format (`name: { command, args, env, cwd } | { type, url, headers }`). */
  servers: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
  /** How long a server may take to start and answer `initialize` and the first listings (ms). */
  startupTimeout: Type.Number({ minimum: 1, default: 10_000 }),
  /** How long one tool call may take (ms). */
  toolTimeout: Type.Number({ minimum: 1, default: 120_000 }),
});
export type McpOptions = Static<typeof McpOptions>;

export default definePlugin({
  id: "mcp",
  description: "MCP client: servers' tools, prompts and resources; /mcp and coil mcp",
  options: McpOptions,
  setup(ctx) {
    const home = coilHome();
    const sources = { preset: ctx.options.servers, home, trusted: ctx.projectTrusted };
    const config = loadServers({ ...sources, cwd: ctx.cwd, env: process.env });
    let manager: McpManager | undefined;
    let ready: Promise<void> = Promise.resolve();
    /** Tool changes wait here for the next request, so the tool set is stable within a turn. */
    const pendingTools = new Set<string>();
    let known = new Set<string>();
    let lastSignature = "[]";
    /** What changed the tools in the current request (see McpService.toolsChangedBy). */
    let changedBy: string | undefined;

    ctx.subcommands.register({
      name: "mcp",
      description: "MCP servers: list, get <name>, add <name> -- <command...>, add <name> --url <url>, remove <name>",
      usage: "<list|get|add|remove> [args...]",
      run: (argv, io) => mcpCommand(argv, io, { ...sources, home: coilHome(io.env) }),
    });

    async function createManager(servers: ServerConfig[]): Promise<McpManager> {
      const { McpManager } = await import("./manager.js");
      const created: McpManager = new McpManager({
        servers,
        cwd: ctx.cwd,
        env: process.env,
        logDir: join(home, "logs", "mcp"),
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
          pendingTools.add(cause === "connected" ? "" : `${cause} from ${server}`);
        },
        report: (level, message) => ctx.log[level](message),
      });
      return created;
    }

    ctx.onStart(async (_agent, _io, info) => {
      for (const p of config.problems) ctx.log.error(`${formatProblem(p)}`);
      for (const f of config.untrusted) ctx.log.warn(`MCP servers in ${f} were not started: this project is not trusted (coil trust, or --trust for one run)`);
      if (config.servers.length === 0) return;
      manager = await createManager(config.servers);
      ready = manager.startAll();
      // Nobody watches a screen in print, JSON and RPC modes: be connected before the first prompt or command.
      if (info.mode !== "interactive") await ready;
    });

    ctx.onStop(async () => {
      await manager?.closeAll();
    });

    // At each request (a turn boundary), take in tool lists that changed since the last one, and attach
    // resources that user messages mention as `@server:uri`.
    let mentions: Mentions | undefined;
    ctx.tap(
      "before_request",
      async (request) => {
        changedBy = undefined;
        if (!manager) return undefined;
        await ready;
        // A list_changed that arrived during the turn is waited for: its tools belong to the next request.
        await manager.settled(ctx.options.startupTimeout);
        let next = request;
        const tools = pendingTools.size > 0 ? syncTools(manager, request.tools.map((t) => t.name)) : undefined;
        if (tools) next = { ...next, tools };
        const m = manager;
        mentions ??= new Mentions(() => m.servers(), (server, uri) => m.mention(server, uri));
        const messages = await mentions.expand(next.messages);
        if (messages !== next.messages) next = { ...next, messages };
        return next === request ? undefined : next;
      },
      { stage: Stage.EARLY },
    );

    /** Sync the servers' tools into the registry; the request's new tool list, or undefined when nothing changed. */
    function syncTools(m: McpManager, requested: readonly string[]): ToolSpec[] | undefined {
      const causes = [...pendingTools].filter(Boolean);
      pendingTools.clear();
      const defs = m.toolDefinitions();
      const signature = JSON.stringify(defs.map((t) => [t.name, t.description, t.parameters]));
      if (signature === lastSignature) return undefined; // nothing really changed: keep the request as it is
      lastSignature = signature;
      ctx.tools.sync(defs);
      const names = new Set(defs.map((t) => t.name));
      const added = [...names].filter((n) => !known.has(n));
      const removed = [...known].filter((n) => !names.has(n));
      known = names;
      if (causes.length) {
        changedBy = `MCP ${causes.join(", ")}`;
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

    const service: McpService = {
      status: async () => (await ready, manager?.status() ?? []),
      addServers: async (servers, source) => {
        await ready;
        const configs: ServerConfig[] = servers.map((s) => ({
          name: s.name,
          source,
          transport: "command" in s ? { type: "stdio", command: s.command, args: [...(s.args ?? [])], env: { ...s.env } } : { type: s.transport ?? "http", url: s.url, headers: { ...s.headers } },
        }));
        if (!manager) {
          manager = await createManager([]);
          ready = Promise.resolve();
        }
        await manager.add(configs);
        for (const c of configs) pendingTools.add(`${c.name} added by ${source}`);
        return manager.status().filter((st) => configs.some((c) => c.name === st.name));
      },
      toolsChangedBy: () => changedBy,
      reconnect: async (name) => {
        if (!manager) return "no MCP servers are configured";
        await ready;
        const outcome = await manager.reconnect(name);
        pendingTools.add(`reconnect of ${name}`);
        return outcome;
      },
    };
    ctx.services.provide("mcp", service);

    ctx.commands.register({
      name: "mcp",
      description: "MCP servers: status, tool counts, last error; `/mcp reconnect <name>`",
      argumentHint: "[reconnect <name>]",
      async run(args) {
        const [word, name] = args.trim().split(/\s+/);
        if (word === "reconnect") return name ? service.reconnect(name) : "usage: /mcp reconnect <name>";
        if (word) return `usage: /mcp  or  /mcp reconnect <name>`;
        const list = await service.status();
        return formatStatus(list, config.problems.map(formatProblem), config.untrusted);
      },
    });

    if (config.servers.length > 0) {
      ctx.tools.register({
        name: "mcp_read_resource",
        label: "MCP resource",
        description: `Read a resource from an MCP server by its URI, or list a server's resources when uri is left out. Servers: ${config.servers.map((s) => s.name).join(", ")}.`,
        parameters: Type.Object({
          server: Type.String({ description: "The MCP server's name" }),
          uri: Type.Optional(Type.String({ description: "The resource URI; leave out to list the server's resources" })),
        }),
        readOnly: true,
        async execute(args, run) {
          if (!manager) throw new Error("MCP servers have not started yet");
          await ready;
          return manager.readResource(args.server, args.uri, run.signal);
        },
      });
    }
  },
});

function formatStatus(list: readonly ServerStatus[], problems: string[], untrusted: string[]): string {
  const lines: string[] = [];
  if (list.length === 0) lines.push("No MCP servers configured. Add one: coil mcp add <name> -- <command...>  (docs/mcp.md)");
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

let cachedVersion: string | undefined;
function version(): string {
  try {
    return (cachedVersion ??= (JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as { version: string }).version);
  } catch {
    return "0.0.0";
  }
}
