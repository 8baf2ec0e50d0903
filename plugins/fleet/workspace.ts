/**
 * A job's own copy of its source, so parallel jobs and the runs of one job never share files: a clone of a
 * shared repository that borrows its objects (nothing is registered in the repository, whatever happens to
 * the worker), a fresh clone of a git URL, or (for a plain directory) a copy committed into a throwaway
 * repository. `patch()` is everything the agent changed, against the starting commit.
 */
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import type { JobSource } from "./job.js";

const run = promisify(execFile);

async function git(cwd: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run("git", args, {
      cwd,
      maxBuffer: 256 * 1024 * 1024,
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0" },
    });
    return stdout;
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`git ${args.join(" ")} (in ${cwd}) failed: ${(err.stderr || err.message).trim()}`);
  }
}

export interface Workspace {
  /** Where the agent works (a subdirectory of the checkout when the source directory was one). */
  cwd: string;
  patch(): Promise<string>;
  remove(): Promise<void>;
}

/** `dir` is a fresh path (not yet existing) under the worker's work directory. */
export async function prepareWorkspace(source: JobSource, dir: string): Promise<Workspace> {
  mkdirSync(join(dir, ".."), { recursive: true });
  if (source.kind === "git") {
    await git(join(dir, ".."), ["clone", "--quiet", source.repo, dir]);
    if (source.ref) await git(dir, ["checkout", "--quiet", "--detach", await cloneCommit(dir, source.ref)]);
    return checkout(dir, dir, async () => rmSync(dir, { recursive: true, force: true }));
  }
  if (!existsSync(source.dir))
    throw new Error(
      `the job's directory ${source.dir} does not exist on this worker: put it on a file system every worker shares, or submit with --repo`,
    );
  const top = await git(source.dir, ["rev-parse", "--show-toplevel"]).then(
    (s) => s.trim(),
    () => undefined,
  );
  if (top) {
    // A clone that borrows the repository's objects (`--shared`: nothing copied), not a `git worktree`: a
    // worktree is registered in the user's repository, and a worker killed mid-job would leave it there.
    // The commit is resolved in the repository itself, so a local branch, a tag or a detached HEAD all work.
    const commit = (
      await git(top, ["rev-parse", "--verify", "--quiet", `${source.ref ?? "HEAD"}^{commit}`]).catch(() => "")
    ).trim();
    if (!commit) throw new Error(`--ref ${source.ref ?? "HEAD"} names no commit in ${top}`);
    await git(join(dir, ".."), ["clone", "--quiet", "--shared", "--no-checkout", top, dir]);
    // The agent's git commands stay in its own clone: no remote leads back into the user's repository.
    await git(dir, ["remote", "remove", "origin"]);
    await git(dir, ["checkout", "--quiet", "--detach", commit]);
    return checkout(dir, join(dir, relative(top, source.dir)), async () =>
      rmSync(dir, { recursive: true, force: true }),
    );
  }
  if (source.ref) throw new Error(`--ref ${source.ref} was given but ${source.dir} is not a git repository`);
  cpSync(source.dir, dir, { recursive: true });
  await git(dir, ["init", "--quiet"]);
  await git(dir, ["add", "-A"]);
  await git(dir, [
    "-c",
    "user.name=coil fleet",
    "-c",
    "user.email=fleet@coil.invalid",
    "commit",
    "--quiet",
    "--allow-empty",
    "--no-verify",
    "-m",
    "job start",
  ]);
  return checkout(dir, dir, async () => rmSync(dir, { recursive: true, force: true }));
}

/** The commit `ref` names in a fresh clone: a sha or tag, a branch of origin, or a ref fetched on demand (refs/pull/1/head). */
async function cloneCommit(dir: string, ref: string): Promise<string> {
  for (const candidate of [ref, `origin/${ref}`]) {
    const sha = await git(dir, ["rev-parse", "--verify", "--quiet", `${candidate}^{commit}`]).then(
      (s) => s.trim(),
      () => "",
    );
    if (sha) return sha;
  }
  await git(dir, ["fetch", "--quiet", "origin", ref]);
  return (await git(dir, ["rev-parse", "FETCH_HEAD^{commit}"])).trim();
}

function checkout(root: string, cwd: string, remove: () => Promise<void>): Workspace {
  return {
    cwd,
    async patch() {
      await git(root, ["add", "-A"]);
      return git(root, ["diff", "--cached", "--binary", "HEAD"]);
    },
    remove,
  };
}
