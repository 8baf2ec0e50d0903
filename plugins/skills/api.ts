/** skills' contract (types only): the `skills` service the system prompt and front ends use. */
import type { Compat } from "../../lib/compat.js";
import type { ShadowedSkill, SkillInfo, SkillProblem, SkillRoot, SkillSource, SkippedPlace } from "./discover.js";

export type { ShadowedSkill, SkillInfo, SkillProblem, SkillSource, SkippedPlace };

/** What the prompt's skills index holds: entries within the budget, and a note about those left out. */
export interface SkillIndex {
  skills: { name: string; description: string; location: string }[];
  /** Skills the model may invoke that did not fit in the index budget. */
  omitted: number;
  /** Says how many were left out and where to see them; for the prompt, after the list. */
  note?: string;
}

export interface SkillsService {
  /** Valid skills, in precedence order (scanned at start-up and again at most once per run). */
  list(): readonly SkillInfo[];
  /** Skills that could not be loaded, with the reason. */
  problems(): readonly SkillProblem[];
  /** Skills not used because an earlier one has the same name. */
  shadowed(): readonly ShadowedSkill[];
  /** Places holding SKILL.md files that are not searched (too deep, dot-folders). */
  skipped(): readonly SkippedPlace[];
  /** Every folder searched, in order, with how many skills it gave. */
  searched(): readonly (SkillRoot & { found: number; exists: boolean })[];
  get(name: string): SkillInfo | undefined;
  /** The index for the prompt, within the description and size budget (built once per scan). */
  index(): SkillIndex;
  /** The `compat` setting (context-files and prompt-templates follow it unless given their own). */
  readonly compat: Compat;
  /** How many times the folders were scanned: once at start-up, then at most once per run. */
  scans(): number;
  /** Scan again at the next use (a front end's explicit refresh; /skills does it). */
  refresh(): void;
}

declare module "coil" {
  interface Services {
    skills: SkillsService;
  }
}
