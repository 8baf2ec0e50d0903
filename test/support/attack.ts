/**
 * Attacker tries through the built CLI (dist/bin/coil.js) as root and as nobody: a world of folders owned
 * by the user coil runs as (a project, a home with credentials, a folder outside the project, a coil
 * home), and a run of coil whose scripted model makes the given tool calls one per turn, in JSON mode.
 * Used by the permission-gate, plan-mode, sandbox and context-files probes.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { packageRoot } from "../../boot/paths.js";

export const BIN = join(packageRoot(), "dist", "bin", "coil.js");
export const NOBODY = 65534;
const UID = process.getuid!();
/** As root the tries run twice, as root and as nobody; as another user as that user only. */
export const USERS: [string, number][] =
  UID === 0
    ? [
        ["root", 0],
        ["nobody", NOBODY],
      ]
    : [[`uid ${UID}`, UID]];

export interface World {
  root: string;
  cwd: string;
  home: string;
  outside: string;
  coilHome: string;
  uid: number;
}

/** Give `path` (and what is under it) to `uid`. Links are changed themselves, never followed. */
export function chownTree(path: string, uid: number): void {
  if (process.getuid!() !== 0) return;
  const st = lstatSync(path);
  if (st.isSymbolicLink()) {
    spawnSync("chown", ["-h", `${uid}:${uid}`, path]);
    return;
  }
  chownSync(path, uid, uid);
  if (st.isDirectory()) for (const e of readdirSync(path)) chownTree(join(path, e), uid);
}

/** Folders under /var/tmp (not /tmp: the sandbox gives commands a private /tmp), readable by every user. */
export function makeWorld(uid: number, files: Record<string, string> = {}): World {
  const root = mkdtempSync("/var/tmp/coil-attack-");
  chmodSync(root, 0o755);
  const w: World = {
    root,
    cwd: join(root, "project"),
    home: join(root, "home"),
    outside: join(root, "outside"),
    coilHome: join(root, "coil-home"),
    uid,
  };
  for (const d of [w.cwd, w.home, w.outside, w.coilHome]) mkdirSync(d, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    const path = name.startsWith("/") ? name : join(w.cwd, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  return w;
}

/** Run a program as the world's user (git in the project, say), to completion. */
export function runAs(w: World, cmd: string, args: string[], cwd = w.cwd): { code: number | null; out: string } {
  const r = spawnSync(cmd, args, { cwd, env: envOf(w), uid: w.uid, gid: w.uid, encoding: "utf8" });
  return { code: r.status, out: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}

function envOf(w: World, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env
      .PATH!.split(":")
      .filter((d) => !d.startsWith("/root"))
      .join(":"),
    HOME: w.home,
    LANG: "C",
    COIL_HOME: w.coilHome,
    GIT_AUTHOR_NAME: "probe",
    GIT_AUTHOR_EMAIL: "probe@example.invalid",
    GIT_COMMITTER_NAME: "probe",
    GIT_COMMITTER_EMAIL: "probe@example.invalid",
    ...extra,
  };
}

export type ToolCall = { name: string; arguments: Record<string, unknown> };

export interface CoilRun {
  code: number | null;
  /** Each tool result's text, in call order. */
  results: { text: string; isError: boolean }[];
  stdout: string;
  stderr: string;
}

/**
 * coil -p in JSON mode as the world's user, in its project; the scripted model makes `calls` one per turn,
 * then says "done". `args` go before `-p` (a preset, --plan, --permission-mode ...).
 */
export function runCoil(
  w: World,
  calls: ToolCall[],
  args: string[] = [],
  o: { env?: Record<string, string>; prompt?: string; timeoutMs?: number } = {},
): Promise<CoilRun> {
  const script = `${calls.map((c) => `- toolCalls:\n    - ${JSON.stringify(c)}\n`).join("")}- text: done\n`;
  const file = join(w.root, `replies-${Date.now()}-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, script);
  chmodSync(file, 0o644);
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [BIN, "--provider", "scripted", "--script", file, "--mode", "json", ...args, "-p", o.prompt ?? "probe"],
      { cwd: w.cwd, env: envOf(w, o.env), uid: w.uid, gid: w.uid, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), o.timeoutMs ?? 50_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      const results = stdout
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { type: string; result?: { content: { text?: string }[]; isError?: boolean } })
        .filter((e) => e.type === "tool_execution_end")
        .map((e) => ({
          text: e.result!.content.map((c) => c.text ?? "").join(""),
          isError: e.result!.isError === true,
        }));
      resolve({ code, results, stdout, stderr });
    });
  });
}

export const bash = (command: string): ToolCall => ({ name: "bash", arguments: { command } });
