/**
 * skills: Agent Skills (`<name>/SKILL.md`) from the working directory and each folder above it up to the
 * project root (`.coil/skills`, `.agents/skills`, `.claude/skills`, `.pi/skills`), the user
 * (`$COIL_HOME/skills`, `~/.agents/skills`, `~/.claude/skills`, `~/.pi/agent/skills`), installed packages
 * and coil's built-in `skills/`; the `compat` option switches the Claude Code, Pi and `.agents` places
 * off. The `skills` service gives the index the system-prompt plugin puts in the prompt (name,
 * description cut to a budget, path); `/skill:name args` sends the whole skill with the next prompt.
 * Skills are scanned at start-up and again at most once per run (docs/context.md).
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { Type, definePlugin, type SlashCommand, type SlashResult, type UserMessage } from "../../api/index.js";
import { claudePluginSkillDirs, isFile, placeOf } from "../../lib/claude-plugins.js";
import { readPiSettings } from "../../lib/pi-settings.js";
import { substituteArguments } from "../../lib/command-body.js";
import { CompatOption, compatOf, skillPlaces, type Compat } from "../../lib/compat.js";
import { addDoctorSection } from "../../lib/doctor.js";
import { renderSkillIndex } from "../../lib/skill-index.js";
import type {} from "../tool-search/api.js"; // types the `tool-search` service
import type { SkillIndex, SkillsService } from "./api.js";
import {
  SkillCatalog,
  coilHome,
  packageDirs,
  packageRoot,
  splitFrontMatter,
  type SkillInfo,
  type SkillRoot,
} from "./discover.js";

export type { SkillsService, SkillIndex } from "./api.js";
export {
  parseSkill,
  splitFrontMatter,
  findSkillFiles,
  SkillCatalog,
  type SkillInfo,
  type SkillProblem,
  type SkillSource,
} from "./discover.js";
import { projectRoot } from "../../lib/locations.js";

export const SkillsOptions = Type.Object({
  /** Extra folders of skills, relative to the preset file (looked at before everything else). */
  paths: Type.Array(Type.String(), { default: [] }),
  /** The project's skill folders, in the working directory and each folder above it up to the project root. */
  project: Type.Boolean({ default: true }),
  /** The user's skill folders (`$COIL_HOME/skills`, and `~/.agents`, `~/.claude`, `~/.pi/agent` ones per `compat`). */
  user: Type.Boolean({ default: true }),
  /** Skills of packages installed under `$COIL_HOME/packages`. */
  packages: Type.Boolean({ default: true }),
  /** coil's built-in skills. */
  builtin: Type.Boolean({ default: true }),
  /** Read other tools' places: `claude`, `pi`, `agents` (each on unless false). context-files and prompt-templates follow this. */
  compat: Type.Optional(CompatOption),
  /** Characters of a description kept in the prompt's index (the whole text is in SKILL.md). */
  indexDescription: Type.Integer({ minimum: 40, default: 250 }),
  /** Bytes of the whole index in the prompt: past it descriptions are shortened, then left out; every name stays. */
  indexBytes: Type.Integer({ minimum: 512, default: 8192 }),
});

type Options = {
  paths: string[];
  project: boolean;
  user: boolean;
  packages: boolean;
  builtin: boolean;
  compat?: Partial<Compat>;
  indexDescription: number;
  indexBytes: number;
};

/** Where skills are looked for, first name wins: paths, the project (nearest folder first), the user, packages, built-ins. */
export function skillRoots(
  ctx: {
    cwd: string;
    baseDir: string;
    options: Pick<Options, "paths" | "project" | "user" | "packages" | "builtin" | "compat">;
    projectTrusted?: boolean;
  },
  env: NodeJS.ProcessEnv = process.env,
): SkillRoot[] {
  const o = ctx.options;
  const compat = compatOf(o.compat);
  const home = coilHome(env);
  const userHome = env.HOME || homedir();
  const roots: SkillRoot[] = o.paths.map((p) => ({
    dir: resolve(ctx.baseDir, p.replace(/^~(?=$|\/)/, userHome)),
    source: "path" as const,
  }));
  for (const p of skillPlaces(ctx.cwd, compat, home, userHome, o, env))
    roots.push({
      dir: p.dir,
      source: p.scope,
      ...(p.family ? { family: p.family } : {}),
      ...(p.rootFiles ? { rootFiles: true } : {}),
    });
  // Pi's settings.json `skills` paths (folders, or skill files), after Pi's own folders.
  if (compat.pi)
    for (const p of readPiSettings({ cwd: ctx.cwd, trusted: ctx.projectTrusted === true, env }).skills) {
      if (p.scope === "project" ? o.project === false : o.user === false) continue;
      const file = isFile(p.path);
      roots.push({
        dir: file ? dirname(p.path) : p.path,
        source: p.scope,
        family: "pi",
        ...(file ? { files: [p.path] } : {}),
      });
    }
  if (o.packages)
    roots.push(
      ...packageDirs(home, "skills", "skills", {
        root: projectRoot(ctx.cwd),
        trusted: ctx.projectTrusted === true,
      }).map((dir) => ({ dir, source: "package" as const })),
    );
  if (o.packages)
    roots.push(
      ...claudePluginSkillDirs({
        home,
        cwd: projectRoot(ctx.cwd),
        trusted: ctx.projectTrusted,
        claudeCode: compat.claude,
      }).map((dir) => ({
        dir,
        source: "package" as const,
      })),
    );
  const builtin = packageRoot();
  if (o.builtin && builtin) roots.push({ dir: join(builtin, "skills"), source: "builtin" });
  return roots;
}

