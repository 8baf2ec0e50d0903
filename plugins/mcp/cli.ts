/**
 * `coil mcp list | get <name> | add <name> -- <command...> | add <name> --url <url> | remove <name>`:
 * edits `$COIL_HOME/mcp.json`, or `.coil/mcp.json` with `--project`. Same format as Claude Code's `.mcp.json`.
 */
import { join } from "node:path";
import { projectRoot } from "../../lib/project.js";
import type { CliStreams } from "../../kernel/index.js";
import {
  checkServer,
  formatProblem,
  loadServers,
  readRaw,
  serverLine,
  userFile,
  writeRaw,
  type ConfigSources,
} from "./config.js";

export const USAGE = `coil mcp list [--json]
coil mcp get <name>
coil mcp add <name> [--project] [--env KEY=VALUE]... -- <command> [args...]
coil mcp add <name> [--project] --url <url> [--transport http|sse] [--header "Name: value"]...
coil mcp remove <name> [--project]`;

export function mcpCommand(argv: string[], io: CliStreams, sources: Omit<ConfigSources, "cwd" | "env">): number {
  const out = (s: string) => io.stdout.write(s.endsWith("\n") ? s : `${s}\n`);
  const fail = (s: string) => {
    io.stderr.write(`coil mcp: ${s}\n`);
    return 2;
  };
  const [verb, ...rest] = argv;
  const dash = rest.indexOf("--");
  const opts = dash < 0 ? rest : rest.slice(0, dash);
  const command = dash < 0 ? [] : rest.slice(dash + 1);
  const project = opts.includes("--project");
  const file = project ? join(projectRoot(io.cwd), ".coil", "mcp.json") : userFile(sources.home);
  const values = (flag: string) =>
    opts.flatMap((a, i) => (a === flag && opts[i + 1] !== undefined ? [opts[i + 1]!] : []));
  const positional = opts.filter(
    (a, i) => !a.startsWith("--") && !["--env", "--url", "--header", "--transport"].includes(opts[i - 1] ?? ""),
  );
  const name = positional[0];
  // Variables stay unexpanded: listing must not print secrets.
  const configured = () => loadServers({ ...sources, cwd: io.cwd, env: io.env }, { expand: false });
  try {
    switch (verb) {
      case "list": {
        const { servers, problems, untrusted, notes } = configured();
        if (opts.includes("--json")) {
          out(JSON.stringify({ servers, problems, untrusted, notes }, null, 2));
          return 0;
        }
        if (servers.length === 0)
          out(`no MCP servers configured; add one: coil mcp add <name> -- <command...>  (see docs/mcp.md)`);
        for (const s of servers) out(serverLine(s));
        for (const f of untrusted) out(`not loaded (project not trusted; coil trust): ${f}`);
        for (const p of problems) io.stderr.write(`coil mcp: ${formatProblem(p)}\n`);
        for (const n of notes) io.stderr.write(`coil mcp: note: ${formatProblem(n)}\n`);
        return problems.length ? 1 : 0;
      }
      case "get": {
        if (!name) return fail("usage: coil mcp get <name>");
        const s = configured().servers.find((x) => x.name === name);
        if (!s) return fail(`no MCP server named '${name}' (coil mcp list shows them)`);
        out(JSON.stringify(s, null, 2));
        return 0;
      }
      case "add": {
        if (!name) return fail(`usage:\n${USAGE}`);
        if (!/^[A-Za-z0-9_.-]+$/.test(name))
          return fail(`a server name may use letters, digits, '_', '-' and '.' (got '${name}')`);
        const url = values("--url")[0];
        let entry: Record<string, unknown>;
        if (url) {
          if (command.length) return fail("give either --url or `-- <command...>`, not both");
          const headers = Object.fromEntries(
            values("--header").map((h) => [h.slice(0, h.indexOf(":")).trim(), h.slice(h.indexOf(":") + 1).trim()]),
          );
          entry = {
            type: values("--transport")[0] ?? "http",
            url,
            ...(Object.keys(headers).length ? { headers } : {}),
          };
        } else {
          if (command.length === 0) return fail(`give the server's command after --, or --url:\n${USAGE}`);
          const env = Object.fromEntries(
            values("--env").map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]),
          );
          entry = { command: command[0], args: command.slice(1), ...(Object.keys(env).length ? { env } : {}) };
        }
        const checked = checkServer(entry, `mcpServers.${name}`);
        if (checked.problems.length) return fail(checked.problems.map((p) => `${p.key}: ${p.message}`).join("; "));
        const data = readRaw(file);
        const servers = data.mcpServers as Record<string, unknown>;
        const existed = name in servers;
        servers[name] = entry;
        writeRaw(file, data);
        out(`${existed ? "replaced" : "added"} MCP server '${name}' in ${file}`);
        return 0;
      }
      case "remove": {
        if (!name) return fail("usage: coil mcp remove <name> [--project]");
        const data = readRaw(file);
        const servers = data.mcpServers as Record<string, unknown>;
        if (!(name in servers))
          return fail(`no MCP server named '${name}' in ${file}${project ? "" : " (a project server? add --project)"}`);
        delete servers[name];
        writeRaw(file, data);
        out(`removed MCP server '${name}' from ${file}`);
        return 0;
      }
      default:
        out(USAGE);
        return verb === undefined || verb === "help" || verb === "--help" ? 0 : 2;
    }
  } catch (error) {
    return fail(`${(error as Error).message}`);
  }
}
