/**
 * Getting a Claude Code plugin's or marketplace's files into a temporary folder: a local folder
 * (copied, without `.git`), a git URL (`git clone --depth 1`; a local repository path or `file://`
 * URL works offline; `github:owner/repo` is GitHub), or a tarball (`tar -x`, one top-level folder
 * such as npm pack's `package/` is stepped into).
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";

export type SourceKind = "dir" | "git" | "tarball";

export interface Fetched {
  kind: SourceKind;
  /** The folder holding the files (inside `tmp`). */
  dir: string;
  /** The temporary folder to delete afterwards. */
  tmp: string;
  /** An absolute path, or `<git URL>#<commit>`. */
  resolved: string;
}

/** Which kind of source a spec names; undefined when it is none of them (e.g. an npm name). */
export function sourceKind(spec: string, cwd: string): { kind: SourceKind; location: string } | undefined {
  const gh = /^github:([\w.-]+\/[\w.-]+?)(?:\.git)?(#.+)?$/.exec(spec);
  if (gh) return { kind: "git", location: `https://github.com/${gh[1]}.git${gh[2] ?? ""}` };
  if (/^(git\+)?(file|https?|ssh|git):\/\//.test(spec) || /^git@[^:]+:/.test(spec)) {
    return /\.(tgz|tar\.gz|tar)$/.test(spec) && /^https?:/.test(spec)
      ? undefined
      : { kind: "git", location: spec.replace(/^git\+/, "") };
  }
  const local = spec.startsWith("file:") ? spec.slice(5) : spec;
  const looksLocal =
    /^(\.\.?[\\/]|~[\\/]|[\\/])/.test(local) ||
    isAbsolute(local) ||
    spec.startsWith("file:") ||
    /\.(tgz|tar\.gz|tar)$/.test(local);
  if (!looksLocal) return undefined;
  const path = resolve(cwd, local.startsWith("~/") ? join(process.env.HOME ?? "~", local.slice(2)) : local);
  if (/\.(tgz|tar\.gz|tar)$/.test(path)) return { kind: "tarball", location: path };
  return { kind: "dir", location: path };
}

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

export function runProcess(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Ran> {
  return new Promise((done) => {
    let stdout = "";
    let stderr = "";
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: { ...(opts.env ?? process.env), GIT_TERMINAL_PROMPT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.on("error", (e) => done({ code: 127, stdout, stderr: `${stderr}cannot run ${cmd}: ${e.message}` }));
    child.on("close", (code) => done({ code: code ?? 1, stdout, stderr }));
  });
}

/** `git clone --depth 1` (of `ref`, from `url#ref` or the argument) into `dest`; the commit it got. */
export async function gitClone(
  location: string,
  dest: string,
  env?: NodeJS.ProcessEnv,
  ref?: string,
  commit?: string,
): Promise<string> {
  const [url, hashRef] = location.split("#") as [string, string | undefined];
  const branch = ref ?? hashRef;
  const cloned = await runProcess(
    "git",
    ["clone", "--depth", "1", "--quiet", ...(branch ? ["--branch", branch] : []), "--", url, dest],
    { cwd: process.cwd(), env },
  );
  if (cloned.code !== 0)
    throw new Error(
      `git clone ${url}${branch ? ` (${branch})` : ""} failed (exit ${cloned.code}): ${cloned.stderr.trim() || cloned.stdout.trim()}`,
    );
  const head = await runProcess("git", ["rev-parse", "HEAD"], { cwd: dest, env });
  if (commit && head.stdout.trim() !== commit) {
    // A locked commit that is no longer the branch's tip: fetch just that commit.
    const fetched = await runProcess("git", ["fetch", "--depth", "1", "--quiet", "origin", commit], { cwd: dest, env });
    const checkout =
      fetched.code === 0 ? await runProcess("git", ["checkout", "--quiet", "FETCH_HEAD"], { cwd: dest, env }) : fetched;
    if (checkout.code !== 0) throw new Error(`git: cannot get commit ${commit} of ${url}: ${checkout.stderr.trim()}`);
    return `${url}#${commit}`;
  }
  return `${url}#${head.stdout.trim()}`;
}

/** Fetch a source into a new temporary folder under `parent`. Throws with what failed and where. */
export async function fetchSource(
  kind: SourceKind,
  location: string,
  parent: string,
  env?: NodeJS.ProcessEnv,
  ref?: string,
  commit?: string,
): Promise<Fetched> {
  mkdirSync(parent, { recursive: true });
  const tmp = mkdtempSync(join(parent, ".fetch-"));
  const dir = join(tmp, "src");
  if (kind === "dir") {
    if (!existsSync(location) || !statSync(location).isDirectory())
      throw Object.assign(new Error(`${location} is not a folder`), { tmp });
    cpSync(location, dir, { recursive: true, filter: (src) => !/[\\/]\.git$/.test(src) });
    return { kind, dir, tmp, resolved: location };
  }
  if (kind === "git") {
    try {
      const resolved = await gitClone(location, dir, env, ref, commit);
      rmSync(join(dir, ".git"), { recursive: true, force: true }); // the commit is recorded; updates clone again
      return { kind, dir, tmp, resolved };
    } catch (error) {
      throw Object.assign(error as Error, { tmp });
    }
  }
  if (!existsSync(location)) throw Object.assign(new Error(`${location} does not exist`), { tmp });
  mkdirSync(dir);
  const untar = await runProcess("tar", ["-xf", location, "-C", dir], { cwd: tmp, env });
  if (untar.code !== 0)
    throw Object.assign(new Error(`cannot unpack ${location} (tar exit ${untar.code}): ${untar.stderr.trim()}`), {
      tmp,
    });
  const top = readdirSync(dir, { withFileTypes: true });
  const only = top.length === 1 && top[0]!.isDirectory() ? join(dir, top[0]!.name) : dir;
  return { kind, dir: only, tmp, resolved: location };
}

/** sha256 over a folder's files (sorted relative paths and contents), `.git` left out. */
export function folderIntegrity(dir: string): string {
  const hash = createHash("sha256");
  const walk = (d: string, prefix: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    )) {
      if (e.name === ".git") continue;
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path, `${prefix}${e.name}/`);
      else if (e.isFile()) hash.update(`${prefix}${e.name}\0`).update(readFileSync(path)).update("\0");
    }
  };
  walk(dir, "");
  return `sha256-${hash.digest("base64")}`;
}
