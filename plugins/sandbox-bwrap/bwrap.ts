/**
 * The bubblewrap command line, the scrubbed environment, the start-up probe and a process runner.
 * Inside: the root file system read-only, the working directory and configured paths writable, a
 * private /tmp, /dev and /proc, secrets in the home directory and local service sockets hidden, every
 * namespace unshared (the network too unless allowed), a new user namespace that cannot make further
 * ones, and no capabilities: as root too, the command cannot remount or unmount its way out.
 * `--unshare-pid` with `--die-with-parent` means that killing bwrap ends everything the command
 * started: the PID namespace goes away with it.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { endWithCoil } from "../../lib/shell/reaper.js";

/**
 * How the sandbox gets its user namespace. `locked`: a new one, and none can be made inside
 * (`--disable-userns`, bwrap 0.8+). `new`: a new one. `none`: bwrap could not make one (a privileged
 * bwrap, as root or setuid, in a container that forbids them); capabilities are still all dropped.
 */
export type UserNamespace = "locked" | "new" | "none";

export interface SandboxConfig {
  bwrap: string;
  cwd: string;
  /** Extra writable paths (absolute). */
  writable: readonly string[];
  /** Paths replaced by an empty directory (or /dev/null for files and sockets). */
  hide: readonly string[];
  /** Paths inside the writable ones that stay read-only (`.git/hooks`, `.git/config`; absolute, existing). */
  readOnly?: readonly string[];
  network: boolean;
  /** Default `locked`; the probe finds the strongest one this machine allows. */
  userns?: UserNamespace;
}

/** Environment variables that never enter the sandbox: credentials by name, provider keys, agent sockets. */
const SECRET_NAME =
  /(?:^|_)(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|ACCESS_KEY(?:_ID)?|SECRET_KEY|PRIVATE_KEY|AUTH)(?:_|$)/i;
const SECRET_PREFIX =
  /^(?:ANTHROPIC|OPENAI|AZURE_OPENAI|GEMINI|GOOGLE_API|MISTRAL|GROQ|XAI|DEEPSEEK|OPENROUTER|COHERE|HF|HUGGING_?FACE|CLAUDE)_/i;
const SECRET_EXACT = new Set(["SSH_AUTH_SOCK", "GPG_AGENT_INFO", "NETRC", "DOCKER_AUTH_CONFIG", "KUBECONFIG"]);

export function isSecretEnv(name: string): boolean {
  return SECRET_EXACT.has(name) || SECRET_NAME.test(name) || SECRET_PREFIX.test(name);
}

/**
 * Values that are secrets whatever the variable is called: URLs with a password
 * (`postgres://u:pw@host`), private keys, and the shapes of well-known tokens.
 */
const SECRET_VALUE = [
  /[a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:[^\s/@]+@/i, // scheme://user:password@
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/, // Anthropic, OpenAI
  /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}/, // GitHub
  /\bglpat-[A-Za-z0-9_-]{20,}/, // GitLab
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/, // Slack
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/, // AWS access key id
  /\bAIza[0-9A-Za-z_-]{35}/, // Google API key
  /\bnpm_[A-Za-z0-9]{36}/, // npm
  /\b(?:sk|rk)_live_[A-Za-z0-9]{16,}/, // Stripe
  /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+/, // JWT
];

export function isSecretValue(value: string): boolean {
  return SECRET_VALUE.some((re) => re.test(value));
}

/**
 * Variables that enter the sandbox (a trailing `*` is a prefix): what shells, compilers, package
 * managers and test runners need to work, nothing that usually holds a credential. `passEnv` adds more.
 */
