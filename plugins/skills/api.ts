/** skills' contract (types only): the `skills` service the system prompt and front ends use. */
import type { Compat } from "../../lib/compat.js";
import type { SkillIndexLevel } from "../../lib/skill-index.js";
import type { ShadowedSkill, SkillInfo, SkillProblem, SkillRoot, SkillSource, SkippedPlace } from "./discover.js";

export type { ShadowedSkill, SkillInfo, SkillProblem, SkillSource, SkippedPlace, SkillIndexLevel };

/** What the prompt's skills index holds: every skill the model may invoke, within the size budget. */
export interface SkillIndex {
  /** Every skill the model may invoke, in precedence order; descriptions cut to fit (empty at level `names`). */
  skills: { name: string; description: string; location: string }[];
  /**
   * `full`: each description up to `indexDescription` characters, as Agent Skills entries; `short`:
   * descriptions shortened further so that every skill fits in `indexBytes`, a line each, by folder;
   * `names`: names only, by folder, when shortened descriptions did not fit either. No skill is left out.
   */
  level: SkillIndexLevel;
  /** The tool that searches the skills' full descriptions (tool-search's), when one is installed. */
  searchTool?: string;
  /** Bytes of the index as the prompt shows it. */
  bytes: number;
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
  /** The index for the prompt, within the description and size budget (built once per scan): every skill's name. */
  index(): SkillIndex;
  /** The `compat` setting (context-files and prompt-templates follow it unless given their own). */
  readonly compat: Compat;
  /** How many times the folders were scanned: once at start-up, then at most once per run. */
  scans(): number;
  /** Scan again at the next use (a front end's explicit refresh; /skills does it). */
  refresh(): void;
  /**
   * Places found at run time, after start-up (a Pi extension's `resources_discover`): each a folder of skills
   * (searched like `paths`) or a skill file. They are searched after every other place, so a skill name found
   * earlier wins; their skills get `/skill:<name>` commands and join the index from the next request on.
   * `by` names who added them (`Pi extension todo`). A second call from the same `by` replaces its places.
   */
  addPlaces(by: string, paths: readonly string[]): void;
}

declare module "coil" {
  interface Services {
    skills: SkillsService;
  }
}
