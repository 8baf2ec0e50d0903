/** prompt-templates' contract (types only): the `prompt-templates` service front ends list. */
import type { PromptTemplate, TemplateDir, TemplateProblem } from "./templates.js";

export type { PromptTemplate, TemplateDir, TemplateProblem };

export interface PromptTemplatesService {
  list(): readonly PromptTemplate[];
  problems(): readonly TemplateProblem[];
  /** Every folder looked in, in precedence order, and how many templates each gave (for `coil doctor`). */
  dirs(): readonly (TemplateDir & { exists: boolean; loaded: number })[];
}

declare module "coil" {
  interface Services {
    "prompt-templates": PromptTemplatesService;
  }
}
