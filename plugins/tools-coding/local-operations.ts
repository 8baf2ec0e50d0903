/**
 * The operations the tools perform on files and processes. The tools never touch node:fs or
 * node:child_process directly: they look up the `operations` service at execute time and fall back
 * to `localOperations` below, method by method. A sandbox or remote plugin replaces the backend by
 * providing `operations` (all methods or only some, e.g. just `exec`) — see docs/tools.md.
 *
 * Contract: failures reject with an Error whose `code` is a Node-style errno name (`ENOENT`,
 * `EACCES`, `EISDIR`, `ENOTDIR` ...), which is what the tools translate into advice for the model.
 */
import { spawn, execFileSync } from "../../lib/child-process.js";
import { createReadStream, existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, realpath, stat, writeFile } from "node:fs/promises";
import { basename, delimiter, join } from "node:path";
import { endWithCoil } from "../../lib/shell/reaper.js";
import type { ExecOptions, ExecResult, Operations } from "./api.js";
import { DEFAULT_KILL_GRACE_MS } from "./limits.js";

export type { DirEntry, ExecOptions, ExecResult, FileInfo, Operations, OperationsStatus } from "./api.js";

/** The service's methods where provided, the local ones otherwise. */
export function resolveOperations(service: Partial<Operations> | undefined): Operations {
  if (!service) return localOperations;
  const out = { ...localOperations } as Record<string, unknown>;
  for (const key of Object.keys(localOperations) as (keyof Operations)[]) {
    const fn = service[key];
    if (typeof fn === "function") out[key] = (fn as (...a: unknown[]) => unknown).bind(service);
  }
  return out as unknown as Operations;
}

// ───────────────────────────── local backend ─────────────────────────────

const POSIX_SHELLS = new Set(["bash", "zsh", "sh", "dash", "ksh", "mksh", "ash", "yash"]);

/** The user's shell when it understands `-c` POSIX syntax; otherwise bash, otherwise sh. */
export function defaultShell(env: NodeJS.ProcessEnv = process.env): string {
  const user = env.SHELL;
  if (user && POSIX_SHELLS.has(basename(user)) && existsSync(user)) return user;
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir && existsSync(join(dir, "bash"))) return join(dir, "bash");
  }
  return "/bin/sh";
}

export const localOperations: Operations = {
  async stat(path) {
    const s = await stat(path);
    return {
      kind: s.isFile() ? "file" : s.isDirectory() ? "directory" : "other",
      size: s.size,
      mtimeMs: s.mtimeMs,
      mode: s.mode & 0o7777,
    };
  },
  readFile: (path) => readFile(path),
  readStream: (path, options = {}) =>
    createReadStream(path, { start: options.start, end: options.end, highWaterMark: 64 * 1024 }),
  writeFile: (path, data) => writeFile(path, data),
  mkdir: async (path) => void (await mkdir(path, { recursive: true })),
  realpath: (path) => realpath(path),
  async readdir(path) {
    const entries = await readdir(path, { withFileTypes: true });
    return entries.map((e) => ({
      name: e.name,
      kind: e.isSymbolicLink() ? "symlink" : e.isDirectory() ? "directory" : e.isFile() ? "file" : "other",
    }));
  },
  exec: localExec,
};

function localExec(command: string, o: ExecOptions): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const shell = o.shell ?? defaultShell();
    const child = spawn(shell, ["-c", command], {
      cwd: o.cwd,
      env: o.env ?? process.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    // Its own process group, ended with coil even when coil is killed (background processes too).
    if (child.pid !== undefined) endWithCoil(child.pid);
    let exited: ExecResult | undefined;
    let settled = false;
    let open = 2;
    let drain: NodeJS.Timeout | undefined;
    let drainStarted = 0;
    const finish = () => {
      if (settled || !exited) return;
      settled = true;
      clearTimeout(drain);
      o.signal?.removeEventListener("abort", onAbort);
      // Background processes (`cmd &`) may still hold the pipes; stop reading them.
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve(exited);
    };
    // After the shell exits, keep reading while output still flows (the pipe drains), but not forever.
    const armDrain = () => {
      if (!exited || settled) return;
      clearTimeout(drain);
      const left = 2000 - (Date.now() - drainStarted);
      drain = setTimeout(finish, Math.max(0, Math.min(100, left)));
    };
    const onData = (stream: "stdout" | "stderr") => (chunk: Buffer) => {
      try {
        o.onData(chunk, stream);
      } catch {
        // a failing consumer must not leave the process unmanaged
      }
      armDrain();
    };
    child.stdout!.on("data", onData("stdout"));
    child.stderr!.on("data", onData("stderr"));
    const closed = () => {
      open--;
      if (open === 0) finish();
    };
    child.stdout!.on("close", closed);
    child.stderr!.on("close", closed);
    child.on("error", (error) => {
      if (settled) return;
      settled = true;
      o.signal?.removeEventListener("abort", onAbort);
      reject(error);
    });
    child.on("exit", (code, signal) => {
      exited = { exitCode: code, signal };
      drainStarted = Date.now();
      if (open === 0) finish();
      else armDrain();
    });
    const onAbort = () => {
      if (child.pid !== undefined) killTree(child.pid, o.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
    };
    if (o.signal?.aborted) onAbort();
    else o.signal?.addEventListener("abort", onAbort, { once: true });
  });
}

