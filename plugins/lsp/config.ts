/**
 * Language server configuration: the built-in TypeScript and Python servers, servers of installed
 * Claude Code plugins (`.lsp.json`, plugin.json `lspServers`), and the plugin's `servers` option, whose
 * entries may be written in Claude Code's `.lsp.json` shape or opencode's `lsp` shape. Reading is
 * synchronous and loads no LSP code, so a run that never touches a file of a configured language pays
 * only for this file. Also: which server handles a file, the root it runs in, and where its binary is.
 */
import { accessSync, constants, existsSync } from "node:fs";
import { delimiter, dirname, extname, isAbsolute, join, resolve } from "node:path";
import { claudePluginLspServers } from "../../lib/claude-plugins.js";

export interface ServerSource {
  kind: "built-in" | "preset" | "claude-plugin";
  /** The file that configured it (a preset, `.lsp.json` or plugin.json). */
  file?: string;
  /** The Claude Code plugin it came from. */
  plugin?: string;
}

export interface ServerConfig {
  name: string;
  command: string;
  args: string[];
  /** Tried in order when `command` is not found (a built-in's alternatives: basedpyright for pyright). */
  alternatives: { command: string; args: string[] }[];
  env: Record<string, string>;
  /** File extension (with the dot, lower case) → LSP language id. */
  extensions: Record<string, string>;
  /** Files whose folder is the server's root: the first marker in this list found at or above the file wins. */
  rootMarkers: string[];
  /** A fixed root (Claude Code's `workspaceFolder`), instead of finding one by the markers. */
  workspaceFolder?: string;
  initializationOptions?: unknown;
  /** Sent with `workspace/didChangeConfiguration` and answered to `workspace/configuration`. */
  settings?: unknown;
  /** ms for the process to start and answer `initialize`. */
  startupTimeout: number;
  /** Restarts after the server died, before coil gives up on it for the session. */
  maxRestarts: number;
  /** How diagnostics are fetched: `auto` picks pull (LSP 3.17), tsserver requests or pushed diagnostics. */
  diagnostics: "auto" | "pull" | "push";
  /** What to install when the binary is missing. */
  install?: string;
  source: ServerSource;
}

export interface ConfigProblem {
  /** Where: a file, or `preset`. */
  where: string;
  server: string;
  message: string;
}

export interface LoadedConfig {
  servers: ServerConfig[];
  /** Built-ins turned off (`name: false` or `disabled: true`), and why they do not run. */
  disabled: { name: string; source: ServerSource }[];
  problems: ConfigProblem[];
}

const TS_EXTENSIONS: Record<string, string> = {
  ".ts": "typescript",
  ".tsx": "typescriptreact",
  ".mts": "typescript",
  ".cts": "typescript",
  ".js": "javascript",
  ".jsx": "javascriptreact",
  ".mjs": "javascript",
  ".cjs": "javascript",
};

/** Language ids for extensions an opencode-style entry lists without naming the language. */
const KNOWN_LANGUAGES: Record<string, string> = {
  ...TS_EXTENSIONS,
  ".py": "python",
  ".pyi": "python",
  ".go": "go",
  ".rs": "rust",
  ".rb": "ruby",
  ".java": "java",
  ".kt": "kotlin",
  ".c": "c",
  ".h": "c",
  ".cc": "cpp",
  ".cpp": "cpp",
  ".cxx": "cpp",
  ".hpp": "cpp",
  ".cs": "csharp",
  ".php": "php",
  ".lua": "lua",
  ".sh": "shellscript",
  ".bash": "shellscript",
  ".vue": "vue",
  ".svelte": "svelte",
  ".json": "json",
  ".css": "css",
  ".html": "html",
  ".zig": "zig",
  ".swift": "swift",
  ".ex": "elixir",
  ".exs": "elixir",
};

const DEFAULTS = { startupTimeout: 30_000, maxRestarts: 3, diagnostics: "auto" as const };

