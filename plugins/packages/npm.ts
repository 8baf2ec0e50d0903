/**
 * The real npm, run as a child process with `--prefix <packages dir>`, and what it leaves behind:
 * `package.json` (the specs), `package-lock.json` (versions, sources, integrity) and `node_modules/`.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";

export interface NpmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npm` itself; `COIL_NPM` overrides it (a path to npm-cli.js or an npm binary). */
function npmCommand(env: NodeJS.ProcessEnv): { cmd: string; pre: string[] } {
  const custom = env.COIL_NPM;
  if (custom) return custom.endsWith(".js") ? { cmd: process.execPath, pre: [custom] } : { cmd: custom, pre: [] };
  return { cmd: process.platform === "win32" ? "npm.cmd" : "npm", pre: [] };
}

export function runNpm(
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; onOutput?: (text: string) => void },
): Promise<NpmResult> {
  const { cmd, pre } = npmCommand(opts.env);
  return new Promise((done) => {
    let stdout = "";
    let stderr = "";
    const child = spawn(cmd, [...pre, ...args, "--no-audit", "--no-fund", "--loglevel=error"], {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => {
      stderr += d;
      opts.onOutput?.(d.toString());
    });
    child.on("error", (e) => done({ code: 127, stdout, stderr: `${stderr}cannot run ${cmd}: ${e.message}\n` }));
    child.on("close", (code) => done({ code: code ?? 1, stdout, stderr }));
  });
}

/** The manifest of a packages dir (created on first use). */
export function ensureManifest(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "package.json");
  if (!existsSync(file)) {
    writeFileSync(
      file,
      JSON.stringify(
        {
          name: "coil-packages",
          private: true,
          description: "coil packages (managed by coil install/remove/update)",
          dependencies: {},
        },
        null,
        2,
      ) + "\n",
    );
  }
}

export function readJson<T = unknown>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch {
    return undefined;
  }
}

/** `name → spec` as npm saved them in the packages dir's package.json. */
export function dependencies(dir: string): Record<string, string> {
  return readJson<{ dependencies?: Record<string, string> }>(join(dir, "package.json"))?.dependencies ?? {};
}

export interface LockedPackage {
  version: string;
  /** Where npm got it: a registry tarball URL, `file:` (relative to the packages dir) or a git URL with its commit. */
  resolved?: string;
  /** Subresource integrity of the tarball (absent for linked local folders and git checkouts). */
  integrity?: string;
  link?: boolean;
}

/** The fields read of an entry of package-lock.json's `packages`, as npm writes them (not checked). */
type NpmLockEntry =
  | { link: true; resolved: string; version?: string }
  | { link?: false; version: string; resolved?: string; integrity?: string };

/** What npm's package-lock.json says about a top-level package. */
export function npmLockEntry(dir: string, name: string): LockedPackage | undefined {
  const lock = readJson<{ packages?: Record<string, NpmLockEntry> }>(join(dir, "package-lock.json"));
  const entry = lock?.packages?.[`node_modules/${name}`];
  if (!entry) return undefined;
  if (entry.link) {
    const target: Partial<NpmLockEntry> = lock?.packages?.[entry.resolved] ?? {};
    const pkg = readJson<{ version?: string }>(join(resolve(dir, entry.resolved), "package.json"));
    return { version: target.version ?? pkg?.version ?? "0.0.0", resolved: `file:${entry.resolved}`, link: true };
  }
  return { version: entry.version, resolved: entry.resolved, integrity: entry.integrity };
}

/** How a user's spec is classified: a local folder, a tarball file, a git URL, or a registry spec. */
export type SpecKind = "dir" | "tarball" | "git" | "registry";

export function classify(spec: string, cwd: string): { kind: SpecKind; spec: string; path?: string } {
  const raw = spec.startsWith("file:") ? spec.slice(5) : spec;
  const looksLocal =
    /^(\.\.?[\\/]|~[\\/]|[\\/])/.test(raw) ||
    isAbsolute(raw) ||
    spec.startsWith("file:") ||
    /\.(tgz|tar\.gz|tar)$/.test(raw);
  if (looksLocal) {
    const path = resolve(cwd, raw.startsWith("~/") ? join(process.env.HOME ?? "~", raw.slice(2)) : raw);
    return { kind: /\.(tgz|tar\.gz|tar)$/.test(path) ? "tarball" : "dir", spec: path, path };
  }
  if (/^(git\+|git:|github:|gitlab:|bitbucket:)|\.git(#.*)?$/.test(spec) || /^https?:\/\/.*\.git/.test(spec))
    return { kind: "git", spec };
  return { kind: "registry", spec };
}

/** The package name a registry spec names (`@scope/x@^1` → `@scope/x`). */
export function registryName(spec: string): string {
  const at = spec.indexOf("@", spec.startsWith("@") ? 1 : 0);
  return at > 0 ? spec.slice(0, at) : spec;
}