/** Descriptions are not cut below this many characters; past that, the index lists names only. */
const MIN_DESCRIPTION = 24;

/** The Agent Skills entry's description: as written, cut to `max` characters. */
const cut = (text: string, max: number) => {
  const t = text.trim();
  return t.length > max ? `${t.slice(0, max - 1).trimEnd()}…` : t;
};

/** `text` on one line, cut to at most `max` characters, at a word boundary when one is near, with an ellipsis. */
export function shorten(text: string, max: number): string {
  const t = text.replace(/\s+/g, " ").trim();
  if (t.length <= max) return t;
  const cut = t.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/**
 * The index the model sees: every skill the model may invoke, in precedence order. Descriptions are cut
 * to `maxDescription` characters; when that is over `maxBytes`, they are shortened (to the longest cut
 * that fits) and listed a line each by folder; when even that does not fit, names only. A skill is never
 * left out: past the budget the model gets every name, where to read each SKILL.md, and `searchTool`.
 */
export function buildIndex(
  skills: readonly SkillInfo[],
  maxDescription: number,
  maxBytes: number,
  searchTool?: string,
): SkillIndex {
  const visible = skills.filter((s) => !s.disableModelInvocation);
  const at = (level: SkillIndex["level"], max: number): SkillIndex => {
    const entries = visible.map((s) => ({
      name: s.name,
      description: level === "names" ? "" : level === "full" ? cut(s.description, max) : shorten(s.description, max),
      location: s.file,
    }));
    const bytes = Buffer.byteLength(renderSkillIndex(entries, level, searchTool));
    return { skills: entries, level, bytes, ...(searchTool ? { searchTool } : {}) };
  };
  const full = at("full", maxDescription);
  if (full.bytes <= maxBytes || visible.length === 0) return full;
  let fit = at("short", MIN_DESCRIPTION);
  if (fit.bytes > maxBytes) return at("names", 0);
  // The longest cut that fits: binary search between the floor and the full length.
  let lo = MIN_DESCRIPTION;
  let hi = maxDescription;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const candidate = at("short", mid);
    if (candidate.bytes <= maxBytes) {
      lo = mid;
      fit = candidate;
    } else hi = mid - 1;
  }
  return fit;
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
    const o = ctx.options as Options;
    // Places a plugin adds at run time (addPlaces), searched after all the others.
    const added = new Map<string, readonly string[]>();
    const addedRoots = (): SkillRoot[] =>
      [...added].flatMap(([by, paths]) =>
        paths.map((path) => ({ ...placeOf(path), source: "extension" as const, addedBy: by })),
      );
    const catalog = new SkillCatalog(() => [...skillRoots(ctx), ...addedRoots()]);
    const reported = new Set<string>();
    const say = (line: string, level: "info" | "warn") => {
      if (reported.has(line)) return;
      reported.add(line);
      ctx.log[level](line);
    };
    const report = (c: SkillCatalog) => {
      for (const p of c.problems) say(`skill ${p.file} not loaded: ${p.reason}`, "warn");
      // Pi skips these folders silently; coil names them in /skills and coil doctor, without a warning at each start.
      for (const s of c.skipped) say(`skills in ${s.dir} not loaded: ${s.reason}`, "info");
      for (const s of c.skills) for (const w of s.warnings) say(`skill ${s.file}: ${w}`, "info");
      for (const s of c.shadowed)
        say(`skill ${s.file} not used: '${s.name}' is already defined by ${s.by} (the first one found wins)`, "info");
    };
    // Commands must be registered now, so the skills present at start-up are scanned here. After that,
    // the folders are scanned again at most once per run (at its first use), never once per turn: a
    // skill edited between prompts is seen at the next prompt, and a run's prompt prefix stays stable.
    report(catalog.scan());
    let stale = false;
    ctx.on("agent_start", () => {
      stale = true;
    });
    const current = (): SkillCatalog => {
      if (stale) {
        stale = false;
        report(catalog.scan());
      }
      return catalog;
    };
    let index: { scan: number; value: SkillIndex } | undefined;
    // tool-search's search tool also searches the skills' full descriptions when the index shortens them.
    const searchTool = () => ctx.services.get("tool-search")?.skillSearch;
    const service: SkillsService = {
      list: () => current().skills,
      problems: () => current().problems,
      shadowed: () => current().shadowed,
      skipped: () => current().skipped,
      searched: () => current().searched,
      get: (name) => current().skills.find((s) => s.name === name),
      index() {
        const c = current();
        if (index?.scan !== c.scans)
          index = {
            scan: c.scans,
            value: buildIndex(c.skills, o.indexDescription, o.indexBytes, searchTool()),
          };
        return index.value;
      },
      compat: compatOf(o.compat),
      scans: () => catalog.scans,
      refresh: () => {
        stale = true;
      },
      addPlaces(by, paths) {
        added.set(by, [...paths]);
        report(catalog.scan());
        stale = false;
        syncLate();
      },
    };
    ctx.services.provide("skills", service);
    const send = (skill: SkillInfo, args: string): SlashResult => {
      try {
        return { prompt: [skillMessage(skill, args)] };
      } catch (error) {
        return `coil: skill ${skill.name}: cannot read ${skill.file}: ${(error as Error).message}`;
      }
    };
    const command = (skill: SkillInfo): SlashCommand => {
      const oneLine = skill.description.replace(/\s+/g, " ");
      return {
        name: `skill:${skill.name}`,
        description: oneLine.length > 120 ? `${oneLine.slice(0, 117)}...` : oneLine,
        argumentHint: "[what to do]",
        run: (args) => send(service.get(skill.name) ?? skill, args),
      };
    };
    for (const skill of catalog.skills) ctx.commands.register(command(skill));
    // The skills of places added at run time get their commands then (a late registration, replaced at each).
    const atStart = new Set(catalog.skills.map((s) => s.name));
    let synced = new Set<string>();
    const syncLate = () => {
      const late = catalog.skills.filter((s) => !atStart.has(s.name));
      const free = late.filter((s) => synced.has(`skill:${s.name}`) || !ctx.commands.get(`skill:${s.name}`));
      for (const s of late)
        if (!free.includes(s))
          say(
            `skill ${s.file}: /skill:${s.name} is already a command of another plugin; the model can still use it`,
            "warn",
          );
      ctx.commands.sync(free.map(command));
      synced = new Set(free.map((s) => `skill:${s.name}`));
    };
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
          service.refresh();
          const now = service.list().find((s) => s.name === name);
          if (now) return send(now, args);
          const why = service.problems().filter((p) => p.names?.includes(name));
          if (!why.length)
            return `skill '${name}' was not loaded, and its SKILL.md is no longer found. /skills lists the skills coil has.`;
          return `skill '${name}' was not loaded: ${why.map((p) => `${p.file}: ${p.reason}`).join("; ")}. Fix the file and run /skill:${name} again.`;
        },
      });
    }
    ctx.commands.register({
      name: "skills",
      description: "list the skills coil found, where it looked, and those it could not load",
      run() {
        service.refresh();
        return skillsReport(service);
      },
    });
    addDoctorSection(ctx, {
      title: "skills",
      report: () => {
        service.refresh();
        return skillsReport(service);
      },
    });
  },
});

