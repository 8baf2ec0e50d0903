/**
 * Claude Code plugins as coil packages: install (from a folder, git URL, tarball or `<plugin>@<marketplace>`)
 * into `$COIL_HOME/claude-plugins/<name>/` (`.coil/claude-plugins/` with `project`), record them in the
 * `claudePlugins` section of the lock file, remove, enable/disable, list. What an installed, enabled plugin
 * contributes is read by the consuming plugins through lib/claude-plugins.ts.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { basename, join, relative } from "node:path";
import type { CliStreams } from "../../../api/index.js";
import { splitFrontMatter } from "../../../lib/front-matter.js";
import { coilHome } from "../../../lib/paths.js";
import {
  COMPONENT_KEYS,
  LOCK_FILE_NAME,
  MCP_SERVER_KEYS,
  NAME,
  PLUGIN_MANIFEST,
  agentsOf,
  commandsOf,
  effectiveManifest,
  hasComponents,
  hookSummary,
  hooksOf,
  installedClaudePlugins,
  isDir,
  lspServersOf,
  mcpServersOf,
  readClaudeLock,
  readManifest,
  scopeDirs,
  skillDirsOf,
  type ClaudeLockEntry,
  type Components,
  type PluginFolder,
} from "../../../lib/claude-plugins.js";
import { fetchSource, folderIntegrity, sourceKind, type Fetched } from "./fetch.js";
import { findMarketplace, marketplacePluginSource, type MarketplacePlugin } from "./marketplace.js";

export interface ClaudeOptions {
  /** `$COIL_HOME`. */
  home: string;
  /** Install into the project (`<cwd>/.coil/claude-plugins`), recorded in `.coil/packages/coil-lock.json`. */
  project: boolean;
  cwd: string;
  io: CliStreams;
}

/** What a plugin offers (and, after install or enable, what became active). */
export interface InstallReport {
  name: string;
  version: string;
  scope: "user" | "project";
  /** The installed folder (`CLAUDE_PLUGIN_ROOT`). */
  root: string;
  spec: string;
  marketplace?: string;
  enabled: boolean;
  /** Slash commands, `/plugin:command`. */
  commands: string[];
  skills: string[];
  /** Sub-agent types, `plugin:agent`. */
  agents: string[];
  /** `Event` or `Event(matcher)`. */
  hooks: string[];
  mcpServers: string[];
  /** Language servers (`.lsp.json`, plugin.json `lspServers`), for the lsp plugin. */
  lspServers: string[];
  /** Anything the user should know (e.g. project plugins load only in a trusted project). */
  notes: string[];
}

/** A marketplace reference: `<plugin>@<marketplace>` where the marketplace has been added. */
function marketplaceRef(spec: string, home: string): { plugin: string; marketplace: string } | undefined {
  const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)@([A-Za-z0-9][A-Za-z0-9._-]*)$/.exec(spec);
  if (!m || !findMarketplace(home, m[2]!)) return undefined;
  return { plugin: m[1]!, marketplace: m[2]! };
}

/**
 * Whether `spec` names a Claude Code plugin: a folder or tarball holding `.claude-plugin/plugin.json` (and
 * no `"coil"` key in a package.json), a git URL whose checkout holds one, or `<plugin>@<marketplace>` of an
 * added marketplace. `home` is `$COIL_HOME` (default: from the environment).
 */
