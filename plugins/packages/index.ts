/**
 * packages: coil packages on npm. `coil install | remove | list | update` manage
 * `$COIL_HOME/packages` (or `.coil/packages` with --project) with the real npm and keep `coil-lock.json`
 * in step; `coil plugin new <name>` scaffolds a plugin project. See docs/packages.md.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { parse as parseYaml } from "yaml";
import { definePlugin, messageOf, type CliStreams } from "../../kernel/index.js";
import { coilHome } from "../../lib/paths.js";
import { projectRoot } from "../../lib/project.js";
import { PACKAGE_INSTALLER, type PackageInstaller } from "../../lib/package-installer.js";
import { LOCK_FILE, readLock, writeLock, type LockEntry } from "./lockfile.js";
import { classify, dependencies, ensureManifest, npmLockEntry, readJson, registryName, runNpm } from "./npm.js";
import { scaffoldCommand } from "./scaffold.js";

type IO = CliStreams & { argv?: string[]; trusted?: boolean };

export const coilHomeOf = coilHome;
/** Where packages live: `$COIL_HOME/packages` (user) or `<project>/.coil/packages`. */
export const packagesDir = (io: CliStreams, project: boolean): string => (project ? join(projectRoot(io.cwd), ".coil", "packages") : join(coilHomeOf(io.env), "packages"));

/** Whether this project's code may load: the kernel's trust decision (trust.json with an unchanged fingerprint, or `--trust`). */
export function projectTrusted(io: IO): boolean {
  return io.trusted === true;
}

const say = (io: CliStreams, text: string) => void io.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
const fail = (io: CliStreams, cmd: string, text: string, code = 2) => (io.stderr.write(`coil ${cmd}: ${text}\n`), code);

const OPTIONS = {
  project: { type: "boolean" },
  trust: { type: "boolean" },
  from: { type: "string" },
  yes: { type: "boolean", short: "y" },
  json: { type: "boolean" },
} as const;

/** Parse a subcommand's arguments; only the options named in `allowed` (plus --project, --trust) are accepted. */
function args(cmd: string, argv: string[], io: CliStreams, allowed: (keyof typeof OPTIONS)[] = []) {
  try {
    const parsed = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
    const wrong = Object.keys(parsed.values).find((k) => !["project", "trust", ...allowed].includes(k));
    if (wrong) throw new Error(`unknown option --${wrong}`);
    return parsed;
  } catch (error) {
    fail(io, cmd, messageOf(error));
    return undefined;
  }
}

function untrusted(io: CliStreams, cmd: string): number {
  return fail(io, cmd, `this project is not trusted, so its packages (${join(".coil", "packages")}) are not installed or updated from its lock file.\n  Check ${join(".coil", "packages", LOCK_FILE)}, then: coil trust   (or pass --trust for one run)`);
}

/** Pinned spec for a locked package: the same version and source. Relative `file:` specs are relative to the packages dir. */
function pinned(dir: string, name: string, entry: LockEntry): string {
  const local = entry.resolved ?? entry.spec;
  if (local.startsWith("file:")) return resolve(dir, local.slice(5));
  if (entry.resolved && /^git/.test(entry.resolved)) return entry.resolved;
  return `${name}@${entry.version}`;
}

function describeEntry(name: string, e: LockEntry): string {
  const offers = e.coil
    ? [
        e.coil.plugins?.length ? `plugins: ${e.coil.plugins.join(", ")}` : "",
        e.coil.presets?.length || e.coil.preset ? `presets: ${(e.coil.presets ?? [e.coil.preset!]).join(", ")}` : "",
        e.coil.skills?.length ? `skills: ${e.coil.skills.join(", ")}` : "",
        e.coil.promptTemplates?.length ? `prompt templates: ${e.coil.promptTemplates.join(", ")}` : "",
      ].filter(Boolean).join("; ")
    : "not a coil package (no \"coil\" key in its package.json)";
  return `  ${name}@${e.version}  ${e.spec}${e.link ? " (linked folder)" : ""}\n    ${offers}`;
}

async function confirm(io: CliStreams, question: string): Promise<boolean> {
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
  io.stderr.write(`${question} [y/N] `);
  const answer = await new Promise<string>((done) => (rl.once("line", done), rl.once("close", () => done(""))));
  rl.close();
  return /^y(es)?$/i.test(answer.trim());
}

// ───────────────────────────── install ─────────────────────────────