/** The servers coil knows without configuration. */
export function builtinServers(): ServerConfig[] {
  return [
    {
      name: "typescript",
      command: "typescript-language-server",
      args: ["--stdio"],
      alternatives: [],
      env: {},
      extensions: { ...TS_EXTENSIONS },
      rootMarkers: [
        "package-lock.json",
        "pnpm-lock.yaml",
        "yarn.lock",
        "bun.lock",
        "bun.lockb",
        "tsconfig.json",
        "jsconfig.json",
        "package.json",
      ],
      // The second tsserver only answers syntax questions while a project loads: coil asks none.
      initializationOptions: { tsserver: { useSyntaxServer: "never" } },
      ...DEFAULTS,
      install: "npm install --save-dev typescript-language-server typescript (or npm install -g)",
      source: { kind: "built-in" },
    },
    {
      name: "python",
      command: "pyright-langserver",
      args: ["--stdio"],
      alternatives: [{ command: "basedpyright-langserver", args: ["--stdio"] }],
      env: {},
      extensions: { ".py": "python", ".pyi": "python" },
      rootMarkers: ["pyrightconfig.json", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile"],
      ...DEFAULTS,
      install: "npm install --save-dev pyright, or pip install pyright (or basedpyright)",
      source: { kind: "built-in" },
    },
  ];
}

const KEYS = new Set([
  // Claude Code's .lsp.json
  "command",
  "args",
  "extensionToLanguage",
  "transport",
  "env",
  "initializationOptions",
  "settings",
  "workspaceFolder",
  "startupTimeout",
  "shutdownTimeout",
  "restartOnCrash",
  "maxRestarts",
  "loggingConfig",
  // opencode's lsp entries
  "extensions",
  "disabled",
  "initialization",
  // coil's own
  "rootMarkers",
  "diagnostics",
  "install",
]);

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);
const stringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");
const stringMap = (v: unknown): v is Record<string, string> =>
  isObject(v) && Object.values(v).every((x) => typeof x === "string");
const dotted = (ext: string) => (ext.startsWith(".") ? ext : `.${ext}`).toLowerCase();

/**
 * One entry, over `base` (the built-in of the same name, or an earlier layer), or `undefined` with the
 * problems when it cannot be used. `false` or `disabled: true` turns the server off.
 */
export function parseEntry(
  name: string,
  raw: unknown,
  source: ServerSource,
  base: ServerConfig | undefined,
  baseDir: string,
): { server?: ServerConfig; disabled?: boolean; problems: string[] } {
  const problems: string[] = [];
  if (raw === false) return { disabled: true, problems };
  if (!isObject(raw))
    return { problems: ["must be an object with `command` and the extensions it serves, or false to turn it off"] };
  for (const k of Object.keys(raw))
    if (!KEYS.has(k)) problems.push(`unknown key '${k}' (known: ${[...KEYS].join(", ")})`);
  if (raw.disabled === true) return { disabled: true, problems };
  let command = base?.command;
  let args = base?.args ?? [];
  if (typeof raw.command === "string") command = raw.command;
  else if (stringList(raw.command) && raw.command.length > 0) {
    // opencode: the executable and its arguments in one list.
    command = raw.command[0];
    args = raw.command.slice(1);
  } else if (raw.command !== undefined) problems.push("`command` must be a string or a list of strings");
  if (raw.args !== undefined) {
    if (stringList(raw.args)) args = raw.args;
    else problems.push("`args` must be a list of strings");
  }
  let extensions = base?.extensions ?? {};
  const fromClaude = raw.extensionToLanguage;
  const fromList = raw.extensions;
  if (fromClaude !== undefined || fromList !== undefined) extensions = {};
  if (fromClaude !== undefined) {
    if (stringMap(fromClaude)) for (const [e, lang] of Object.entries(fromClaude)) extensions[dotted(e)] = lang;
    else problems.push("`extensionToLanguage` must map extensions to language ids");
  }
  if (fromList !== undefined) {
    if (stringList(fromList))
      for (const e of fromList) extensions[dotted(e)] = KNOWN_LANGUAGES[dotted(e)] ?? dotted(e).slice(1);
    else if (stringMap(fromList)) for (const [e, lang] of Object.entries(fromList)) extensions[dotted(e)] = lang;
    else problems.push("`extensions` must be a list of extensions or a map of extension to language id");
  }
  if (raw.transport !== undefined && raw.transport !== "stdio")
    problems.push(
      `transport '${String(raw.transport)}' is not supported: coil talks to language servers over stdio only`,
    );
  let env = base?.env ?? {};
  if (raw.env !== undefined) {
    if (stringMap(raw.env)) env = { ...env, ...raw.env };
    else problems.push("`env` must map names to strings");
  }
  let rootMarkers = base?.rootMarkers ?? [];
  if (raw.rootMarkers !== undefined) {
    if (stringList(raw.rootMarkers)) rootMarkers = raw.rootMarkers;
    else problems.push("`rootMarkers` must be a list of file names");
  }
  const number = (key: string, fallback: number, min: number) => {
    const v = raw[key];
    if (v === undefined) return fallback;
    if (typeof v === "number" && Number.isFinite(v) && v >= min) return v;
    problems.push(`\`${key}\` must be a number of at least ${min}`);
    return fallback;
  };
  const startupTimeout = number("startupTimeout", base?.startupTimeout ?? DEFAULTS.startupTimeout, 1);
  let maxRestarts = number("maxRestarts", base?.maxRestarts ?? DEFAULTS.maxRestarts, 0);
  if (raw.restartOnCrash === false) maxRestarts = 0;
  let diagnostics = base?.diagnostics ?? DEFAULTS.diagnostics;
  if (raw.diagnostics !== undefined) {
    if (raw.diagnostics === "auto" || raw.diagnostics === "pull" || raw.diagnostics === "push")
      diagnostics = raw.diagnostics;
    else problems.push("`diagnostics` must be auto, pull or push");
  }
  let workspaceFolder = base?.workspaceFolder;
  if (typeof raw.workspaceFolder === "string") workspaceFolder = resolve(baseDir, raw.workspaceFolder);
  if (!command) problems.push("`command` is missing");
  if (Object.keys(extensions).length === 0)
    problems.push("no extensions: give `extensionToLanguage` (Claude Code) or `extensions` (opencode)");
  if (problems.length > 0 || !command) return { problems };
  // A command given as a relative path is relative to the file that configured it.
  const resolved = command.includes("/") && !isAbsolute(command) ? resolve(baseDir, command) : command;
  return {
    problems,
    server: {
      name,
      command: resolved,
      args,
      alternatives: typeof raw.command === "undefined" ? (base?.alternatives ?? []) : [],
      env,
      extensions,
      rootMarkers,
      workspaceFolder,
      initializationOptions: raw.initializationOptions ?? raw.initialization ?? base?.initializationOptions,
      settings: raw.settings ?? base?.settings,
      startupTimeout,
      maxRestarts,
      diagnostics,
      install:
        typeof raw.install === "string" ? raw.install : typeof raw.command === "undefined" ? base?.install : undefined,
      source,
    },
  };
}

