/**
 * Process groups that must not outlive coil. Node cannot set PR_SET_PDEATHSIG, so a small bash watcher
 * in its own session reads a pipe from coil: when coil exits for any reason (kill -9 included) the pipe
 * reaches EOF and the watcher sends SIGTERM, then SIGKILL a second later, to the groups it watches.
 * Not covered: processes that left their group (`setsid`); inside bwrap the PID namespace covers those.
 * Without bash there is no watcher (docs/safety.md says so).
 *
 * Two forms:
 * - `endWithCoil(pgid)`: a watcher of its own for one group (the bash tool's commands). It polls the
 *   group every 2 seconds and leaves once the group is empty, so a group id reused later is never signalled.
 * - `watchGroup(pgid, { graceSeconds })`: one shared watcher per coil process, told of each group over
 *   the pipe (`+pgid grace`, `-pgid`), for groups started often (checkpoint git commands) or ending on
 *   their own terms (MCP servers: a package runner still installing gets a grace period to finish its
 *   download before it is stopped, so its cache is not left half-written). It forgets a group when coil
 *   says so, and every 2 seconds forgets groups that have ended.
 */
import type { ChildProcess } from "node:child_process";
import { spawn } from "../child-process.js";
import { existsSync } from "node:fs";

const WATCH = `g=$1
while kill -0 -- "-$g" 2>/dev/null; do
  read -r -t 2 _
  case $? in 0|1) kill -TERM -- "-$g" 2>/dev/null; sleep 1; kill -KILL -- "-$g" 2>/dev/null; exit 0;; esac
done`;

/**
 * The shared watcher. Lines: `+<pgid> <grace seconds>` watch (or change the grace), `-<pgid>` forget.
 * At EOF, each group still alive gets SIGTERM once its grace has passed (or at once when it ends by
 * itself first, nothing), then SIGKILL 1 s later. Ticks are 0.1 s.
 */
const SHARED = `declare -A grace=() termed=()
take() {
  case $1 in
    +*) set -- \${1#+}; [ -n "$1" ] && grace[$1]=\${2:-0} ;;
    -*) unset "grace[\${1#-}]" ;;
  esac
}
while :; do
  IFS= read -r -t 2 line
  rc=$?
  if [ "$rc" -eq 0 ]; then take "$line"; continue; fi
  if [ "$rc" -gt 128 ]; then
    for p in "\${!grace[@]}"; do kill -0 -- "-$p" 2>/dev/null || unset "grace[$p]"; done
    continue
  fi
  [ -n "$line" ] && take "$line"
  break
done
tick=0
while [ "\${#grace[@]}" -gt 0 ]; do
  for p in "\${!grace[@]}"; do
    if ! kill -0 -- "-$p" 2>/dev/null; then unset "grace[$p]"; continue; fi
    if [ -n "\${termed[$p]}" ]; then
      if [ $((tick - termed[$p])) -ge 10 ]; then kill -KILL -- "-$p" 2>/dev/null; unset "grace[$p]"; fi
    elif [ "$tick" -ge $((grace[$p] * 10)) ]; then
      kill -TERM -- "-$p" 2>/dev/null
      termed[$p]=$tick
    fi
  done
  sleep 0.1
  tick=$((tick + 1))
done`;

let bash: string | null | undefined;
const findBash = () => {
  if (bash === undefined)
    bash = ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"].find((b) => existsSync(b)) ?? null;
  return bash;
};

/** A watcher in its own session whose stdin is a pipe from coil; neither keeps coil running. */
function watcher(script: string, args: string[]): ChildProcess | undefined {
  const shell = findBash();
  if (!shell) return undefined;
  try {
    const child = spawn(shell, ["-c", script, "coil-reaper", ...args], {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
    });
    child.on("error", () => undefined);
    child.stdin!.on("error", () => undefined);
    // The pipe's write end closes when coil exits, however it exits.
    child.unref();
    (child.stdin as unknown as { unref?(): void }).unref?.();
    return child;
  } catch {
    return undefined;
  }
}

/** Arrange for process group `pgid` (a child spawned with `detached: true`) to be ended when coil exits. False when no watcher could start. */
export function endWithCoil(pgid: number): boolean {
  return watcher(WATCH, [String(pgid)]) !== undefined;
}

let shared: ChildProcess | undefined;

function sharedWatcher(): ChildProcess | undefined {
  if (shared && shared.exitCode === null && shared.signalCode === null && !shared.stdin!.destroyed) return shared;
  shared = watcher(SHARED, []);
  shared?.once("exit", () => {
    shared = undefined;
  });
  return shared;
}

export interface GroupWatch {
  /** Seconds the group may go on after coil has exited before it is stopped (0: at once). */
  setGrace(seconds: number): void;
  /** The group has ended (or is ended otherwise): forget it. */
  release(): void;
}

/**
 * Have coil's shared watcher end process group `pgid` (a child spawned with `detached: true`) when coil
 * exits, after `graceSeconds` (default 0). Undefined when no watcher could start (no bash).
 */
export function watchGroup(pgid: number, o: { graceSeconds?: number } = {}): GroupWatch | undefined {
  const w = sharedWatcher();
  if (!w) return undefined;
  const tell = (line: string) => {
    if (!w.stdin!.destroyed) w.stdin!.write(`${line}\n`);
  };
  const seconds = (s: number) => Math.max(0, Math.ceil(s));
  tell(`+${pgid} ${seconds(o.graceSeconds ?? 0)}`);
  let released = false;
  return {
    setGrace(s) {
      if (!released) tell(`+${pgid} ${seconds(s)}`);
    },
    release() {
      if (released) return;
      released = true;
      tell(`-${pgid}`);
    },
  };
}
