/**
 * mcp: an MCP client. Servers from `.mcp.json` (trusted projects), `.coil/mcp.json`, `$COIL_HOME/mcp.json`
 * and the `servers` option connect in parallel at start; their tools become `mcp__<server>__<tool>`, their
 * prompts `/mcp__<server>__<prompt>` commands, their resources readable with `mcp_read_resource`.
 * `/mcp` shows them; `coil mcp ...` edits the configuration. The SDK loads only when a server is
 * configured. See docs/mcp.md.
 */
import { definePlugin, Stage, Type, type Static } from "../../api/index.js";
import { addDoctorSection } from "../../lib/doctor.js";
import { coilHome } from "../../lib/paths.js";
import { mcpSubcommand } from "./cli.js";
import { McpClient } from "./client.js";
import { formatProblem, loadServers, serverLine, startupTimeoutOf } from "./config.js";
import { locationsOf } from "../../lib/locations.js";

export type { McpService, ServerStatus } from "./api.js";

export const McpOptions = Type.Object({
  /** Servers in `.mcp.json` format (`name: { command, args, env, cwd } | { type, url, headers }`). */
  servers: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
  /**
   * How long a server may take to start and answer `initialize` and the first listings (ms). Unset: 10 s,
   * 60 s for package runners (npx, uvx, bunx, pnpm dlx); `MCP_TIMEOUT` and a server's own `startupTimeout` win.
   */
  startupTimeout: Type.Optional(Type.Number({ minimum: 1 })),
  /** How long one tool call may take (ms). */
  toolTimeout: Type.Number({ minimum: 1, default: 120_000 }),
});
export type McpOptions = Static<typeof McpOptions>;

export default definePlugin({
  id: "mcp",
  description: "MCP client: servers' tools, prompts and resources; /mcp and coil mcp",
  options: McpOptions,
  setup(ctx) {
    const home = locationsOf(ctx).coilHome;
    const sources = { preset: ctx.options.servers, home, trusted: ctx.projectTrusted };
    const client = new McpClient(ctx, loadServers({ ...sources, cwd: ctx.cwd, env: process.env }), home);
    ctx.subcommands.register(mcpSubcommand((io) => ({ ...sources, home: coilHome(io.env) })));
    // `coil doctor`: what is configured and from where (doctor starts no server: `/mcp` shows live status).
    addDoctorSection(ctx, {
      title: "MCP servers",
      report: () => {
        const { servers, untrusted, problems, notes } = client.config;
        const lines = servers.map((s) => {
          const { ms, from } = startupTimeoutOf(s, process.env, ctx.options.startupTimeout);
          return `${serverLine(s)}  start-up up to ${ms / 1000} s (${from})`;
        });
        if (!servers.length) lines.push("none configured (coil mcp add <name> -- <command...>; docs/mcp.md)");
        for (const f of untrusted) lines.push(`not loaded (project not trusted; coil trust): ${f}`);
        for (const p of problems) lines.push(`problem: ${formatProblem(p)}`);
        for (const n of notes ?? []) lines.push(`note: ${formatProblem(n)}`);
        return lines.join("\n");
      },
    });
    ctx.onStart((_agent, _io, info) => client.start(info.mode));
    ctx.onStop(() => client.stop());
    ctx.tap("before_request", (request) => client.beforeRequest(request), { stage: Stage.EARLY });
    ctx.services.provide("mcp", client.service);
    ctx.commands.register({
      name: "mcp",
      description: "MCP servers: status, tool counts, last error; `/mcp reconnect <name>`",
      argumentHint: "[reconnect <name>]",
      run: (args) => client.command(args),
    });
    // `mcp_read_resource` joins the MCP tools once a connected server offers resources (McpManager.toolDefinitions).
  },
});