export interface LoadSources {
  /** The plugin's `servers` option. */
  preset: Record<string, unknown>;
  /** The preset file that set it, for messages and relative paths. */
  presetFile?: string;
  baseDir: string;
  home: string;
  cwd: string;
  trusted: boolean;
  /** Read servers of installed Claude Code plugins. */
  claudePlugins: boolean;
}

/**
 * Every server, lowest layer first: built-ins, then Claude Code plugins, then the preset. A later entry
 * with the same name replaces (preset: refines) the earlier one; a server configured by a user or a
 * plugin takes a file extension away from a built-in that also claims it, so `.ts` is not checked twice.
 */
export function loadServers(s: LoadSources): LoadedConfig {
  const byName = new Map<string, ServerConfig>();
  for (const b of builtinServers()) byName.set(b.name, b);
  const disabled: LoadedConfig["disabled"] = [];
  const problems: ConfigProblem[] = [];
  const apply = (name: string, raw: unknown, source: ServerSource, baseDir: string) => {
    const where = source.file ?? "preset";
    const base = source.kind === "preset" ? byName.get(name) : undefined;
    const r = parseEntry(name, raw, source, base, baseDir);
    for (const message of r.problems) problems.push({ where, server: name, message });
    if (r.disabled) {
      byName.delete(name);
      disabled.push({ name, source });
    } else if (r.server) byName.set(name, r.server);
  };
  if (s.claudePlugins) {
    const warn = (message: string) => problems.push({ where: "Claude Code plugins", server: "", message });
    for (const p of claudePluginLspServers({ home: s.home, cwd: s.cwd, trusted: s.trusted }, warn))
      for (const [name, raw] of Object.entries(p.servers))
        apply(name, raw, { kind: "claude-plugin", file: p.source, plugin: p.plugin }, p.root);
  }
  for (const [name, raw] of Object.entries(s.preset))
    apply(name, raw, { kind: "preset", file: s.presetFile }, s.baseDir);
  const servers = [...byName.values()];
  // Extensions a configured server claims are taken from the built-ins.
  const claimed = new Set(
    servers.filter((x) => x.source.kind !== "built-in").flatMap((x) => Object.keys(x.extensions)),
  );
  for (const x of servers)
    if (x.source.kind === "built-in")
      x.extensions = Object.fromEntries(Object.entries(x.extensions).filter(([e]) => !claimed.has(e)));
  return { servers: servers.filter((x) => Object.keys(x.extensions).length > 0), disabled, problems };
}

