/**
 * `coil mcp list | get <name> | add <name> -- <command...> | add <name> --url <url> | remove <name>`:
 * edits `$COIL_HOME/mcp.json`, or `.coil/mcp.json` with `--project`. Same format as Claude Code's `.mcp.json`.
 * The command line parses the arguments (lib/command-line.ts).
 */
import { join } from "node:path";
import { projectRoot } from "../../lib/locations.js";
import type { CliStreams } from "../../api/index.js";
import type { Subcommand } from "../../lib/command-line.js";
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

type Sources = Omit<ConfigSources, "cwd" | "env">;

/** The `coil mcp` subcommand: list, get, add, remove (the command line parses their arguments). */
export function mcpSubcommand(sources: (io: CliStreams) => Sources): Subcommand {
  const project = { name: "project", description: "this project's .coil/mcp.json, not $COIL_HOME/mcp.json" };
  return {
    name: "mcp",
    description: "MCP servers: list, get, add and remove them in mcp.json (Claude Code's .mcp.json format)",
    commands: [
      {
        name: "list",
        description: "list the configured servers (variables unexpanded) and problems",
        options: [{ name: "json", description: "print JSON: { servers, problems, untrusted }" }],
        run: (_args, io, options) => list(io, sources(io), options.json === true),
      },
      {
        name: "get",
        arguments: "<name>",
        description: "print one server's configuration as JSON",
        run: ([name], io) => get(io, sources(io), name!),
      },
      {
        name: "add",
        arguments: "<name> [command...]",
        description: "add (or replace) a server: its command after --, or --url for a remote one",
        options: [
          project,
          { name: "env", type: "list", valueName: "KEY=VALUE", description: "a variable for the server (repeatable)" },
          { name: "url", type: "string", valueName: "url", description: "a remote server's URL" },
          {
            name: "transport",
            type: "string",
            valueName: "kind",
            choices: ["http", "sse"],
            description: "a remote server's transport (default: http)",
          },
          { name: "header", type: "list", valueName: "Name: value", description: "an HTTP header (repeatable)" },
        ],
        help: `Examples:
  coil mcp add files -- npx -y @modelcontextprotocol/server-filesystem .
  coil mcp add docs --url https://example.com/mcp --header "Authorization: Bearer \${TOKEN}"
Everything after -- is the server's command and its arguments.`,
        run: ([name, ...command], io, options) => add(io, sources(io), name!, command, options),
      },
      {
        name: "remove",
        arguments: "<name>",
        description: "remove a server",
        options: [project],
        run: ([name], io, options) => remove(io, sources(io), name!, options.project === true),
      },
    ],
  };
}

const out = (io: CliStreams, s: string) => void io.stdout.write(s.endsWith("\n") ? s : `${s}\n`);
const fail = (io: CliStreams, s: string) => {
  io.stderr.write(`coil mcp: ${s}\n`);
  return 2;
};
const fileOf = (io: CliStreams, sources: Sources, project: boolean) =>
  project ? join(projectRoot(io.cwd), ".coil", "mcp.json") : userFile(sources.home);
// Variables stay unexpanded: listing must not print secrets.
const configured = (io: CliStreams, sources: Sources) =>
  loadServers({ ...sources, cwd: io.cwd, env: io.env }, { expand: false });

function guarded(io: CliStreams, fn: () => number): number {
  try {
    return fn();
  } catch (error) {
    return fail(io, `${(error as Error).message}`);
  }
}

function list(io: CliStreams, sources: Sources, json: boolean): number {
  return guarded(io, () => {
    const { servers, problems, untrusted, notes } = configured(io, sources);
    if (json) {
      out(io, JSON.stringify({ servers, problems, untrusted, notes }, null, 2));
      return 0;
    }
    if (servers.length === 0)
      out(io, "no MCP servers configured; add one: coil mcp add <name> -- <command...>  (see docs/mcp.md)");
    for (const s of servers) out(io, serverLine(s));
    for (const f of untrusted) out(io, `not loaded (project not trusted; coil trust): ${f}`);
    for (const p of problems) io.stderr.write(`coil mcp: ${formatProblem(p)}\n`);
    for (const n of notes) io.stderr.write(`coil mcp: note: ${formatProblem(n)}\n`);
    return problems.length ? 1 : 0;
  });
}

function get(io: CliStreams, sources: Sources, name: string): number {
  return guarded(io, () => {
    const s = configured(io, sources).servers.find((x) => x.name === name);
    if (!s) return fail(io, `no MCP server named '${name}' (coil mcp list shows them)`);
    out(io, JSON.stringify(s, null, 2));
    return 0;
  });
}

function add(
  io: CliStreams,
  sources: Sources,
  name: string,
  command: string[],
  options: Readonly<Record<string, unknown>>,
): number {
  return guarded(io, () => {
    if (!/^[A-Za-z0-9_.-]+$/.test(name))
      return fail(io, `a server name may use letters, digits, '_', '-' and '.' (got '${name}')`);
    const url = options.url as string | undefined;
    const pairs = (key: string, sep: string) =>
      ((options[key] as string[] | undefined) ?? []).map((v) => [
        v.slice(0, v.indexOf(sep)).trim(),
        v.slice(v.indexOf(sep) + 1).trim(),
      ]);
    let entry: Record<string, unknown>;
    if (url) {
      if (command.length) return fail(io, "give either --url or `-- <command...>`, not both");
      const headers = Object.fromEntries(pairs("header", ":"));
      entry = {
        type: (options.transport as string | undefined) ?? "http",
        url,
        ...(Object.keys(headers).length ? { headers } : {}),
      };
    } else {
      if (command.length === 0)
        return fail(io, "give the server's command after --, or --url (coil mcp add --help shows examples)");
      const env = Object.fromEntries(pairs("env", "="));
      entry = { command: command[0], args: command.slice(1), ...(Object.keys(env).length ? { env } : {}) };
    }
    const checked = checkServer(entry, `mcpServers.${name}`);
    if (checked.problems.length) return fail(io, checked.problems.map((p) => `${p.key}: ${p.message}`).join("; "));
    const file = fileOf(io, sources, options.project === true);
    const data = readRaw(file);
    const servers = data.mcpServers as Record<string, unknown>;
    const existed = name in servers;
    servers[name] = entry;
    writeRaw(file, data);
    out(io, `${existed ? "replaced" : "added"} MCP server '${name}' in ${file}`);
    return 0;
  });
}

function remove(io: CliStreams, sources: Sources, name: string, project: boolean): number {
  return guarded(io, () => {
    const file = fileOf(io, sources, project);
    const data = readRaw(file);
    const servers = data.mcpServers as Record<string, unknown>;
    if (!(name in servers))
      return fail(io, `no MCP server named '${name}' in ${file}${project ? "" : " (a project server? add --project)"}`);
    delete servers[name];
    writeRaw(file, data);
    out(io, `removed MCP server '${name}' from ${file}`);
    return 0;
  });
}