async function npmInstall(io: CliStreams, dir: string, specs: string[]): Promise<{ ok: boolean; changed: string[] }> {
  ensureManifest(dir);
  const before = dependencies(dir);
  const res = await runNpm(["install", "--prefix", dir, "--save", ...specs], { cwd: dir, env: io.env });
  if (res.code !== 0) {
    io.stderr.write(`coil install: npm install failed (exit ${res.code}) in ${dir}:\n${res.stderr.trim() || res.stdout.trim()}\n`);
    return { ok: false, changed: [] };
  }
  const after = dependencies(dir);
  return { ok: true, changed: Object.keys(after).filter((k) => before[k] !== after[k]) };
}

/**
 * Install on first use, for the CLI (through the `package-installer` service, lib/package-installer.ts):
 * install `specs` into `dir` (`$COIL_HOME/packages`), each pinned by the lock file there when it records the
 * package, and rewrite the lock file, exactly as `coil install` does. False (npm's error on stderr) if npm failed.
 */
export async function installForPreset(specs: string[], dir: string, io: CliStreams): Promise<boolean> {
  const lock = readLock(dir)?.packages ?? {};
  const wanted = specs.map((spec) => (lock[registryName(spec)] ? pinned(dir, registryName(spec), lock[registryName(spec)]!) : spec));
  const { ok } = await npmInstall(io, dir, wanted);
  if (!ok) return false;
  const now = writeLock(dir).packages;
  for (const name of specs.map(registryName)) if (now[name]) io.stderr.write(`coil: installed ${name}@${now[name].version} into ${dir}\n`);
  return true;
}

/** Npm references (`npm:x`, `@scope/x`) in a preset's `extends` and `plugins`, following local `extends` files. */
export function presetPackages(file: string, seen = new Set<string>()): { name: string; spec: string; from: string }[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const doc = parseYaml(readFileSync(file, "utf8")) as { extends?: unknown; plugins?: unknown } | null;
  const out: { name: string; spec: string; from: string }[] = [];
  const refs = [...[doc?.extends ?? []].flat(), ...(Array.isArray(doc?.plugins) ? doc.plugins : []).map((p) => (typeof p === "string" ? p : Object.keys(p ?? {})[0]))];
  for (const ref of refs) {
    if (typeof ref !== "string") continue;
    if (ref.startsWith("npm:") || ref.startsWith("@")) {
      const spec = ref.replace(/^npm:/, "");
      // `@acme/preset@^1/team.yaml` is not a thing; a sub-file follows the name: `@acme/preset/team.yaml`
      const n = spec.startsWith("@") ? 2 : 1;
      const head = spec.split("/").slice(0, n).join("/");
      out.push({ name: registryName(head), spec: head, from: file });
    } else if (/\.ya?ml$/.test(ref) && /^(\.\.?\/|\/)/.test(ref)) {
      const next = resolve(dirname(file), ref);
      if (existsSync(next)) out.push(...presetPackages(next, seen));
    }
  }
  return out;
}

function isInstalled(name: string, from: string, dirs: string[]): boolean {
  for (let d = from; ; d = dirname(d)) {
    if (existsSync(join(d, "node_modules", name, "package.json"))) return true;
    if (dirname(d) === d) break;
  }
  return dirs.some((dir) => existsSync(join(dir, "node_modules", name, "package.json")));
}

