/**
 * Installed Claude Code plugins (issue #18): what each enabled one contributes, for the plugins that
 * consume it — prompt templates (`commands/`), sub-agent types (`agents/`), skills (`skills/`), hooks
 * (`hooks/hooks.json`), MCP servers (`.mcp.json`, plugin.json `mcpServers`) and language servers
 * (`.lsp.json`, plugin.json `lspServers`). The `packages` plugin
 * installs them into `$COIL_HOME/claude-plugins/<name>/` (or `<project>/.coil/claude-plugins/<name>/`)
 * and records them in the `claudePlugins` section of the lock file next to the npm packages
 * (`$COIL_HOME/packages/coil-lock.json`). Project-level plugins contribute only to a trusted project.
 */
import { type Dirent, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/** The lock file of a packages dir (plugins/packages/lockfile.ts writes its npm part). */
export const LOCK_FILE_NAME = "coil-lock.json";
/** plugin.json, relative to a plugin's root. */
export const PLUGIN_MANIFEST = join(".claude-plugin", "plugin.json");

/** A plugin's (and a marketplace's) name: it is a folder name, so no separators and no leading dot. */
export const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export interface ClaudeLockEntry {
  /** As the user named it: a folder, a git URL, a tarball or `<plugin>@<marketplace>`. */
  spec: string;
  source: "dir" | "git" | "tarball";
  /** The marketplace it came from, for `<plugin>@<marketplace>`. */
  marketplace?: string;
  version: string;
  /** Where it was fetched from: an absolute path, or a git URL with `#<commit>`. */
  resolved: string;
  /** sha256 over the installed files (paths and contents). */
  integrity: string;
  /** False after `disable`: installed, contributes nothing. */
  enabled: boolean;
}

/** plugin.json: a name, metadata, and optional custom component paths (which add to the default folders). */
export interface ClaudeManifest {
  name: string;
  version?: string;
  description?: string;
  commands?: string | string[];
  agents?: string | string[];
  skills?: string | string[];
  hooks?: string | string[] | Record<string, unknown>;
  mcpServers?: string | string[] | Record<string, unknown>;
  lspServers?: string | string[] | Record<string, unknown>;
  [key: string]: unknown;
}

export interface ClaudePluginScope {
  scope: "user" | "project";
  /** Where the plugins' folders are. */
  pluginsDir: string;
  /** The packages dir whose lock file records them. */
  lockDir: string;
}

/** A plugin's folder and manifest (installed or not yet). */
export interface PluginFolder {
  name: string;
  root: string;
  manifest: ClaudeManifest;
}

export interface InstalledClaudePlugin {
  name: string;
  scope: "user" | "project";
  /** The installed folder: `CLAUDE_PLUGIN_ROOT`. */
  root: string;
  manifest: ClaudeManifest;
  entry: ClaudeLockEntry;
}

export interface Where {
  /** `$COIL_HOME`. */
  home: string;
  /** The project directory; with `trusted`, its `.coil/claude-plugins` contribute too. */
  cwd?: string;
  trusted?: boolean;
}

export function scopeDirs(home: string, cwd: string | undefined, project: boolean): ClaudePluginScope {
  return project
    ? {
        scope: "project",
        pluginsDir: join(cwd ?? ".", ".coil", "claude-plugins"),
        lockDir: join(cwd ?? ".", ".coil", "packages"),
      }
    : { scope: "user", pluginsDir: join(home, "claude-plugins"), lockDir: join(home, "packages") };
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

/** The `claudePlugins` section of a packages dir's lock file. */
export function readClaudeLock(lockDir: string): Record<string, ClaudeLockEntry> {
  const lock = readJson(join(lockDir, LOCK_FILE_NAME)) as { claudePlugins?: unknown } | null | undefined;
  const section = lock?.claudePlugins;
  return section && typeof section === "object" && !Array.isArray(section)
    ? (section as Record<string, ClaudeLockEntry>)
    : {};
}

/** plugin.json of a plugin folder; undefined when absent or unreadable. */
export function readManifest(root: string): ClaudeManifest | undefined {
  const m = readJson(join(root, PLUGIN_MANIFEST));
  return m && typeof m === "object" && !Array.isArray(m) && "name" in m && typeof m.name === "string"
    ? (m as ClaudeManifest)
    : undefined;
}

/** Every installed plugin of the scopes that apply (user; project when trusted), enabled or not. */
export function installedClaudePlugins(w: Where, o: { all?: boolean } = {}): InstalledClaudePlugin[] {
  const scopes = [scopeDirs(w.home, w.cwd, false)];
  if (w.cwd && w.trusted) {
    const p = scopeDirs(w.home, w.cwd, true);
    if (resolve(p.pluginsDir) !== resolve(scopes[0]!.pluginsDir)) scopes.push(p);
  }
  const out: InstalledClaudePlugin[] = [];
  for (const s of scopes) {
    for (const [name, entry] of Object.entries(readClaudeLock(s.lockDir)).sort(([a], [b]) => a.localeCompare(b))) {
      if (!NAME.test(name) || (!o.all && entry.enabled === false)) continue;
      const root = join(s.pluginsDir, name);
      const manifest = readManifest(root);
      if (manifest) out.push({ name, scope: s.scope, root, manifest, entry });
    }
  }
  return out;
}

/** Whether `p` is a directory (false when it does not exist). */
export const isDir = (p: string) => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};
/** Whether `p` is a regular file (false when it does not exist). */
export const isFile = (p: string) => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/** The default folder of a component plus the manifest's custom paths (which add to it), existing ones only, inside the plugin. */
export function componentPaths(p: PluginFolder, key: "commands" | "agents" | "skills", fallback: string): string[] {
  const custom = p.manifest[key];
  const listed =
    typeof custom === "string"
      ? [custom]
      : Array.isArray(custom)
        ? custom.filter((c): c is string => typeof c === "string")
        : [];
  const paths = [join(p.root, fallback), ...listed.map((c) => resolve(p.root, c))];
  return [...new Set(paths)].filter((path) => inside(p.root, path) && existsSync(path));
}

const inside = (root: string, path: string) => {
  const r = relative(root, path);
  return r === "" || (!r.startsWith("..") && !r.startsWith(sep) && !/^[A-Za-z]:/.test(r));
};

/** `*.md` files below a folder (README.md excluded), with their path relative to it. */
function markdownFiles(dir: string, prefix = ""): { file: string; rel: string }[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    if (e.name.startsWith(".")) return [];
    const path = join(dir, e.name);
    if (e.isDirectory()) return markdownFiles(path, `${prefix}${e.name}/`);
    return /\.md$/i.test(e.name) && !/^readme\.md$/i.test(e.name) ? [{ file: path, rel: `${prefix}${e.name}` }] : [];
  });
}

