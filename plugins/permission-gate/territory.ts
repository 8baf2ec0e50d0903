/**
 * Where the project is, for the modes that allow writes inside it: the working directory, its project
 * root (the git root) and the `directories` option (Claude Code's `additionalDirectories` join it), all
 * judged on real paths. `project` mode also writes to the temp folders without asking. Inside the
 * project, `.git/hooks` and `.git/config` are guarded: a hook or config written there runs later, as you,
 * outside coil, so writing them asks (in `accept-edits` and `project` mode) as writing outside does.
 */
import { tmpdir } from "node:os";
import { isAbsolute, join, relative, resolve } from "node:path";
import { projectRoot } from "../../lib/locations.js";
import { writeTargets } from "../../lib/shell/writes.js";
import { expandHome, realPathOf, type Subject } from "./rules.js";

const within = (root: string, p: string) => {
  const rel = relative(root, p);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
};

export class Territory {
  readonly roots: string[];
  private readonly temp: string[];
  private readonly guardedPaths: string[];

  constructor(cwd: string, directories: readonly string[]) {
    const abs = resolve(cwd);
    this.roots = [...new Set([abs, projectRoot(abs), ...directories.map((d) => resolve(abs, expandHome(d)))])].map(
      (p) => realPathOf(p),
    );
    this.temp = [...new Set(["/tmp", process.env.TMPDIR, tmpdir()].filter((d): d is string => !!d))].map((p) =>
      realPathOf(p),
    );
    this.guardedPaths = [...new Set([abs, projectRoot(abs)])].flatMap((r) =>
      [".git/hooks", ".git/config"].map((g) => realPathOf(join(r, g))),
    );
  }

  /** Inside the project (a real path). */
  inside(real: string): boolean {
    return this.roots.some((r) => within(r, real));
  }

  /** A temp folder (`project` mode writes there without asking). */
  scratch(real: string): boolean {
    return this.temp.some((t) => within(t, real));
  }

  /** `.git/hooks` or `.git/config` of the project. */
  guarded(real: string): boolean {
    return this.guardedPaths.some((g) => within(g, real));
  }

  /**
   * The first path a bash command writes outside the project (or into a guarded path), judged from where it
   * runs; `a path the shell computes` when it writes somewhere the gate cannot know. Undefined: none.
   */
  outsideWrite(item: string, subject: Extract<Subject, { kind: "commands" }>, scratchOk: boolean): string | undefined {
    const { paths, unknown } = writeTargets(item);
    const k = subject.items.indexOf(item);
    const dir = subject.cwds ? subject.cwds[k] : subject.cwd;
    for (const p of paths) {
      const expanded = expandHome(p);
      if (!dir && !isAbsolute(expanded)) return `${p} (after a cd the gate cannot follow)`;
      const real = realPathOf(resolve(dir ?? ".", expanded));
      if (/^\/dev\/(null|zero|stdout|stderr|tty|fd\/\d+)$/.test(real)) continue;
      if (this.guarded(real)) return p;
      if (!this.inside(real) && !(scratchOk && this.scratch(real))) return p;
    }
    return unknown ? "a path the shell computes" : undefined;
  }
}