async function install(argv: string[], io: IO): Promise<number> {
  const parsed = args("install", argv, io, ["from", "yes"]);
  if (!parsed) return 2;
  const { values, positionals } = parsed;
  const project = Boolean(values.project);
  const dir = packagesDir(io, project);
  let specs = [...positionals];

  if (values.from) {
    const file = resolve(io.cwd, values.from);
    if (!existsSync(file)) return fail(io, "install", `preset ${file} does not exist`);
    let refs: ReturnType<typeof presetPackages>;
    try {
      refs = presetPackages(file);
    } catch (error) {
      return fail(io, "install", `cannot read preset ${file}: ${messageOf(error)}`);
    }
    const lock = readLock(dir)?.packages ?? {};
    const missing = refs.filter((r, i) => refs.findIndex((o) => o.name === r.name) === i && !isInstalled(r.name, dirname(r.from), [dir, packagesDir(io, false)]));
    if (!missing.length) {
      say(io, `every package ${file} needs is installed${refs.length ? `: ${refs.map((r) => r.name).join(", ")}` : ""}`);
      if (!specs.length) return 0;
    }
    const wanted = missing.map((m) => (lock[m.name] ? pinned(dir, m.name, lock[m.name]!) : m.spec));
    if (missing.length && !values.yes) {
      const list = missing.map((m, i) => `  ${wanted[i]}${lock[m.name] ? ` (pinned by ${join(dir, LOCK_FILE)})` : ""}`).join("\n");
      if (!io.stdin.isTTY) return fail(io, "install", `${file} needs packages that are not installed:\n${list}\n  pass --yes to install them into ${dir}`);
      if (!(await confirm(io, `${file} needs:\n${list}\ninstall into ${dir}?`))) return fail(io, "install", "nothing installed", 1);
    }
    specs.push(...wanted);
  } else if (!specs.length) {
    // No spec: install exactly what the lock file records (a teammate's checkout, CI).
    if (project && !projectTrusted(io)) return untrusted(io, "install");
    const lock = readLock(dir);
    if (!lock || !Object.keys(lock.packages).length) {
      return fail(io, "install", `nothing to install: name a package (npm spec, git URL, folder or .tgz), or put a ${LOCK_FILE} in ${dir}`);
    }
    const entries = Object.entries(lock.packages);
    const { ok } = await npmInstall(io, dir, entries.map(([name, e]) => pinned(dir, name, e)));
    if (!ok) return 1;
    const wrong = entries.flatMap(([name, e]) => {
      const now = npmLockEntry(dir, name);
      if (!now) return [`${name}: not installed`];
      if (now.version !== e.version) return [`${name}: locked ${e.version}, got ${now.version}`];
      if (e.integrity && now.integrity !== e.integrity) return [`${name}@${e.version}: integrity ${now.integrity ?? "(none)"} does not match the lock's ${e.integrity}`];
      return [];
    });
    if (wrong.length) return fail(io, "install", `the installed packages do not match ${join(dir, LOCK_FILE)}:\n  ${wrong.join("\n  ")}\n  the lock file was left as it is`, 1);
    writeLock(dir);
    say(io, `installed ${entries.length} package(s) from ${join(dir, LOCK_FILE)} into ${dir}:\n${entries.map(([n, e]) => `  ${n}@${e.version}`).join("\n")}`);
    return 0;
  }

  if (!specs.length) return 0;
  const local = specs.map((s) => classify(s, io.cwd));
  const absent = local.find((c) => c.path && !existsSync(c.path));
  if (absent) return fail(io, "install", `${absent.path} does not exist`);
  const { ok, changed } = await npmInstall(io, dir, local.map((c) => c.path ?? c.spec));
  if (!ok) return 1;
  const lock = writeLock(dir);
  const names = changed.length ? changed : local.flatMap((c) => (c.kind === "registry" ? [registryName(c.spec)] : c.kind === "dir" ? [readJson<{ name?: string }>(join(c.path!, "package.json"))?.name ?? ""] : [])).filter((n) => lock.packages[n]);
  for (const name of names) {
    const e = lock.packages[name]!;
    say(io, `installed ${name}@${e.version} into ${dir}${e.integrity ? `\n  integrity ${e.integrity}` : ""}`);
    if (!e.coilPackage) io.stderr.write(`coil install: warning: ${name} has no "coil" key in its package.json and lacks the coil-package keyword; it offers coil nothing\n`);
  }
  if (!names.length) say(io, `already installed and up to date in ${dir}`);
  if (project) {
    say(io, `project packages load only while the project is trusted${projectTrusted(io) ? "" : " (it is not: coil trust)"}; commit ${join(".coil", "packages", LOCK_FILE)} and package.json, not node_modules`);
  }
  return 0;
}

// ───────────────────────────── remove, list, update ─────────────────────────────

async function remove(argv: string[], io: IO): Promise<number> {
  const parsed = args("remove", argv, io);
  if (!parsed) return 2;
  const dir = packagesDir(io, Boolean(parsed.values.project));
  const names = parsed.positionals;
  if (!names.length) return fail(io, "remove", "name the package(s) to remove: coil remove <name...> [--project]");
  const deps = dependencies(dir);
  const unknown = names.filter((n) => !(n in deps));
  if (unknown.length) return fail(io, "remove", `not installed in ${dir}: ${unknown.join(", ")}${Object.keys(deps).length ? ` (installed: ${Object.keys(deps).join(", ")})` : ""}`);
  const res = await runNpm(["uninstall", "--prefix", dir, "--save", ...names], { cwd: dir, env: io.env });
  if (res.code !== 0) return fail(io, "remove", `npm uninstall failed (exit ${res.code}):\n${res.stderr.trim()}`, 1);
  writeLock(dir);
  say(io, `removed ${names.join(", ")} from ${dir}`);
  return 0;
}

