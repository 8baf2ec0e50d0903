/**
 * Where Pi extensions are, found as Pi finds them: `<agent dir>/extensions/*.ts|*.js` and `*\/index.ts`
 * (a folder with a package.json uses its `pi.extensions`), `.pi/extensions/` at the project root (only in a
 * trusted project), the `extensions` and `packages` of Pi's settings.json files, Pi packages installed
 * with `coil install` (`$COIL_HOME/packages`, and a trusted project's `.coil/packages` with --project), and
 * `-e/--extension` paths for one run. Only the file
 * system is read here: nothing is imported.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, extname, join, resolve } from "node:path";
import { piAgentDir } from "../../lib/compat.js";
import { projectRoot } from "../../lib/locations.js";
import { disabledPackages } from "../../lib/preset-file.js";

export type ExtensionScope = "user" | "project" | "cli" | "package";

export interface FoundExtension {
  /** The module file to import. */
  file: string;
  /** A short name for messages: the file's name, or its folder's for an index file, or the package's. */
  name: string;
  scope: ExtensionScope;
  /** Where it was found (a folder, a settings file, a package), for `coil doctor`. */
  from: string;
}

export interface Discovery {
  found: FoundExtension[];
  /** What was not loaded, and why (an untrusted project's extensions, a missing path, a glob). */
  skipped: string[];
}

export interface DiscoverOptions {
  cwd: string;
  /** `$COIL_HOME`: Pi packages installed with `coil install` are in `packages/node_modules`. */
  home: string;
  trusted: boolean;
  /** `-e/--extension` paths (absolute). */
  cli?: readonly string[];
  env?: NodeJS.ProcessEnv;
}

const MODULE = new Set([".ts", ".js", ".mjs", ".mts", ".cjs", ".cts"]);
const INDEX = ["index.ts", "index.js", "index.mjs", "index.mts"];

const isFile = (p: string) => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};
const isDir = (p: string) => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

type PiManifest = { name?: string; pi?: { extensions?: unknown }; keywords?: unknown };

function readManifest(dir: string): PiManifest | undefined {
  const file = join(dir, "package.json");
  if (!isFile(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as PiManifest;
  } catch {
    return undefined;
  }
}

/**
 * The extension modules of one path: a module file is itself; a folder is its package.json's
 * `pi.extensions` entries, else its index file, else (a package root) the modules in its `extensions/`.
 */
function entriesOf(
  path: string,
  scope: ExtensionScope,
  from: string,
  out: Discovery,
  asPackage = false,
  name?: string,
): void {
  if (isFile(path)) {
    if (MODULE.has(extname(path))) out.found.push({ file: path, name: name ?? nameOf(path), scope, from });
    else out.skipped.push(`${path} (${from}): not a .ts or .js module`);
    return;
  }
  if (!isDir(path)) {
    out.skipped.push(`${path} (${from}): does not exist`);
    return;
  }
  const manifest = readManifest(path);
  const listed = manifest?.pi?.extensions;
  if (Array.isArray(listed)) {
    for (const entry of listed) {
      if (typeof entry !== "string" || /[*?[\]{}]/.test(entry) || entry.startsWith("!")) {
        out.skipped.push(
          `${JSON.stringify(entry)} in ${join(path, "package.json")}: glob patterns and !exclusions are not read; name the file or folder`,
        );
        continue;
      }
      const target = resolve(path, entry);
      if (isDir(target) && !INDEX.some((i) => isFile(join(target, i))))
        modulesIn(target, scope, from, out, manifest?.name);
      // a package's one listed module is the package (pi-aliases lists ./src/index.ts: "pi-aliases", not "src")
      else entriesOf(target, scope, from, out, false, listed.length === 1 ? manifest?.name : undefined);
    }
    return;
  }
  const index = INDEX.map((i) => join(path, i)).find(isFile);
  if (index) {
    out.found.push({ file: index, name: manifest?.name ?? nameOf(path), scope, from });
    return;
  }
  if (asPackage && isDir(join(path, "extensions"))) {
    modulesIn(join(path, "extensions"), scope, from, out, manifest?.name);
    return;
  }
  out.skipped.push(`${path} (${from}): no index.ts/index.js and no pi.extensions in a package.json`);
}

/** Pi's auto-discovery in a folder: its `*.ts`/`*.js` files and each sub-folder (an index file or a package.json). */
function modulesIn(dir: string, scope: ExtensionScope, from: string, out: Discovery, pkg?: string): void {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return;
  }
  for (const n of names) {
    if (n.startsWith(".") || n === "node_modules") continue;
    const p = join(dir, n);
    if (isFile(p)) {
      if (MODULE.has(extname(p)) && !n.endsWith(".d.ts"))
        out.found.push({ file: p, name: pkg ? `${pkg}/${nameOf(p)}` : nameOf(p), scope, from });
    } else if (isDir(p)) {
      const manifest = readManifest(p);
      if (Array.isArray(manifest?.pi?.extensions) || INDEX.some((i) => isFile(join(p, i))))
        entriesOf(p, scope, from, out);
    }
  }
}

function nameOf(file: string): string {
  const base = file.split("/").pop() ?? file;
  const stem = base.replace(/\.[cm]?[jt]s$/, "");
  return stem === "index" ? (dirname(file).split("/").pop() ?? stem) : stem;
}

