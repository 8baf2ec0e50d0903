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
import { claudeConfigDir, projectRoot } from "./locations.js";
import { dirname, join, relative, resolve, sep } from "node:path";

/** The Claude Code hook events hooks-claude runs. */
export const HOOK_EVENTS = [
  "PreToolUse",
  "PermissionRequest",
  "PostToolUse",
  "PostToolUseFailure",
  "UserPromptSubmit",
  "Notification",
  "Stop",
  "SessionStart",
  "SessionEnd",
  "PreCompact",
  "SubagentStart",
  "SubagentStop",
] as const;

/** Claude Code's events (2.1) coil has no counterpart for: their hooks are listed as not run. */
export const UNSUPPORTED_HOOK_EVENTS = [
  "PostToolBatch",
  "UserPromptExpansion",
  "StopFailure",
  "PostCompact",
  "PermissionDenied",
  "Setup",
  "TeammateIdle",
  "TaskCreated",
  "TaskCompleted",
  "Elicitation",
  "ElicitationResult",
  "ConfigChange",
  "WorktreeCreate",
  "WorktreeRemove",
  "InstructionsLoaded",
  "CwdChanged",
  "FileChanged",
  "MessageDisplay",
] as const;

/** The events whose hooks are about one tool call: the only ones an `if` rule applies to. */
export const TOOL_HOOK_EVENTS: readonly string[] = [
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PermissionRequest",
];

/**
 * A hooks object (`{ PreToolUse: [{ matcher, hooks: [...] }] }`) as the install report shows it: what runs
 * (`Event` or `Event(matcher)`), and what does not with why (an event coil lacks, a handler type it does
 * not run, an `if` on a non-tool event).
 */
export function hookSummary(hooks: Record<string, unknown>): { runs: string[]; notRun: string[] } {
  const runs: string[] = [];
  const notRun: string[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    const known = (HOOK_EVENTS as readonly string[]).includes(event);
    for (const g of Array.isArray(groups) ? groups : []) {
      const label = typeof g?.matcher === "string" && g.matcher && g.matcher !== "*" ? `${event}(${g.matcher})` : event;
      if (!known) {
        notRun.push(
          `${label}: ${(UNSUPPORTED_HOOK_EVENTS as readonly string[]).includes(event) ? "coil has no such event" : "not a hook event"}`,
        );
        continue;
      }
      const handlers = Array.isArray(g?.hooks) ? g.hooks : [];
      const usable = handlers.filter((h: { type?: unknown; if?: unknown }) => {
        const type = h?.type ?? "command";
        if (type !== "command" && type !== "prompt") {
          notRun.push(`${label}: a "${String(type)}" hook (coil runs "command" and "prompt" hooks)`);
          return false;
        }
        if (typeof h.if === "string" && !TOOL_HOOK_EVENTS.includes(event)) {
          notRun.push(`${label}: a hook with "if" on a non-tool event (Claude Code never runs it either)`);
          return false;
        }
        return true;
      });
      if (usable.length) runs.push(label);
    }
  }
  return { runs, notRun };
}

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
  /**
   * What the marketplace entry names besides plugin.json (Claude Code reads the entry's `commands`,
   * `agents`, `skills`, `hooks` and `mcpServers` too), and which of `commands`/`agents`/`skills` replace
   * the default folder (`only`: a plugin at the marketplace's root, as anthropics/skills' document-skills).
   */
  components?: Components;
}

/** The component fields a marketplace entry (or plugin.json) may set. */
export interface Components {
  commands?: string | string[];
  agents?: string | string[];
  skills?: string | string[];
  hooks?: string | string[] | Record<string, unknown>;
  mcpServers?: string | string[] | Record<string, unknown>;
  only?: ("commands" | "agents" | "skills")[];
}

export const COMPONENT_KEYS = ["commands", "agents", "skills", "hooks", "mcpServers"] as const;

/**
 * The keys of an MCP server entry (`.mcp.json`, `mcpServers`) coil reads: Claude Code's, and coil's own
 * `startupTimeout`, `toolTimeout`, `alwaysLoad`, `disabled`. The mcp plugin checks entries against it; the
 * Claude Code installer notes the other keys of a plugin's servers as ignored.
 */
