/**
 * Claude Code plugin marketplaces: a folder or git repository with `.claude-plugin/marketplace.json`
 * (`name`, `plugins[]` each with `name` and `source`). `coil marketplace add | list | remove | update`
 * keeps them in `$COIL_HOME/claude-marketplaces/` (a git marketplace is cloned there; a folder is read
 * where it is), and `coil install <plugin>@<marketplace>` installs one of their plugins.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import type { CliStreams } from "../../../api/index.js";
import { NAME } from "../../../lib/claude-plugins.js";
import { coilHome } from "../../../lib/paths.js";
import { fetchSource, sourceKind, type Fetched, type SourceKind } from "./fetch.js";

export const MARKETPLACE_FILE = join(".claude-plugin", "marketplace.json");

export interface MarketplaceRecord {
  /** As the user named it. */
  spec: string;
  kind: "dir" | "git";
  /** The folder read: the user's folder, or the clone in `$COIL_HOME/claude-marketplaces/<name>`. */
  dir: string;
  /** The git URL and commit of the clone. */
  resolved?: string;
}

export interface MarketplacePlugin {
  name: string;
  source: unknown;
  description?: string;
  version?: string;
  strict?: boolean;
  [key: string]: unknown;
}

export interface Marketplace {
  name: string;
  plugins: MarketplacePlugin[];
  metadata?: { pluginRoot?: string; description?: string; version?: string };
  [key: string]: unknown;
}

const storeDir = (home: string) => join(home, "claude-marketplaces");
const storeFile = (home: string) => join(storeDir(home), "marketplaces.json");

export function readStore(home: string): Record<string, MarketplaceRecord> {
  try {
    const data = JSON.parse(readFileSync(storeFile(home), "utf8"));
    return data && typeof data === "object" && !Array.isArray(data) ? data : {};
  } catch {
    return {};
  }
}

function writeStore(home: string, store: Record<string, MarketplaceRecord>): void {
  mkdirSync(storeDir(home), { recursive: true });
  const file = storeFile(home);
  writeFileSync(
    `${file}.tmp`,
    JSON.stringify(Object.fromEntries(Object.entries(store).sort(([a], [b]) => a.localeCompare(b))), null, 2) + "\n",
  );
  renameSync(`${file}.tmp`, file);
}

export function findMarketplace(home: string, name: string): MarketplaceRecord | undefined {
  return readStore(home)[name];
}

/** Read and check `.claude-plugin/marketplace.json` of a folder. Throws naming the file and the key. */
export function readMarketplace(dir: string): Marketplace {
  const file = join(dir, MARKETPLACE_FILE);
  if (!existsSync(file)) throw new Error(`${dir} is not a Claude Code marketplace: ${MARKETPLACE_FILE} is missing`);
  // As parsed, unchecked until the tests below (which look at a field only once `data` is an object).
  let data: { name?: unknown; plugins?: unknown } | null;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (!data || typeof data !== "object" || typeof data.name !== "string" || !NAME.test(data.name))
    throw new Error(`${file}: "name" must be a word of letters, digits, '.', '_' or '-'`);
  if (!Array.isArray(data.plugins)) throw new Error(`${file}: "plugins" must be an array of { "name", "source" }`);
  data.plugins.forEach((p: { name?: unknown; source?: unknown } | null, i: number) => {
    if (!p || typeof p.name !== "string" || !NAME.test(p.name))
      throw new Error(`${file}: plugins[${i}].name must be a word of letters, digits, '.', '_' or '-'`);
    if (typeof p.source !== "string" && (!p.source || typeof p.source !== "object"))
      throw new Error(
        `${file}: plugins[${i}] (${p.name}) has no "source" (a relative path, a git URL or {"source": "github", "repo": "owner/repo"})`,
      );
  });
  return data as Marketplace;
}

/** Where one plugin of a marketplace comes from: a folder inside the marketplace, or a git repository. */
export function marketplacePluginSource(
  home: string,
  marketplace: string,
  plugin: string,
  cwd: string,
): { kind: SourceKind; location: string; ref?: string; entry: MarketplacePlugin; atRoot?: boolean } {
  const rec = findMarketplace(home, marketplace);
  if (!rec)
    throw new Error(
      `no marketplace '${marketplace}' (coil marketplace list; add one with coil marketplace add <git URL | folder>)`,
    );
  const m = readMarketplace(rec.dir);
  const entry = m.plugins.find((p) => p.name === plugin);
  if (!entry)
    throw new Error(
      `marketplace '${marketplace}' (${join(rec.dir, MARKETPLACE_FILE)}) has no plugin '${plugin}'; it has: ${m.plugins.map((p) => p.name).join(", ") || "none"}`,
    );
  const src = entry.source;
  if (typeof src === "string") {
    const remote = /^(github:|git\+|https?:\/\/|ssh:\/\/|git@|file:\/\/)/.test(src) ? sourceKind(src, cwd) : undefined;
    if (remote) return { kind: remote.kind, location: remote.location, entry };
    const base = m.metadata?.pluginRoot && !/^\.\.?\//.test(src) ? join(m.metadata.pluginRoot, src) : src;
    const path = resolve(rec.dir, base);
    const rel = relative(rec.dir, path);
    if (rel.startsWith("..") || rel.startsWith(sep))
      throw new Error(`marketplace '${marketplace}': plugin '${plugin}' has source ${src}, outside the marketplace`);
    // A plugin at the marketplace's root (`"source": "./"`): Claude Code reads only the components its entry lists.
    return { kind: "dir", location: path, entry, ...(rel === "" ? { atRoot: true } : {}) };
  }
  const o = src as { source?: string; repo?: string; url?: string; ref?: string; path?: string };
  if (o.source === "github" && typeof o.repo === "string")
    return { kind: "git", location: `https://github.com/${o.repo}.git`, ref: o.ref, entry };
  if (typeof o.url === "string") return { kind: "git", location: o.url, ref: o.ref, entry };
  throw new Error(
    `marketplace '${marketplace}': plugin '${plugin}' has a source coil does not know: ${JSON.stringify(src)} (known: a relative path, a git URL, {"source": "github", "repo": "owner/repo"}, {"source": "url", "url": "..."})`,
  );
}

