/**
 * Project trust at the command line: the y/N/always question before a run, and `coil trust` /
 * `coil untrust`. What would load, its hash and the store are boot/trust.ts.
 */
import { existsSync, realpathSync } from "node:fs";
import { resolve } from "node:path";
import { fingerprint, linksLeaving, listOf, projectFiles, readStore, writeStore } from "../boot/trust.js";
import { projectRoot } from "../boot/paths.js";
import type { ProjectTrustService, TrustPrompts } from "../lib/project-trust.js";
import type { CliIO } from "./main.js";

/**
 * Whether `dir`'s code may load now: `--trust`, a stored answer whose hash still matches, or the user's
 * answer on a terminal. A project with nothing to load counts as trusted for its `.coil/` (there is none),
 * but only `explicit` trust (one of those three) lets anything else of the project run, such as packages
 * in its `node_modules`.
 */
export interface TrustState {
  trusted: boolean;
  explicit: boolean;
  /** What to print about what was not loaded (empty when nothing was skipped). */
  skipped: string;
  /** Not trusted, nothing stored, and the user was not asked: a plugin's decider may still decide (adviseTrust). */
  undecided?: boolean;
}

/** Print/JSON modes never ask, and neither do --help and --version. */
const printing = (argv: readonly string[]) =>
  argv.some(
    (a) =>
      ["--print", "--help", "-h", "--version", "-v"].includes(a) ||
      a === "--mode" ||
      a.startsWith("--mode=") ||
      /^-[a-zA-Z]*p[a-zA-Z]*$/.test(a),
  );
const interactive = (io: CliIO) =>
  Boolean(io.stdin.isTTY && (io.stderr as { isTTY?: boolean }).isTTY) && !printing(io.argv);

export async function settleTrust(io: CliIO, home: string, flag: boolean, mayAsk: boolean): Promise<TrustState> {
  const dir = realpathSync(projectRoot(io.cwd));
  const files = projectFiles(dir, home);
  if (flag) return { trusted: true, explicit: true, skipped: "" };
  const hash = fingerprint(dir, files);
  const stored = readStore(home)[dir];
  if (stored?.hash === hash) return { trusted: true, explicit: true, skipped: "" };
  if (files.length === 0) return { trusted: true, explicit: false, skipped: "" };
  const list = listOf(dir, files);
  // Code reached through a link (or a path) out of the project is not the project's: trusting it takes an explicit command.
  const leaving = linksLeaving(dir, files).size > 0;
  if (mayAsk && interactive(io) && !leaving) {
    const why = stored ? "changed since you trusted it" : "is not trusted yet";
    io.stderr.write(`coil: project ${dir} ${why}. Trusting it loads and runs this with your rights:\n${list}\n`);
    const a = (await ask(io, "trust it? [y]es for this run, [n]o, [a]lways: ")).toLowerCase();
    if (a === "a" || a === "always") remember(home, dir);
    if (["y", "yes", "a", "always"].includes(a)) return { trusted: true, explicit: true, skipped: "" };
  }
  const why = stored ? "changed since it was trusted" : "untrusted project";
  const links = leaving
    ? "coil: it has links leaving the project (or code it loads lies outside it), so coil does not offer to trust it at the prompt; check where they lead first\n"
    : "";
  return {
    trusted: false,
    explicit: false,
    skipped: `coil: not loaded (${why}):\n${list}\n${links}coil: to load it: coil trust ${dir}  (or --trust for one run)\n`,
    ...(!mayAsk && !leaving ? { undecided: true } : {}),
  };
}

/** Store `dir` as trusted with the hash of what it loads now (`coil trust`, an "always", a decider's `remember`). */
function remember(home: string, dir: string): void {
  const files = projectFiles(dir, home);
  writeStore(home, {
    ...readStore(home),
    [dir]: { hash: fingerprint(dir, files), trustedAt: new Date().toISOString() },
  });
}