export const MCP_SERVER_KEYS: ReadonlySet<string> = new Set([
  "type",
  "command",
  "args",
  "env",
  "cwd",
  "url",
  "headers",
  "startupTimeout",
  "toolTimeout",
  "alwaysLoad",
  "disabled",
]);

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
  /** Components whose listed paths replace the default folder (a plugin at its marketplace's root). */
  only?: readonly ("commands" | "agents" | "skills")[];
}

export interface InstalledClaudePlugin extends PluginFolder {
  scope: "user" | "project";
  /** The installed folder: `CLAUDE_PLUGIN_ROOT`. */
  root: string;
  entry: ClaudeLockEntry;
  /** `claude-code`: installed by Claude Code itself (`claude plugin install`), read where it put it. */
  origin?: "coil" | "claude-code";
}

export interface Where {
  /** `$COIL_HOME`. */
  home: string;
  /** The project directory; with `trusted`, its `.coil/claude-plugins` contribute too. */
  cwd?: string;
  trusted?: boolean;
  /** Also the plugins Claude Code itself installed (`~/.claude/plugins`); default true (`compat.claude`). */
  claudeCode?: boolean;
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

/**
 * A plugin's manifest as Claude Code reads it: plugin.json (a plugin without one is installed from its
 * folders, named `name`), with what its marketplace entry names added to it. Undefined when `root` is not a folder.
 */
export function effectiveManifest(root: string, name: string, components?: Components): ClaudeManifest | undefined {
  const own = readManifest(root) ?? (isDir(root) ? { name } : undefined);
  if (!own || !components) return own;
  const out: ClaudeManifest = { ...own };
  for (const key of COMPONENT_KEYS) {
    const extra = components[key];
    if (extra === undefined) continue;
    const list = (v: unknown) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
    out[key] = [...list(own[key]), ...list(extra)] as never;
  }
  return out;
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
      const manifest = effectiveManifest(root, name, entry.components);
      if (manifest)
        out.push({
          name,
          scope: s.scope,
          root,
          manifest,
          entry,
          ...(entry.components?.only?.length ? { only: entry.components.only } : {}),
        });
    }
  }
  // Claude Code's own installs, after coil's: a plugin coil installed under the same name wins.
  if (w.claudeCode !== false) {
    const taken = new Set(out.map((p) => p.name));
    for (const c of claudeCodeInstalls({ cwd: w.cwd, trusted: w.trusted }))
      if (c.plugin && !taken.has(c.plugin.name) && (o.all || c.loaded)) {
        taken.add(c.plugin.name);
        out.push(c.plugin);
      }
  }
  return out;
}

/** Claude Code's configuration folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude` (lib/locations.ts). */
export { claudeConfigDir };

/** One plugin Claude Code installed, as `~/.claude/plugins/installed_plugins.json` records it, and whether coil loads it. */
export interface ClaudeCodeInstall {
  /** `<plugin>@<marketplace>`. */
  key: string;
  /** Claude Code's scope: `user`, `project` (the repository's .claude/settings.json) or `local` (.claude/settings.local.json). */
  scope: string;
  installPath: string;
  projectPath?: string;
  version: string;
  /** Loaded by coil (enabled, for this project, trusted where it must be, its folder there). */
  loaded: boolean;
  /** Why it is not loaded, or where it is enabled. */
  why: string;
  plugin?: InstalledClaudePlugin;
}

const jsonObject = (file: string): Record<string, unknown> | undefined => {
  const data = readJson(file);
  return data && typeof data === "object" && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
};

/**
 * The plugins Claude Code installed (`claude plugin install`): `installed_plugins.json` (version 2: `{ plugins:
 * { "<plugin>@<marketplace>": [{ scope, installPath, version, projectPath? }] } }`) under Claude Code's
 * configuration folder, enabled by `enabledPlugins` in `~/.claude/settings.json`, and for a trusted project
 * its `.claude/settings.json` and `.claude/settings.local.json` (the later file wins, as in Claude Code).
 * A `project` or `local` install applies to its own project only, and only while that project is trusted.
 * What the marketplace entry lists (from `known_marketplaces.json`'s copy of the marketplace) is read too.
 */
