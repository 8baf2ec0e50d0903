/** Shared by the packages, hooks-claude, ui-rpc and SDK tests: run the built CLI as a child process in temp dirs. */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { packageRoot } from "../../boot/paths.js";
import { childEnv } from "./env.js";

export const ROOT = packageRoot();
export const BIN = join(ROOT, "dist", "bin", "coil.js");

export function requireBuild(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` (npm test does it first)`);
}

const temps: string[] = [];
export function tempDir(prefix = "coil-eco-"): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  temps.push(dir);
  return dir;
}
export function cleanTemps(): void {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
}

export function writeFiles(dir: string, files: Record<string, string>): string {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a command to completion (stdin closed or given). */
export function run(
  cmd: string,
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; input?: string },
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.stdin.end(opts.input ?? "");
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The environment of a sandboxed coil: its own COIL_HOME and HOME, npm offline with its own cache. */
export function sandboxEnv(base: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return childEnv({
    COIL_HOME: join(base, "coil-home"),
    HOME: join(base, "home"),
    npm_config_offline: "true",
    npm_config_cache: join(base, "npm-cache"),
    npm_config_update_notifier: "false",
    ...extra,
  });
}

export function coil(cwd: string, args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<Ran> {
  return run(process.execPath, [BIN, ...args], { cwd, env, input });
}
