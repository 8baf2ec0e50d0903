/**
 * The `compat` option: which other tools' files coil reads where their users keep them — `claude`
 * (Claude Code: `.claude/skills`, `~/.claude/skills`, `CLAUDE.md`, `.claude/rules`, ...), `pi` (Pi:
 * `.pi/skills`, `~/.pi/agent/...`) and `agents` (the shared `.agents/` and `AGENTS.md` conventions,
 * `~/.codex/AGENTS.md`). All on by default. The skills plugin's `compat` option is the shared setting:
 * context-files and prompt-templates follow it (through the `skills` service) unless given their own.
 */
import { Type } from "typebox";

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
  const pick = (o?: Partial<Compat>) => Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => typeof v === "boolean"));
  return { ...ALL_COMPAT, ...pick(shared), ...pick(own) } as Compat;
}
