/** prompt-templates' contract (types only): the `prompt-templates` service front ends list. */
import type { PromptTemplate, TemplateDir, TemplateProblem } from "./templates.js";

export type { PromptTemplate, TemplateDir, TemplateProblem };

export interface PromptTemplatesService {
  list(): readonly PromptTemplate[];
  problems(): readonly TemplateProblem[];
  /** Every folder looked in, in precedence order, and how many templates each gave (for `coil doctor`). */
  dirs(): readonly (TemplateDir & { exists: boolean; loaded: number })[];
  /**
   * Places found at run time (a Pi extension's `resources_discover`): each a folder of templates or a `.md` file,
   * read now, after every other place (a name already taken stays the earlier one's). Their templates become
   * commands at once. `by` names who added them and is their `source`; a second call from the same `by`
   * replaces its places.
   */
  addPlaces(by: string, paths: readonly string[]): void;
}

declare module "coil" {
  interface Services {
    "prompt-templates": PromptTemplatesService;
  }
}