export async function detectClaudePlugin(spec: string, cwd: string, home: string = coilHome()): Promise<boolean> {
  if (marketplaceRef(spec, home)) return true;
  const src = sourceKind(spec, cwd);
  if (!src) return false;
  if (src.kind === "dir") return isClaudePluginDir(src.location);
  let fetched: Fetched | undefined;
  try {
    fetched = await fetchSource(src.kind, src.location, join(home, "claude-plugins"));
    return isClaudePluginDir(fetched.dir);
  } catch {
    return false;
  } finally {
    const tmp = fetched?.tmp;
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * A Claude Code plugin: `.claude-plugin/plugin.json`, or (as Claude Code installs a plugin without one from
 * its folders) `commands/*.md`, `agents/*.md`, `skills/<name>/SKILL.md`, `hooks/hooks.json`, `.mcp.json` or `.lsp.json`;
 * never a folder whose package.json has a `"coil"` key (a coil package).
 */
function isClaudePluginDir(dir: string): boolean {
  try {
    if (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).coil) return false;
  } catch {
    // no package.json, or not JSON: not a coil package
  }
  return existsSync(join(dir, PLUGIN_MANIFEST)) || hasComponents(dir);
}

/** The name a plugin without plugin.json gets: its folder's, its repository's or its tarball's (without the version). */
function nameFrom(kind: "dir" | "git" | "tarball", location: string): string {
  const last =
    location
      .replace(/[#?].*$/, "")
      .replace(/[\\/]+$/, "")
      .split(/[\\/:]/)
      .at(-1) ?? "";
  if (kind === "git") return last.replace(/\.git$/, "");
  if (kind === "tarball") return last.replace(/\.(tgz|tar\.gz|tar)$/, "").replace(/-v?\d+\.\d+\.\d+.*$/, "");
  return last;
}

/** Front matter keys of an agent or command file that coil reads nothing from, said in the report. */
const IGNORED_FRONT_MATTER = ["hooks"];

/**
 * The offers of a plugin folder, each once, and notes on what coil reads otherwise than written or not at
 * all (a skill name that cannot be a command, front matter coil ignores, MCP settings it does not know).
 */
export function describePlugin(
  p: PluginFolder,
): Pick<InstallReport, "commands" | "skills" | "agents" | "hooks" | "mcpServers" | "lspServers" | "notes"> {
  const notes: string[] = [];
  const rel = (file: string) => relative(p.root, file) || ".";
  const skills: string[] = [];
  const seen = new Set<string>();
  for (const dir of skillDirsOf(p)) {
    const folders = existsSync(join(dir, "SKILL.md")) ? [dir] : listDirs(dir).map((sub) => join(dir, sub));
    for (const folder of folders) {
      const file = join(folder, "SKILL.md");
      const real = realOf(file);
      if (!existsSync(file) || seen.has(real)) continue;
      seen.add(real);
      const { data } = splitFrontMatter(readFileSync(file, "utf8"));
      const given = typeof data?.name === "string" ? data.name.trim() : "";
      const folderName = basename(folder);
      if (given && (/[\s/]/.test(given) || given.length > 64)) {
        notes.push(
          `${rel(folder)}: its name '${given}' cannot be a command; it is called by its folder's name '${folderName}'`,
        );
        skills.push(folderName);
      } else skills.push(given || folderName);
    }
  }
  const ignored = (file: string, data: Record<string, unknown> | undefined) => {
    for (const key of IGNORED_FRONT_MATTER)
      if (data?.[key] !== undefined)
        notes.push(
          `${rel(file)}: '${key}' in its front matter are not run by coil (Claude Code ignores them for plugin agents too); the rest of the file is read`,
        );
  };
  const agents = agentsOf(p).flatMap(({ file }) => {
    const { data } = splitFrontMatter(readFileSync(file, "utf8"));
    ignored(file, data);
    return typeof data?.name === "string" ? [`${p.name}:${data.name}`] : [];
  });
  const commands = commandsOf(p).map((c) => {
    ignored(c.file, splitFrontMatter(readFileSync(c.file, "utf8")).data);
    return `/${c.name}`;
  });
  // Only what hooks-claude runs is listed as a hook; the rest is a note saying why it does not run.
  const hooks = hooksOf(p).flatMap((h) => {
    const { runs, notRun } = hookSummary(h.hooks);
    for (const n of notRun) notes.push(`${rel(h.source)}: not run by coil: ${n}`);
    return runs;
  });
  const mcpServers = mcpServersOf(p).flatMap((m) => {
    for (const [name, entry] of Object.entries(m.servers))
      for (const key of Object.keys((entry as object) ?? {}))
        if (!MCP_SERVER_KEYS.has(key))
          notes.push(`${rel(m.source)}: ${name}: '${key}' is not an MCP server setting coil knows; ignored`);
    return Object.keys(m.servers);
  });
  const lspServers = lspServersOf(p).flatMap((m) => Object.keys(m.servers));
  return { commands, skills, agents, hooks, mcpServers, lspServers, notes };
}

const realOf = (file: string) => {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
};

function listDirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

/** What the lock file pins when a plugin is installed again from it. */
interface Pin {
  name: string;
  spec: string;
  commit?: string;
  integrity?: string;
  enabled: boolean;
}

/**
 * Install what the lock file's `claudePlugins` section records and is missing or changed in the plugins
 * folder (a teammate's checkout of a project whose lock is committed, a new machine): git plugins at the
 * locked commit, tarballs and git checkouts with a matching integrity (else an error for that plugin),
 * folders as they are now. Plugins whose files match the lock are left alone.
 */
export async function restoreClaudePlugins(
  o: ClaudeOptions & { trusted?: boolean },
): Promise<{ installed: InstallReport[]; upToDate: string[]; problems: string[] }> {
  const scope = scopeDirs(o.home, o.cwd, o.project);
  const out = { installed: [] as InstallReport[], upToDate: [] as string[], problems: [] as string[] };
  for (const [name, entry] of Object.entries(readClaudeLock(scope.lockDir))) {
    const root = join(scope.pluginsDir, name);
    if (isDir(root) && folderIntegrity(root) === entry.integrity) {
      out.upToDate.push(name);
      continue;
    }
    const commit = entry.source === "git" ? entry.resolved.split("#")[1] : undefined;
    const local = entry.source !== "git" && existsSync(entry.resolved) ? entry.resolved : undefined;
    const from =
      entry.marketplace && findMarketplace(o.home, entry.marketplace)
        ? entry.spec
        : (local ?? (entry.source === "git" ? entry.resolved.split("#")[0]! : entry.spec));
    try {
      out.installed.push(
        await installClaudePlugin(from, {
          ...o,
          pin: { name, spec: entry.spec, commit, integrity: entry.integrity, enabled: entry.enabled !== false },
        }),
      );
    } catch (error) {
      out.problems.push(`${name}: ${(error as Error).message}`);
    }
  }
  return out;
}

/**
 * Fetch installed plugins again from where they were installed from (the git branch's new tip, the
 * folder or tarball as it is now, the marketplace's current entry: run `coil marketplace update` first
 * to see a marketplace's new plugins), keeping each one enabled or disabled. All of the scope's plugins
 * when `names` is empty. A line per plugin: `name 1.0.0 → 1.1.0`, `(new content)` or `(up to date)`.
 */
export async function updateClaudePlugins(
  names: string[],
  o: ClaudeOptions & { trusted?: boolean },
): Promise<{ lines: string[]; problems: string[] }> {
  const scope = scopeDirs(o.home, o.cwd, o.project);
  const lock = readClaudeLock(scope.lockDir);
  const wanted = names.length ? names : Object.keys(lock);
  const out = { lines: [] as string[], problems: [] as string[] };
  for (const name of wanted) {
    const before = lock[name];
    if (!before) {
      out.problems.push(`${name}: not installed in ${scope.pluginsDir}`);
      continue;
    }
    try {
      const r = await installClaudePlugin(before.spec, {
        ...o,
        pin: { name, spec: before.spec, enabled: before.enabled !== false },
      });
      const after = readClaudeLock(scope.lockDir)[name]!;
      out.lines.push(
        before.version !== r.version
          ? `${name} ${before.version} → ${r.version}`
          : before.integrity !== after.integrity
            ? `${name} ${r.version} (new content)`
            : `${name} ${r.version} (up to date)`,
      );
    } catch (error) {
      out.problems.push(`${name}: ${(error as Error).message}`);
    }
  }
  return out;
}

/** Rewrite the `claudePlugins` section of a packages dir's lock file, keeping the rest. */
export function writeClaudeLock(lockDir: string, update: (section: Record<string, ClaudeLockEntry>) => void): void {
  const file = join(lockDir, LOCK_FILE_NAME);
  let lock: Record<string, unknown> = { lockfileVersion: 1, packages: {} };
  if (existsSync(file)) {
    try {
      lock = JSON.parse(readFileSync(file, "utf8"));
    } catch (error) {
      throw new Error(`cannot read ${file}: ${(error as Error).message}; fix or delete it, then try again`);
    }
  }
  const section = { ...readClaudeLock(lockDir) };
  update(section);
  const sorted = Object.fromEntries(Object.entries(section).sort(([a], [b]) => a.localeCompare(b)));
  if (Object.keys(sorted).length) lock.claudePlugins = sorted;
  else delete lock.claudePlugins;
  mkdirSync(lockDir, { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify(lock, null, 2) + "\n");
  renameSync(`${file}.tmp`, file);
}

function report(
  p: PluginFolder,
  entry: ClaudeLockEntry,
  scope: "user" | "project",
  trusted: boolean | undefined,
  extra: string[] = [],
): InstallReport {
  const offers = describePlugin(p);
  const notes = [
    ...extra,
    ...(readManifest(p.root)
      ? []
      : [`no ${PLUGIN_MANIFEST}: installed from its folders as '${p.name}', as Claude Code installs it`]),
    ...offers.notes,
    ...(scope === "project" && !trusted
      ? ["project plugins contribute only while the project is trusted (coil trust)"]
      : []),
  ];
  return {
    name: p.name,
    version: entry.version,
    scope,
    root: p.root,
    spec: entry.spec,
    ...(entry.marketplace ? { marketplace: entry.marketplace } : {}),
    enabled: entry.enabled !== false,
    ...offers,
    notes,
  };
}

/** An installed plugin's folder as the consumers read it (its manifest with its marketplace entry's components). */
function folderOf(name: string, root: string, entry: ClaudeLockEntry): PluginFolder {
  const manifest = effectiveManifest(root, name, entry.components) ?? { name };
  return { name, root, manifest, ...(entry.components?.only?.length ? { only: entry.components.only } : {}) };
}

/**
 * Install a Claude Code plugin: fetch it, read `.claude-plugin/plugin.json` (a plugin without one is
 * installed from its folders, as Claude Code installs it, named by its marketplace entry or its folder),
 * keep what its marketplace entry names (`commands`, `agents`, `skills`, `hooks`, `mcpServers`) in the lock
 * entry, move it into place (replacing an older install of the same name), record it, enabled. Throws an
 * Error naming what failed and what to do.
 */
export async function installClaudePlugin(
  spec: string,
  o: ClaudeOptions & { trusted?: boolean; pin?: Pin },
): Promise<InstallReport> {
  const scope = scopeDirs(o.home, o.cwd, o.project);
  const env = o.io.env;
  let kind: "dir" | "git" | "tarball";
  let location: string;
  let ref: string | undefined;
  let marketplace: string | undefined;
  let listed: MarketplacePlugin | undefined;
  let atRoot = false;
  const mref = marketplaceRef(spec, o.home);
  if (mref) {
    const found = marketplacePluginSource(o.home, mref.marketplace, mref.plugin, o.cwd);
    ({ kind, location, ref } = found);
    marketplace = mref.marketplace;
    listed = found.entry;
    atRoot = found.atRoot === true;
  } else {
    const src = sourceKind(spec, o.cwd);
    if (!src)
      throw new Error(
        `'${spec}' is not a folder, git URL, tarball or <plugin>@<marketplace> (of a marketplace added with coil marketplace add)`,
      );
    ({ kind, location } = src);
  }
  let fetched: Fetched | undefined;
  try {
    fetched = await fetchSource(kind, location, scope.pluginsDir, env, ref, o.pin?.commit);
    const own = existsSync(join(fetched.dir, PLUGIN_MANIFEST)) ? readManifest(fetched.dir) : undefined;
    if (existsSync(join(fetched.dir, PLUGIN_MANIFEST)) && !own)
      throw new Error(`${spec}: ${PLUGIN_MANIFEST} has no "name" or is not valid JSON`);
    if (!own && !listed && !hasComponents(fetched.dir))
      throw new Error(
        `${spec} is not a Claude Code plugin: no ${PLUGIN_MANIFEST}, and none of commands/, agents/, skills/, hooks/hooks.json, .mcp.json`,
      );
    const name = own?.name ?? listed?.name ?? o.pin?.name ?? nameFrom(kind, location);
    if (!NAME.test(name))
      throw new Error(
        `${spec}: plugin name '${name}'${own ? ` in ${PLUGIN_MANIFEST}` : ""} must be letters, digits, '.', '_' or '-'`,
      );
    const components: Components = {};
    for (const key of COMPONENT_KEYS) if (listed?.[key] !== undefined) components[key] = listed[key] as never;
    // At the marketplace's root, the components the entry lists are all Claude Code reads of that kind.
    const only = atRoot ? (["commands", "agents", "skills"] as const).filter((k) => listed?.[k] !== undefined) : [];
    if (only.length) components.only = only;
    const version =
      typeof own?.version === "string" ? own.version : typeof listed?.version === "string" ? listed.version : "0.0.0";
    const root = join(scope.pluginsDir, name);
    const entry: ClaudeLockEntry = {
      spec: o.pin?.spec ?? (kind === "dir" && !mref ? location : spec),
      source: kind,
      ...(marketplace ? { marketplace } : {}),
      version,
      resolved: fetched.resolved,
      integrity: folderIntegrity(fetched.dir),
      enabled: o.pin?.enabled ?? true,
      ...(Object.keys(components).length ? { components } : {}),
    };
    if (o.pin?.name && o.pin.name !== name)
      throw new Error(`${spec} now holds plugin '${name}', not '${o.pin.name}' as the lock file says`);
    if (o.pin?.integrity && o.pin.integrity !== entry.integrity && kind !== "dir") {
      throw new Error(
        `${name} from ${fetched.resolved}: integrity ${entry.integrity} does not match the lock's ${o.pin.integrity}; the lock file was left as it is (install it again by name to accept the new content)`,
      );
    }
    const old = join(scope.pluginsDir, `.old-${name}-${process.pid}`);
    if (existsSync(root)) renameSync(root, old);
    renameSync(fetched.dir, root);
    rmSync(old, { recursive: true, force: true });
    writeClaudeLock(scope.lockDir, (s) => {
      s[name] = entry;
    });
    return report(folderOf(name, root, entry), entry, scope.scope, o.project ? o.trusted : true);
  } finally {
    if (fetched) rmSync(fetched.tmp, { recursive: true, force: true });
  }
}

function findInstalled(
  name: string,
  o: ClaudeOptions,
): { root: string; entry: ClaudeLockEntry; lockDir: string; scope: "user" | "project" } {
  const scope = scopeDirs(o.home, o.cwd, o.project);
  const entry = readClaudeLock(scope.lockDir)[name];
  if (!entry) {
    const names = Object.keys(readClaudeLock(scope.lockDir));
    throw new Error(
      `no Claude Code plugin '${name}' is installed in ${scope.pluginsDir}${names.length ? ` (installed: ${names.join(", ")})` : ""}`,
    );
  }
  return { root: join(scope.pluginsDir, name), entry, lockDir: scope.lockDir, scope: scope.scope };
}

/** Uninstall: delete the folder and the lock entry. The report says what stopped acting. */
export async function removeClaudePlugin(name: string, o: ClaudeOptions): Promise<InstallReport> {
  const found = findInstalled(name, o);
  const r = report(folderOf(name, found.root, found.entry), { ...found.entry, enabled: false }, found.scope, true);
  writeClaudeLock(found.lockDir, (s) => void delete s[name]);
  rmSync(found.root, { recursive: true, force: true });
  return r;
}

/** Enable or disable without uninstalling (the lock entry's `enabled`). */
export async function setClaudePluginEnabled(name: string, enabled: boolean, o: ClaudeOptions): Promise<InstallReport> {
  const found = findInstalled(name, o);
  if (!isDir(found.root))
    throw new Error(
      `Claude Code plugin '${name}' is recorded in ${join(found.lockDir, LOCK_FILE_NAME)} but its folder ${found.root} is missing; reinstall it: coil install ${found.entry.spec}`,
    );
  writeClaudeLock(found.lockDir, (s) => {
    s[name] = { ...s[name]!, enabled };
  });
  return report(folderOf(name, found.root, found.entry), { ...found.entry, enabled }, found.scope, true);
}

/** Every installed Claude Code plugin of the user, and of the project (`trusted` says whether they load). */
export async function listClaudePlugins(
  o: Omit<ClaudeOptions, "project"> & { trusted?: boolean },
): Promise<InstallReport[]> {
  const user = installedClaudePlugins({ home: o.home, claudeCode: false }, { all: true }).map((p) =>
    report(p, p.entry, "user", true),
  );
  const projectScope = scopeDirs(o.home, o.cwd, true);
  const project = Object.entries(readClaudeLock(projectScope.lockDir)).flatMap(([name, entry]) => {
    const root = join(projectScope.pluginsDir, name);
    return isDir(root) ? [report(folderOf(name, root, entry), entry, "project", o.trusted)] : [];
  });
  return [...user, ...(projectScope.pluginsDir === scopeDirs(o.home, o.cwd, false).pluginsDir ? [] : project)];
}

/** One report as text, for the CLI. */
export function formatReport(r: InstallReport, verb = "installed"): string {
  const parts = [
    r.commands.length ? `  commands: ${r.commands.join(", ")}` : "",
    r.skills.length ? `  skills: ${r.skills.join(", ")}` : "",
    r.agents.length ? `  agents: ${r.agents.join(", ")}` : "",
    r.hooks.length ? `  hooks: ${r.hooks.join(", ")}` : "",
    r.mcpServers.length ? `  MCP servers: ${r.mcpServers.join(", ")}` : "",
    r.lspServers.length
      ? `  language servers: ${r.lspServers.join(", ")} (the binaries are not in the plugin: coil doctor says what is missing)`
      : "",
    ...r.notes.map((n) => `  note: ${n}`),
  ].filter(Boolean);
  return `${verb} Claude Code plugin ${r.name}@${r.version}${r.marketplace ? ` from marketplace ${r.marketplace}` : ""} (${r.scope}: ${r.root})${parts.length ? `\n${parts.join("\n")}` : ""}`;
}
