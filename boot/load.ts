/**
 * Loading plugin modules: built-in ids, paths (`.ts` through jiti, loaded lazily; `.js` natively) and
 * npm packages. The result is the module's default export, checked with `isPlugin()`.
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, extname, isAbsolute, join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { CoilError, messageOf, type CoilErrorOptions } from "../kernel/errors.js";
import { isPlugin, type Plugin } from "../api/plugin.js";
import { builtinModule, builtinPluginIds, nodeModules } from "./paths.js";
import { npmSpec } from "../lib/npm-spec.js";
import { nearest } from "./preset.js";

export interface PluginRef {
  /** As the user wrote it (for messages). */
  ref: string;
  /** name = built-in id or unscoped npm package; path = absolute file path; npm = package name. */
  kind: "name" | "path" | "npm";
  /** For kind "path": the absolute path; otherwise the package or built-in name. */
  key: string;
  /** The preset file that listed it (for errors). */
  source?: { file: string; line?: number; column?: number };
  /** Directory to resolve npm packages from (the preset file's dir, or cwd). */
  baseDir: string;
}

export interface LoadOptions {
  /** `$COIL_HOME`; npm packages are also looked up in `${home}/packages/node_modules`. */
  home: string;
  /** The working directory when the project is not explicitly trusted: packages are not resolved from it or by walking up from it (its code must not run). */
  untrustedProject?: string;
  /** A rebuild in process (`/reload`): native modules of path and npm plugins are imported again, not from Node's cache. */
  fresh?: number;
}

const TS_EXTENSIONS = new Set([".ts", ".mts", ".cts", ".tsx"]);

/** The plugins a reference names: one, or every `coil.plugins` entry of an npm package. */
export async function loadPlugin(ref: PluginRef, options: LoadOptions): Promise<Plugin[]> {
  if (ref.kind === "path") {
    if (!isFile(ref.key)) throw notFound(ref, `plugin file ${ref.key} does not exist`);
    return [await importPlugin(ref.key, ref, options.fresh)];
  }
  // A name is a built-in id, else an unscoped npm package.
  const ids = ref.kind === "name" ? builtinPluginIds() : [];
  if (ids.includes(ref.key)) {
    const file = builtinModule("plugins", ref.key, "index");
    if (!file) throw notFound(ref, `built-in plugin '${ref.key}' has no index module`);
    return [await importPlugin(file, ref)];
  }
  const found = resolvePackage(ref.key, ref.baseDir, options.home, options.untrustedProject);
  if (found.files) return Promise.all(found.files.map((file) => importPlugin(file, ref, options.fresh)));
  if (found.refused) {
    throw notFound(
      ref,
      `npm package '${ref.key}' was found only in ${found.refused}, by way of this project's folders, and the project is not trusted, so it was not loaded`,
      {
        hint: `trust the project first (coil trust ${options.untrustedProject}, or --trust for one run), or install it for yourself: coil install ${ref.key}`,
      },
    );
  }
  if (ref.kind === "npm") {
    const spec = npmSpec(ref.ref).spec;
    throw notFound(
      ref,
      `npm package '${ref.key}' is not installed (looked from ${ref.baseDir} and in ${join(options.home, "packages")})`,
      {
        hint: `run \`npm install ${spec}\` in the project, or \`coil install ${spec}\` (into ${join(options.home, "packages")})`,
        npmSpec: spec,
      },
    );
  }
  const near = nearest(ref.key, ids);
  throw notFound(
    ref,
    `plugin '${ref.ref}' is neither a built-in nor an installed npm package${near ? ` (did you mean '${near}'?)` : ""}`,
    {
      hint: ids.length ? `built-in plugins: ${ids.join(", ")}` : "no built-in plugins were found",
    },
  );
}

/**
 * A built-in plugin's `manifest.json` (next to its index module), read without importing the plugin.
 * `serves` lists the front-end modes and subcommands the plugin is for: a run that is known to need
 * none of them does not import it (see `needsPlugin`). A plugin may declare it only when nothing it
 * registers acts outside those modes and subcommands (test/boot/lazy-plugins.test.ts checks it).
 */
export interface PluginManifest {
  serves?: { modes?: string[]; subcommands?: string[] };
}

const manifests = new Map<string, PluginManifest | undefined>();