export function claudeCodeInstalls(
  o: { cwd?: string; trusted?: boolean; env?: NodeJS.ProcessEnv } = {},
): ClaudeCodeInstall[] {
  const env = o.env ?? process.env;
  const dir = claudeConfigDir(env);
  const installed = jsonObject(join(dir, "plugins", "installed_plugins.json"))?.plugins;
  if (!installed || typeof installed !== "object") return [];
  const known = jsonObject(join(dir, "plugins", "known_marketplaces.json")) ?? {};
  const root = o.cwd ? resolve(projectRoot(o.cwd)) : undefined;
  const settings = [
    { file: join(dir, "settings.json"), project: false },
    ...(root && o.trusted
      ? [
          { file: join(root, ".claude", "settings.json"), project: true },
          { file: join(root, ".claude", "settings.local.json"), project: true },
        ]
      : []),
  ].map((f) => ({ ...f, enabled: jsonObject(f.file)?.enabledPlugins as Record<string, unknown> | undefined }));
  const out: ClaudeCodeInstall[] = [];
  for (const [key, list] of Object.entries(installed as Record<string, unknown>)) {
    const [name, marketplace] = key.split("@") as [string, string | undefined];
    for (const raw of Array.isArray(list) ? list : []) {
      const r = (raw ?? {}) as { scope?: unknown; installPath?: unknown; version?: unknown; projectPath?: unknown };
      const scope = typeof r.scope === "string" ? r.scope : "user";
      const installPath = typeof r.installPath === "string" ? r.installPath : "";
      const projectPath = typeof r.projectPath === "string" ? r.projectPath : undefined;
      const version = typeof r.version === "string" && r.version !== "unknown" ? r.version : "0.0.0";
      const item: ClaudeCodeInstall = {
        key,
        scope,
        installPath,
        version,
        loaded: false,
        why: "",
        ...(projectPath ? { projectPath } : {}),
      };
      out.push(item);
      if (scope !== "user" && (!root || !projectPath || resolve(projectPath) !== root)) {
        item.why = `a ${scope} install for ${projectPath ?? "another project"}`;
        continue;
      }
      if (scope !== "user" && !o.trusted) {
        item.why = "the project is not trusted (coil trust)";
        continue;
      }
      const said = settings.filter((f) => typeof f.enabled?.[key] === "boolean").at(-1);
      if (said?.enabled?.[key] !== true) {
        item.why = said ? `disabled in ${said.file}` : `not enabled in any settings.json (enabledPlugins)`;
        continue;
      }
      if (!NAME.test(name) || !isDir(installPath)) {
        item.why = !NAME.test(name) ? `'${name}' cannot be a plugin name` : `its folder ${installPath} is missing`;
        continue;
      }
      const listed = marketplace ? marketplaceEntry(known[marketplace], name) : undefined;
      const manifest = effectiveManifest(installPath, name, listed);
      if (!manifest) continue;
      item.loaded = true;
      item.why = `enabled in ${said.file}`;
      item.plugin = {
        name,
        scope: scope === "user" ? "user" : "project",
        root: installPath,
        manifest,
        origin: "claude-code",
        entry: {
          spec: key,
          source: "dir",
          ...(marketplace ? { marketplace } : {}),
          version: typeof manifest.version === "string" ? manifest.version : version,
          resolved: installPath,
          integrity: "",
          enabled: true,
          ...(listed ? { components: listed } : {}),
        },
        ...(listed?.only?.length ? { only: listed.only } : {}),
      };
    }
  }
  return out;
}

