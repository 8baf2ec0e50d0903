/** prompt-templates' contract (types only): the `prompt-templates` service front ends list. */
import type { PromptTemplate, TemplateProblem } from "./templates.js";

export type { PromptTemplate, TemplateProblem };

export interface PromptTemplatesService {
  list(): readonly PromptTemplate[];
  problems(): readonly TemplateProblem[];
}

declare module "coil" {
  interface Services {
    "prompt-templates": PromptTemplatesService;
  }
}
