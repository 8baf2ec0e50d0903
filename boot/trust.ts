/**
 * Project trust: a project's `.coil/` code loads only once the user trusts that directory. Trust is
 * stored in `$COIL_HOME/trust.json`, keyed by the directory's real path and a hash of what would load
 * (every file under `.coil/` except sessions/, plans/ and node_modules/ folders, path plugins the project
 * preset names elsewhere, and `.claude/settings*.json` hook commands); a change to any of them makes coil
 * ask again. Symlinks are followed and hashed by what they point to (and where); a link whose target
 * lies outside the project is never trusted from the prompt, only by `coil trust` or `--trust`.
 * See docs/safety.md.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync, type Dirent } from "node:fs";
import { createInterface } from "node:readline";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import type { CliIO } from "./cli.js";
import { resolvePreset } from "./preset.js";

type Store = Record<string, { hash: string; trustedAt: string }>;
/** Written by plugins while coil runs (never code), and installed packages (their lock file is hashed instead). */
const STATE_DIRS = new Set(["sessions", "plans"]);

/** The files that would load from `dir`, absolute and sorted (empty when the project has no `.coil/`). */
export function projectFiles(dir: string, home: string): string[] {
  const coil = join(dir, ".coil");
  // Claude Code hook settings are commands too (hooks-claude runs them), and `.mcp.json` starts servers (mcp).
  const claude = [".claude/settings.json", ".claude/settings.local.json", ".mcp.json"].map((f) => join(dir, f)).filter((f) => existsSync(f));
  if (!existsSync(coil) || resolve(coil) === resolve(home)) return claude;
  const walk = (d: string, realDir: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => {
      const path = join(d, e.name);
      const kind = kindOf(e, path);
      if (kind === "file") return [path];
      if (kind !== "directory" || (d === coil && STATE_DIRS.has(e.name)) || e.name === "node_modules") return [];
      const real = realpathSync(path);
      // A link back to a folder on the way here (or above it) would loop: skip it.
      return real === realDir || realDir.startsWith(real + sep) ? [] : walk(path, real);
    });
  const files = new Set([...walk(coil, realpathSync(coil)), ...claude]);
  try {
    const project = resolvePreset({ cwd: dir, home, trust: true }).entries;
    const base = new Set(resolvePreset({ cwd: dir, home, trust: false }).entries.map((e) => e.key));
    for (const e of project) if (e.kind === "path" && !base.has(e.key) && existsSync(e.key)) files.add(e.key);
  } catch {
    // a broken preset is still hashed by its bytes; loading it will report the error
  }
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

/** Files reached through a symlink whose real path lies outside `dir`, with that path. */
export function linksLeaving(dir: string, files: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of files) {
    const real = linkTarget(f);
    if (real !== undefined && outside(realpathSync(dir), real)) out.set(f, real);
  }
  return out;
}

/** SHA-256 over each file's name, the real path a link leads to, its size and its bytes. */
export function fingerprint(dir: string, files: readonly string[]): string {
  const h = createHash("sha256");
  for (const f of files) h.update(`${relative(dir, f)}\0${linkTarget(f) ?? ""}\0${statSync(f).size}\0`).update(readFileSync(f));
  return h.digest("hex");
}

const storeFile = (home: string) => join(home, "trust.json");
const listOf = (dir: string, files: readonly string[]) => {
  const leaving = linksLeaving(dir, files);
  return files.map((f) => `  ${relative(dir, f)}${leaving.has(f) ? ` -> ${leaving.get(f)} (outside the project)` : ""}`).join("\n");
};
function readStore(home: string): Store {
  try {
    return JSON.parse(readFileSync(storeFile(home), "utf8")).projects ?? {};
  } catch {
    return {};
  }
}
function writeStore(home: string, projects: Store): void {
  mkdirSync(home, { recursive: true });
  writeFileSync(`${storeFile(home)}.tmp`, JSON.stringify({ version: 1, projects }, null, 2) + "\n", { mode: 0o600 });
  renameSync(`${storeFile(home)}.tmp`, storeFile(home)); // never a half-written store
}

/**
 * Whether `dir`'s code may load now: `--trust`, a stored answer whose hash still matches, or the user's
 * answer on a terminal. A project with nothing to load counts as trusted for its `.coil/` (there is none),
 * but only `explicit` trust (one of those three) lets anything else of the project run, such as packages
 * in its `node_modules`.
 */
export async function settleTrust(io: CliIO, home: string, flag: boolean, mayAsk: boolean): Promise<{ trusted: boolean; explicit: boolean; skipped: string }> {
  const dir = realpathSync(io.cwd);
  const files = projectFiles(dir, home);
  if (flag) return { trusted: true, explicit: true, skipped: "" };
  const hash = fingerprint(dir, files);
  const stored = readStore(home)[dir];
  if (stored?.hash === hash) return { trusted: true, explicit: true, skipped: "" };
  if (files.length === 0) return { trusted: true, explicit: false, skipped: "" };
  const list = listOf(dir, files);
  // Print/JSON modes never ask, and neither do --help and --version.
  const printing = io.argv.some((a) => ["--print", "--help", "-h", "--version", "-v"].includes(a) || a.startsWith("--mode") || /^-[a-zA-Z]*p[a-zA-Z]*$/.test(a));
  const tty = io.stdin.isTTY && (io.stderr as { isTTY?: boolean }).isTTY;
  // Code reached through a link out of the project is not the project's: trusting it takes an explicit command.
  const leaving = linksLeaving(dir, files).size > 0;
  if (mayAsk && tty && !printing && !leaving) {
    const why = stored ? "changed since you trusted it" : "is not trusted yet";
    io.stderr.write(`coil: project ${dir} ${why}. Trusting it loads and runs this with your rights:\n${list}\n`);
    const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
    const line = new Promise<string>((done) => (rl.once("line", done), rl.once("close", () => done(""))));
    io.stderr.write("trust it? [y]es for this run, [n]o, [a]lways: ");
    const a = (await line).trim().toLowerCase();
    rl.close();
    if (a === "a" || a === "always") writeStore(home, { ...readStore(home), [dir]: { hash, trustedAt: new Date().toISOString() } });
    if (["y", "yes", "a", "always"].includes(a)) return { trusted: true, explicit: true, skipped: "" };
  }
  const why = stored ? "changed since it was trusted" : "untrusted project";
  const links = leaving ? "coil: it has links leaving the project, so coil does not offer to trust it at the prompt; check where they lead first\n" : "";
  return { trusted: false, explicit: false, skipped: `coil: not loaded (${why}):\n${list}\n${links}coil: to load it: coil trust ${dir}  (or --trust for one run)\n` };
}

/** `coil trust [dir]` and `coil untrust [dir]`; argv starts with the subcommand. */
export function trustCommand(argv: string[], io: CliIO, home: string): number {
  const [cmd, arg] = argv;
  const target = resolve(io.cwd, arg ?? ".");
  if (!existsSync(target)) return (io.stderr.write(`coil ${cmd}: ${target} does not exist\n`), 2);
  const dir = realpathSync(target);
  const { [dir]: old, ...rest } = readStore(home);
  if (cmd === "untrust") {
    writeStore(home, rest);
    io.stdout.write(old ? `untrusted ${dir}\n` : `${dir} was not trusted\n`);
    return 0;
  }
  const files = projectFiles(dir, home);
  writeStore(home, { ...rest, [dir]: { hash: fingerprint(dir, files), trustedAt: new Date().toISOString() } });
  io.stdout.write(`trusted ${dir}${files.length ? `; this loads:\n${listOf(dir, files)}` : " (nothing to load yet)"}\n`);
  return 0;
}
