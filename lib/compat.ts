/**
 * The `compat` option: which other tools' files coil reads where their users keep them — `claude`
 * (Claude Code: `.claude/skills`, `~/.claude/skills`, `CLAUDE.md`, `.claude/rules`, ...), `pi` (Pi:
 * `.pi/skills`, `~/.pi/agent/...`) and `agents` (the shared `.agents/` and `AGENTS.md` conventions,
 * `~/.codex/AGENTS.md`). All on by default. The skills plugin's `compat` option is the shared setting:
 * context-files and prompt-templates follow it (through the `skills` service) unless given their own.
 */
import { join } from "node:path";
import { Type } from "typebox";
import { codexHome, foldersUpToRoot, piAgentDir as piAgentDirAt } from "./locations.js";

export type CompatFamily = "claude" | "pi" | "agents";
export type Compat = Record<CompatFamily, boolean>;

export const CompatOption = Type.Object(
  {
    claude: Type.Optional(Type.Boolean()),
    pi: Type.Optional(Type.Boolean()),
    agents: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const ALL_COMPAT: Compat = { claude: true, pi: true, agents: true };

/** A plugin's own `compat` over the shared one (the skills plugin's), over all-on. */
export function compatOf(own?: Partial<Compat>, shared?: Partial<Compat>): Compat {
  const pick = (o?: Partial<Compat>) =>
    Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => typeof v === "boolean"));
  return { ...ALL_COMPAT, ...pick(shared), ...pick(own) } as Compat;
}

/** A folder of skills another tool's users keep (or coil's own `.coil/skills`), gated by its family. */
export interface SkillPlace {
  dir: string;
  scope: "project" | "user";
  family?: CompatFamily;
  /** The `.md` files directly in it are skills too (Pi's own skill folders). */
  rootFiles?: boolean;
}

/** Pi's agent folder: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`. */
export const piAgentDir = (userHome: string, env: NodeJS.ProcessEnv = process.env): string =>
  piAgentDirAt({ ...env, HOME: userHome });

/**
 * The skill folders, first name wins: in the working directory and each folder above it up to the
 * project root (nearest first) `.coil/skills`, `.agents/skills`, `.claude/skills`, `.pi/skills`; then
 * `$COIL_HOME/skills`, `~/.agents/skills`, `~/.claude/skills`, `~/.pi/agent/skills` (`$PI_CODING_AGENT_DIR`),
 * `~/.codex/skills` (`$CODEX_HOME`). The skills plugin searches these; `coil preset show` lists them.
 */
export function skillPlaces(
  cwd: string,
  compat: Compat,
  coilHome: string,
  userHome: string,
  o: { project?: boolean; user?: boolean } = {},
  env: NodeJS.ProcessEnv = process.env,
): SkillPlace[] {
  const out: SkillPlace[] = [];
  if (o.project !== false) {
    for (const dir of foldersUpToRoot(cwd)) {
      out.push({ dir: join(dir, ".coil", "skills"), scope: "project" });
      if (compat.agents) out.push({ dir: join(dir, ".agents", "skills"), scope: "project", family: "agents" });
      if (compat.claude) out.push({ dir: join(dir, ".claude", "skills"), scope: "project", family: "claude" });
      if (compat.pi) out.push({ dir: join(dir, ".pi", "skills"), scope: "project", family: "pi", rootFiles: true });
    }
  }
  if (o.user !== false) {
    out.push({ dir: join(coilHome, "skills"), scope: "user" });
    if (compat.agents) out.push({ dir: join(userHome, ".agents", "skills"), scope: "user", family: "agents" });
    if (compat.claude) out.push({ dir: join(userHome, ".claude", "skills"), scope: "user", family: "claude" });
    if (compat.pi)
      out.push({ dir: join(piAgentDir(userHome, env), "skills"), scope: "user", family: "pi", rootFiles: true });
    if (compat.agents)
      out.push({
        dir: join(codexHome({ ...env, HOME: userHome }), "skills"),
        scope: "user",
        family: "agents",
      });
  }
  return out;
}

/** The instruction files context-files reads, as a list of patterns (for `coil preset show` and `coil doctor`). */
export function contextFilePatterns(
  compat: Compat,
  names: readonly string[] = ["AGENTS.md", "CLAUDE.md"],
): { user: string[]; eachFolder: string[] } {
  const own = names.filter((n) => compat.claude || !/^CLAUDE\b/i.test(n));
  return {
    user: [
      `$COIL_HOME/{${own.join(",")}}`,
      ...(compat.claude ? ["~/.claude/CLAUDE.md"] : []),
      ...(compat.agents ? ["~/.codex/AGENTS.md"] : []),
      ...(compat.pi ? ["~/.pi/agent/AGENTS.md"] : []),
    ],
    eachFolder: [
      ...(compat.agents ? ["AGENTS.override.md (instead of AGENTS.md)"] : []),
      ...own,
      ...(compat.claude ? [".claude/CLAUDE.md", ".claude/rules/*.md", "CLAUDE.local.md"] : []),
    ],
  };
}
