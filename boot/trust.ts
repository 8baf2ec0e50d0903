/**
 * Project trust: a project's `.coil/` code loads only once the user trusts that directory. Trust is
 * stored in `$COIL_HOME/trust.json`, keyed by the directory's real path and a hash of what would load
 * (every file under `.coil/` except node_modules/ folders and what coil writes in sessions/ and plans/ —
 * code files there count —, path plugins the project preset names elsewhere, every file that code imports
 * by a relative path, `.claude/settings*.json` hook commands, `.mcp.json` and Pi's `.pi/settings.json`); a
 * change to any of them makes coil ask again. Symlinks are followed and hashed by what they point to (and
 * where); a link whose target lies outside the project is never trusted from the prompt, only by
 * `coil trust` or `--trust`.
 * See docs/safety.md. Asking the user and `coil trust` live in cli/trust.ts.
 */
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  writeFileSync,
  type Dirent,
} from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { resolvePreset } from "./preset.js";

type Store = Record<string, { hash: string; trustedAt: string }>;
/** Written by plugins while coil runs (never code), and installed packages (their lock file is hashed instead). */
const STATE_DIRS = new Set(["sessions", "plans"]);

/** Files jiti (or Node) can load as code. */
const CODE = /\.(?:[cm]?[jt]sx?)$/;
/** Relative specifiers in `import … from`, `export … from`, `import "…"`, `import(…)` and `require(…)`. */
const RELATIVE_IMPORT = /(?:\bfrom|\bimport|\bimport\s*\(|\brequire\s*\()\s*["'`](\.{1,2}\/[^"'`\n]+)["'`]/g;
const EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".json"];

/** The files a relative specifier may resolve to as jiti resolves it (`./x.js` may be `./x.ts`), those that exist. */
function resolveImport(from: string, spec: string): string[] {
  const base = resolve(dirname(from), spec);
  const swapped = /\.[cm]?jsx?$/.test(base) ? [base.replace(/\.([cm]?)js(x?)$/, ".$1ts$2")] : [];
  const candidates = [
    base,
    ...swapped,
    ...EXTENSIONS.map((x) => base + x),
    ...EXTENSIONS.map((x) => join(base, `index${x}`)),
  ];
  return candidates.filter((f) => {
    try {
      return statSync(f).isFile();
    } catch {
      return false;
    }
  });
}

/**
 * Every file the code in `start` reaches through relative imports, transitively, wherever it lies (a helper
 * in `.coil/plans/`, a module outside `.coil/`). Packages (bare specifiers, node_modules) are not followed:
 * their lock file is what is hashed.
 */
function importGraph(start: readonly string[]): string[] {
  const seen = new Set<string>();
  const queue = start.filter((f) => CODE.test(f));
  while (queue.length && seen.size < 5000) {
    const file = queue.shift()!;
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const m of text.matchAll(RELATIVE_IMPORT)) {
      for (const target of resolveImport(file, m[1]!)) {
        if (seen.has(target) || target.includes(`${sep}node_modules${sep}`)) continue;
        seen.add(target);
        if (CODE.test(target)) queue.push(target);
      }
    }
  }
  return [...seen];
}

/** The module files under a `.pi/extensions` folder (its packages' node_modules left out), sorted. */
function piExtensionFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string, depth: number) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name);
      if (e.isDirectory() && e.name !== "node_modules" && depth < 3) walk(path, depth + 1);
      else if (e.isFile() && (CODE.test(e.name) || e.name === "package.json")) out.push(path);
    }
  };
  walk(dir, 0);
  return out.sort();
}

/** The files that would load from `dir`, absolute and sorted (empty when the project has no `.coil/`). */
export function projectFiles(dir: string, home: string): string[] {
  const coil = join(dir, ".coil");
  // Claude Code hook settings are commands too (hooks-claude runs them), `.mcp.json` starts servers (mcp), and
  // Pi's `.pi/settings.json` picks the model and adds skill and prompt folders (lib/pi-settings.ts).
  // Pi extensions in `.pi/extensions/` are code the pi-extensions plugin runs (docs/pi-extensions.md).
  const claude = [".claude/settings.json", ".claude/settings.local.json", ".mcp.json", ".pi/settings.json"]
    .map((f) => join(dir, f))
    .filter((f) => existsSync(f))
    .concat(piExtensionFiles(join(dir, ".pi", "extensions")));
  if (!existsSync(coil) || resolve(coil) === resolve(home)) return claude;
  // In the state folders coil writes (plans, sessions) only code counts: a plugin could load it by a computed path.
  const walk = (d: string, realDir: string, codeOnly: boolean): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => {
      const path = join(d, e.name);
      const kind = kindOf(e, path);
      if (kind === "file") return codeOnly && !CODE.test(e.name) ? [] : [path];
      if (kind !== "directory" || e.name === "node_modules") return [];
      const real = realpathSync(path);
      // A link back to a folder on the way here (or above it) would loop: skip it.
      if (real === realDir || realDir.startsWith(real + sep)) return [];
      return walk(path, real, codeOnly || (d === coil && STATE_DIRS.has(e.name)));
    });
  const files = new Set([...walk(coil, realpathSync(coil), false), ...claude]);
  try {
    const project = resolvePreset({ cwd: dir, home, trust: true }).entries;
    const base = new Set(resolvePreset({ cwd: dir, home, trust: false }).entries.map((e) => e.key));
    for (const e of project) if (e.kind === "path" && !base.has(e.key) && existsSync(e.key)) files.add(e.key);
  } catch {
    // a broken preset is still hashed by its bytes; loading it will report the error
  }
  // What that code imports is code that runs too, wherever it is.
  for (const f of importGraph([...files])) files.add(f);
  return [...files].sort();
}

/** A directory entry's kind, following a symlink (a dangling link is neither). */
function kindOf(e: Dirent, path: string): "file" | "directory" | undefined {
  if (!e.isSymbolicLink()) return e.isFile() ? "file" : e.isDirectory() ? "directory" : undefined;
  try {
    const s = statSync(path);
    return s.isFile() ? "file" : s.isDirectory() ? "directory" : undefined;
  } catch {
    return undefined;
  }
}

/** The real path of a file when a symlink leads there (on the way or at the end), else undefined. */
function linkTarget(file: string): string | undefined {
  const real = realpathSync(file);
  return real === resolve(file) ? undefined : real;
}

const outside = (dir: string, real: string) => {
  const rel = relative(dir, real);
  return rel.startsWith("..") || isAbsolute(rel);
};

/**
 * Files whose real path lies outside `dir`, with that path: reached through a symlink, or named by a path
 * that leads out (a preset's `../../x.ts`, an import of `../../../shared/x.ts`). They are not the project's.
 */
export function linksLeaving(dir: string, files: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const root = realpathSync(dir);
  for (const f of files) {
    const real = realpathSync(f);
    if (outside(root, real)) out.set(f, real);
  }
  return out;
}

/** SHA-256 over each file's name, the real path a link leads to, its size and its bytes. */
export function fingerprint(dir: string, files: readonly string[]): string {
  const h = createHash("sha256");
  for (const f of files)
    h.update(`${relative(dir, f)}\0${linkTarget(f) ?? ""}\0${statSync(f).size}\0`).update(readFileSync(f));
  return h.digest("hex");
}

export type { Store };
const storeFile = (home: string) => join(home, "trust.json");
/** The files, one a line, relative to `dir`, with links that leave the project marked. */
export const listOf = (dir: string, files: readonly string[]) => {
  const leaving = linksLeaving(dir, files);
  return files
    .map((f) => {
      const real = leaving.get(f);
      if (real === undefined) return `  ${relative(dir, f)}`;
      return `  ${relative(dir, f)}${real === resolve(f) ? "" : ` -> ${real}`} (outside the project)`;
    })
    .join("\n");
};
export function readStore(home: string): Store {
  try {
    return JSON.parse(readFileSync(storeFile(home), "utf8")).projects ?? {};
  } catch {
    return {};
  }
}
export function writeStore(home: string, projects: Store): void {
  mkdirSync(home, { recursive: true });
  writeFileSync(`${storeFile(home)}.tmp`, JSON.stringify({ version: 1, projects }, null, 2) + "\n", { mode: 0o600 });
  renameSync(`${storeFile(home)}.tmp`, storeFile(home)); // never a half-written store
}
