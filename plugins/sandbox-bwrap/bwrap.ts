/**
 * The bubblewrap command line, the scrubbed environment, the start-up probe and a process runner.
 * Inside: the root file system read-only, the working directory and configured paths writable, a
 * private /tmp, /dev and /proc, secrets in the home directory hidden, every namespace unshared (the
 * network too unless allowed). `--unshare-pid` with `--die-with-parent` means that killing bwrap ends
 * everything the command started: the PID namespace goes away with it.
 */
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

export interface SandboxConfig {
  bwrap: string;
  cwd: string;
  /** Extra writable paths (absolute). */
  writable: readonly string[];
  /** Paths replaced by an empty directory (or /dev/null for files). */
  hide: readonly string[];
  network: boolean;
}

/** Environment variables that never enter the sandbox: credentials by name, provider keys, agent sockets. */
const SECRET_NAME = /(?:^|_)(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|ACCESS_KEY(?:_ID)?|SECRET_KEY|PRIVATE_KEY|AUTH)(?:_|$)/i;
const SECRET_PREFIX = /^(?:ANTHROPIC|OPENAI|AZURE_OPENAI|GEMINI|GOOGLE_API|MISTRAL|GROQ|XAI|DEEPSEEK|OPENROUTER|COHERE|HF|HUGGING_?FACE|CLAUDE)_/i;
const SECRET_EXACT = new Set(["SSH_AUTH_SOCK", "GPG_AGENT_INFO", "NETRC", "DOCKER_AUTH_CONFIG", "KUBECONFIG"]);

export function isSecretEnv(name: string): boolean {
  return SECRET_EXACT.has(name) || SECRET_NAME.test(name) || SECRET_PREFIX.test(name);
}

/** The environment the sandboxed command gets: secrets removed (unless listed in `keep`), TMPDIR pointing at the private /tmp. */
export function scrubEnv(env: Record<string, string | undefined>, keep: readonly string[] = []): { env: Record<string, string>; dropped: string[] } {
  const out: Record<string, string> = {};
  const dropped: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    if (isSecretEnv(k) && !keep.includes(k)) dropped.push(k);
    else out[k] = v;
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

/** bwrap's arguments up to (not including) the command. Order matters: later mounts cover earlier ones. */
export function bwrapArgs(c: SandboxConfig): string[] {
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", c.cwd, c.cwd];
  for (const p of c.hide) {
    if (!existsSync(p)) continue;
    args.push(...(statSync(p).isDirectory() ? ["--tmpfs", p] : ["--ro-bind", "/dev/null", p]));
  }
  for (const p of c.writable) if (existsSync(p)) args.push("--bind", p, p);
  args.push("--unshare-all", ...(c.network ? ["--share-net"] : []), "--die-with-parent", "--new-session", "--chdir", c.cwd);
  return args;
}

export interface Probe {
  ok: boolean;
  /** What is wrong, in plain words, when not ok. */
  problem?: string;
  version?: string;
}

/** Run `bwrap <sandbox> true`: the real set-up, so a missing binary and missing namespace rights both show. */
export async function probe(c: SandboxConfig): Promise<Probe> {
  const run = (args: string[]) => runProcess(c.bwrap, args, { cwd: c.cwd, env: process.env as Record<string, string>, onData: () => undefined, collect: true });
  try {
    const version = (await run(["--version"])).output.trim();
    const r = await run([...bwrapArgs(c), "true"]);
    if (r.exitCode === 0) return { ok: true, version };
    const detail = r.output.trim().split("\n").at(-1) ?? `exit code ${r.exitCode}`;
    return {
      ok: false,
      version,
      problem: `bwrap cannot create the sandbox (${detail}). User namespaces may be disabled: check the sysctls kernel.unprivileged_userns_clone and user.max_user_namespaces, or (Ubuntu 24.04+) the AppArmor restriction kernel.apparmor_restrict_unprivileged_userns; in a container, run it with a seccomp profile that allows namespaces`,
    };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { ok: false, problem: code === "ENOENT" ? `bwrap is not installed (looked for '${c.bwrap}'). Install bubblewrap: apt-get install bubblewrap, dnf install bubblewrap or pacman -S bubblewrap` : `bwrap could not start: ${(e as Error).message}` };
  }
}

export interface RunOptions {
  cwd: string;
  env: Record<string, string>;
  signal?: AbortSignal;
  killGraceMs?: number;
  onData(chunk: Uint8Array, stream: "stdout" | "stderr"): void;
  collect?: boolean;
}

/**
 * Spawn in a new process group with stdin closed. Abort sends SIGTERM to the group, then SIGKILL
 * after the grace period. Rejects only when the program cannot start.
 */
export function runProcess(file: string, args: string[], o: RunOptions): Promise<{ exitCode: number | null; signal: string | null; output: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(file, args, { cwd: o.cwd, env: o.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
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