/** The folder of a `packages` entry of Pi's settings (npm, git or a local path), if it is installed. */
function packageDir(
  spec: string,
  settingsFile: string,
  o: { home: string; agentDir: string; project?: string },
): string | string[] {
  if (spec.startsWith("npm:")) {
    const body = spec.slice(4);
    const at = body.indexOf("@", 1);
    const name = at > 0 ? body.slice(0, at) : body;
    const dirs = [
      join(o.home, "packages", "node_modules", name),
      ...(o.project ? [join(o.project, ".pi", "npm", "node_modules", name)] : []),
      // Pi installs user packages with `npm install -g`: the global folder of the Node that runs coil.
      join(dirname(dirname(process.execPath)), "lib", "node_modules", name),
    ];
    return dirs.find((d) => isFile(join(d, "package.json"))) ?? dirs;
  }
  const git = spec.match(/^(?:git:|https?:\/\/|ssh:\/\/)(?:git@)?([^@]+?)(?:\.git)?(?:@[^/]*)?$/);
  if (git) {
    const path = git[1]!.replace(":", "/");
    const dirs = [join(o.agentDir, "git", path), ...(o.project ? [join(o.project, ".pi", "git", path)] : [])];
    return dirs.find(isDir) ?? dirs;
  }
  return resolve(dirname(settingsFile), spec.replace(/^~(?=$|\/)/, homedir()));
}

/** Every Pi extension this run should load, in Pi's order: user, settings, project, packages, then `-e`. */
export function discover(o: DiscoverOptions): Discovery {
  const env = o.env ?? process.env;
  const userHome = env.HOME || homedir();
  const agentDir = piAgentDir(userHome, env);
  const out: Discovery = { found: [], skipped: [] };
  const root = projectRoot(o.cwd);
  const project = o.trusted ? root : undefined;

  const userDir = join(agentDir, "extensions");
  if (isDir(userDir)) modulesIn(userDir, "user", userDir, out);

  const projectDir = join(root, ".pi", "extensions");
  if (isDir(projectDir) && projectDir !== userDir) {
    if (o.trusted) modulesIn(projectDir, "project", projectDir, out);
    else
      out.skipped.push(
        `${projectDir}: the project is not trusted, so its Pi extensions do not load (coil trust, or --trust for one run)`,
      );
  }

  for (const [file, scope] of [
    [join(agentDir, "settings.json"), "user"],
    [join(root, ".pi", "settings.json"), "project"],
  ] as const) {
    if (!isFile(file)) continue;
    if (scope === "project" && !o.trusted) {
      out.skipped.push(`${file}: the project is not trusted, so its extensions and packages do not load`);
      continue;
    }
    let data: { extensions?: unknown; packages?: unknown };
    try {
      data = JSON.parse(readFileSync(file, "utf8")) as typeof data;
    } catch {
      continue; // lib/pi-settings.ts reports an unreadable file in `coil doctor`
    }
    for (const entry of Array.isArray(data.extensions) ? data.extensions : []) {
      if (typeof entry !== "string" || /[*?[\]{}]/.test(entry) || /^[!+-]/.test(entry)) {
        out.skipped.push(`extensions: ${JSON.stringify(entry)} (${file}): glob patterns and filters are not read`);
        continue;
      }
      entriesOf(resolve(dirname(file), entry.replace(/^~(?=$|\/)/, userHome)), scope, file, out);
    }
    for (const raw of Array.isArray(data.packages) ? data.packages : []) {
      const spec = typeof raw === "string" ? raw : (raw as { source?: unknown } | null)?.source;
      if (typeof spec !== "string") continue;
      const dir = packageDir(spec, file, { home: o.home, agentDir, project });
      if (Array.isArray(dir)) {
        out.skipped.push(
          `package ${spec} (${file}): not installed (looked in ${dir.join(", ")}); install it with coil install ${spec}`,
        );
        continue;
      }
      entriesOf(dir, "package", `${spec} (${file})`, out, true);
    }
  }

  // Pi packages installed with `coil install` (their package.json has a `pi` field or the pi-package keyword):
  // a trusted project's (`coil install --project`, in .coil/packages) first, then the user's; not those
  // `coil disable` turned off in that scope's preset file.
  const scopes = [
    ...(o.trusted ? [{ scope: join(root, ".coil"), from: "coil install --project" }] : []),
    { scope: o.home, from: "coil install" },
  ];
  if (!o.trusted && isFile(join(root, ".coil", "packages", "package.json")))
    out.skipped.push(
      `${join(root, ".coil", "packages")}: the project is not trusted, so the Pi packages installed there do not load`,
    );
  for (const { scope, from } of scopes) {
    const installed = join(scope, "packages");
    const deps = readManifest(installed) as { dependencies?: Record<string, string> } | undefined;
    const disabled = disabledPackages(join(scope, "preset.yaml"));
    for (const name of Object.keys(deps?.dependencies ?? {})) {
      const dir = join(installed, "node_modules", name);
      const manifest = readManifest(dir);
      const pi =
        manifest?.pi !== undefined || (Array.isArray(manifest?.keywords) && manifest.keywords.includes("pi-package"));
      if (!pi || out.found.some((f) => f.file.startsWith(`${dir}/`))) continue;
      if (disabled.has(name)) out.skipped.push(`${name} (${from}): disabled (coil enable ${name} turns it on)`);
      else entriesOf(dir, "package", `${from} ${name}`, out, true);
    }
  }

  for (const path of o.cli ?? []) entriesOf(path, "cli", "-e", out, true);

  // The same file listed twice (a user folder and a settings path) loads once.
  const seen = new Set<string>();
  out.found = out.found.filter((f) => !seen.has(f.file) && seen.add(f.file));
  return out;
}
