/**
 * Process groups that must not outlive coil. Node cannot set PR_SET_PDEATHSIG, so each group gets a
 * small bash watcher in its own session that reads a pipe from coil: when coil exits for any reason
 * (kill -9 included) the pipe reaches EOF and the watcher sends SIGTERM, then SIGKILL, to the group.
 * The watcher polls the group every 2 seconds and leaves once it is empty, so a group id reused later
 * is never signalled. Not covered: processes that left the group (`setsid`); inside bwrap the PID
 * namespace covers those. Without bash there is no watcher (docs/safety.md says so).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";

const WATCH = `g=$1
while kill -0 -- "-$g" 2>/dev/null; do
  read -r -t 2 _
  case $? in 0|1) kill -TERM -- "-$g" 2>/dev/null; sleep 1; kill -KILL -- "-$g" 2>/dev/null; exit 0;; esac
done`;

let bash: string | null | undefined;
const findBash = () => {
  if (bash === undefined)
    bash = ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"].find((b) => existsSync(b)) ?? null;
  return bash;
};

/** Arrange for process group `pgid` (a child spawned with `detached: true`) to be ended when coil exits. False when no watcher could start. */
export function endWithCoil(pgid: number): boolean {
  const shell = findBash();
  if (!shell) return false;
  try {
    const watcher = spawn(shell, ["-c", WATCH, "coil-reaper", String(pgid)], {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
    });
    watcher.on("error", () => undefined);
    watcher.stdin!.on("error", () => undefined);
    // Neither the process nor its pipe keeps coil running; the pipe's write end closes when coil exits.
    watcher.unref();
    (watcher.stdin as unknown as { unref?(): void }).unref?.();
    return true;
  } catch {
    return false;
  }
}