/** Where a server was configured, for `coil doctor` and `/lsp`. */
export function describeSource(source: ServerSource): string {
  if (source.kind === "built-in") return "built-in";
  if (source.kind === "claude-plugin") return `Claude Code plugin ${source.plugin} (${source.file})`;
  return `preset${source.file ? ` ${source.file}` : ""}`;
}

/** The servers for a file, by its extension (several when more than one claims it). */
export function serversFor(servers: readonly ServerConfig[], file: string): ServerConfig[] {
  const ext = extname(file).toLowerCase();
  if (!ext) return [];
  return servers.filter((s) => ext in s.extensions);
}

/**
 * The folder a server runs in for `file`: its fixed `workspaceFolder`, else the nearest folder holding
 * the first of its root markers found at or above the file (up to `stop`, the project root, for a file
 * inside the project), else the project root (or the file's folder, outside the project).
 */
export function findRoot(server: ServerConfig, file: string, projectRoot: string): string {
  if (server.workspaceFolder) return server.workspaceFolder;
  const inside = !isOutside(projectRoot, file);
  const nearest = new Map<string, string>();
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    for (const m of server.rootMarkers) if (!nearest.has(m) && existsSync(join(dir, m))) nearest.set(m, dir);
    if ((inside && dir === projectRoot) || dirname(dir) === dir) break;
  }
  for (const m of server.rootMarkers) {
    const dir = nearest.get(m);
    if (dir) return dir;
  }
  return inside ? projectRoot : dirname(file);
}

const isOutside = (root: string, file: string) => {
  const r = file.startsWith(root.endsWith("/") ? root : `${root}/`);
  return !r && file !== root;
};

const executable = (p: string) => {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** Folders searched for a server binary before PATH: `node_modules/.bin` and virtualenvs from the root up to the project root. */
export function binFolders(root: string, projectRoot: string): string[] {
  const out: string[] = [];
  for (let dir = root; ; dir = dirname(dir)) {
    out.push(join(dir, "node_modules", ".bin"), join(dir, ".venv", "bin"), join(dir, "venv", "bin"));
    if (dir === projectRoot || dirname(dir) === dir || isOutside(projectRoot, dir)) break;
  }
  return out;
}

/** The executable for a command: a path as it is, else the first hit in the bin folders, then PATH. */
export function findExecutable(
  command: string,
  folders: readonly string[],
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (command.includes("/")) return executable(command) ? command : undefined;
  const path = (env.PATH ?? "").split(delimiter).filter(Boolean);
  for (const dir of [...folders, ...path]) {
    const candidate = join(dir, command);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The command line to start a server in `root`: the first of its commands that is installed. The
 * project's own `node_modules/.bin` and virtualenvs are searched only in a trusted project (what is
 * there is the project's code); PATH always.
 */
export function resolveCommand(
  server: ServerConfig,
  root: string,
  projectRoot: string,
  env: NodeJS.ProcessEnv,
  trusted: boolean,
): { command: string; args: string[] } | undefined {
  const folders = trusted ? binFolders(root, projectRoot) : [];
  for (const c of [{ command: server.command, args: server.args }, ...server.alternatives]) {
    const found = findExecutable(c.command, folders, env);
    if (found) return { command: found, args: c.args };
  }
  return undefined;
}

/** What `coil doctor` says about a missing binary. */
export function missingMessage(server: ServerConfig, root: string, trusted: boolean): string {
  const names = [server.command, ...server.alternatives.map((a) => a.command)].join(" or ");
  const where = server.command.includes("/")
    ? ""
    : trusted
      ? ` (looked in ${join(root, "node_modules", ".bin")}, virtualenvs and PATH)`
      : " on PATH (the project is not trusted, so its node_modules/.bin and virtualenvs were not searched: coil trust)";
  return `'${names}' not found${where}${server.install ? `; install it: ${server.install}` : ""}`;
}