export function builtinManifest(id: string): PluginManifest | undefined {
  if (manifests.has(id)) return manifests.get(id);
  const index = builtinModule("plugins", id, "index");
  let manifest: PluginManifest | undefined;
  try {
    manifest = index
      ? (JSON.parse(readFileSync(join(dirname(index), "manifest.json"), "utf8")) as PluginManifest)
      : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT")
      throw new CoilError(
        "PLUGIN_INVALID",
        `built-in plugin '${id}' has an unreadable manifest.json: ${messageOf(error)}`,
        { phase: "resolve" },
      );
  }
  manifests.set(id, manifest);
  return manifest;
}

/** What a run is, as far as the command line tells before any plugin loads. */
export interface RunShape {
  /** The front-end mode (`text` for -p, or --mode's value). */
  mode: string;
  /** Every word of the command line that is not an option: the subcommand is one of them. */
  words: readonly string[];
}

/**
 * Whether a preset entry must be imported for this run: always, unless a built-in's manifest says it
 * serves neither the run's mode nor any of its words. An entry the preset gives options to is always
 * loaded (a team preset's `packages: { claudePlugins: [...] }` installs them on any first run).
 */
export function needsPlugin(
  ref: Pick<PluginRef, "kind" | "key"> & { options?: unknown },
  run: RunShape | undefined,
): boolean {
  if (!run || ref.kind !== "name" || !builtinPluginIds().includes(ref.key)) return true;
  if (ref.options && typeof ref.options === "object" && Object.keys(ref.options).length) return true;
  const serves = builtinManifest(ref.key)?.serves;
  if (!serves) return true;
  return (serves.modes ?? []).includes(run.mode) || (serves.subcommands ?? []).some((s) => run.words.includes(s));
}

/** Which of an entry's plugins gets its options: the one whose id is the package name, else the first. */
export function optionsTarget(plugins: Plugin[], key: string): number {
  return Math.max(
    0,
    plugins.findIndex((p) => p.id === key),
  );
}

function notFound(ref: PluginRef, detail: string, extra: CoilErrorOptions = {}): CoilError {
  return new CoilError("PLUGIN_NOT_FOUND", detail, { phase: "resolve", ...ref.source, ...extra });
}

function listedIn(ref: PluginRef): string {
  const s = ref.source;
  return s ? `; listed in ${s.file}${s.line ? `:${s.line}${s.column ? `:${s.column}` : ""}` : ""}` : "";
}

const isFile = (path: string): boolean => existsSync(path) && statSync(path).isFile();

const loadedFrom = new WeakMap<Plugin, string>();
/** The module file a loaded plugin came from. */
export const fileOf = (plugin: Plugin): string | undefined => loadedFrom.get(plugin);

async function importPlugin(file: string, ref: PluginRef, fresh?: number): Promise<Plugin> {
  let mod: unknown;
  // A query makes Node load the file again (its own imports still come from the cache).
  const url = `${pathToFileURL(file).href}${fresh ? `?reload=${fresh}` : ""}`;
  try {
    mod = TS_EXTENSIONS.has(extname(file)) ? await importTs(file) : await import(url);
  } catch (cause) {
    const detail = `cannot import plugin '${ref.ref}': ${messageOf(cause).replace(/\s+/g, " ").trim()}${listedIn(ref)}`;
    throw new CoilError("PLUGIN_LOAD_FAILED", detail, { phase: "import", file, ...locationOf(cause, file), cause });
  }
  const exported = (mod as { default?: { default?: unknown } } | null | undefined)?.default;
  const candidates: unknown[] = [exported, exported?.default, mod];
  const plugin = candidates.find((c) => isPlugin(c));
  if (plugin) {
    loadedFrom.set(plugin as Plugin, file);
    return plugin as Plugin;
  }
  const fn = candidates.some((c) => typeof c === "function")
    ? " (a function returning a plugin is not accepted: export the plugin object itself)"
    : "";
  const detail = `'${ref.ref}' does not default-export definePlugin({ id, setup })${fn}${listedIn(ref)}`;
  throw new CoilError("PLUGIN_INVALID", detail, { phase: "import", file });
}

/** Line and column of a syntax error, from babel's `loc` or from the first stack frame in `file`. */
function locationOf(error: unknown, file: string): { line?: number; column?: number } {
  const e = error as { loc?: { line?: number; column?: number }; stack?: string } | undefined;
  if (e?.loc?.line) return { line: e.loc.line, column: e.loc.column === undefined ? undefined : e.loc.column + 1 };
  for (const prefix of [pathToFileURL(file).href, file]) {
    const m = e?.stack?.split(`${prefix}:`)[1]?.match(/^(\d+)(?::(\d+))?/);
    if (m) return { line: Number(m[1]), column: m[2] ? Number(m[2]) : undefined };
  }
  return {};
}

