/**
 * MCP server configuration: Claude Code's `.mcp.json` format (`{"mcpServers": {...}}`) from the project,
 * `$COIL_HOME/mcp.json` and `.coil/mcp.json`, and the plugin's `servers` option. Reading is synchronous
 * and needs no MCP SDK, so a run without servers never loads it. Problems name the file, line and key.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { projectRoot } from "../../lib/locations.js";
import { LineCounter, parseDocument } from "yaml";
import { claudePluginMcpServers, MCP_SERVER_KEYS } from "../../lib/claude-plugins.js";

export interface StdioServer {
  type: "stdio";
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}
export interface RemoteServer {
  /** `http` is Streamable HTTP, falling back to the legacy SSE transport; `sse` is SSE only. */
  type: "http" | "sse";
  url: string;
  headers: Record<string, string>;
}
export type ServerTransport = StdioServer | RemoteServer;

export interface ServerConfig {
  name: string;
  transport: ServerTransport;
  /** Start-up timeout for this server (ms); the plugin's `startupTimeout` when unset. */
  startupTimeout?: number;
  /** Per-call timeout for this server's tools (ms); the plugin's `toolTimeout` when unset. */
  toolTimeout?: number;
  /** Send this server's tools with every request, never deferred behind tool search (Claude Code's `alwaysLoad`). */
  alwaysLoad?: boolean;
  /** Where it was configured: a file, or `preset`. */
  source: string;
}

export interface ConfigProblem {
  file: string;
  line?: number;
  key?: string;
  message: string;
}

/** One configured server on a line: name, transport, command or URL, and where it was configured (`coil mcp list`, `coil doctor`). */
export const serverLine = (s: ServerConfig): string =>
  `${s.name}  ${s.transport.type}  ${s.transport.type === "stdio" ? [s.transport.command, ...s.transport.args].join(" ") : s.transport.url}  (${s.source})`;

/** Start-up time a server gets when nothing else says: 10 s, and 60 s for a package runner (a first run downloads the server). */
export const DEFAULT_STARTUP_MS = 10_000;
export const RUNNER_STARTUP_MS = 60_000;

/**
 * The package runner a stdio server is started through (`npx`, `uvx`, `bunx`, `pnpm dlx`, ...), which
 * downloads the server on its first run; undefined for any other command.
 */
export function packageRunner(t: ServerTransport): string | undefined {
  if (t.type !== "stdio") return undefined;
  const cmd = basename(t.command).replace(/\.(cmd|exe)$/i, "");
  const [a, b] = t.args;
  if (["npx", "pnpx", "bunx", "uvx"].includes(cmd)) return cmd;
  if ((cmd === "pnpm" || cmd === "yarn") && a === "dlx") return `${cmd} dlx`;
  if (cmd === "bun" && a === "x") return "bun x";
  if (cmd === "npm" && (a === "exec" || a === "x")) return `npm ${a}`;
  if (cmd === "pipx" && a === "run") return "pipx run";
  if (cmd === "uv" && a === "tool" && b === "run") return "uv tool run";
  return undefined;
}

/** `MCP_TIMEOUT` (ms, as Claude Code reads it), when set to a positive number. */
export function envStartupTimeout(env: NodeJS.ProcessEnv): number | undefined {
  const n = Number(env.MCP_TIMEOUT);
  return env.MCP_TIMEOUT && Number.isFinite(n) && n > 0 ? n : undefined;
}

/**
 * How long a server may take to start (ms), and what set it: the server's own `startupTimeout`, then
 * `MCP_TIMEOUT`, then the plugin's `startupTimeout` option, then the default (60 s for a package runner).
 */
export function startupTimeoutOf(
  s: Pick<ServerConfig, "startupTimeout" | "transport">,
  env: NodeJS.ProcessEnv,
  option: number | undefined,
): { ms: number; from: string } {
  if (s.startupTimeout) return { ms: s.startupTimeout, from: "its startupTimeout" };
  const fromEnv = envStartupTimeout(env);
  if (fromEnv) return { ms: fromEnv, from: "MCP_TIMEOUT" };
  if (option) return { ms: option, from: "the mcp plugin's startupTimeout option" };
  const runner = packageRunner(s.transport);
  return runner
    ? { ms: RUNNER_STARTUP_MS, from: `the default for ${runner}, a package runner` }
    : { ms: DEFAULT_STARTUP_MS, from: "the default" };
}