/** `${CLAUDE_PLUGIN_ROOT}` → the plugin's installed folder. */
export function expandPluginRoot(text: string, root: string): string {
  return text.replace(/\$\{CLAUDE_PLUGIN_ROOT\}/g, root);
}

export interface PluginCommand {
  /** `<plugin>:<command>` (subfolders add `:<folder>`), as Claude Code names plugin commands. */
  name: string;
  file: string;
  plugin: string;
  root: string;
}

/** The commands of enabled plugins: `commands/**.md` (and custom paths, files or folders). */
export function claudePluginCommands(w: Where): PluginCommand[] {
  return installedClaudePlugins(w).flatMap(commandsOf);
}

export function commandsOf(p: PluginFolder): PluginCommand[] {
  return componentPaths(p, "commands", "commands").flatMap((path) => {
    const files = isFile(path) ? [{ file: path, rel: path.replace(/^.*[\\/]/, "") }] : markdownFiles(path);
    return files.map(({ file, rel }) => ({
      name: `${p.name}:${rel.replace(/\.md$/i, "").split("/").join(":")}`,
      file,
      plugin: p.name,
      root: p.root,
    }));
  });
}

/** The agent files of enabled plugins (`agents/*.md` and custom paths); their types are named `<plugin>:<name>`. */
export function claudePluginAgents(w: Where): { file: string; plugin: string; root: string }[] {
  return installedClaudePlugins(w).flatMap(agentsOf);
}

export function agentsOf(p: PluginFolder): { file: string; plugin: string; root: string }[] {
  return componentPaths(p, "agents", "agents")
    .flatMap((path) => (isFile(path) ? [path] : markdownFiles(path).map((f) => f.file)))
    .map((file) => ({ file, plugin: p.name, root: p.root }));
}

/** Folders of skills (`<skill>/SKILL.md` below them) of enabled plugins; a custom path naming one skill's folder gives its parent. */
export function claudePluginSkillDirs(w: Where): string[] {
  return installedClaudePlugins(w).flatMap(skillDirsOf);
}

export function skillDirsOf(p: PluginFolder): string[] {
  return componentPaths(p, "skills", "skills")
    .filter(isDir)
    .map((dir) => (existsSync(join(dir, "SKILL.md")) ? dirname(dir) : dir));
}

/** Read a JSON file of a plugin, or an inline object from plugin.json. */
function jsonSources(p: PluginFolder, value: unknown, fallback: string): { source: string; data: unknown }[] {
  const out: { source: string; data: unknown }[] = [];
  const file = (path: string) => {
    const abs = resolve(p.root, path);
    if (!inside(p.root, abs) || !existsSync(abs)) return;
    if (out.some((o) => o.source === abs)) return;
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(abs, "utf8"));
    } catch (error) {
      data = new Error(`${abs}: not valid JSON: ${(error as Error).message}`);
    }
    out.push({ source: abs, data });
  };
  file(fallback);
  for (const v of Array.isArray(value) ? value : [value]) {
    if (typeof v === "string") file(v);
    else if (v && typeof v === "object") out.push({ source: join(p.root, PLUGIN_MANIFEST), data: v });
  }
  return out;
}

export interface PluginHooks {
  plugin: string;
  root: string;
  /** The file the hooks come from (hooks/hooks.json or plugin.json). */
  source: string;
  /** Claude Code's `"hooks"` shape: `{ PreToolUse: [{ matcher, hooks: [...] }] }`. */
  hooks: Record<string, unknown>;
  /** What the hook commands get in their environment. */
  env: Record<string, string>;
}

