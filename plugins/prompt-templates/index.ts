/**
 * prompt-templates: every `*.md` in the template folders becomes a `/name args` command that sends the
 * expanded template to the model. Folders, first wins: the `paths` option, `.coil/prompt-templates`,
 * `.agents/prompt-templates`, `$COIL_HOME/prompt-templates`, installed packages, coil's built-in
 * `prompt-templates/` (docs/context.md).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { projectRoot } from "../../lib/project.js";
import { Type, definePlugin } from "../../kernel/index.js";
import { coilHome, expandTemplate, packageDirs, packageRoot, parseTemplate, templateFiles, type PromptTemplate, type TemplateProblem } from "./templates.js";

export type { PromptTemplatesService } from "./api.js";
export { expandTemplate, splitArgs, parseTemplate, type PromptTemplate } from "./templates.js";

export const PromptTemplateOptions = Type.Object({
  /** Extra folders of templates, relative to the preset file (looked at first). */
  paths: Type.Array(Type.String(), { default: [] }),
  project: Type.Boolean({ default: true }),
  user: Type.Boolean({ default: true }),
  packages: Type.Boolean({ default: true }),
  builtin: Type.Boolean({ default: true }),
});

/** Names other built-in plugins use for their own commands; a template cannot take them. */
const RESERVED = new Set(["compact", "cost", "skills", "templates", "help", "model", "resume", "new", "quit", "exit", "tree", "fork", "clone"]);


export default definePlugin({
  id: "prompt-templates",
  description: "Markdown prompt templates as /name args commands",
  options: PromptTemplateOptions,
  setup(ctx) {
    const o = ctx.options;
    const home = coilHome();
    const dirs: { dir: string; source: string }[] = o.paths.map((p) => ({ dir: resolve(ctx.baseDir, p), source: "path" }));
    if (o.project) dirs.push({ dir: join(projectRoot(ctx.cwd), ".coil", "prompt-templates"), source: "project" }, { dir: join(projectRoot(ctx.cwd), ".agents", "prompt-templates"), source: "project" });
    if (o.user) dirs.push({ dir: join(home, "prompt-templates"), source: "user" });
    if (o.packages) dirs.push(...packageDirs(home).map((dir) => ({ dir, source: "package" })));
    const root = packageRoot();
    if (o.builtin && root) dirs.push({ dir: join(root, "prompt-templates"), source: "builtin" });

    const templates: PromptTemplate[] = [];
    const problems: TemplateProblem[] = [];
    const byName = new Map<string, PromptTemplate>();
    for (const { dir, source } of dirs) {
      for (const file of templateFiles(dir)) {
        let parsed: PromptTemplate | TemplateProblem;
        try {
          parsed = parseTemplate(file, readFileSync(file, "utf8"), source);
        } catch (error) {
          parsed = { file, reason: `cannot read it: ${(error as Error).message}` };
        }
        if ("reason" in parsed) problems.push(parsed);
        else if (RESERVED.has(parsed.name) || parsed.name.startsWith("skill:")) problems.push({ file, reason: `/${parsed.name} is a command of coil itself; rename the file` });
        else if (byName.has(parsed.name)) problems.push({ file, reason: `/${parsed.name} is already defined by ${byName.get(parsed.name)!.file}, which takes precedence` });
        else (byName.set(parsed.name, parsed), templates.push(parsed));
      }
    }
    for (const p of problems) ctx.log.warn(`prompt template ${p.file} not loaded: ${p.reason}`);
    for (const t of templates) {
      try {
        ctx.commands.register({
          name: t.name,
          description: t.description,
          argumentHint: t.argumentHint,
          run(args) {
            // Read again so an edited template applies without a restart.
            let body = t.body;
            try {
              const fresh = parseTemplate(t.file, readFileSync(t.file, "utf8"), t.source);
              if (!("reason" in fresh)) body = fresh.body;
            } catch {
              // the file went away: use what was read at start-up
            }
            return { prompt: expandTemplate(body, args) };
          },
        });
      } catch (error) {
        ctx.log.warn(`prompt template ${t.file} not loaded: ${(error as Error).message}`);
      }
    }
    ctx.services.provide("prompt-templates", { list: () => templates, problems: () => problems });
    ctx.commands.register({
      name: "templates",
      description: "list the prompt templates",
      run: () =>
        [...templates.map((t) => `/${t.name}${t.argumentHint ? ` ${t.argumentHint}` : ""}  ${t.description}  [${t.source}]`), ...problems.map((p) => `not loaded: ${p.file}: ${p.reason}`)].join("\n") ||
        "no prompt templates found",
    });
  },
});