export const formatProblem = (p: ConfigProblem): string =>
  `${p.file}${p.line ? `:${p.line}` : ""}${p.key ? ` (${p.key})` : ""}: ${p.message}`;

const TRANSPORTS = ["stdio", "http", "sse", "streamable-http"];

/** Check one raw server entry; `path` is the key path used in messages (e.g. `mcpServers.github`). */
export function checkServer(
  raw: unknown,
  path: string,
): {
  problems: { key: string; message: string }[];
  /** Keys coil does not know (`_docs`, a comment as Claude Code users write them): ignored, as Claude Code ignores them. */
  notes: { key: string; message: string }[];
  entry?: Omit<ServerConfig, "name" | "source">;
  disabled?: boolean;
} {
  const problems: { key: string; message: string }[] = [];
  const notes: { key: string; message: string }[] = [];
  const bad = (key: string, message: string) => void problems.push({ key, message });
  if (!raw || typeof raw !== "object" || Array.isArray(raw))
    return {
      problems: [{ key: path, message: "must be an object with `command` (stdio) or `url` (http/sse)" }],
      notes,
    };
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (!MCP_SERVER_KEYS.has(k))
      notes.push({
        key: `${path}.${k}`,
        message: `not an MCP server setting coil knows; ignored (known: ${[...MCP_SERVER_KEYS].join(", ")})`,
      });
  const strings = (key: string) => {
    const v = o[key];
    if (v === undefined) return {};
    if (!v || typeof v !== "object" || Array.isArray(v) || Object.values(v).some((x) => typeof x !== "string")) {
      bad(`${path}.${key}`, "must be an object of strings");
      return {};
    }
    return v as Record<string, string>;
  };
  const timeout = (key: string) => {
    const v = o[key];
    if (v !== undefined && (typeof v !== "number" || !(v > 0)))
      bad(`${path}.${key}`, "must be a positive number of milliseconds");
    return typeof v === "number" && v > 0 ? v : undefined;
  };
  const type = o.type ?? (o.url !== undefined ? "http" : "stdio");
  if (typeof type !== "string" || !TRANSPORTS.includes(type))
    bad(`${path}.type`, `must be one of stdio, http, sse (got ${JSON.stringify(o.type)})`);
  const startupTimeout = timeout("startupTimeout");
  const toolTimeout = timeout("toolTimeout");
  if (o.disabled !== undefined && typeof o.disabled !== "boolean") bad(`${path}.disabled`, "must be true or false");
  if (o.alwaysLoad !== undefined && typeof o.alwaysLoad !== "boolean")
    bad(`${path}.alwaysLoad`, "must be true or false");
  let transport: ServerTransport | undefined;
  if (type === "stdio") {
    if (typeof o.command !== "string" || !o.command.trim())
      bad(`${path}.command`, "must be a non-empty string (the program to start)");
    if (o.args !== undefined && (!Array.isArray(o.args) || o.args.some((a) => typeof a !== "string")))
      bad(`${path}.args`, "must be an array of strings");
    if (o.cwd !== undefined && typeof o.cwd !== "string") bad(`${path}.cwd`, "must be a string");
    if (o.url !== undefined) bad(`${path}.url`, "a stdio server has no url (set `type: http` or remove `command`)");
    transport = {
      type: "stdio",
      command: String(o.command ?? ""),
      args: Array.isArray(o.args) ? (o.args as string[]) : [],
      env: strings("env"),
      cwd: o.cwd as string | undefined,
    };
  } else if (typeof type === "string" && TRANSPORTS.includes(type)) {
    if (typeof o.url !== "string" || !/^https?:\/\//.test(o.url))
      bad(`${path}.url`, "must be an http:// or https:// URL");
    if (o.command !== undefined) bad(`${path}.command`, `a ${type} server has no command`);
    transport = { type: type === "sse" ? "sse" : "http", url: String(o.url ?? ""), headers: strings("headers") };
  }
  if (problems.length || !transport) return { problems, notes };
  const entry = { transport, startupTimeout, toolTimeout, ...(o.alwaysLoad === true ? { alwaysLoad: true } : {}) };
  return { problems, notes, entry, disabled: o.disabled === true };
}

/** `${VAR}` and `${VAR:-default}`; an unset variable without a default is reported through `missing`. */
export function expandVars(text: string, env: NodeJS.ProcessEnv, missing: (name: string) => void): string {
  return text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (_m, name: string, fallback: string | undefined) => {
      const value = env[name];
      if (value !== undefined && value !== "") return value;
      if (fallback !== undefined) return fallback;
      missing(name);
      return "";
    },
  );
}

