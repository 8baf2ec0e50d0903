/**
 * Where the project is and where the user's assets are, answered once: boot computes `Locations` when it
 * assembles a host (from the working directory, the trust decision, `$COIL_HOME` and the environment)
 * and provides it as the `locations` service; plugins read it with `locationsOf(ctx)` instead of each
 * working out `$HOME`, `~/.claude`, `~/.pi/agent` or the git root again. A host boot did not assemble
 * (a test host) gets the same answer computed from its context.
 *
 * The project is the git root at or above the working directory (a `.git` folder or a worktree's file),
 * else the working directory itself. coil reads the project's `.coil/` (preset, trust, mcp.json),
 * `.claude/settings*.json`, `.mcp.json`, skills and templates from there, so starting coil in a
 * subdirectory finds the same setup as starting it at the root.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { PluginContext } from "../api/index.js";

export interface Locations {
  /** The working directory (absolute). */
  cwd: string;
  /** The git root at or above `cwd`, else `cwd`. */
  projectRoot: string;
  /** The git root, or undefined outside a repository. */
  gitRoot: string | undefined;
  /** Whether the project is trusted (its `.coil/` preset, hooks, servers and plugins load). */
  trusted: boolean;
  /** The user's home: `$HOME`, else the account's home directory. */
  home: string;
  /** `$COIL_HOME`, else `~/.coil`: sessions, keys, trust decisions, the user preset. */
  coilHome: string;
  /** Claude Code's user folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`. */
  claudeHome: string;
  /** Pi's agent folder: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`. */
  piAgentDir: string;
  /** Codex's folder: `$CODEX_HOME`, else `~/.codex`. */
  codexHome: string;
  /** The `.agents` folders (the cross-tool convention): the user's and the project's. */
  agents: { user: string; project: string };
}

declare module "coil" {
  interface Services {
    locations: Locations;
  }
}

/** The git root at or above `cwd`, or `undefined` outside a repository. */
export function gitRoot(cwd: string): string | undefined {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** The project root for `cwd`: its git root, else `cwd` itself (absolute). */
export function projectRoot(cwd: string): string {
  return gitRoot(cwd) ?? resolve(cwd);
}

/** The folders from `cwd` up to its project root, nearest first (only `cwd` outside a repository). */
export function foldersUpToRoot(cwd: string): string[] {
  const root = projectRoot(cwd);
  const out: string[] = [];
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    out.push(dir);
    if (dir === root || dirname(dir) === dir) return out;
  }
}

type Env = Record<string, string | undefined>;

/** The user's home: `$HOME`, else the account's home directory. */
export const userHome = (env: Env = process.env): string => env.HOME || homedir();
/** `$COIL_HOME`, default `~/.coil` (the account's home, not `$HOME`). */
export const coilHome = (env: Env = process.env): string => env.COIL_HOME || join(homedir(), ".coil");
/** Claude Code's configuration folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`. */
export const claudeConfigDir = (env: Env = process.env): string =>
  env.CLAUDE_CONFIG_DIR || join(userHome(env), ".claude");
/** Pi's agent folder: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`. */
export const piAgentDir = (env: Env = process.env): string =>
  env.PI_CODING_AGENT_DIR || join(userHome(env), ".pi", "agent");
/** Codex's folder: `$CODEX_HOME`, else `~/.codex`. */
export const codexHome = (env: Env = process.env): string => env.CODEX_HOME || join(userHome(env), ".codex");

/** Everything `Locations` holds, computed (boot does it once per host; `home` is `$COIL_HOME` when given). */
export function computeLocations(o: { cwd: string; trusted: boolean; env?: Env; coilHome?: string }): Locations {
  const env = o.env ?? process.env;
  const home = userHome(env);
  const cwd = resolve(o.cwd);
  const git = gitRoot(cwd);
  const root = git ?? cwd;
  return {
    cwd,
    projectRoot: root,
    gitRoot: git,
    trusted: o.trusted,
    home,
    coilHome: o.coilHome ?? coilHome(env),
    claudeHome: claudeConfigDir(env),
    piAgentDir: piAgentDir(env),
    codexHome: codexHome(env),
    agents: { user: join(home, ".agents"), project: join(root, ".agents") },
  };
}

/** The host's `locations` (boot's), else the same answer computed from the plugin's context. */
export function locationsOf(ctx: Pick<PluginContext, "services" | "cwd" | "projectTrusted">): Locations {
  return ctx.services.get("locations") ?? computeLocations({ cwd: ctx.cwd, trusted: ctx.projectTrusted });
}