export const DEFAULT_PASS_ENV: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "PWD",
  "SHLVL",
  "TERM",
  "COLORTERM",
  "TERM_PROGRAM",
  "NO_COLOR",
  "FORCE_COLOR",
  "CLICOLOR",
  "LANG",
  "LANGUAGE",
  "LC_*",
  "TZ",
  "EDITOR",
  "VISUAL",
  "PAGER",
  "HOSTNAME",
  "CI",
  "XDG_CONFIG_HOME",
  "XDG_CACHE_HOME",
  "XDG_DATA_HOME",
  "XDG_STATE_HOME",
  "XDG_DATA_DIRS",
  "XDG_CONFIG_DIRS",
  "NODE_ENV",
  "NODE_PATH",
  "NODE_OPTIONS",
  "NVM_DIR",
  "NVM_BIN",
  "NPM_CONFIG_PREFIX",
  "PNPM_HOME",
  "BUN_INSTALL",
  "DENO_DIR",
  "VOLTA_HOME",
  "PYTHONPATH",
  "PYTHONHOME",
  "PYTHONDONTWRITEBYTECODE",
  "PYTHONUNBUFFERED",
  "VIRTUAL_ENV",
  "CONDA_PREFIX",
  "CONDA_DEFAULT_ENV",
  "PIPX_HOME",
  "POETRY_HOME",
  "UV_CACHE_DIR",
  "GOPATH",
  "GOROOT",
  "GOBIN",
  "GOFLAGS",
  "GOCACHE",
  "GOMODCACHE",
  "CARGO_HOME",
  "RUSTUP_HOME",
  "RUSTFLAGS",
  "JAVA_HOME",
  "GRADLE_USER_HOME",
  "MAVEN_HOME",
  "M2_HOME",
  "GEM_HOME",
  "GEM_PATH",
  "RBENV_ROOT",
  "PYENV_ROOT",
  "ASDF_DIR",
  "ASDF_DATA_DIR",
  "MISE_DATA_DIR",
  "CC",
  "CXX",
  "CFLAGS",
  "CXXFLAGS",
  "CPPFLAGS",
  "LDFLAGS",
  "PKG_CONFIG_PATH",
  "LD_LIBRARY_PATH",
  "CMAKE_PREFIX_PATH",
  "MAKEFLAGS",
  "GIT_AUTHOR_NAME",
  "GIT_AUTHOR_EMAIL",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL",
  "GIT_EDITOR",
  "GIT_PAGER",
];

const matchesName = (patterns: readonly string[], name: string) =>
  patterns.some((p) => (p.endsWith("*") ? name.startsWith(p.slice(0, -1)) : p === name));

export interface EnvPolicy {
  /** Names (a trailing `*` is a prefix) passed besides DEFAULT_PASS_ENV, unless the name or value looks secret. */
  pass?: readonly string[];
  /** Names passed as they are, even when the name or the value looks secret. */
  keep?: readonly string[];
}

/**
 * The environment the sandboxed command gets: only allowlisted variables, and none whose name or value
 * looks like a secret (unless kept); TMPDIR points at the private /tmp. `dropped` names what stayed out.
 */
export function scrubEnv(
  env: Record<string, string | undefined>,
  policy: EnvPolicy | readonly string[] = {},
): { env: Record<string, string>; dropped: string[] } {
  const { pass = [], keep = [] } = Array.isArray(policy)
    ? { keep: policy as readonly string[] }
    : (policy as EnvPolicy);
  const out: Record<string, string> = {};
  const dropped: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    const allowed =
      matchesName(keep, k) || (matchesName([...DEFAULT_PASS_ENV, ...pass], k) && !isSecretEnv(k) && !isSecretValue(v));
    if (allowed) out[k] = v;
    else dropped.push(k);
  }
  out.TMPDIR = "/tmp";
  return { env: out, dropped: dropped.sort() };
}

/** `~/x` and relative paths made absolute (relative to `base`). */
export function expandPath(p: string, base: string, home = homedir()): string {
  if (p === "~") return home;
  if (p.startsWith("~/")) return join(home, p.slice(2));
  return isAbsolute(p) ? p : resolve(base, p);
}

