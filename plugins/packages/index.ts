/**
 * packages: coil packages on npm. `coil install | remove | list | update` manage
 * `$COIL_HOME/packages` (or `.coil/packages` with --project) with the real npm and keep `coil-lock.json`
 * in step; installing enables the package in the scope's preset file and `coil enable | disable` toggle
 * it there (activate.ts); `coil plugin new <name>` scaffolds a plugin project and `coil plugin check`
 * type-checks one (check.ts). Claude Code plugins go to the installer in ./claude/ when it is there.
 * See docs/packages.md.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import { definePlugin, messageOf, Type, type CliStreams } from "../../api/index.js";
import type { Subcommand, SubcommandOption } from "../../lib/command-line.js";
import { claudePluginsReport } from "../../lib/claude-plugins.js";
import { addDoctorSection } from "../../lib/doctor.js";
import { optionalDependencyReport } from "../../lib/optional-dependency.js";
import { coilHome } from "../../lib/paths.js";
import { projectRoot } from "../../lib/locations.js";
import { PACKAGE_INSTALLER, type PackageInstaller } from "../../lib/package-installer.js";
import { PLUGIN_INSPECTOR, type PluginInspector } from "../../lib/plugin-inspector.js";
import { packageStates, refOf, setPackageState } from "../../lib/preset-file.js";
import { describePackage, formatReport, presetFileOf } from "./activate.js";
import { LOCK_FILE, readLock, writeLock, type LockEntry } from "./lockfile.js";
import { classify, dependencies, ensureManifest, npmLockEntry, readJson, registryName, runNpm } from "./npm.js";
import type { InstallReport } from "./claude/index.js";
import type {} from "../skills/api.js"; // types the `skills` service (its `compat` is the shared setting)
import { checkCommand } from "./check.js";
import { scaffoldCommand } from "./scaffold.js";
import { locationsOf } from "../../lib/locations.js";

type IO = CliStreams & { argv?: string[]; trusted?: boolean; inspector?: PluginInspector };

export const coilHomeOf = coilHome;
/** Where packages live: `$COIL_HOME/packages` (user) or `<project>/.coil/packages`. */
export const packagesDir = (io: CliStreams, project: boolean): string =>
  project ? join(projectRoot(io.cwd), ".coil", "packages") : join(coilHomeOf(io.env), "packages");

/** Whether this project's code may load: the kernel's trust decision (trust.json with an unchanged fingerprint, or `--trust`). */
export function projectTrusted(io: IO): boolean {
  return io.trusted === true;
}

/** The Claude Code plugin installer's module (./claude/), typed from the module itself. */
type ClaudeInstaller = typeof import("./claude/index.js");
type ClaudeReport = InstallReport;

/**
 * The Claude Code plugin installer, imported only by the commands that may need it, and only when it is
 * there (a build with it has dist/plugins/packages/claude/index.js next to this module: scripts/build.mjs).
 */
async function claudeInstaller(): Promise<ClaudeInstaller | undefined> {
  const here = dirname(fileURLToPath(import.meta.url));
  const file = [join(here, "claude", "index.js"), join(here, "claude", "index.ts")].find((f) => existsSync(f));
  return file ? ((await import(pathToFileURL(file).href)) as ClaudeInstaller) : undefined;
}

/** The installed Claude Code plugins of a scope, by name (none without the installer). */
async function claudePlugins(
  io: IO,
  project: boolean,
): Promise<{ installer?: ClaudeInstaller; names: Map<string, ClaudeReport> }> {
  const installer = await claudeInstaller();
  if (!installer) return { names: new Map() };
  const all = await installer.listClaudePlugins({
    home: coilHomeOf(io.env),
    cwd: io.cwd,
    io,
    trusted: projectTrusted(io),
  });
  return {
    installer,
    names: new Map(all.filter((r) => r.scope === (project ? "project" : "user")).map((r) => [r.name, r])),
  };
}

const say = (io: CliStreams, text: string) => void io.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
const fail = (io: CliStreams, cmd: string, text: string, code = 2) => {
  io.stderr.write(`coil ${cmd}: ${text}\n`);
  return code;
};