/** The component fields of plugin `name`'s entry in a known marketplace's marketplace.json (and `only` for a root plugin). */
function marketplaceEntry(record: unknown, name: string): Components | undefined {
  const location = (record as { installLocation?: unknown } | undefined)?.installLocation;
  if (typeof location !== "string") return undefined;
  const m = jsonObject(join(location, ".claude-plugin", "marketplace.json"));
  const entry = (Array.isArray(m?.plugins) ? m.plugins : []).find(
    (p: unknown) => (p as { name?: unknown } | null)?.name === name,
  ) as Record<string, unknown> | undefined;
  if (!entry) return undefined;
  const out: Components = {};
  for (const key of COMPONENT_KEYS) if (entry[key] !== undefined) out[key] = entry[key] as never;
  const source = entry.source;
  const atRoot = typeof source === "string" && ["./", ".", ""].includes(source.trim());
  const only = atRoot ? (["commands", "agents", "skills"] as const).filter((k) => entry[k] !== undefined) : [];
  if (only.length) out.only = only;
  return Object.keys(out).length ? out : undefined;
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

/** A place to search given as a folder or one file: the folder, and for a file, that file alone. */
export const placeOf = (path: string): { dir: string; files?: string[] } =>
  isFile(path) ? { dir: dirname(path), files: [path] } : { dir: path };

/** The default folder of a component plus the manifest's custom paths (which add to it), existing ones only, inside the plugin. */
export function componentPaths(p: PluginFolder, key: "commands" | "agents" | "skills", fallback: string): string[] {
  const custom = p.manifest[key];
  const listed =
    typeof custom === "string"
      ? [custom]
      : Array.isArray(custom)
        ? custom.filter((c): c is string => typeof c === "string")
        : [];
  const paths = [...(p.only?.includes(key) ? [] : [join(p.root, fallback)]), ...listed.map((c) => resolve(p.root, c))];
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

/** Folders of skills of enabled plugins: folders of `<skill>/SKILL.md`, or one skill's own folder (a path naming it). */
export function claudePluginSkillDirs(w: Where): string[] {
  return installedClaudePlugins(w).flatMap(skillDirsOf);
}

export function skillDirsOf(p: PluginFolder): string[] {
  return componentPaths(p, "skills", "skills").filter(isDir);
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

/**
 * Whether a folder holds what Claude Code loads from a plugin that has no plugin.json: `commands/*.md`,
 * `agents/*.md`, `skills/<name>/SKILL.md`, `hooks/hooks.json`, `.mcp.json` or `.lsp.json`.
 */
export function hasComponents(dir: string): boolean {
  const md = (sub: string) => {
    try {
      return readdirSync(join(dir, sub)).some((n) => /\.md$/i.test(n));
    } catch {
      return false;
    }
  };
  const skills = () => {
    try {
      return readdirSync(join(dir, "skills")).some((n) => isFile(join(dir, "skills", n, "SKILL.md")));
    } catch {
      return false;
    }
  };
  return (
    md("commands") ||
    md("agents") ||
    skills() ||
    isFile(join(dir, "hooks", "hooks.json")) ||
    isFile(join(dir, ".mcp.json")) ||
    isFile(join(dir, ".lsp.json"))
  );
}

/** `coil doctor`'s lines about Claude Code plugins: coil's installs, then Claude Code's own, each with whether it loads and why. */
export function claudePluginsReport(w: Where): string[] {
  const lines: string[] = [];
  const own = installedClaudePlugins({ ...w, claudeCode: false }, { all: true });
  for (const p of own)
    lines.push(
      `${p.name}@${p.entry.version}  [${p.scope}, coil install]  ${p.entry.enabled === false ? "disabled (coil enable)" : "enabled"}  ${p.root}`,
    );
  if (w.claudeCode === false) lines.push("Claude Code's own installs: not read (compat.claude is off)");
  else {
    const taken = new Set(own.map((p) => p.name));
    const dir = join(claudeConfigDir(), "plugins", "installed_plugins.json");
    const cc = claudeCodeInstalls({ cwd: w.cwd, trusted: w.trusted });
    if (!cc.length) lines.push(`Claude Code's own installs: none (${dir})`);
    for (const c of cc) {
      const name = c.key.split("@")[0]!;
      const state = !c.loaded
        ? `not loaded: ${c.why}`
        : taken.has(name)
          ? `not loaded: coil's own install of '${name}' is used`
          : `loaded (${c.why})`;
      if (c.loaded) taken.add(name);
      lines.push(`${c.key}@${c.version}  [${c.scope}, installed by Claude Code]  ${state}  ${c.installPath}`);
    }
  }
  return lines.length ? lines : ["none installed (coil install <plugin>@<marketplace>; docs/packages.md)"];
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