/** One line from the terminal (stdin), after `question` on stderr. */
async function ask(io: CliIO, question: string): Promise<string> {
  io.stderr.write(question);
  const { createInterface } = await import("node:readline"); // only when asking
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
  const line = await new Promise<string>((done) => {
    rl.once("line", done);
    rl.once("close", () => done(""));
  });
  rl.close();
  return line.trim();
}

/** The terminal questions a decider may ask before any front end runs; without a terminal, no and nothing. */
function terminalPrompts(io: CliIO, hasUI: boolean): TrustPrompts {
  return {
    confirm: async (title, message) =>
      hasUI && ["y", "yes"].includes((await ask(io, `${title}: ${message} [y/N] `)).toLowerCase()),
    async select(title, options) {
      if (!hasUI || options.length === 0) return undefined;
      const list = options.map((o, i) => `  ${i + 1}. ${o}`).join("\n");
      const n = Number(await ask(io, `${title}\n${list}\nnumber: `));
      return Number.isInteger(n) && n >= 1 && n <= options.length ? options[n - 1] : undefined;
    },
    input: async (title, placeholder) =>
      hasUI ? (await ask(io, `${title}${placeholder ? ` (${placeholder})` : ""}: `)) || undefined : undefined,
    notify: (message, level = "info") => io.stderr.write(`coil: ${level === "info" ? "" : `${level}: `}${message}\n`),
  };
}

/**
 * An undecided project (settleTrust's `undecided`): the `project-trust` service of the host assembled without
 * trust decides first (Pi extensions' `project_trust`: yours and `-e`'s, never the project's own). A yes loads
 * the project (kept in the trust store when it says `remember`); a no skips it without asking; no decision:
 * undefined, and coil asks as usual.
 */
export async function adviseTrust(
  service: ProjectTrustService | undefined,
  io: CliIO,
  home: string,
): Promise<TrustState | undefined> {
  if (!service) return undefined;
  const dir = realpathSync(projectRoot(io.cwd));
  const hasUI = interactive(io);
  const mode = printing(io.argv) ? "print" : "interactive";
  const answer = await service.decide({ dir, hasUI, mode, ui: terminalPrompts(io, hasUI) });
  if (!answer) return undefined;
  if (answer.trusted) {
    if (answer.remember) remember(home, dir);
    io.stderr.write(
      `coil: ${answer.by} trusted project ${dir}${answer.remember ? " (kept: coil untrust undoes it)" : " for this run"}\n`,
    );
    return { trusted: true, explicit: true, skipped: "" };
  }
  const kept = answer.remember ? " (coil keeps no refusals: it asks again next time)" : "";
  io.stderr.write(
    `coil: ${answer.by} declined to trust project ${dir}${kept}; its code is not loaded (coil trust ${dir}, or --trust for one run)\n`,
  );
  const list = listOf(dir, projectFiles(dir, home));
  return {
    trusted: false,
    explicit: false,
    skipped: `coil: not loaded (${answer.by} declined to trust the project${kept}):\n${list}\ncoil: to load it: coil trust ${dir}  (or --trust for one run)\n`,
  };
}

/** `coil trust [dir]` and `coil untrust [dir]`; argv starts with the subcommand. */
export function trustCommand(argv: string[], io: CliIO, home: string): number {
  const [cmd, arg] = argv;
  const target = resolve(io.cwd, arg ?? ".");
  if (!existsSync(target)) {
    io.stderr.write(`coil ${cmd}: ${target} does not exist\n`);
    return 2;
  }
  // `coil trust` in a subdirectory trusts its project (the git root), which is what loads from there.
  const dir = realpathSync(projectRoot(target));
  const { [dir]: old, ...rest } = readStore(home);
  if (cmd === "untrust") {
    writeStore(home, rest);
    io.stdout.write(old ? `untrusted ${dir}\n` : `${dir} was not trusted\n`);
    return 0;
  }
  const files = projectFiles(dir, home);
  writeStore(home, { ...rest, [dir]: { hash: fingerprint(dir, files), trustedAt: new Date().toISOString() } });
  io.stdout.write(
    `trusted ${dir}${files.length ? `; this loads:\n${listOf(dir, files)}` : " (nothing to load yet)"}\n`,
  );
  return 0;
}