/** What `coil install | remove | enable | disable | list | update` take, as the command line parsed it. */
interface PackageOptions {
  project?: boolean;
  from?: string;
  yes?: boolean;
  json?: boolean;
}

function untrusted(io: CliStreams, cmd: string): number {
  return fail(
    io,
    cmd,
    `this project is not trusted, so its packages (${join(".coil", "packages")}) are not installed or updated from its lock file.\n  Check ${join(".coil", "packages", LOCK_FILE)}, then: coil trust   (or pass --trust for one run)`,
  );
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
      ]
        .filter(Boolean)
        .join("; ")
    : 'not a coil package (no "coil" key in its package.json)';
  return `  ${name}@${e.version}  ${e.spec}${e.link ? " (linked folder)" : ""}\n    ${offers}`;
}

async function confirm(io: CliStreams, question: string): Promise<boolean> {
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
  io.stderr.write(`${question} [y/N] `);
  const answer = await new Promise<string>((done) => {
    rl.once("line", done);
    rl.once("close", () => done(""));
  });
  rl.close();
  return /^y(es)?$/i.test(answer.trim());
}

// ───────────────────────────── install ─────────────────────────────

/** The user asked npm itself not to use the network (`npm_config_offline`): no second, online attempt. */
const offlineRequested = (env: NodeJS.ProcessEnv): boolean => /^(true|1)$/i.test(env.npm_config_offline ?? "");

