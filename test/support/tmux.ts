/**
 * Drive a real terminal: a private tmux server (own socket in a temp dir) runs one command in a
 * pane of a fixed size; tests type with send-keys and read the screen with capture-pane.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { packageRoot } from "../../boot/paths.js";

export const hasTmux = spawnSync("tmux", ["-V"]).status === 0;

export interface TmuxOptions {
  dir: string;
  cwd: string;
  command: string;
  cols?: number;
  rows?: number;
  env?: Record<string, string>;
}

export class Tmux {
  private readonly socket: string;
  private readonly target = "t:0";

  constructor(private readonly options: TmuxOptions) {
    this.socket = join(options.dir, `tmux-${Math.random().toString(36).slice(2, 8)}.sock`);
  }

  private tmux(...args: string[]): string {
    return execFileSync("tmux", ["-S", this.socket, ...args], { encoding: "utf8" });
  }

  start(): this {
    const env = Object.entries({ TERM: "xterm-256color", ...this.options.env }).flatMap(([k, v]) => [
      "-e",
      `${k}=${v}`,
    ]);
    // The shell stays after coil exits so the exit code can be read from the screen.
    const command = `${this.options.command}; echo "[exited $?]"; sleep 600`;
    this.tmux(
      "-f",
      "/dev/null",
      "new-session",
      "-d",
      "-s",
      "t",
      "-x",
      String(this.options.cols ?? 80),
      "-y",
      String(this.options.rows ?? 24),
      ...env,
      "-c",
      this.options.cwd,
      command,
    );
    this.tmux("set-option", "-t", "t", "status", "off");
    return this;
  }

  /** Key names as tmux knows them (`Enter`, `Escape`, `C-c`, `M-Enter`, `Down`). */
  keys(...keys: string[]): void {
    this.tmux("send-keys", "-t", this.target, ...keys);
  }

  /** Literal text. */
  type(text: string): void {
    this.tmux("send-keys", "-t", this.target, "-l", text);
  }

  /** A bracketed paste of `text` (as a terminal sends a paste or a dropped file to an app that asked for it). */
  paste(text: string): void {
    this.tmux("set-buffer", "-b", "coil-test", text);
    this.tmux("paste-buffer", "-p", "-d", "-b", "coil-test", "-t", this.target);
  }

  resize(cols: number, rows: number): void {
    this.tmux("resize-window", "-t", "t", "-x", String(cols), "-y", String(rows));
  }

  screen(): string {
    return this.tmux("capture-pane", "-p", "-t", this.target);
  }

  /** The screen with its colours and styles as SGR sequences (`capture-pane -e`). */
  colors(): string {
    return this.tmux("capture-pane", "-p", "-e", "-t", this.target);
  }

  /** The title the program gave the terminal window (OSC 0/2). */
  title(): string {
    return this.tmux("display-message", "-p", "-t", this.target, "#{pane_title}").trim();
  }

  /**
   * Poll the screen until `test` passes; fails with the last screen after `timeoutMs`. The screen returned
   * is a whole frame: a capture can land while tmux is still taking in a redraw (the first lines new, the
   * footer not yet), so once `test` passes the screen is read again until two reads agree (a few ms), as
   * long as `test` still holds; a state that passes on meanwhile returns its last passing screen.
   */
  async waitFor(test: string | RegExp | ((screen: string) => boolean), timeoutMs = 15_000): Promise<string> {
    const check =
      typeof test === "function" ? test : (s: string) => (typeof test === "string" ? s.includes(test) : test.test(s));
    const start = Date.now();
    let screen = "";
    for (;;) {
      screen = this.screen();
      if (check(screen)) return this.settle(screen, check);
      if (Date.now() - start > timeoutMs)
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${String(test)}; screen:\n${screen}`);
      await new Promise((r) => setTimeout(r, 40));
    }
  }

  private async settle(passing: string, check: (screen: string) => boolean): Promise<string> {
    let last = passing;
    for (let read = 0; read < 5; read++) {
      await new Promise((r) => setTimeout(r, 15));
      const again = this.screen();
      if (again === last || !check(again)) return last;
      last = again;
    }
    return last;
  }

  /** The processes running in the pane below its shell (pid and command line), from `ps`. */
  processes(): { pid: number; args: string }[] {
    const shell = Number(this.tmux("display-message", "-p", "-t", this.target, "#{pane_pid}").trim());
    const rows = execFileSync("ps", ["-e", "-o", "pid=,ppid=,args="], { encoding: "utf8" })
      .split("\n")
      .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3]! }));
    const below = new Set([shell]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const row of rows)
        if (below.has(row.ppid) && !below.has(row.pid)) {
          below.add(row.pid);
          grew = true;
        }
    }
    return rows.filter((row) => row.pid !== shell && below.has(row.pid)).map(({ pid, args }) => ({ pid, args }));
  }

  kill(): void {
    try {
      // quietly: a pane whose program ended may have taken its server along ("no server running on …")
      execFileSync("tmux", ["-S", this.socket, "kill-server"], { stdio: "ignore" });
    } catch {
      // already gone
    }
  }
}

/** The built CLI the panes run. */
export const BIN = join(packageRoot(), "dist", "bin", "coil.js");

export interface TmuxSuite {
  /** A fresh temp folder, removed after the file's tests. */
  tempDir(prefix: string): string;
  /** Start a pane; it is killed after the test that started it. */
  start(options: TmuxOptions): Tmux;
  /** The shell command a pane runs for `coil <args>` (the built CLI under this Node). */
  coil(args: string): string;
}

/**
 * A tmux test file's preamble: before its tests, the build and tmux are checked (a missing one fails the
 * file, it is not skipped); after each test its panes are killed; after the file its temp folders go.
 */
export function useTmux(): TmuxSuite {
  const temps: string[] = [];
  let panes: Tmux[] = [];
  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` first (npm test does it)`);
    if (!hasTmux) throw new Error("tmux is not installed: the TUI tests need it (.ci/run installs it)");
  });
  afterEach(() => {
    for (const p of panes) p.kill();
    panes = [];
  });
  afterAll(() => {
    for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return {
    tempDir(prefix) {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      temps.push(dir);
      return dir;
    },
    start(options) {
      const pane = new Tmux(options).start();
      panes.push(pane);
      return pane;
    },
    coil: (args) => `${process.execPath} ${BIN} ${args}`,
  };
}

/** The lines between the editor's two border rules (the editor's content). */
export function editorText(screen: string): string {
  const lines = screen.split("\n");
  const rules = lines.map((l, i) => (/^─{10,}/.test(l) ? i : -1)).filter((i) => i >= 0);
  if (rules.length < 2) return "";
  const [a, b] = rules.slice(-2);
  return lines
    .slice(a! + 1, b!)
    .map((l) => l.trimEnd())
    .join("\n")
    .trim();
}