/** Where a path really is (links followed), or undefined when it does not exist. */
function real(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/** bwrap's arguments up to (not including) the command. Order matters: later mounts cover earlier ones. */
export function bwrapArgs(c: SandboxConfig): string[] {
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", c.cwd, c.cwd];
  // Hide the real location: a link (~/.ssh -> /data/ssh) is followed, and each target is covered once.
  const hidden = new Set<string>();
  for (const p of c.hide) {
    const target = real(p);
    if (
      !target ||
      hidden.has(target) ||
      c.cwd === target ||
      c.cwd.startsWith(target.endsWith("/") ? target : `${target}/`)
    )
      continue; // never over the project
    hidden.add(target);
    args.push(...(statSync(target).isDirectory() ? ["--tmpfs", target] : ["--ro-bind", "/dev/null", target]));
  }
  for (const p of c.writable) if (existsSync(p)) args.push("--bind", p, p);
  // Last, so they cover the writable binds: a command cannot plant a git hook or config that runs later, outside.
  for (const p of c.readOnly ?? []) if (existsSync(p)) args.push("--ro-bind", p, p);
  const userns = c.userns ?? "locked";
  args.push("--unshare-all", ...(c.network ? ["--share-net"] : []));
  if (userns !== "none") args.push("--unshare-user", ...(userns === "locked" ? ["--disable-userns"] : []));
  args.push("--cap-drop", "ALL", "--die-with-parent", "--new-session", "--chdir", c.cwd);
  return args;
}

export interface Probe {
  ok: boolean;
  /** What is wrong, in plain words, when not ok. */
  problem?: string;
  version?: string;
  /** The user namespace the sandbox gets on this machine (when ok). */
  userns?: UserNamespace;
  /** CapEff of a process inside the sandbox, as /proc/self/status shows it (hex). */
  capEff?: string;
}

/** The CapEff line of a /proc/<pid>/status text. */
export function capEffOf(status: string): string | undefined {
  return /^CapEff:\s*([0-9a-f]+)$/im.exec(status)?.[1];
}

/**
 * Run the real set-up with `cat /proc/self/status` inside, strongest user namespace first, so a missing
 * binary, missing namespace rights and capabilities that survive (bwrap as root) all show.
 */
export async function probe(c: SandboxConfig): Promise<Probe> {
  const run = (args: string[]) =>
    runProcess(c.bwrap, args, {
      cwd: c.cwd,
      env: process.env as Record<string, string>,
      onData: () => undefined,
      collect: true,
    });
  try {
    const version = (await run(["--version"])).output.trim();
    let detail = "";
    for (const userns of ["locked", "new", "none"] as const) {
      const r = await run([...bwrapArgs({ ...c, userns }), "cat", "/proc/self/status"]);
      if (r.exitCode !== 0) {
        detail ||= r.output.trim().split("\n").at(-1) ?? `exit code ${r.exitCode}`;
        continue;
      }
      const capEff = capEffOf(r.output);
      if (capEff === undefined || /[^0]/.test(capEff)) {
        return {
          ok: false,
          version,
          userns,
          capEff,
          problem: `a command inside the sandbox keeps capabilities (CapEff ${capEff ?? "unknown"}); as root it could remount the file system and escape, so the sandbox is not used. Check that '${c.bwrap}' is bubblewrap and honours --cap-drop ALL`,
        };
      }
      return { ok: true, version, userns, capEff };
    }
    return {
      ok: false,
      version,
      problem: `bwrap cannot create the sandbox (${detail}). User namespaces may be disabled: check the sysctls kernel.unprivileged_userns_clone and user.max_user_namespaces, or (Ubuntu 24.04+) the AppArmor restriction kernel.apparmor_restrict_unprivileged_userns; in a container, run it with a seccomp profile that allows namespaces`,
    };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return {
      ok: false,
      problem:
        code === "ENOENT"
          ? `bwrap is not installed (looked for '${c.bwrap}'). Install bubblewrap: apt-get install bubblewrap, dnf install bubblewrap or pacman -S bubblewrap`
          : `bwrap could not start: ${(e as Error).message}`,
    };
  }
}

export interface RunOptions {
  cwd: string;
  env: Record<string, string>;
  signal?: AbortSignal;
  killGraceMs?: number;
  onData(chunk: Uint8Array, stream: "stdout" | "stderr"): void;
  collect?: boolean;
  /** Outside bwrap: end the process group when coil exits (bwrap's --die-with-parent does it inside). */
  endWithCoil?: boolean;
}

/**
 * Spawn in a new process group with stdin closed. Abort sends SIGTERM to the group, then SIGKILL
 * after the grace period. Rejects only when the program cannot start.
 */
export function runProcess(
  file: string,
  args: string[],
  o: RunOptions,
): Promise<{ exitCode: number | null; signal: string | null; output: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(file, args, { cwd: o.cwd, env: o.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    if (o.endWithCoil && child.pid !== undefined) endWithCoil(child.pid);
    let output = "";
    let killTimer: NodeJS.Timeout | undefined;
    const feed = (stream: "stdout" | "stderr") => (chunk: Buffer) => {
      if (o.collect) output += chunk.toString();
      try {
        o.onData(chunk, stream);
      } catch {
        // a failing consumer must not leave the process unmanaged
      }
    };
    child.stdout!.on("data", feed("stdout"));
    child.stderr!.on("data", feed("stderr"));
    const signalGroup = (sig: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, sig);
      } catch {
        // gone already
      }
    };
    const onAbort = () => {
      signalGroup("SIGTERM");
      killTimer = setTimeout(() => signalGroup("SIGKILL"), o.killGraceMs ?? 2000);
      killTimer.unref();
    };
    let settled = false;
    const finish = (exitCode: number | null, signal: string | null) => {
      if (settled) return;
      settled = true;
      o.signal?.removeEventListener("abort", onAbort);
      clearTimeout(killTimer);
      // Outside the sandbox a background process (`cmd &`) may hold the pipes open: stop reading them.
      child.stdout!.destroy();
      child.stderr!.destroy();
      resolvePromise({ exitCode, signal, output });
    };
    child.on("error", (e) => {
      if (settled) return;
      settled = true;
      o.signal?.removeEventListener("abort", onAbort);
      reject(e);
    });
    child.on("exit", (exitCode, signal) => setTimeout(() => finish(exitCode, signal), 1000).unref());
    child.on("close", (exitCode, signal) => finish(exitCode, signal));
    if (o.signal?.aborted) onAbort();
    else o.signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The git folder of a worktree top (`.git` itself, or where a `.git` file points) and its common folder. */
function gitDirs(top: string): { gitDir: string; commonDir: string } | undefined {
  const dotGit = join(top, ".git");
  let gitDir = dotGit;
  try {
    if (statSync(dotGit).isFile()) {
      const m = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, "utf8"));
      if (!m) return undefined;
      gitDir = resolve(top, m[1]!.trim());
    }
  } catch {
    return undefined;
  }
  let commonDir = gitDir;
  try {
    commonDir = resolve(gitDir, readFileSync(join(gitDir, "commondir"), "utf8").trim());
  } catch {
    // not a linked worktree
  }
  return { gitDir, commonDir };
}

