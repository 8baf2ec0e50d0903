/**
 * One writer per session file: `<file>.lock`, created with O_EXCL, holds the owner's pid, host and
 * start time. A lock whose process is gone (or whose pid now belongs to a different process) is
 * stale and is taken over, so a crashed coil never leaves a session locked for good.
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { codeOf, type SessionOps } from "./file-system.js";

export interface LockInfo {
  pid: number;
  hostname: string;
  /** ISO time the lock was taken. */
  startedAt: string;
  /** Kernel start time of the process (Linux /proc/<pid>/stat field 22), to detect a reused pid. */
  pidStart?: string;
}

export class SessionLockedError extends Error {
  constructor(
    readonly file: string,
    readonly owner: LockInfo,
  ) {
    super(
      owner.pid > 0
        ? `session ${file} is in use by coil process ${owner.pid} on ${owner.hostname} (since ${owner.startedAt}). Only one coil may write a session at a time.`
        : `session ${file} is being opened by another coil process right now. Only one coil may write a session at a time.`,
    );
  }
}

/** Start time of a process in clock ticks since boot, where the OS tells it (Linux). */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 2 (comm) may hold spaces and parentheses: count fields after the last ')'.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

function alive(info: LockInfo): boolean {
  try {
    process.kill(info.pid, 0);
  } catch (error) {
    return codeOf(error) === "EPERM"; // exists, owned by someone else
  }
  if (info.pidStart) {
    const now = processStart(info.pid);
    if (now !== undefined && now !== info.pidStart) return false; // the pid was reused
  }
  return true;
}

export interface HeldLock {
  file: string;
  release(): void;
}

/**
 * Take the lock for `sessionFile`. Throws SessionLockedError when a live process holds it.
 * `onStale` hears about a lock taken over from a process that is gone.
 */
export function acquireLock(ops: SessionOps, sessionFile: string, onStale: (message: string) => void): HeldLock {
  const file = `${sessionFile}.lock`;
  const me: LockInfo = {
    pid: process.pid,
    hostname: hostname(),
    startedAt: new Date().toISOString(),
    pidStart: processStart(process.pid),
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = ops.openSync(file, "wx", 0o644);
      try {
        ops.writeSync(fd, Buffer.from(JSON.stringify(me) + "\n"));
      } finally {
        ops.closeSync(fd);
      }
      let released = false;
      return {
        file,
        release() {
          if (released) return;
          released = true;
          try {
            const now = JSON.parse(ops.readFileSync(file, "utf8")) as LockInfo;
            if (now.pid === me.pid && now.startedAt === me.startedAt) ops.unlinkSync(file);
          } catch {
            // already gone
          }
        },
      };
    } catch (error) {
      if (codeOf(error) !== "EEXIST") throw error;
    }
    const owner = readLock(ops, file);
    if (owner && owner.hostname !== me.hostname) throw new SessionLockedError(sessionFile, owner);
    if (owner && alive(owner)) throw new SessionLockedError(sessionFile, owner);
    if (!owner && ageMs(ops, file) < 5_000) {
      // Being written by a process that just created it: treat as held.
      throw new SessionLockedError(sessionFile, { pid: 0, hostname: me.hostname, startedAt: "a moment ago" });
    }
    try {
      ops.unlinkSync(file);
    } catch (error) {
      if (codeOf(error) !== "ENOENT") throw error;
    }
    onStale(
      owner
        ? `took over the lock of ${sessionFile}: coil process ${owner.pid} that held it since ${owner.startedAt} is gone`
        : `took over an unreadable lock of ${sessionFile}`,
    );
  }
  throw new Error(`could not take the lock ${file} (another process keeps taking it)`);
}

function readLock(ops: SessionOps, file: string): LockInfo | undefined {
  try {
    const info = JSON.parse(ops.readFileSync(file, "utf8")) as LockInfo;
    return typeof info.pid === "number" && typeof info.hostname === "string" ? info : undefined;
  } catch {
    return undefined;
  }
}

function ageMs(ops: SessionOps, file: string): number {
  try {
    return Date.now() - ops.statSync(file).mtimeMs;
  } catch {
    return Infinity;
  }
}

/** Who holds the lock of `sessionFile` right now, if a live process does. */
export function lockOwner(ops: SessionOps, sessionFile: string): LockInfo | undefined {
  const owner = readLock(ops, `${sessionFile}.lock`);
  return owner && (owner.hostname !== hostname() || alive(owner)) ? owner : undefined;
}
