/**
 * Claude Code plugins as coil packages: install (from a folder, git URL, tarball or `<plugin>@<marketplace>`)
 * into `$COIL_HOME/claude-plugins/<name>/` (`.coil/claude-plugins/` with `project`), record them in the
 * `claudePlugins` section of the lock file, remove, enable/disable, list. What an installed, enabled plugin
 * contributes is read by the consuming plugins through lib/claude-plugins.ts.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CliStreams } from "../../../kernel/index.js";
import { splitFrontMatter } from "../../../lib/front-matter.js";
import { coilHome } from "../../../lib/paths.js";
import {
  LOCK_FILE_NAME,
  NAME,
  PLUGIN_MANIFEST,
  agentsOf,
  commandsOf,
  hooksOf,
  installedClaudePlugins,
  lspServersOf,
  mcpServersOf,
  readClaudeLock,
  readManifest,
  scopeDirs,
  skillDirsOf,
  type ClaudeLockEntry,
  type ClaudeManifest,
  type PluginFolder,
} from "../../../lib/claude-plugins.js";
import { fetchSource, folderIntegrity, sourceKind, type Fetched } from "./fetch.js";
import { findMarketplace, marketplacePluginSource } from "./marketplace.js";

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

function isClaudePluginDir(dir: string): boolean {
  if (!existsSync(join(dir, PLUGIN_MANIFEST))) return false;
  try {
    return !JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).coil;
  } catch {
    return true;
  }
}

/** The offers of a plugin folder. */
export function describePlugin(
  p: PluginFolder,
): Pick<InstallReport, "commands" | "skills" | "agents" | "hooks" | "mcpServers" | "lspServers"> {
  const skills: string[] = [];
  for (const dir of skillDirsOf(p)) {
    for (const sub of listDirs(dir)) {
      const file = join(dir, sub, "SKILL.md");
      if (!existsSync(file)) continue;
      const { data } = splitFrontMatter(readFileSync(file, "utf8"));
      skills.push(typeof data?.name === "string" ? data.name : sub);
    }
  }
  const agents = agentsOf(p).flatMap(({ file }) => {
    const { data } = splitFrontMatter(readFileSync(file, "utf8"));
    return typeof data?.name === "string" ? [`${p.name}:${data.name}`] : [];
  });
  const hooks = hooksOf(p).flatMap((h) =>
    Object.entries(h.hooks).flatMap(([event, groups]) =>
      (Array.isArray(groups) ? groups : []).map((g: { matcher?: unknown }) =>
        typeof g?.matcher === "string" && g.matcher && g.matcher !== "*" ? `${event}(${g.matcher})` : event,
      ),
    ),
  );
  return {
    commands: commandsOf(p).map((c) => `/${c.name}`),
    skills,
    agents,
    hooks,
    mcpServers: mcpServersOf(p).flatMap((m) => Object.keys(m.servers)),
    lspServers: lspServersOf(p).flatMap((m) => Object.keys(m.servers)),
  };
}

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
    if (readManifest(root) && folderIntegrity(root) === entry.integrity) {
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
): InstallReport {
  const notes =
    scope === "project" && !trusted
      ? ["project plugins contribute only while the project is trusted (coil trust)"]
      : [];
  return {
    name: p.name,
    version: entry.version,
    scope,
    root: p.root,
    spec: entry.spec,
    ...(entry.marketplace ? { marketplace: entry.marketplace } : {}),
    enabled: entry.enabled !== false,
    ...describePlugin(p),
    notes,
  };
}