/** `core.hooksPath` in a git config file (its `[core]` section), if set. */
export function hooksPathOf(configText: string): string | undefined {
  let section = "";
  let found: string | undefined;
  for (const line of configText.split("\n")) {
    const head = /^\s*\[([^\]]+)\]/.exec(line);
    if (head) section = head[1]!.trim().toLowerCase();
    const kv = /^\s*hookspath\s*=\s*(.*?)\s*$/i.exec(line);
    if (section === "core" && kv) found = kv[1]!.replace(/^"(.*)"$/, "$1");
  }
  return found;
}

/**
 * The paths of `entries` (relative to a project folder, e.g. `.git/hooks`) for the project root and the
 * working directory, as far as they lie inside the writable folders: `.git/…` through a `.git` file
 * (worktrees, submodules) to the real git folder, and the folder `core.hooksPath` names joining
 * `.git/hooks`. A missing hooks folder is created (empty), so that a command cannot create it.
 */
export function readOnlyPaths(
  tops: readonly string[],
  entries: readonly string[],
  writable: readonly string[],
  home = homedir(),
): string[] {
  const inside = (p: string) =>
    writable.some((w) => {
      const rel = relative(w, p);
      return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
    });
  const out = new Set<string>();
  for (const top of new Set(tops)) {
    const git = gitDirs(top);
    for (const entry of entries) {
      if (entry.startsWith(".git/") && git) {
        const rest = entry.slice(5);
        for (const dir of new Set([git.commonDir, git.gitDir])) out.add(join(dir, rest));
        if (rest === "hooks") {
          let hooksPath: string | undefined;
          try {
            hooksPath = hooksPathOf(readFileSync(join(git.commonDir, "config"), "utf8"));
          } catch {
            hooksPath = undefined;
          }
          if (hooksPath) out.add(hooksPath.startsWith("~/") ? join(home, hooksPath.slice(2)) : resolve(top, hooksPath));
        }
      } else if (!entry.startsWith(".git/")) out.add(resolve(top, entry));
    }
  }
  const kept = [...out].filter(inside);
  for (const p of kept) {
    if (/(^|\/)hooks$/.test(p) && !existsSync(p) && existsSync(dirname(p))) {
      try {
        mkdirSync(p);
      } catch {
        // read-only or gone: nothing to protect then
      }
    }
  }
  return kept.filter((p) => existsSync(p));
}