/** What /skills and `coil doctor` show: the skills, then shadowed and refused ones, then every place searched. */
export function skillsReport(service: SkillsService): string {
  const skills = service.list();
  const home = process.env.HOME || homedir();
  const short = (p: string) => (p.startsWith(home + "/") ? `~${p.slice(home.length)}` : p);
  const lines = skills.length
    ? skills.map(
        (s) =>
          `${s.name}${s.disableModelInvocation ? " (only via /skill:" + s.name + ")" : ""}  [${s.source}]  ${short(s.file)}${s.warnings.length ? `\n    note: ${s.warnings.join("; ")}` : ""}`,
      )
    : ["no skills found"];
  for (const s of service.shadowed())
    lines.push(
      `not used: ${short(s.file)}: '${s.name}' is already defined by ${short(s.by)} (the first one found wins)`,
    );
  for (const p of service.problems()) lines.push(`not loaded: ${short(p.file)}: ${p.reason}`);
  for (const s of service.skipped()) lines.push(`not searched: ${short(s.dir)}: ${s.reason}`);
  const index = service.index();
  if (index.level !== "full")
    lines.push(
      `prompt index: all ${index.skills.length} skills, ${index.level === "short" ? "with shortened descriptions" : "by name only"} (${index.bytes.toLocaleString("en-US")} bytes; the skills plugin's indexBytes option sets the budget)${index.searchTool ? `; ${index.searchTool} searches the full descriptions` : ""}`,
    );
  lines.push(
    `searched, first name wins (scanned ${service.scans()} times: at start-up, then at most once per run and at each /skills):`,
  );
  for (const r of service.searched())
    lines.push(
      `  ${short(r.dir)}  [${r.source}${r.family ? `, ${r.family}` : ""}${r.addedBy ? `, added by ${r.addedBy}` : ""}]  ${r.exists ? `${r.found} skill${r.found === 1 ? "" : "s"}` : "(none)"}`,
    );
  return lines.join("\n");
}