/** Hooks of enabled plugins: `hooks/hooks.json` (`{"hooks": {...}}`) and plugin.json `hooks` (paths or inline). */
export function claudePluginHooks(w: Where, warn: (message: string) => void = () => undefined): PluginHooks[] {
  return installedClaudePlugins(w).flatMap((p) => hooksOf(p, warn));
}

export function hooksOf(p: PluginFolder, warn: (message: string) => void = () => undefined): PluginHooks[] {
  return jsonSources(p, p.manifest.hooks, join("hooks", "hooks.json")).flatMap(({ source, data }) => {
    if (data instanceof Error) {
      warn(`${data.message}; the hooks of Claude Code plugin '${p.name}' in it are not run`);
      return [];
    }
    const d = data as Record<string, unknown>;
    const hooks =
      d && typeof d.hooks === "object" && d.hooks && !Array.isArray(d.hooks) ? (d.hooks as Record<string, unknown>) : d;
    return [{ plugin: p.name, root: p.root, source, hooks, env: { CLAUDE_PLUGIN_ROOT: p.root } }];
  });
}

export interface PluginMcpServers {
  plugin: string;
  root: string;
  source: string;
  /** Raw server entries (`.mcp.json` format), `${CLAUDE_PLUGIN_ROOT}` already expanded, `CLAUDE_PLUGIN_ROOT` in a stdio server's env. */
  servers: Record<string, unknown>;
}

/** MCP servers of enabled plugins: `.mcp.json` and plugin.json `mcpServers` (a path, or inline). */
export function claudePluginMcpServers(
  w: Where,
  warn: (message: string) => void = () => undefined,
): PluginMcpServers[] {
  return installedClaudePlugins(w).flatMap((p) => mcpServersOf(p, warn));
}

export function mcpServersOf(p: PluginFolder, warn: (message: string) => void = () => undefined): PluginMcpServers[] {
  return jsonSources(p, p.manifest.mcpServers, ".mcp.json").flatMap(({ source, data }) => {
    if (data instanceof Error) {
      warn(`${data.message}; the MCP servers of Claude Code plugin '${p.name}' in it are not started`);
      return [];
    }
    const d = data as Record<string, unknown>;
    const raw = d && typeof d.mcpServers === "object" && d.mcpServers ? (d.mcpServers as Record<string, unknown>) : d;
    const servers: Record<string, unknown> = {};
    for (const [name, entry] of Object.entries(raw ?? {})) {
      const expanded = JSON.parse(
        expandPluginRoot(JSON.stringify(entry), p.root.replace(/\\/g, "\\\\").replace(/"/g, '\\"')),
      ) as Record<string, unknown>;
      if (expanded && typeof expanded === "object" && !expanded.url)
        expanded.env = { CLAUDE_PLUGIN_ROOT: p.root, ...((expanded.env as object) ?? {}) };
      servers[name] = expanded;
    }
    return [{ plugin: p.name, root: p.root, source, servers }];
  });
}

export interface PluginLspServers {
  plugin: string;
  root: string;
  source: string;
  /** Raw server entries (`.lsp.json` format: name → `{ command, args, extensionToLanguage, ... }`), `${CLAUDE_PLUGIN_ROOT}` expanded, `CLAUDE_PLUGIN_ROOT` in `env`. */
  servers: Record<string, unknown>;
}

/** Language servers of enabled plugins: `.lsp.json` and plugin.json `lspServers` (a path, a list of paths, or inline). */
export function claudePluginLspServers(
  w: Where,
  warn: (message: string) => void = () => undefined,
): PluginLspServers[] {
  return installedClaudePlugins(w).flatMap((p) => lspServersOf(p, warn));
}

export function lspServersOf(p: PluginFolder, warn: (message: string) => void = () => undefined): PluginLspServers[] {
  return jsonSources(p, p.manifest.lspServers, ".lsp.json").flatMap(({ source, data }) => {
    if (data instanceof Error) {
      warn(`${data.message}; the language servers of Claude Code plugin '${p.name}' in it are not used`);
      return [];
    }
    if (!data || typeof data !== "object" || Array.isArray(data)) {
      warn(`${source}: not an object of language servers; Claude Code plugin '${p.name}' contributes none`);
      return [];
    }
    const servers: Record<string, unknown> = {};
    for (const [name, entry] of Object.entries(data as Record<string, unknown>)) {
      const expanded = JSON.parse(
        expandPluginRoot(JSON.stringify(entry), p.root.replace(/\\/g, "\\\\").replace(/"/g, '\\"')),
      ) as unknown;
      servers[name] =
        expanded && typeof expanded === "object" && !Array.isArray(expanded)
          ? {
              ...expanded,
              env: { CLAUDE_PLUGIN_ROOT: p.root, ...(((expanded as { env?: object }).env as object) ?? {}) },
            }
          : expanded;
    }
    return [{ plugin: p.name, root: p.root, source, servers }];
  });
}
