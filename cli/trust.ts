/**
 * Project trust at the command line: the y/N/always question before a run, and `coil trust` /
 * `coil untrust`. What would load, its hash and the store are boot/trust.ts.
 */
import { existsSync, realpathSync } from "node:fs";
import { createInterface } from "node:readline";
import { resolve } from "node:path";
import { fingerprint, linksLeaving, listOf, projectFiles, readStore, writeStore } from "../boot/trust.js";
import { projectRoot } from "../boot/paths.js";
import type { CliIO } from "./main.js";

/**
 * Whether `dir`'s code may load now: `--trust`, a stored answer whose hash still matches, or the user's
 * answer on a terminal. A project with nothing to load counts as trusted for its `.coil/` (there is none),
 * but only `explicit` trust (one of those three) lets anything else of the project run, such as packages
 * in its `node_modules`.
 */
export async function settleTrust(
  io: CliIO,
  home: string,
  flag: boolean,
  mayAsk: boolean,
): Promise<{ trusted: boolean; explicit: boolean; skipped: string }> {
  const dir = realpathSync(projectRoot(io.cwd));
  const files = projectFiles(dir, home);
  if (flag) return { trusted: true, explicit: true, skipped: "" };
  const hash = fingerprint(dir, files);
  const stored = readStore(home)[dir];
  if (stored?.hash === hash) return { trusted: true, explicit: true, skipped: "" };
  if (files.length === 0) return { trusted: true, explicit: false, skipped: "" };
  const list = listOf(dir, files);
  // Print/JSON modes never ask, and neither do --help and --version.
  const printing = io.argv.some(
    (a) =>
      ["--print", "--help", "-h", "--version", "-v"].includes(a) ||
      a === "--mode" ||
      a.startsWith("--mode=") ||
      /^-[a-zA-Z]*p[a-zA-Z]*$/.test(a),
  );
  const tty = io.stdin.isTTY && (io.stderr as { isTTY?: boolean }).isTTY;
  // Code reached through a link (or a path) out of the project is not the project's: trusting it takes an explicit command.
  const leaving = linksLeaving(dir, files).size > 0;
  if (mayAsk && tty && !printing && !leaving) {
    const why = stored ? "changed since you trusted it" : "is not trusted yet";
    io.stderr.write(`coil: project ${dir} ${why}. Trusting it loads and runs this with your rights:\n${list}\n`);
    const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
    const line = new Promise<string>((done) => {
      rl.once("line", done);
      rl.once("close", () => done(""));
    });
    io.stderr.write("trust it? [y]es for this run, [n]o, [a]lways: ");
    const a = (await line).trim().toLowerCase();
    rl.close();
    if (a === "a" || a === "always")
      writeStore(home, { ...readStore(home), [dir]: { hash, trustedAt: new Date().toISOString() } });
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
