#!/usr/bin/env node
// The system tools coil's tests need, in one list: `npm test` (its `pretest`) and `.ci/run` both run this
// file. It checks each tool on PATH; when some are missing and it runs as root with apt-get (a CI image,
// a fresh container), it installs them; otherwise it stops at once with one list of what to install,
// instead of letting a test file per missing tool fail.
//
//   node scripts/prerequisites.mjs            check, install what it can, exit 1 if a required tool is missing
//   node scripts/prerequisites.mjs --check    check only (never installs)
//   node scripts/prerequisites.mjs --list     print the list (tool, Debian/Ubuntu package, why)
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** Each tool: the command looked for on PATH, its Debian/Ubuntu package, whether the tests need it, and why. */
const PREREQUISITES = [
  {
    command: "git",
    apt: "git",
    required: true,
    why: "checkpoints, packages installed from git, the Claude Code plugin tests",
  },
  { command: "bash", apt: "bash", required: true, why: "the bash tool and its tests" },
  { command: "python3", apt: "python3-minimal", required: true, why: "hook scripts in the hooks tests" },
  { command: "tmux", apt: "tmux", required: true, why: "the TUI tests drive coil in a real terminal" },
  { command: "bwrap", apt: "bubblewrap", required: true, why: "the sandbox tests run real sandboxes" },
  {
    command: "redis-server",
    apt: "redis-server",
    required: true,
    why: "the fleet tests start their own Redis on a free port",
  },
  {
    command: "rg",
    apt: "ripgrep",
    required: false,
    why: "the grep tool's ripgrep path (its built-in fallback is always tested)",
  },
  { command: "strace", apt: "strace", required: false, why: "`npm run bench` counts fsyncs per turn with it" },
];

/** The full path of `command` on `path`, or undefined. */
function which(command, path = process.env.PATH ?? "") {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, command);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {}
  }
  return undefined;
}

const missing = (path) => PREREQUISITES.filter((p) => !which(p.command, path));

/** Root with apt-get on PATH: install `packages`, quietly. False (and apt-get's output) if that failed. */
function aptInstall(packages) {
  if (process.getuid?.() !== 0 || !which("apt-get")) return false;
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  process.stderr.write(`prerequisites: apt-get install ${packages.join(" ")}\n`);
  const update = spawnSync("apt-get", ["update", "-qq"], { env, encoding: "utf8" });
  const install = spawnSync("apt-get", ["install", "-y", "-qq", ...packages], { env, encoding: "utf8" });
  if (update.status === 0 && install.status === 0) return true;
  process.stderr.write(`${update.stderr ?? ""}${install.stdout ?? ""}${install.stderr ?? ""}`);
  return false;
}

function main(argv) {
  if (argv.includes("--list")) {
    for (const p of PREREQUISITES)
      process.stdout.write(`${p.command}\t${p.apt}\t${p.required ? "required" : "optional"}\t${p.why}\n`);
    return 0;
  }
  let absent = missing();
  if (absent.length > 0 && !argv.includes("--check") && aptInstall(absent.map((p) => p.apt))) absent = missing();
  for (const p of absent.filter((p) => !p.required))
    process.stderr.write(`prerequisites: ${p.command} (${p.apt}) is not installed; skipped: ${p.why}\n`);
  const required = absent.filter((p) => p.required);
  if (required.length === 0) return 0;
  const width = Math.max(...required.map((p) => p.command.length));
  process.stderr.write(
    `prerequisites: the tests need ${required.length === 1 ? "this tool" : "these tools"}, not found on PATH:\n` +
      required.map((p) => `  ${p.command.padEnd(width)}  (${p.why})\n`).join("") +
      `Install ${required.length === 1 ? "it" : "them"} and run the tests again; on Debian or Ubuntu:\n` +
      `  ${process.getuid?.() === 0 ? "" : "sudo "}apt-get install ${required.map((p) => p.apt).join(" ")}\n`,
  );
  return 1;
}

process.exitCode = main(process.argv.slice(2));