function list(argv: string[], io: IO): number {
  const parsed = args("list", argv, io, ["json"]);
  if (!parsed) return 2;
  const scopes = [
    { scope: "user", dir: packagesDir(io, false), trusted: true },
    { scope: "project", dir: packagesDir(io, true), trusted: projectTrusted(io) },
  ].filter((s, i, all) => i === 0 || s.dir !== all[0]!.dir);
  const data = scopes.map((s) => ({ ...s, packages: existsSync(s.dir) ? (readLock(s.dir) ?? writeLock(s.dir)).packages : {} }));
  if (parsed.values.json) return say(io, JSON.stringify(data, null, 2)), 0;
  for (const s of data) {
    const entries = Object.entries(s.packages);
    const note = s.scope === "project" && entries.length && !s.trusted ? "  (not loaded: this project is not trusted; coil trust)" : "";
    say(io, `${s.scope} packages (${s.dir}):${entries.length ? note : " none"}`);
    for (const [name, e] of entries) say(io, describeEntry(name, e));
  }
  return 0;
}

async function update(argv: string[], io: IO): Promise<number> {
  const parsed = args("update", argv, io);
  if (!parsed) return 2;
  const project = Boolean(parsed.values.project);
  if (project && !projectTrusted(io)) return untrusted(io, "update");
  const dir = packagesDir(io, project);
  const before = existsSync(dir) ? (readLock(dir) ?? writeLock(dir)).packages : {};
  const names = parsed.positionals.length ? parsed.positionals : Object.keys(before);
  const unknown = names.filter((n) => !before[n]);
  if (unknown.length) return fail(io, "update", `not installed in ${dir}: ${unknown.join(", ")}`);
  if (!names.length) return say(io, `no packages in ${dir}`), 0;
  // Registry and git packages move within their saved range; local folders and tarballs are read again.
  const local = names.filter((n) => before[n]!.spec.startsWith("file:"));
  const remote = names.filter((n) => !local.includes(n));
  if (remote.length) {
    const res = await runNpm(["update", "--prefix", dir, "--save", ...remote], { cwd: dir, env: io.env });
    if (res.code !== 0) return fail(io, "update", `npm update failed (exit ${res.code}):\n${res.stderr.trim()}`, 1);
  }
  if (local.length && !(await npmInstall(io, dir, local.map((n) => resolve(dir, before[n]!.spec.slice(5))))).ok) return 1;
  const after = writeLock(dir).packages;
  for (const n of names) {
    const [a, b] = [before[n]!, after[n]];
    say(io, !b ? `${n}: gone` : a.version !== b.version ? `${n} ${a.version} → ${b.version}` : a.integrity !== b.integrity ? `${n} ${b.version} (rebuilt: new integrity)` : `${n} ${b.version} (up to date)`);
  }
  return 0;
}

export default definePlugin({
  id: "packages",
  description: "coil packages on npm: coil install/remove/list/update, and coil plugin new",
  setup(ctx) {
    const sub = (name: string, description: string, usage: string, run: (argv: string[], io: IO) => Promise<number> | number) =>
      ctx.subcommands.register({ name, description, usage, run: (argv, io) => run(argv, { ...io, trusted: ctx.projectTrusted } as IO) });
    ctx.services.provide(PACKAGE_INSTALLER, { install: installForPreset } satisfies PackageInstaller);
    sub("install", "install coil packages (npm spec, git URL, folder or .tgz); no spec: what coil-lock.json records", "[spec...] [--project] [--from <preset>] [--yes]", install);
    sub("remove", "remove installed coil packages", "<name...> [--project]", remove);
    sub("list", "list installed coil packages and what they offer", "[--json]", list);
    sub("update", "update installed coil packages (within their saved ranges) and the lock file", "[name...] [--project]", update);
    sub("plugin", "plugin authoring: `coil plugin new <name>` scaffolds a TypeScript plugin with a tool and a test", "new <name> [--dir <path>]", scaffoldCommand);
  },
});
