/**
 * skills: Agent Skills (`<name>/SKILL.md`) from the project (`.coil/skills`, `.agents/skills`), the user
 * (`$COIL_HOME/skills`), installed packages and coil's built-in `skills/`. The `skills` service gives
 * the index the system-prompt plugin puts in the prompt (name, description, path); `/skill:name args`
 * sends the whole skill with the next prompt. Invalid skills are reported with the reason (docs/context.md).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Type, definePlugin, type PluginContext, type SlashResult, type UserMessage } from "../../kernel/index.js";
import { substituteArguments } from "../../lib/command-body.js";
import type { SkillsService } from "./api.js";
import { claudePluginSkillDirs } from "../../lib/claude-plugins.js";
import { SkillCatalog, coilHome, packageDirs, packageRoot, splitFrontMatter, type SkillInfo, type SkillRoot } from "./discover.js";

export type { SkillsService } from "./api.js";
export { parseSkill, splitFrontMatter, findSkillFiles, SkillCatalog, type SkillInfo, type SkillProblem, type SkillSource } from "./discover.js";

export const SkillsOptions = Type.Object({
  /** Extra folders of skills, relative to the preset file (looked at before everything else). */
  paths: Type.Array(Type.String(), { default: [] }),
  /** `.coil/skills` and `.agents/skills` in the working directory. */
  project: Type.Boolean({ default: true }),
  /** `$COIL_HOME/skills`. */
  user: Type.Boolean({ default: true }),
  /** Skills of packages installed under `$COIL_HOME/packages`. */
  packages: Type.Boolean({ default: true }),
  /** coil's built-in skills. */
  builtin: Type.Boolean({ default: true }),
});


type Options = { paths: string[]; project: boolean; user: boolean; packages: boolean; builtin: boolean };

export function skillRoots(ctx: { cwd: string; baseDir: string; options: Options; projectTrusted?: boolean }, env: NodeJS.ProcessEnv = process.env): SkillRoot[] {
  const o = ctx.options;
  const home = coilHome(env);
  const roots: SkillRoot[] = o.paths.map((p) => ({ dir: resolve(ctx.baseDir, p.replace(/^~(?=$|\/)/, env.HOME ?? "~")), source: "path" as const }));
  if (o.project) roots.push({ dir: join(ctx.cwd, ".coil", "skills"), source: "project" }, { dir: join(ctx.cwd, ".agents", "skills"), source: "project" });
  if (o.user) roots.push({ dir: join(home, "skills"), source: "user" });
  if (o.packages) roots.push(...packageDirs(home, "skills", "skills").map((dir) => ({ dir, source: "package" as const })));
  if (o.packages) roots.push(...claudePluginSkillDirs({ home, cwd: ctx.cwd, trusted: ctx.projectTrusted }).map((dir) => ({ dir, source: "package" as const })));
  const builtin = packageRoot();
  if (o.builtin && builtin) roots.push({ dir: join(builtin, "skills"), source: "builtin" });
  return roots;
}

/** Only `</skill` could end the block early; neutralise it and keep the rest of the markdown readable. */
function guardBody(text: string): string {
  return text.replace(/<(\/?)skill\b/gi, "&lt;$1skill");
}

function attr(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/**
 * The user message `/skill:name args` sends: the whole SKILL.md body, then the user's text. Placeholders
 * in the body (`$ARGUMENTS`, `$1`, `$@`, as in commands) take the arguments; then they are not repeated.
 */
export function skillMessage(skill: SkillInfo, args: string): UserMessage {
  const { text: body, used } = substituteArguments(splitFrontMatter(readFileSync(skill.file, "utf8")).body, args);
  const text = [
    `The user asked you to use the skill "${skill.name}". Its instructions follow; paths in it are relative to ${skill.dir}.`,
    "",
    `<skill name="${attr(skill.name)}" location="${attr(skill.file)}">`,
    guardBody(body.trim()),
    "</skill>",
  ].join("\n");
  const content: UserMessage["content"] = [{ type: "text", text }];
  content.push({ type: "text", text: (!used && args.trim()) || `Apply the skill "${skill.name}" now.` });
  return { role: "user", content, timestamp: Date.now() };
}

export default definePlugin({
  id: "skills",
  description: "Agent Skills: an index in the system prompt, /skill:name to load one",
  options: SkillsOptions,
  setup(ctx) {
    const catalog = new SkillCatalog(() => skillRoots(ctx));
    const reported = new Set<string>();
    const report = (c: SkillCatalog, c2: PluginContext<Options>) => {
      for (const p of c.problems) {
        const line = `skill ${p.file} not loaded: ${p.reason}`;
        if (!reported.has(line)) (reported.add(line), c2.log.warn(line));
      }
      for (const s of c.skills) {
        for (const w of s.warnings) {
          const line = `skill ${s.file}: ${w}`;
          if (!reported.has(line)) (reported.add(line), c2.log.info(line));
        }
      }
    };
    // Commands must be registered now, so the skills present at start-up are scanned here.
    report(catalog.scan(), ctx);
    const service: SkillsService = {
      list: () => (report(catalog.scan(), ctx), catalog.skills),
      problems: () => catalog.problems,
      get: (name) => catalog.skills.find((s) => s.name === name),
    };
    ctx.services.provide("skills", service);

    const send = (skill: SkillInfo, args: string): SlashResult => {
      try {
        return { prompt: [skillMessage(skill, args)] };
      } catch (error) {
        return `coil: skill ${skill.name}: cannot read ${skill.file}: ${(error as Error).message}`;
      }
    };
    for (const skill of catalog.skills) {
      const oneLine = skill.description.replace(/\s+/g, " ");
      ctx.commands.register({
        name: `skill:${skill.name}`,
        description: oneLine.length > 120 ? `${oneLine.slice(0, 117)}...` : oneLine,
        argumentHint: "[what to do]",
        run: (args) => send(service.get(skill.name) ?? skill, args),
      });
    }
    // A skill found but not loaded still answers /skill:<name>: with why (re-checked, so a fixed file works),
    // rather than letting the front end send the words to the model as if they were a request.
    const loaded = new Set(catalog.skills.map((s) => s.name));
    const refused = [...new Set(catalog.problems.flatMap((p) => p.names ?? []))].filter((name) => !loaded.has(name));
    for (const name of refused) {
      ctx.commands.register({
        name: `skill:${name}`,
        description: "(not loaded: /skills says why)",
        argumentHint: "[what to do]",
        run(args) {
          const now = service.list().find((s) => s.name === name);
          if (now) return send(now, args);
          const why = service.problems().filter((p) => p.names?.includes(name));
          if (!why.length) return `skill '${name}' was not loaded, and its SKILL.md is no longer found. /skills lists the skills coil has.`;
          return `skill '${name}' was not loaded: ${why.map((p) => `${p.file}: ${p.reason}`).join("; ")}. Fix the file and run /skill:${name} again.`;
        },
      });
    }
    ctx.commands.register({
      name: "skills",
      description: "list the skills coil found, and those it could not load",
      run() {
        const skills = service.list();
        const lines = skills.map((s) => `${s.name}${s.disableModelInvocation ? " (only via /skill:" + s.name + ")" : ""}  [${s.source}]  ${s.file}`);
        const problems = service.problems().map((p) => `not loaded: ${p.file}: ${p.reason}`);
        return [skills.length ? lines.join("\n") : "no skills found", ...problems].join("\n");
      },
    });
  },
});