/** Add (or re-add) a marketplace. A git one is cloned into `$COIL_HOME/claude-marketplaces/<name>`. */
export async function addMarketplace(
  spec: string,
  home: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ name: string; record: MarketplaceRecord; marketplace: Marketplace }> {
  const src = sourceKind(spec, cwd);
  if (!src || src.kind === "tarball") throw new Error(`'${spec}' is not a git URL or a folder`);
  if (src.kind === "dir") {
    const marketplace = readMarketplace(src.location);
    const record: MarketplaceRecord = { spec, kind: "dir", dir: src.location };
    writeStore(home, { ...readStore(home), [marketplace.name]: record });
    return { name: marketplace.name, record, marketplace };
  }
  let fetched: Fetched | undefined;
  try {
    fetched = await fetchSource("git", src.location, storeDir(home), env);
    const marketplace = readMarketplace(fetched.dir);
    const dir = join(storeDir(home), marketplace.name);
    rmSync(dir, { recursive: true, force: true });
    renameSync(fetched.dir, dir);
    const record: MarketplaceRecord = { spec, kind: "git", dir, resolved: fetched.resolved };
    writeStore(home, { ...readStore(home), [marketplace.name]: record });
    return { name: marketplace.name, record, marketplace };
  } finally {
    if (fetched) rmSync(fetched.tmp, { recursive: true, force: true });
  }
}

export function removeMarketplace(name: string, home: string): MarketplaceRecord {
  const store = readStore(home);
  const rec = store[name];
  if (!rec)
    throw new Error(
      `no marketplace '${name}'${Object.keys(store).length ? ` (added: ${Object.keys(store).join(", ")})` : ""}`,
    );
  delete store[name];
  writeStore(home, store);
  if (rec.kind === "git") rmSync(rec.dir, { recursive: true, force: true });
  return rec;
}

const say = (io: CliStreams, text: string) => void io.stdout.write(`${text}\n`);
const fail = (io: CliStreams, text: string, code = 2) => {
  io.stderr.write(`coil marketplace: ${text}\n`);
  return code;
};

/**
 * `coil marketplace add <git URL | folder> | list [--json] | remove <name...> | update [name...]`; the
 * command line has parsed the arguments (plugins/packages/index.ts declares them).
 */
export async function marketplaceCommand(
  verb: "add" | "list" | "remove" | "update",
  rest: string[],
  options: { json?: boolean },
  io: CliStreams,
): Promise<number> {
  const home = coilHome(io.env);
  try {
    if (verb === "add") {
      const { name, record, marketplace } = await addMarketplace(rest[0]!, home, io.cwd, io.env);
      say(
        io,
        `added marketplace ${name} (${record.kind === "git" ? record.resolved : record.dir}) with ${marketplace.plugins.length} plugin(s):`,
      );
      for (const p of marketplace.plugins) say(io, `  ${p.name}${p.description ? `  ${p.description}` : ""}`);
      say(io, `install one with: coil install <plugin>@${name}`);
      return 0;
    }
    if (verb === "list") {
      const store = readStore(home);
      const rows = Object.entries(store).map(([name, rec]) => {
        try {
          return {
            name,
            ...rec,
            plugins: readMarketplace(rec.dir).plugins.map((p) => ({ name: p.name, description: p.description ?? "" })),
          };
        } catch (error) {
          return { name, ...rec, plugins: [], error: (error as Error).message };
        }
      });
      if (options.json) {
        say(io, JSON.stringify(rows, null, 2));
        return 0;
      }
      if (!rows.length) {
        say(io, "no marketplaces (add one: coil marketplace add <git URL | folder>)");
        return 0;
      }
      for (const r of rows) {
        say(io, `${r.name}  ${r.spec}${"error" in r ? `  (cannot read: ${r.error})` : ""}`);
        for (const p of r.plugins) say(io, `  ${p.name}@${r.name}${p.description ? `  ${p.description}` : ""}`);
      }
      return 0;
    }
    if (verb === "remove") {
      for (const name of rest) removeMarketplace(name, home);
      say(
        io,
        `removed marketplace${rest.length > 1 ? "s" : ""} ${rest.join(", ")} (plugins installed from ${rest.length > 1 ? "them" : "it"} stay installed; coil remove <plugin>)`,
      );
      return 0;
    }
    // update
    const store = readStore(home);
    const names = rest.length ? rest : Object.keys(store);
    const unknown = names.filter((n) => !store[n]);
    if (unknown.length) return fail(io, `no marketplace ${unknown.join(", ")}`);
    for (const name of names) {
      const rec = store[name]!;
      const before = rec.resolved;
      const { record, marketplace } = await addMarketplace(
        rec.spec,
        home,
        rec.kind === "dir" ? rec.dir : io.cwd,
        io.env,
      );
      say(
        io,
        `${name}: ${record.kind === "git" ? (before === record.resolved ? "up to date" : `updated to ${record.resolved}`) : "read again"} (${marketplace.plugins.length} plugin(s))`,
      );
    }
    return 0;
  } catch (error) {
    return fail(io, (error as Error).message, 1);
  }
}