/** Expand variables in command, args, env, url and headers. Undefined (with problems) when a variable is unset. */
export function expandServer(
  server: ServerConfig,
  env: NodeJS.ProcessEnv,
  report: (key: string, message: string) => void,
): ServerConfig | undefined {
  const unset = new Set<string>();
  const x = (s: string) => expandVars(s, env, (n) => unset.add(n));
  const map = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, x(v)]));
  const t = server.transport;
  const transport: ServerTransport =
    t.type === "stdio"
      ? { ...t, command: x(t.command), args: t.args.map(x), env: map(t.env), cwd: t.cwd && x(t.cwd) }
      : { ...t, url: x(t.url), headers: map(t.headers) };
  if (unset.size) {
    report(
      server.name,
      `environment variable${unset.size > 1 ? "s" : ""} ${[...unset].map((n) => `\${${n}}`).join(", ")} not set (use \${NAME:-default} for a default); server '${server.name}' is not started`,
    );
    return undefined;
  }
  return { ...server, transport };
}

/** Read one `mcp.json`-format file. Missing file: no servers, no problem. Any problem: no servers from it. */
export function readConfigFile(file: string): {
  servers: ServerConfig[];
  disabled: string[];
  problems: ConfigProblem[];
  notes?: ConfigProblem[];
} {
  if (!existsSync(file)) return { servers: [], disabled: [], problems: [] };
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    return { servers: [], disabled: [], problems: [{ file, message: `cannot read: ${(e as Error).message}` }] };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    const message = (e as Error).message;
    const lc = /line (\d+) column (\d+)/.exec(message);
    const pos = /position (\d+)/.exec(message);
    const line = lc ? Number(lc[1]) : pos ? text.slice(0, Number(pos[1])).split("\n").length : undefined;
    return {
      servers: [],
      disabled: [],
      problems: [{ file, line, message: `not valid JSON: ${message}; none of its servers are started` }],
    };
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  const lineOf = (key: string): number | undefined => {
    const parts = key.split(".");
    for (let n = parts.length; n > 0; n--) {
      const node = doc.getIn(parts.slice(0, n), true) as { range?: [number, number, number] } | undefined;
      const pair = n === parts.length ? findKey(doc, parts) : undefined;
      const at = pair ?? node?.range?.[0];
      if (at !== undefined) return lines.linePos(at).line;
    }
    return undefined;
  };
  const problems: ConfigProblem[] = [];
  const root = data as Record<string, unknown>;
  if (
    !root ||
    typeof root !== "object" ||
    Array.isArray(root) ||
    !root.mcpServers ||
    typeof root.mcpServers !== "object" ||
    Array.isArray(root.mcpServers)
  ) {
    return {
      servers: [],
      disabled: [],
      problems: [
        {
          file,
          line: 1,
          key: "mcpServers",
          message: 'expected an object {"mcpServers": {"<name>": {...}}}; none of its servers are started',
        },
      ],
    };
  }
  const servers: ServerConfig[] = [];
  const disabled: string[] = [];
  const notes: ConfigProblem[] = [];
  for (const [name, raw] of Object.entries(root.mcpServers as Record<string, unknown>)) {
    const key = `mcpServers.${name}`;
    if (!/^[A-Za-z0-9_.-]+$/.test(name))
      problems.push({
        file,
        line: lineOf(key),
        key,
        message: "a server name may use letters, digits, '_', '-' and '.'",
      });
    const checked = checkServer(raw, key);
    for (const p of checked.problems) problems.push({ file, line: lineOf(p.key), key: p.key, message: p.message });
    for (const n of checked.notes) notes.push({ file, line: lineOf(n.key), key: n.key, message: n.message });
    if (checked.entry && !checked.disabled) servers.push({ name, source: file, ...checked.entry });
    if (checked.disabled) disabled.push(name);
  }
  if (problems.length)
    return {
      servers: [],
      disabled: [],
      problems: problems.map((p, i) =>
        i === problems.length - 1 ? { ...p, message: `${p.message}; none of this file's servers are started` } : p,
      ),
    };
  return { servers, disabled, problems, notes };
}