/**
 * Install a Claude Code plugin: fetch it, check `.claude-plugin/plugin.json` (a marketplace entry with
 * `strict: false` may stand in for it), move it into place (replacing an older install of the same name),
 * record it in the lock file, enabled. Throws an Error naming what failed and what to do.
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
  let stand: Partial<ClaudeManifest> | undefined;
  const mref = marketplaceRef(spec, o.home);
  if (mref) {
    const found = marketplacePluginSource(o.home, mref.marketplace, mref.plugin, o.cwd);
    ({ kind, location, ref } = found);
    marketplace = mref.marketplace;
    if (found.entry.strict === false) stand = found.entry as Partial<ClaudeManifest>;
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
    let manifest = readManifest(fetched.dir);
    if (!manifest && stand?.name) {
      const { source: _s, strict: _t, category: _c, tags: _g, ...rest } = stand as Record<string, unknown>;
      mkdirSync(join(fetched.dir, ".claude-plugin"), { recursive: true });
      writeFileSync(join(fetched.dir, PLUGIN_MANIFEST), JSON.stringify(rest, null, 2) + "\n");
      manifest = readManifest(fetched.dir);
    }
    if (!manifest) {
      const hasFile = existsSync(join(fetched.dir, PLUGIN_MANIFEST));
      throw new Error(
        `${spec} is not a Claude Code plugin: ${hasFile ? `${PLUGIN_MANIFEST} has no "name" or is not valid JSON` : `no ${PLUGIN_MANIFEST} in it`}`,
      );
    }
    if (!NAME.test(manifest.name))
      throw new Error(
        `${spec}: plugin name '${manifest.name}' in ${PLUGIN_MANIFEST} must be letters, digits, '.', '_' or '-'`,
      );
    const root = join(scope.pluginsDir, manifest.name);
    const entry: ClaudeLockEntry = {
      spec: o.pin?.spec ?? (kind === "dir" && !mref ? location : spec),
      source: kind,
      ...(marketplace ? { marketplace } : {}),
      version: typeof manifest.version === "string" ? manifest.version : "0.0.0",
      resolved: fetched.resolved,
      integrity: folderIntegrity(fetched.dir),
      enabled: o.pin?.enabled ?? true,
    };
    if (o.pin?.name && o.pin.name !== manifest.name)
      throw new Error(`${spec} now holds plugin '${manifest.name}', not '${o.pin.name}' as the lock file says`);
    if (o.pin?.integrity && o.pin.integrity !== entry.integrity && kind !== "dir") {
      throw new Error(
        `${manifest.name} from ${fetched.resolved}: integrity ${entry.integrity} does not match the lock's ${o.pin.integrity}; the lock file was left as it is (install it again by name to accept the new content)`,
      );
    }
    const old = join(scope.pluginsDir, `.old-${manifest.name}-${process.pid}`);
    if (existsSync(root)) renameSync(root, old);
    renameSync(fetched.dir, root);
    rmSync(old, { recursive: true, force: true });
    writeClaudeLock(scope.lockDir, (s) => {
      s[manifest!.name] = entry;
    });
    return report({ name: manifest.name, root, manifest }, entry, scope.scope, o.project ? o.trusted : true);
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
  const manifest = readManifest(found.root) ?? { name };
  const r = report({ name, root: found.root, manifest }, { ...found.entry, enabled: false }, found.scope, true);
  writeClaudeLock(found.lockDir, (s) => void delete s[name]);
  rmSync(found.root, { recursive: true, force: true });
  return r;
}

/** Enable or disable without uninstalling (the lock entry's `enabled`). */
export async function setClaudePluginEnabled(name: string, enabled: boolean, o: ClaudeOptions): Promise<InstallReport> {
  const found = findInstalled(name, o);
  const manifest = readManifest(found.root);
  if (!manifest)
    throw new Error(
      `Claude Code plugin '${name}' is recorded in ${join(found.lockDir, LOCK_FILE_NAME)} but ${join(found.root, PLUGIN_MANIFEST)} is missing; reinstall it: coil install ${found.entry.spec}`,
    );
  writeClaudeLock(found.lockDir, (s) => {
    s[name] = { ...s[name]!, enabled };
  });
  return report({ name, root: found.root, manifest }, { ...found.entry, enabled }, found.scope, true);
}

/** Every installed Claude Code plugin of the user, and of the project (`trusted` says whether they load). */
export async function listClaudePlugins(
  o: Omit<ClaudeOptions, "project"> & { trusted?: boolean },
): Promise<InstallReport[]> {
  const user = installedClaudePlugins({ home: o.home }, { all: true }).map((p) => report(p, p.entry, "user", true));
  const projectScope = scopeDirs(o.home, o.cwd, true);
  const project = Object.entries(readClaudeLock(projectScope.lockDir)).flatMap(([name, entry]) => {
    const root = join(projectScope.pluginsDir, name);
    const manifest = readManifest(root);
    return manifest ? [report({ name, root, manifest }, entry, "project", o.trusted)] : [];
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
