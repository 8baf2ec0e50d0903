/**
 * The shadow repository: a bare git directory under `$COIL_HOME/checkpoints/<project id>` whose work tree
 * is the project. Every git command runs with its own GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE (and the
 * caller's GIT_* variables removed), so the project's own `.git`, index, stash and branches are never read
 * or written. Snapshots are commits under `refs/checkpoints/`; objects are shared, so a snapshot costs what
 * changed, and the index keeps file stat data, so an unchanged tree is not re-read.
 */
import { spawn } from "../../lib/child-process.js";
import { createHash } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, isAbsolute, join, relative } from "node:path";
import { watchGroup } from "../../lib/shell/reaper.js";

/** What a snapshot or a `coil checkpoints list` row knows about one checkpoint. */
export interface CheckpointMeta {
  /** Session id the checkpoint belongs to ("" when taken outside a session). */
  session: string;
  /** The session entry of the user prompt it precedes (before) or follows (after). */
  entry?: string;
  /** `before`: the files before the prompt's first change; `after`: as the agent left them; `rewind`: before a rewind restored files. */
  kind: "before" | "after" | "rewind";
  /** The prompt, shortened. */
  prompt?: string;
}

export interface Snapshot {
  /** Full ref name, `refs/checkpoints/<session>/<stamp>-<kind>`. */
  ref: string;
  commit: string;
  tree: string;
  time: number;
  /** Files over the size limit, left out (relative paths). */
  large: string[];
  /** Folders that are git repositories of their own, left out. */
  nested: string[];
  /** Ignored folders and files (`.gitignore`, .git/info/exclude, the global excludes), left out. */
  ignored: string[];
}

export interface ListedCheckpoint extends CheckpointMeta {
  ref: string;
  commit: string;
  time: number;
}

export interface Change {
  /** A: the target has it, the work tree does not; D: the reverse; M: content or mode differs. */
  status: "A" | "D" | "M";
  path: string;
}

export class GitError extends Error {}

/** `<name>-<hash of the real path>`: one shadow repository per project directory. */
export function projectId(cwd: string): string {
  let real = cwd;
  try {
    real = realpathSync(cwd);
  } catch {
    /* a directory that is gone still has an id */
  }
  const name =
    basename(real)
      .replace(/[^A-Za-z0-9._-]/g, "_")
      .slice(0, 40) || "root";
  return `${name}-${createHash("sha256").update(real).digest("hex").slice(0, 12)}`;
}