/** Offset of the key itself (not its value) in the document, for a line that points at the key. */
function findKey(doc: ReturnType<typeof parseDocument>, parts: string[]): number | undefined {
  const parent =
    parts.length > 1
      ? (doc.getIn(parts.slice(0, -1), true) as
          | { items?: { key?: { value?: unknown; range?: number[] } }[] }
          | undefined)
      : (doc.contents as { items?: { key?: { value?: unknown; range?: number[] } }[] });
  const item = parent?.items?.find((i) => i.key?.value === parts.at(-1));
  return item?.key?.range?.[0];
}

export interface ConfigSources {
  /** The plugin's `servers` option. */
  preset: Record<string, unknown>;
  /** `$COIL_HOME`. */
  home: string;
  cwd: string;
  trusted: boolean;
  env: NodeJS.ProcessEnv;
}

export const userFile = (home: string) => join(home, "mcp.json");
/** The project's files, at its root (lib/project.ts) even when coil starts in a subdirectory. */
export const projectFiles = (cwd: string) => [
  join(projectRoot(cwd), ".coil", "mcp.json"),
  join(projectRoot(cwd), ".mcp.json"),
];

/**
 * Every configured server, later sources overriding earlier ones by name: preset → `$COIL_HOME/mcp.json`
 * → `.coil/mcp.json` → `.mcp.json` (the project files only when the project is trusted). With
 * `expand: false`, `${VAR}` references stay as written (for showing the configuration without secrets).
 */
export function loadServers(
  src: ConfigSources,
  o: { expand?: boolean } = {},
): { servers: ServerConfig[]; problems: ConfigProblem[]; untrusted: string[]; notes: ConfigProblem[] } {
  const byName = new Map<string, ServerConfig>();
  const problems: ConfigProblem[] = [];
  const notes: ConfigProblem[] = [];
  for (const [name, raw] of Object.entries(src.preset)) {
    const checked = checkServer(raw, `servers.${name}`);
    for (const p of checked.problems) problems.push({ file: "preset option mcp", key: p.key, message: p.message });
    for (const n of checked.notes) notes.push({ file: "preset option mcp", key: n.key, message: n.message });
    if (checked.entry && !checked.disabled) byName.set(name, { name, source: "preset", ...checked.entry });
  }
  // Installed Claude Code plugins' `.mcp.json` / plugin.json `mcpServers` (the user's own files below override them by name).
  for (const p of claudePluginMcpServers({ home: src.home, cwd: src.cwd, trusted: src.trusted }, (message) =>
    problems.push({ file: "installed Claude Code plugin", message }),
  )) {
    for (const [name, raw] of Object.entries(p.servers)) {
      const checked = checkServer(raw, `mcpServers.${name}`);
      for (const c of checked.problems) problems.push({ file: p.source, key: c.key, message: c.message });
      for (const n of checked.notes) notes.push({ file: p.source, key: n.key, message: n.message });
      if (checked.entry && !checked.disabled) byName.set(name, { name, source: p.source, ...checked.entry });
    }
  }
  const untrusted = projectFiles(src.cwd).filter((f) => existsSync(f));
  // Servers added with `claude mcp add` (Claude Code's ~/.claude.json): its user scope before coil's own
  // files, its per-project (local) scope after the project's files, as Claude Code ranks them; local
  // servers start only in a trusted project, like the project's own.
  const claudeCode = claudeCodeServers(src.env, src.cwd);
  if (claudeCode.local.length && !src.trusted) untrusted.push(claudeCode.localSource);
  const add = (read: ReturnType<typeof readConfigFile>) => {
    problems.push(...read.problems);
    notes.push(...(read.notes ?? []));
    for (const s of read.servers) byName.set(s.name, s);
    for (const name of read.disabled) byName.delete(name);
  };
  add(claudeCode.user);
  for (const file of [userFile(src.home), ...(src.trusted ? projectFiles(src.cwd) : [])]) add(readConfigFile(file));
  if (src.trusted) add(claudeCode.localRead);
  if (src.env.MCP_TIMEOUT && !envStartupTimeout(src.env))
    problems.push({
      file: "environment",
      key: "MCP_TIMEOUT",
      message: `must be a positive number of milliseconds (got ${JSON.stringify(src.env.MCP_TIMEOUT)}); it is ignored`,
    });
  const servers: ServerConfig[] = [];
  for (const s of byName.values()) {
    if (o.expand === false) {
      servers.push(s);
      continue;
    }
    const expanded = expandServer(s, src.env, (key, message) =>
      problems.push({
        file: s.source === "preset" ? "preset option mcp" : s.source,
        key: s.source === "preset" ? `servers.${key}` : `mcpServers.${key}`,
        message,
      }),
    );
    if (expanded) servers.push(expanded);
  }
  return { servers, problems, untrusted: src.trusted ? [] : untrusted, notes };
}