async function npmInstall(io: CliStreams, dir: string, specs: string[]): Promise<{ ok: boolean; changed: string[] }> {
  ensureManifest(dir);
  const before = dependencies(dir);
  const args = ["install", "--prefix", dir, "--save", ...specs];
  // Local folders and tarballs first try without the registry (`--offline`: npm's cache only), so a package
  // with no registry dependencies never waits on it (an optional peer such as the scaffold's `coil-agent`
  // made npm retry for a minute offline); if something is not cached (ENOTCACHED), npm runs again online.
  const localOnly = specs.length > 0 && specs.every((s) => ["dir", "tarball"].includes(classify(s, dir).kind));
  let res = localOnly ? await runNpm([...args, "--offline"], { cwd: dir, env: io.env }) : undefined;
  if (!res || (res.code !== 0 && /ENOTCACHED/.test(res.stderr) && !offlineRequested(io.env)))
    res = await runNpm(args, { cwd: dir, env: io.env });
  if (res.code !== 0) {
    io.stderr.write(
      `coil install: npm install failed (exit ${res.code}) in ${dir}:\n${res.stderr.trim() || res.stdout.trim()}\n`,
    );
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
  const wanted = specs.map((spec) =>
    lock[registryName(spec)] ? pinned(dir, registryName(spec), lock[registryName(spec)]!) : spec,
  );
  const { ok } = await npmInstall(io, dir, wanted);
  if (!ok) return false;
  const now = writeLock(dir).packages;
  for (const name of specs.map(registryName))
    if (now[name]) io.stderr.write(`coil: installed ${name}@${now[name].version} into ${dir}\n`);
  return true;
}

/** Npm references (`npm:x`, `@scope/x`) in a preset's `extends` and `plugins`, following local `extends` files. */
export function presetPackages(file: string, seen = new Set<string>()): { name: string; spec: string; from: string }[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const doc = parseYaml(readFileSync(file, "utf8")) as { extends?: unknown; plugins?: unknown } | null;
  const out: { name: string; spec: string; from: string }[] = [];
  const refs = [
    ...[doc?.extends ?? []].flat(),
    ...(Array.isArray(doc?.plugins) ? doc.plugins : []).map((p) =>
      typeof p === "string" ? p : Object.keys(p ?? {})[0],
    ),
  ];
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

async function install(positionals: string[], values: PackageOptions, io: IO): Promise<number> {
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
    const missing = refs.filter(
      (r, i) =>
        refs.findIndex((o) => o.name === r.name) === i &&
        !isInstalled(r.name, dirname(r.from), [dir, packagesDir(io, false)]),
    );
    if (!missing.length) {
      say(
        io,
        `every package ${file} needs is installed${refs.length ? `: ${refs.map((r) => r.name).join(", ")}` : ""}`,
      );
      if (!specs.length) return 0;
    }
    const wanted = missing.map((m) => (lock[m.name] ? pinned(dir, m.name, lock[m.name]!) : m.spec));
    if (missing.length && !values.yes) {
      const list = missing
        .map((m, i) => `  ${wanted[i]}${lock[m.name] ? ` (pinned by ${join(dir, LOCK_FILE)})` : ""}`)
        .join("\n");
      if (!io.stdin.isTTY)
        return fail(
          io,
          "install",
          `${file} needs packages that are not installed:\n${list}\n  pass --yes to install them into ${dir}`,
        );
      if (!(await confirm(io, `${file} needs:\n${list}\ninstall into ${dir}?`)))
        return fail(io, "install", "nothing installed", 1);
    }
    specs.push(...wanted);
  } else if (!specs.length) {
    // No spec: install exactly what the lock file records (a teammate's checkout, CI).
    if (project && !projectTrusted(io)) return untrusted(io, "install");
    // The Claude Code plugins the lock file records (its claudePlugins section), then its npm packages.
    const claude = await claudeInstaller();
    const restored = claude
      ? await claude.restoreClaudePlugins({
          home: coilHomeOf(io.env),
          project,
          cwd: io.cwd,
          io,
          trusted: projectTrusted(io),
        })
      : { installed: [], upToDate: [], problems: [] };
    for (const r of restored.installed) say(io, claude!.formatReport(r, "installed"));
    if (restored.upToDate.length)
      say(io, `Claude Code plugins already installed as locked: ${restored.upToDate.join(", ")}`);
    for (const p of restored.problems) io.stderr.write(`coil install: ${p}\n`);
    const lock = readLock(dir);
    if (!lock || !Object.keys(lock.packages).length) {
      if (restored.installed.length || restored.upToDate.length || restored.problems.length)
        return restored.problems.length ? 1 : 0;
      return fail(
        io,
        "install",
        `nothing to install: name a package (npm spec, git URL, folder or .tgz), or put a ${LOCK_FILE} in ${dir}`,
      );
    }
    if (restored.problems.length) return 1;
    const entries = Object.entries(lock.packages);
    const { ok } = await npmInstall(
      io,
      dir,
      entries.map(([name, e]) => pinned(dir, name, e)),
    );
    if (!ok) return 1;
    const wrong = entries.flatMap(([name, e]) => {
      const now = npmLockEntry(dir, name);
      if (!now) return [`${name}: not installed`];
      if (now.version !== e.version) return [`${name}: locked ${e.version}, got ${now.version}`];
      if (e.integrity && now.integrity !== e.integrity)
        return [
          `${name}@${e.version}: integrity ${now.integrity ?? "(none)"} does not match the lock's ${e.integrity}`,
        ];
      return [];
    });
    if (wrong.length)
      return fail(
        io,
        "install",
        `the installed packages do not match ${join(dir, LOCK_FILE)}:\n  ${wrong.join("\n  ")}\n  the lock file was left as it is`,
        1,
      );
    writeLock(dir);
    say(
      io,
      `installed ${entries.length} package(s) from ${join(dir, LOCK_FILE)} into ${dir}:\n${entries.map(([n, e]) => `  ${n}@${e.version}`).join("\n")}`,
    );
    return 0;
  }

  if (!specs.length) return 0;
  // Claude Code plugins (a folder, tarball or git repository with .claude-plugin/plugin.json, or <plugin>@<marketplace>) have their own installer.
  const claude = values.from ? undefined : await claudeInstaller();
  const claudeSpecs: string[] = [];
  if (claude)
    for (const spec of positionals)
      if (await claude.detectClaudePlugin(spec, io.cwd, coilHomeOf(io.env))) claudeSpecs.push(spec);
  for (const spec of claudeSpecs) {
    try {
      say(
        io,
        claude!.formatReport(
          await claude!.installClaudePlugin(spec, {
            home: coilHomeOf(io.env),
            project,
            cwd: io.cwd,
            io,
            trusted: projectTrusted(io),
          }),
          "installed",
        ),
      );
    } catch (error) {
      return fail(io, "install", `cannot install the Claude Code plugin ${spec}: ${messageOf(error)}`, 1);
    }
  }
  specs = specs.filter((spec) => !claudeSpecs.includes(spec));
  if (!specs.length) return 0;
  const local = specs.map((s) => classify(s, io.cwd));
  const absent = local.find((c) => c.path && !existsSync(c.path));
  if (absent) return fail(io, "install", `${absent.path} does not exist`);
  const { ok, changed } = await npmInstall(
    io,
    dir,
    local.map((c) => c.path ?? c.spec),
  );
  if (!ok) return 1;
  const lock = writeLock(dir);
  // The packages the specs name: by name (registry), by manifest (folder), by the source npm saved (tarball, git).
  const saved = Object.entries(dependencies(dir));
  const savedAs = (c: ReturnType<typeof classify>) =>
    saved
      .filter(([, spec]) =>
        c.path ? spec.startsWith("file:") && resolve(dir, spec.slice(5)) === c.path : spec === c.spec,
      )
      .map(([name]) => name);
  const requested = local
    .flatMap((c) =>
      c.kind === "registry"
        ? [registryName(c.spec)]
        : c.kind === "dir"
          ? [readJson<{ name?: string }>(join(c.path!, "package.json"))?.name ?? ""]
          : savedAs(c),
    )
    .filter((n) => lock.packages[n]);
  const names = changed.length ? changed : requested;
  const presetFile = presetFileOf(coilHomeOf(io.env), io.cwd, project);
  for (const name of names) {
    const e = lock.packages[name]!;
    say(io, `installed ${name}@${e.version} into ${dir}${e.integrity ? `\n  integrity ${e.integrity}` : ""}`);
    if (!e.coilPackage && isPiPackage(dir, name)) {
      // A Pi package: the pi-extensions plugin loads its extensions from here (docs/pi-extensions.md).
      say(
        io,
        project
          ? `${name} is a Pi package: its extensions load on every run in this project while it is trusted (coil doctor lists them under "Pi extensions")`
          : `${name} is a Pi package: its extensions load on every run (coil doctor lists them under "Pi extensions")`,
      );
      continue;
    }
    if (!e.coilPackage) {
      io.stderr.write(
        `coil install: warning: ${name} has no "coil" key in its package.json and lacks the coil-package keyword; it offers coil nothing, so it is not enabled\n`,
      );
      continue;
    }
    // Install means active: the package is enabled in the scope's preset file (its own preset is not applied).
    // With --from, the preset that needs it names it already.
    const code = values.from ? 0 : await activate(io, "install", name, dir, presetFile, project);
    if (code) return code;
  }
  if (!names.length) {
    say(io, `already installed and up to date in ${dir}`);
    // Installed before, perhaps disabled since: installing again enables it.
    for (const name of values.from ? [] : requested.filter((n) => lock.packages[n]!.coilPackage)) {
      const code = await activate(io, "install", name, dir, presetFile, project);
      if (code) return code;
    }
  }
  if (project) {
    say(
      io,
      `project packages load only while the project is trusted${projectTrusted(io) ? "" : " (it is not: coil trust)"}; commit ${join(".coil", "packages", LOCK_FILE)} and package.json, not node_modules`,
    );
  }
  return 0;
}

/** Enable `name` in `presetFile` and print what is active now. 0, or the exit code when coil cannot edit the preset file. */
async function activate(
  io: IO,
  cmd: string,
  name: string,
  dir: string,
  presetFile: string,
  project: boolean,
): Promise<number> {
  try {
    setPackageState(presetFile, name, true);
  } catch (error) {
    return fail(io, cmd, `${name} is installed but could not be enabled: ${messageOf(error)}`, 1);
  }
  const report = await describePackage(
    name,
    dir,
    coilHomeOf(io.env),
    dirname(presetFile),
    !project || projectTrusted(io),
    io.inspector,
  );
  say(
    io,
    `${formatReport(report, "enabled")}\n  (enabled in ${presetFile}; \`coil disable ${name}${project ? " --project" : ""}\` turns it off)`,
  );
  return 0;
}

// ───────────────────────────── remove, enable, disable, list, update ─────────────────────────────

async function remove(names: string[], values: PackageOptions, io: IO): Promise<number> {
  const project = Boolean(values.project);
  const dir = packagesDir(io, project);
  const deps = dependencies(dir);
  const claude = await claudePlugins(io, project);
  const unknown = names.filter((n) => !(n in deps) && !claude.names.has(n));
  const installed = [...Object.keys(deps), ...claude.names.keys()];
  if (unknown.length)
    return fail(
      io,
      "remove",
      `not installed in ${dir}: ${unknown.join(", ")}${installed.length ? ` (installed: ${installed.join(", ")})` : ""}`,
    );
  for (const name of names.filter((n) => !(n in deps))) {
    try {
      say(
        io,
        claude.installer!.formatReport(
          await claude.installer!.removeClaudePlugin(name, { home: coilHomeOf(io.env), project, cwd: io.cwd, io }),
          "removed",
        ),
      );
    } catch (error) {
      return fail(io, "remove", `cannot remove the Claude Code plugin ${name}: ${messageOf(error)}`, 1);
    }
  }
  const npmNames = names.filter((n) => n in deps);
  if (!npmNames.length) return 0;
  const res = await runNpm(["uninstall", "--prefix", dir, "--save", ...npmNames], { cwd: dir, env: io.env });
  if (res.code !== 0) return fail(io, "remove", `npm uninstall failed (exit ${res.code}):\n${res.stderr.trim()}`, 1);
  writeLock(dir);
  // Removing disables: the scope's preset file no longer names it (enabled or disabled).
  const presetFile = presetFileOf(coilHomeOf(io.env), io.cwd, project);
  const edited = npmNames.filter((n) => {
    try {
      return setPackageState(presetFile, n, undefined);
    } catch (error) {
      io.stderr.write(`coil remove: warning: ${n} is removed but ${messageOf(error)}\n`);
      return false;
    }
  });
  say(io, `removed ${npmNames.join(", ")} from ${dir}${edited.length ? `\n  and from ${presetFile}` : ""}`);
  return 0;
}

/** A package whose package.json has a `pi` field or the `pi-package` keyword: the pi-extensions plugin loads it. */
function isPiPackage(dir: string, name: string): boolean {
  const manifest = readJson<{ pi?: unknown; keywords?: unknown }>(join(dir, "node_modules", name, "package.json"));
  return manifest?.pi !== undefined || (Array.isArray(manifest?.keywords) && manifest.keywords.includes("pi-package"));
}

/** `coil enable <name>` / `coil disable <name>`: switch an installed package on or off in the scope's preset file, keeping it installed. */
async function toggle(on: boolean, names: string[], values: PackageOptions, io: IO): Promise<number> {
  const cmd = on ? "enable" : "disable";
  const project = Boolean(values.project);
  const dir = packagesDir(io, project);
  const lock = existsSync(dir) ? (readLock(dir) ?? writeLock(dir)).packages : {};
  const claude = await claudePlugins(io, project);
  const unknown = names.filter((n) => !lock[n] && !claude.names.has(n));
  const installed = [...Object.keys(lock), ...claude.names.keys()];
  if (unknown.length)
    return fail(
      io,
      cmd,
      `not installed in ${dir}: ${unknown.join(", ")}${installed.length ? ` (installed: ${installed.join(", ")})` : ""}; install it first: coil install <spec>${project ? " --project" : ""}`,
    );
  const presetFile = presetFileOf(coilHomeOf(io.env), io.cwd, project);
  for (const name of names) {
    if (!lock[name]) {
      try {
        say(
          io,
          claude.installer!.formatReport(
            await claude.installer!.setClaudePluginEnabled(name, on, {
              home: coilHomeOf(io.env),
              project,
              cwd: io.cwd,
              io,
            }),
            on ? "enabled" : "disabled",
          ),
        );
      } catch (error) {
        return fail(io, cmd, `cannot ${cmd} the Claude Code plugin ${name}: ${messageOf(error)}`, 1);
      }
      continue;
    }
    if (on && !lock[name].coilPackage && isPiPackage(dir, name)) {
      // A Pi package has no entry of its own to enable: taking its `false` away lets its extensions load again.
      try {
        setPackageState(presetFile, name, undefined);
      } catch (error) {
        return fail(io, cmd, `cannot enable ${name}: ${messageOf(error)}`, 1);
      }
      say(
        io,
        `enabled ${name}: a Pi package, its extensions load again (coil doctor lists them under "Pi extensions")`,
      );
      continue;
    }
    if (on) {
      if (!lock[name].coilPackage)
        return fail(
          io,
          cmd,
          `${name} has no "coil" key in its package.json and lacks the coil-package keyword: it offers coil nothing to enable`,
        );
      const code = await activate(io, cmd, name, dir, presetFile, project);
      if (code) return code;
      continue;
    }
    try {
      setPackageState(presetFile, name, false);
    } catch (error) {
      return fail(io, cmd, `cannot disable ${name}: ${messageOf(error)}`, 1);
    }
    say(
      io,
      `disabled ${name}: its plugins, skills, prompt templates and agents no longer load (\`- ${refOf(name)}: false\` in ${presetFile});\n  it stays installed in ${dir}: \`coil enable ${name}${project ? " --project" : ""}\` turns it on again`,
    );
  }
  return 0;
}

/** A package's state in its scope's preset file: enabled, disabled, or named by no preset of yours. */
const stateLabel = (state: boolean | undefined, name: string) =>
  state === true
    ? "enabled"
    : state === false
      ? "disabled"
      : `not enabled (its plugins load only where a preset names it: coil enable ${name})`;

async function list(_names: string[], values: PackageOptions, io: IO): Promise<number> {
  const home = coilHomeOf(io.env);
  const scopes = [
    { scope: "user", dir: packagesDir(io, false), trusted: true, preset: presetFileOf(home, io.cwd, false) },
    {
      scope: "project",
      dir: packagesDir(io, true),
      trusted: projectTrusted(io),
      preset: presetFileOf(home, io.cwd, true),
    },
  ].filter((s, i, all) => i === 0 || s.dir !== all[0]!.dir);
  const claude = await claudeInstaller();
  const claudeAll = claude
    ? await claude.listClaudePlugins({ home, cwd: io.cwd, io, trusted: projectTrusted(io) })
    : [];
  const data = scopes.map((s) => {
    let states = new Map<string, boolean>();
    let presetError: string | undefined;
    try {
      states = packageStates(s.preset);
    } catch (error) {
      presetError = messageOf(error);
    }
    const lock = existsSync(s.dir) ? (readLock(s.dir) ?? writeLock(s.dir)).packages : {};
    const packages = Object.fromEntries(
      Object.entries(lock).map(([name, e]) => [name, { ...e, enabled: states.get(name) ?? null }]),
    );
    const claudePlugins = claudeAll.filter((r) => r.scope === s.scope);
    return {
      ...s,
      packages,
      ...(claudePlugins.length ? { claudePlugins } : {}),
      ...(presetError ? { presetError } : {}),
    };
  });
  if (values.json) {
    say(io, JSON.stringify(data, null, 2));
    return 0;
  }
  for (const s of data) {
    const entries = Object.entries(s.packages);
    const note =
      s.scope === "project" && entries.length && !s.trusted
        ? "  (not loaded: this project is not trusted; coil trust)"
        : "";
    say(io, `${s.scope} packages (${s.dir}):${entries.length ? note : " none"}`);
    if (s.presetError) say(io, `  warning: cannot read ${s.preset}: ${s.presetError}`);
    for (const [name, e] of entries)
      say(io, `${describeEntry(name, e)}\n    ${stateLabel(e.enabled ?? undefined, name)}`);
    for (const r of s.claudePlugins ?? []) say(io, claude!.formatReport(r, r.enabled ? "enabled" : "disabled"));
  }
  return 0;
}

async function update(positionals: string[], values: PackageOptions, io: IO): Promise<number> {
  const project = Boolean(values.project);
  if (project && !projectTrusted(io)) return untrusted(io, "update");
  const dir = packagesDir(io, project);
  const before = existsSync(dir) ? (readLock(dir) ?? writeLock(dir)).packages : {};
  // Claude Code plugins named (or all, with no name) are fetched again from their sources.
  const claude = await claudePlugins(io, project);
  const claudeNames = positionals.length
    ? positionals.filter((n) => claude.names.has(n) && !before[n])
    : [...claude.names.keys()];
  if (claude.installer && claudeNames.length) {
    const r = await claude.installer.updateClaudePlugins(claudeNames, {
      home: coilHomeOf(io.env),
      project,
      cwd: io.cwd,
      io,
      trusted: projectTrusted(io),
    });
    for (const line of r.lines) say(io, line);
    if (r.problems.length) return fail(io, "update", r.problems.join("\n  "), 1);
  }
  const names = positionals.length ? positionals.filter((n) => !claudeNames.includes(n)) : Object.keys(before);
  if (positionals.length && !names.length) return 0;
  const unknown = names.filter((n) => !before[n]);
  if (unknown.length) return fail(io, "update", `not installed in ${dir}: ${unknown.join(", ")}`);
  if (!names.length) {
    if (claudeNames.length) return 0;
    say(io, `no packages in ${dir}`);
    return 0;
  }
  // Registry and git packages move within their saved range; local folders and tarballs are read again.
  const local = names.filter((n) => before[n]!.spec.startsWith("file:"));
  const remote = names.filter((n) => !local.includes(n));
  if (remote.length) {
    const res = await runNpm(["update", "--prefix", dir, "--save", ...remote], { cwd: dir, env: io.env });
    if (res.code !== 0) return fail(io, "update", `npm update failed (exit ${res.code}):\n${res.stderr.trim()}`, 1);
  }
  if (
    local.length &&
    !(
      await npmInstall(
        io,
        dir,
        local.map((n) => resolve(dir, before[n]!.spec.slice(5))),
      )
    ).ok
  )
    return 1;
  const after = writeLock(dir).packages;
  for (const n of names) {
    const [a, b] = [before[n]!, after[n]];
    say(
      io,
      !b
        ? `${n}: gone`
        : a.version !== b.version
          ? `${n} ${a.version} → ${b.version}`
          : a.integrity !== b.integrity
            ? `${n} ${b.version} (rebuilt: new integrity)`
            : `${n} ${b.version} (up to date)`,
    );
  }
  return 0;
}

export const PackagesOptions = Type.Object({
  /** Claude Code marketplaces this preset needs: name → git URL or folder (relative to the preset file). */
  marketplaces: Type.Record(Type.String(), Type.String(), { default: {} }),
  /** Claude Code plugins this preset needs: `<plugin>@<marketplace>`, a git URL, a folder or a tarball. Installed on first use (asked, or --yes). */
  claudePlugins: Type.Array(Type.String(), { default: [] }),
});

export default definePlugin({
  id: "packages",
  description: "coil packages on npm: coil install/remove/list/update, and coil plugin new",
  options: PackagesOptions,
  setup(ctx) {
    const sub = (
      command: Omit<Subcommand, "run">,
      run: (args: string[], options: PackageOptions, io: IO) => Promise<number> | number,
    ) =>
      ctx.subcommands.register({
        ...command,
        run: (args, io, options) =>
          run(args, options, {
            ...io,
            trusted: ctx.projectTrusted,
            inspector: ctx.services.get(PLUGIN_INSPECTOR),
          } as IO),
      });
    // The Claude Code plugin code (./claude/) loads only when a preset names marketplaces or plugins, or `coil marketplace` runs.
    const needs = ctx.options.claudePlugins.length > 0 || Object.keys(ctx.options.marketplaces).length > 0;
    const pending = async () =>
      needs
        ? (await import("./claude/preset.js")).pendingFromPreset(ctx.options, {
            home: coilHomeOf(),
            baseDir: ctx.baseDir,
            cwd: ctx.cwd,
          })
        : undefined;
    ctx.services.provide(PACKAGE_INSTALLER, { install: installForPreset, pending } satisfies PackageInstaller);
    const project: SubcommandOption = {
      name: "project",
      description: "this project's packages (.coil/packages, its preset), not yours ($COIL_HOME)",
    };
    // `coil doctor`: the Claude Code plugins coil installed and those Claude Code installed itself, and whether each loads.
    addDoctorSection(ctx, {
      title: "Claude Code plugins",
      report: () =>
        claudePluginsReport({
          home: coilHomeOf(),
          cwd: locationsOf(ctx).projectRoot,
          trusted: ctx.projectTrusted,
          claudeCode: ctx.services.get("skills")?.compat.claude !== false,
        }).join("\n"),
    });
    // `coil doctor`: coil's optional dependencies (left out of the default install), found or not.
    addDoctorSection(ctx, { title: "Optional dependencies", report: () => optionalDependencyReport().join("\n") });
    sub(
      {
        name: "install",
        arguments: "[spec...]",
        description:
          "install and enable coil packages (npm spec, git URL, folder or .tgz) or Claude Code plugins; no spec: what coil-lock.json records",
        options: [
          project,
          {
            name: "from",
            type: "string",
            valueName: "preset",
            description: "install the npm packages this preset file names that are missing",
          },
          { name: "yes", short: "y", description: "with --from: install without asking" },
        ],
      },
      install,
    );
    sub(
      {
        name: "remove",
        arguments: "<name...>",
        description: "disable and uninstall coil packages",
        options: [project],
      },
      remove,
    );
    sub(
      {
        name: "enable",
        arguments: "<name...>",
        description: "enable installed coil packages (in your preset file) without installing anything",
        options: [project],
      },
      (names, options, io) => toggle(true, names, options, io),
    );
    sub(
      {
        name: "disable",
        arguments: "<name...>",
        description: "disable installed coil packages (in your preset file) without uninstalling them",
        options: [project],
      },
      (names, options, io) => toggle(false, names, options, io),
    );
    sub(
      {
        name: "list",
        description: "list installed coil packages, whether each is enabled, and what they offer",
        options: [{ name: "json", description: "print JSON: each scope's packages and Claude Code plugins" }],
      },
      list,
    );
    sub(
      {
        name: "update",
        arguments: "[name...]",
        description: "update installed coil packages (within their saved ranges) and the lock file",
        options: [project],
      },
      update,
    );
    const marketplace = async (
      verb: "add" | "list" | "remove" | "update",
      args: string[],
      options: Readonly<Record<string, unknown>>,
      io: CliStreams,
    ) => (await import("./claude/marketplace.js")).marketplaceCommand(verb, args, options, io);
    const json: SubcommandOption = { name: "json", description: "print JSON" };
    ctx.subcommands.register({
      name: "marketplace",
      description: "Claude Code plugin marketplaces (then: coil install <plugin>@<marketplace>); alone: list them",
      options: [json],
      run: (args, io, options) => marketplace("list", args, options, io),
      commands: [
        {
          name: "add",
          arguments: "<source>",
          description: "add a marketplace: a git URL or a folder",
          run: (args, io, options) => marketplace("add", args, options, io),
        },
        {
          name: "list",
          description: "list the marketplaces and their plugins",
          options: [json],
          run: (args, io, options) => marketplace("list", args, options, io),
        },
        {
          name: "remove",
          arguments: "<name...>",
          description: "remove marketplaces (plugins installed from them stay installed)",
          run: (args, io, options) => marketplace("remove", args, options, io),
        },
        {
          name: "update",
          arguments: "[name...]",
          description: "fetch marketplaces again (all, without a name)",
          run: (args, io, options) => marketplace("update", args, options, io),
        },
      ],
    });
    ctx.subcommands.register({
      name: "plugin",
      description:
        "plugin authoring: `coil plugin new <name>` scaffolds a TypeScript plugin with a tool and a test; `coil plugin check` type-checks it",
      commands: [
        {
          name: "new",
          arguments: "<name>",
          description: "scaffold a plugin project: a tool, a test, a package.json that links coil",
          options: [
            { name: "dir", type: "string", valueName: "path", description: "where to create it (default: ./<name>)" },
          ],
          run: ([name], io, options) => scaffoldCommand(name!, options as { dir?: string }, io),
        },
        {
          name: "check",
          arguments: "[dir]",
          description:
            "type-check a plugin project (its tsconfig.json) with coil's own TypeScript and Node types; offline",
          run: ([dir], io) => checkCommand(dir, io),
        },
      ],
    });
  },
});