/** A gitignore pattern that matches exactly this path (anchored, wildcards escaped). */
function literalPattern(path: string): string {
  return "/" + path.replace(/[\\*?[\]!# ]/g, (c) => `\\${c}`);
}

/** The most output one git command may give (a diff of a huge tree); more fails the command. */
const MAX_OUTPUT = 256 * 1024 * 1024;

const IDENTITY = {
  GIT_AUTHOR_NAME: "coil",
  GIT_AUTHOR_EMAIL: "coil@localhost",
  GIT_COMMITTER_NAME: "coil",
  GIT_COMMITTER_EMAIL: "coil@localhost",
};
/** Settings that make snapshots exact and quick whatever the user's git configuration says. */
const CONFIG = [
  "core.autocrlf=false",
  "core.safecrlf=false",
  "core.eol=lf",
  "core.filemode=true",
  "core.symlinks=true",
  "core.ignorecase=false",
  "core.untrackedCache=true",
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "core.quotepath=off",
  "gc.auto=0",
  "advice.addEmbeddedRepo=false",
  "index.threads=true",
  "feature.manyFiles=false",
  "commit.gpgsign=false",
  "core.logAllRefUpdates=false",
].flatMap((c) => ["-c", c]);

export class ShadowRepo {
  /** `$COIL_HOME/checkpoints/<project id>`. */
  readonly dir: string;
  readonly gitDir: string;
  private readonly indexFile: string;
  private readonly skippedFile: string;
  /** One empty file per git command running on this shadow repository (named by its pid), from any coil. */
  private readonly runningDir: string;
  private ready = false;
  private readonly homeExclude: string;
  /** One git command at a time: they share the index. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly cwd: string,
    home: string,
    private readonly maxFileBytes: number,
  ) {
    this.dir = join(home, "checkpoints", projectId(cwd));
    // $COIL_HOME inside the project (sessions, these checkpoints) is never part of a snapshot.
    const inside = relative(cwd, home);
    this.homeExclude = inside && !inside.startsWith("..") && !isAbsolute(inside) ? `${literalPattern(inside)}/\n` : "";
    this.gitDir = join(this.dir, "git");
    this.indexFile = join(this.dir, "index");
    this.skippedFile = join(this.dir, "skipped.json");
    this.runningDir = join(this.dir, "running");
  }

  get exists(): boolean {
    return existsSync(join(this.gitDir, "HEAD"));
  }

  /** Run git on the shadow repository; rejects with git's own message and the command. */
  git(args: string[], input?: string): Promise<string> {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GIT_")) env[k] = v;
    Object.assign(env, IDENTITY, {
      GIT_DIR: this.gitDir,
      GIT_WORK_TREE: this.cwd,
      GIT_INDEX_FILE: this.indexFile,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_LITERAL_PATHSPECS: "1",
      GIT_TERMINAL_PROMPT: "0",
      LC_ALL: "C",
    });
    const run = () =>
      new Promise<string>((resolve, reject) => {
        // Its own process group, watched: should coil be killed (kill -9 included), git does not run on
        // holding the shadow index's lock. Its pid is listed under running/ while it runs (see staleLock).
        const child = spawn("git", [...CONFIG, ...args], { cwd: this.cwd, env, detached: true });
        const watch = child.pid ? watchGroup(child.pid) : undefined;
        const mark = child.pid ? this.running(child.pid) : undefined;
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        let size = 0;
        child.stdout!.on("data", (d: Buffer) => {
          size += d.length;
          if (size > MAX_OUTPUT) child.kill("SIGKILL");
          else out.push(d);
        });
        child.stderr!.on("data", (d: Buffer) => void err.push(d));
        child.stdin!.on("error", () => undefined);
        child.once("error", (error: NodeJS.ErrnoException) => {
          watch?.release();
          mark?.();
          reject(
            error.code === "ENOENT"
              ? new GitError(
                  "the git program was not found on PATH: checkpoints need it (install git, or remove the plugin with `- checkpoints: false` in your preset)",
                )
              : new GitError(`git ${args[0]} could not start: ${error.message}`),
          );
        });
        child.once("close", (code, signal) => {
          watch?.release();
          mark?.();
          if (code === 0) return resolve(Buffer.concat(out).toString("utf8"));
          const stderr = Buffer.concat(err).toString("utf8").trim();
          const why = stderr
            ? stderr.split("\n").slice(0, 4).join("; ")
            : size > MAX_OUTPUT
              ? `its output passed ${MAX_OUTPUT} bytes`
              : `it ${signal ? `was killed by ${signal}` : `exited with code ${code}`}`;
          reject(new GitError(`git ${args[0]} failed in the shadow repository ${this.gitDir}: ${why}`));
        });
        child.stdin!.end(input ?? "");
      });
    // Another coil in the same project holds the shadow index for a moment: wait for it. A lock no live git
    // of any coil holds (its git was killed, kill -9 and all) is removed, and so is one older than a minute.
    const patient = async (): Promise<string> => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await run();
        } catch (error) {
          if (!/index\.lock|\.lock': File exists/.test((error as Error).message) || attempt >= 50) throw error;
          this.clearStaleLock();
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    const next = this.queue.then(patient, patient);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** List `pid` under running/ (git commands of every coil on this project); returns the removal. */
  private running(pid: number): () => void {
    const file = join(this.runningDir, String(pid));
    try {
      mkdirSync(this.runningDir, { recursive: true });
      writeFileSync(file, "");
    } catch {
      return () => undefined;
    }
    return () => rmSync(file, { force: true });
  }

  /**
   * Remove the shadow index's lock when no git of any coil can hold it: every pid listed under running/ is
   * gone (a git killed with its coil left the lock behind), and the lock is a second old (a git that
   * just started may not be listed yet); or when it is a minute old, whoever made it.
   */
  private clearStaleLock(): void {
    const lock = `${this.indexFile}.lock`;
    let age: number;
    try {
      age = Date.now() - statSync(lock).mtimeMs;
    } catch {
      return; // gone already
    }
    let live = 0;
    for (const name of existsSync(this.runningDir) ? readdirSync(this.runningDir) : []) {
      try {
        process.kill(Number(name), 0);
        live++;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EPERM") live++;
        else rmSync(join(this.runningDir, name), { force: true });
      }
    }
    if (age > 60_000 || (live === 0 && age > 1000)) rmSync(lock, { force: true });
  }

  private async init(): Promise<void> {
    if (this.ready) return;
    if (!this.exists) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      await this.git(["init", "--quiet"]);
      writeFileSync(join(this.dir, "project"), this.cwd + "\n");
    }
    this.ready = true;
  }

  /** Files and folders left out so far: files over the size limit, and git repositories of their own inside the project. */
  private known(): { large: string[]; nested: string[] } {
    try {
      const data = JSON.parse(readFileSync(this.skippedFile, "utf8")) as { large?: string[]; nested?: string[] };
      return { large: data.large ?? [], nested: data.nested ?? [] };
    } catch {
      return { large: [], nested: [] };
    }
  }

  private sizeOf(path: string): number | undefined {
    try {
      const st = lstatSync(join(this.cwd, path));
      return st.isFile() ? st.size : undefined;
    } catch {
      return undefined;
    }
  }

  /** Stage the work tree into the shadow index and write its tree: the state of the files now. */
  async stage(): Promise<{ tree: string; large: string[]; nested: string[] }> {
    await this.init();
    // Re-checked each time: a file that shrank or went away, or a folder that lost its .git, is taken in again.
    const known = this.known();
    const large = new Set(known.large.filter((p) => (this.sizeOf(p) ?? 0) > this.maxFileBytes));
    const nested = new Set(known.nested.filter((p) => existsSync(join(this.cwd, p, ".git"))));
    const candidates = (await this.git(["ls-files", "-z", "--others", "--modified", "--exclude-standard"]))
      .split("\0")
      .filter(Boolean);
    const dropped: string[] = [];
    for (const path of candidates) {
      // git lists a folder holding a repository of its own as `dir/`: its files cannot be snapshotted from here
      if (path.endsWith("/")) nested.add(path.slice(0, -1));
      else if (!large.has(path) && (this.sizeOf(path) ?? 0) > this.maxFileBytes) {
        large.add(path);
        dropped.push(path);
      }
    }
    const skipped = { large: [...large].sort(), nested: [...nested].sort() };
    const projectExclude = join(this.cwd, ".git", "info", "exclude");
    const inherited = existsSync(projectExclude) ? readFileSync(projectExclude, "utf8") : "";
    const exclude = `# written by coil's checkpoints plugin: the project's .git/info/exclude, then what is left out\n${inherited}\n${this.homeExclude}${[...skipped.large.map(literalPattern), ...skipped.nested.map((p) => `${literalPattern(p)}/`)].join("\n")}\n`;
    const excludeFile = join(this.gitDir, "info", "exclude");
    // Rewritten only when it changes: git's untracked cache keys on this file.
    if (!existsSync(excludeFile) || readFileSync(excludeFile, "utf8") !== exclude) {
      mkdirSync(join(this.gitDir, "info"), { recursive: true });
      writeFileSync(excludeFile, exclude);
      writeFileSync(this.skippedFile, JSON.stringify(skipped));
    }
    if (dropped.length) await this.git(["rm", "--cached", "--quiet", "--ignore-unmatch", "-r", "--", ...dropped]);
    await this.git(["add", "--all", "--ignore-errors", "--", "."]).catch((error: Error) => {
      // --ignore-errors still exits 1 after skipping an unreadable file; anything else is a real failure
      if (!/unable to (?:index|stat)|cannot|permission denied/i.test(error.message)) throw error;
    });
    const tree = (await this.git(["write-tree"])).trim();
    return { tree, ...skipped };
  }

  /** Ignored folders and files at the top of what git skips (one line each, folders end in `/`). */
  async ignored(): Promise<string[]> {
    await this.init();
    const known = this.known();
    const ours = new Set([...known.large, ...known.nested.map((p) => `${p}/`)]);
    const out = await this.git([
      "ls-files",
      "-z",
      "--others",
      "--ignored",
      "--exclude-standard",
      "--directory",
      "--no-empty-directory",
    ]);
    return out.split("\0").filter((p) => p && !ours.has(p) && `/${p}` !== this.homeExclude.trim());
  }

  /** Take a snapshot: stage, commit, and keep it under `refs/checkpoints/<session>/`. */
  async snapshot(meta: CheckpointMeta, withIgnored = true): Promise<Snapshot> {
    const { tree, large, nested } = await this.stage();
    const time = Date.now();
    const commit = (await this.git(["commit-tree", tree, "-m", JSON.stringify({ ...meta, time })])).trim();
    const stamp = new Date(time).toISOString().replace(/[-:.TZ]/g, "");
    const ref = `refs/checkpoints/${meta.session || "none"}/${stamp}-${Math.random().toString(36).slice(2, 6)}-${meta.kind}`;
    await this.git(["update-ref", ref, commit]);
    return { ref, commit, tree, time, large, nested, ignored: withIgnored ? await this.ignored() : [] };
  }

  /** The tree a commit (or ref) holds; undefined when it was pruned. */
  async treeOf(commitish: string): Promise<string | undefined> {
    if (!this.exists) return undefined;
    try {
      return (await this.git(["rev-parse", "--verify", "--quiet", `${commitish}^{tree}`])).trim() || undefined;
    } catch {
      return undefined;
    }
  }

  /** What changes from tree `from` to tree `to`. */
  async diff(from: string, to: string): Promise<Change[]> {
    if (from === to) return [];
    const out = (await this.git(["diff-tree", "-r", "-z", "--no-renames", "--name-status", from, to])).split("\0");
    const changes: Change[] = [];
    for (let i = 0; i + 1 < out.length; i += 2) {
      const s = out[i]![0];
      if (!s) break;
      changes.push({ status: s === "A" ? "A" : s === "D" ? "D" : "M", path: out[i + 1]! });
    }
    return changes;
  }

  /** A unified diff from `from` to `to` (for a preview), at most `limit` characters. */
  async patch(from: string, to: string, limit = 20000): Promise<string> {
    const text = await this.git(["diff-tree", "-r", "-p", "--no-renames", "--no-color", from, to]);
    return text.length > limit ? `${text.slice(0, limit)}\n… (${text.length - limit} more characters)` : text;
  }

  /**
   * Put the work tree back to `tree`, given the changes from the current tree to it: files it lacks are
   * deleted (and folders that end up empty removed), the others written from the snapshot, modes included.
   */
  async restore(tree: string, changes: readonly Change[]): Promise<void> {
    const deleted = changes.filter((c) => c.status === "D").map((c) => c.path);
    for (const path of deleted) {
      const file = join(this.cwd, path);
      try {
        unlinkSync(file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
      for (let dir = dirname(file); dir.startsWith(this.cwd + "/") && dir !== this.cwd; dir = dirname(dir)) {
        try {
          if (readdirSync(dir).length) break;
          rmdirSync(dir);
        } catch {
          break;
        }
      }
    }
    if (deleted.length)
      await this.git(
        ["rm", "--cached", "--quiet", "--ignore-unmatch", "-r", "--pathspec-from-file=-", "--pathspec-file-nul"],
        deleted.join("\0"),
      );
    const written = changes.filter((c) => c.status !== "D").map((c) => c.path);
    if (written.length)
      await this.git(["checkout", tree, "--pathspec-from-file=-", "--pathspec-file-nul"], written.join("\0"));
  }

  /** Every checkpoint of this project, oldest first. */
  async list(): Promise<ListedCheckpoint[]> {
    if (!this.exists) return [];
    const out = await this.git([
      "for-each-ref",
      "--format=%(refname)%00%(objectname)%00%(contents)%00%00",
      "refs/checkpoints/",
    ]);
    const rows: ListedCheckpoint[] = [];
    for (const record of out.split("\0\0\n")) {
      const [ref, commit, body] = record.split("\0");
      if (!ref || !commit) continue;
      let meta: Partial<CheckpointMeta & { time: number }> = {};
      try {
        meta = JSON.parse(body ?? "{}");
      } catch {
        /* not ours: listed with what the ref says */
      }
      rows.push({
        ref,
        commit,
        session: meta.session ?? "",
        entry: meta.entry,
        kind: meta.kind ?? "before",
        prompt: meta.prompt,
        time: meta.time ?? 0,
      });
    }
    return rows.sort((a, b) => a.time - b.time);
  }

  /**
   * Delete checkpoints older than `maxAgeDays` and all but the newest `maxCount`, then the objects only they
   * held. Returns how many were deleted.
   */
  async prune(limits: { maxAgeDays?: number; maxCount?: number }, now = Date.now()): Promise<ListedCheckpoint[]> {
    const all = await this.list();
    const cutoff = limits.maxAgeDays !== undefined ? now - limits.maxAgeDays * 86_400_000 : -Infinity;
    const keepFrom = limits.maxCount !== undefined ? Math.max(0, all.length - limits.maxCount) : 0;
    const doomed = all.filter((c, i) => c.time < cutoff || i < keepFrom);
    if (!doomed.length) return [];
    await this.git(["update-ref", "--stdin"], doomed.map((c) => `delete ${c.ref}\n`).join(""));
    await this.git(["prune", "--expire=now"]);
    return doomed;
  }
}