type JitiLike = { import(id: string, opts?: { default?: true }): Promise<unknown> };
let jiti: Promise<JitiLike> | undefined;

/**
 * `.ts` plugins go through jiti, imported on first use only. `coil` and `typebox` (with every subpath in
 * its exports map) are virtual modules bound to the host's own module instances, so a plugin outside the
 * repo, with no node_modules, shares the kernel's classes (`CoilError`) and TypeBox with the host.
 */
function importTs(file: string): Promise<unknown> {
  jiti ??= (async () => {
    const { createJiti } = await import("jiti");
    const virtualModules: Record<string, unknown> = {
      coil: await import(pathToFileURL(builtinModule("api", "index")!).href),
    };
    // Literal specifiers, so a bundled build binds plugins to the very TypeBox copy the kernel uses.
    const typebox = await Promise.all([
      import("typebox"),
      import("typebox/compile"),
      import("typebox/error"),
      import("typebox/format"),
      import("typebox/guard"),
      import("typebox/schema"),
      import("typebox/system"),
      import("typebox/type"),
      import("typebox/value"),
    ]);
    ["", "/compile", "/error", "/format", "/guard", "/schema", "/system", "/type", "/value"].forEach((sub, i) => {
      virtualModules[`typebox${sub}`] = typebox[i];
    });
    return createJiti(import.meta.url, { moduleCache: false, interopDefault: true, virtualModules }) as JitiLike;
  })();
  return jiti.then((j) => j.import(file));
}

/**
 * The files to import for an npm package (every `coil.plugins` entry): from `baseDir` upwards, then
 * `${home}/packages/node_modules`. Folders inside an untrusted project are skipped (`refused` names the one found there).
 */
function resolvePackage(
  name: string,
  baseDir: string,
  home: string,
  untrusted?: string,
): { files?: string[]; refused?: string } {
  const project = untrusted !== undefined && existsSync(untrusted) ? realpathSync(untrusted) : undefined;
  const inProject = (d: string) => {
    if (project === undefined) return false;
    const rel = relative(project, existsSync(d) ? realpathSync(d) : d);
    return !rel.startsWith("..") && !isAbsolute(rel);
  };
  // A project preset (`.coil/preset.yaml`) also finds the project's own packages (`.coil/packages`, `coil install --project`).
  const own = basename(baseDir) === ".coil" ? [join(baseDir, "packages", "node_modules", name)] : [];
  const walked = [...own, ...nodeModules(name, baseDir)].filter((d) => existsSync(join(d, "package.json")));
  // Names given in the untrusted project (the CLI's --plugin) never resolve by walking up from it: any folder on the way may be the project's.
  const fromProject = inProject(baseDir);
  const mine = join(home, "packages", "node_modules", name);
  const usable = [
    ...walked.filter((d) => !fromProject && !inProject(d)),
    ...(existsSync(join(mine, "package.json")) ? [mine] : []),
  ];
  const pkgDir = usable[0];
  if (!pkgDir) return { refused: walked[0] };
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as PackageJson;
  const listed: string[] = Array.isArray(pkg.coil?.plugins) && pkg.coil.plugins.length ? pkg.coil.plugins : [];
  const exp = pkg.exports;
  const dot =
    exp && typeof exp === "object" && !Array.isArray(exp) && Object.keys(exp).some((k) => k.startsWith("."))
      ? (exp as Record<string, unknown>)["."]
      : exp;
  const entry = pickExport(dot) ?? pkg.module ?? pkg.main;
  // A coil package that lists no plugins and has no entry point offers only presets, skills, templates or agents.
  const files = listed.length ? listed : entry || !isPlainObject(pkg.coil) ? [entry ?? "index.js"] : [];
  return {
    files: files
      .map((f) => join(pkgDir, f))
      .map((file) => [file, `${file}.js`, join(file, "index.js")].find(isFile) ?? file),
  };
}

/** The fields of a package.json that say where a package's plugins are. */
type PackageJson = { coil?: { plugins?: unknown }; exports?: unknown; module?: string; main?: string };

const isPlainObject = (v: unknown): boolean => typeof v === "object" && v !== null && !Array.isArray(v);

/** The `import`-side target of an exports entry (conditions may nest). */
function pickExport(target: unknown): string | undefined {
  if (typeof target === "string") return target;
  if (Array.isArray(target)) return pickExport(target[0]);
  if (!target || typeof target !== "object") return undefined;
  return ["import", "node", "default", "require"]
    .map((key) => pickExport((target as Record<string, unknown>)[key]))
    .find(Boolean);
}