// ───────────────────────────── process trees ─────────────────────────────

interface Proc {
  pid: number;
  ppid: number;
  /** Start time (Linux clock ticks since boot); guards against killing a reused pid. */
  start?: string;
}

/** Trees that got SIGTERM and still wait for their SIGKILL; killed at once if this process exits first. */
const pendingKills = new Set<() => void>();
let exitHookInstalled = false;

/**
 * Terminate a process tree: SIGTERM to the process group and every descendant (also those that left
 * the group with setsid), then SIGKILL after `graceMs` to all of them that still run.
 */
export function killTree(rootPid: number, graceMs: number): void {
  const members = new Map<number, Proc>();
  const collect = () => {
    for (const p of descendants([rootPid, ...members.keys()])) members.set(p.pid, members.get(p.pid) ?? p);
  };
  collect();
  const send = (signal: NodeJS.Signals) => {
    try {
      process.kill(-rootPid, signal);
    } catch {
      // the group may be gone already
    }
    for (const p of members.values()) {
      if (p.start !== undefined && startOf(p.pid) !== p.start) continue; // exited, pid possibly reused
      try {
        process.kill(p.pid, signal);
      } catch {
        // already gone
      }
    }
  };
  send("SIGTERM");
  const kill = () => {
    pendingKills.delete(kill);
    clearTimeout(timer);
    collect();
    send("SIGKILL");
  };
  const timer = setTimeout(kill, graceMs);
  pendingKills.add(kill);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => {
      for (const k of [...pendingKills]) k();
    });
  }
}

/** The given pids (when alive) and all their descendants. */
function descendants(roots: number[]): Proc[] {
  const table = processTable();
  const children = new Map<number, Proc[]>();
  for (const p of table.values()) {
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  const out = new Map<number, Proc>();
  const queue = roots.filter((pid) => table.has(pid));
  for (const pid of queue) out.set(pid, table.get(pid)!);
  while (queue.length > 0) {
    const pid = queue.pop()!;
    for (const c of children.get(pid) ?? []) {
      if (out.has(c.pid)) continue;
      out.set(c.pid, c);
      queue.push(c.pid);
    }
  }
  return [...out.values()];
}

function parseStat(text: string): { ppid: number; start: string } | undefined {
  const close = text.lastIndexOf(")");
  if (close < 0) return undefined;
  const fields = text.slice(close + 2).split(" ");
  // fields[0] is field 3 (state): ppid is field 4, starttime field 22.
  return { ppid: Number(fields[1]), start: fields[19] ?? "" };
}

function startOf(pid: number): string | undefined {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, "utf8"))?.start;
  } catch {
    return undefined;
  }
}

function processTable(): Map<number, Proc> {
  const table = new Map<number, Proc>();
  if (process.platform === "linux" && existsSync("/proc/self/stat")) {
    for (const name of readdirSync("/proc")) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const parsed = parseStat(readFileSync(`/proc/${name}/stat`, "utf8"));
        if (parsed) table.set(Number(name), { pid: Number(name), ppid: parsed.ppid, start: parsed.start });
      } catch {
        // exited while we looked
      }
    }
    return table;
  }
  try {
    const out = execFileSync("ps", ["-A", "-o", "pid=,ppid="], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    for (const line of out.split("\n")) {
      const [pid, ppid] = line.trim().split(/\s+/).map(Number);
      if (pid && ppid !== undefined && !Number.isNaN(ppid)) table.set(pid, { pid, ppid });
    }
  } catch {
    // no ps: the process-group kill still applies
  }
  return table;
}
