/** skills' contract (types only): the `skills` service the system prompt and front ends use. */
import type { SkillInfo, SkillProblem, SkillSource } from "./discover.js";

export type { SkillInfo, SkillProblem, SkillSource };

export interface SkillsService {
  /** Valid skills, in precedence order (re-scanned; files are re-read only when they changed). */
  list(): readonly SkillInfo[];
  /** Skills that could not be loaded, with the reason. */
  problems(): readonly SkillProblem[];
  get(name: string): SkillInfo | undefined;
}

declare module "coil" {
  interface Services {
    skills: SkillsService;
  }
}