/**
 * The servers of Claude Code's `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json`): the top-level
 * `mcpServers` (`claude mcp add --scope user`) and `projects["<project root>"].mcpServers` (the default
 * `local` scope), checked as a `.mcp.json` is.
 */
function claudeCodeServers(
  env: NodeJS.ProcessEnv,
  cwd: string,
): {
  user: ReturnType<typeof readConfigFile>;
  localRead: ReturnType<typeof readConfigFile>;
  local: string[];
  localSource: string;
} {
  const none = { servers: [], disabled: [], problems: [] };
  const file = env.CLAUDE_CONFIG_DIR
    ? join(env.CLAUDE_CONFIG_DIR, ".claude.json")
    : join(env.HOME || homedir(), ".claude.json");
  const root = projectRoot(cwd);
  const localSource = `${file} (projects["${root}"].mcpServers)`;
  let data: { mcpServers?: unknown; projects?: Record<string, { mcpServers?: unknown }> } | undefined;
  try {
    data = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined;
  } catch (error) {
    return {
      user: {
        ...none,
        problems: [{ file, message: `not valid JSON: ${(error as Error).message}; its servers are not started` }],
      },
      localRead: none,
      local: [],
      localSource,
    };
  }
  const read = (servers: unknown, source: string): ReturnType<typeof readConfigFile> => {
    if (!servers || typeof servers !== "object" || Array.isArray(servers)) return none;
    const out: ReturnType<typeof readConfigFile> = { servers: [], disabled: [], problems: [], notes: [] };
    for (const [name, raw] of Object.entries(servers as Record<string, unknown>)) {
      const checked = checkServer(raw, `mcpServers.${name}`);
      for (const p of checked.problems) out.problems.push({ file: source, key: p.key, message: p.message });
      for (const n of checked.notes) out.notes!.push({ file: source, key: n.key, message: n.message });
      if (checked.entry && !checked.disabled) out.servers.push({ name, source, ...checked.entry });
    }
    return out;
  };
  const local = data?.projects?.[root]?.mcpServers;
  return {
    user: read(data?.mcpServers, file),
    localRead: read(local, localSource),
    local: local && typeof local === "object" ? Object.keys(local) : [],
    localSource,
  };
}

/** Raw entries of a config file, for `coil mcp add/remove` (which keep the file's other content). */
export function readRaw(file: string): Record<string, unknown> {
  if (!existsSync(file)) return { mcpServers: {} };
  const data = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  if (!data || typeof data !== "object" || Array.isArray(data)) throw new Error(`${file}: expected a JSON object`);
  if (!data.mcpServers || typeof data.mcpServers !== "object") data.mcpServers = {};
  return data;
}

export function writeRaw(file: string, data: Record<string, unknown>): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify(data, null, 2) + "\n", { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}
