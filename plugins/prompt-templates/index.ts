/**
 * prompt-templates: every `*.md` in the template folders becomes a `/name args` command that sends the
 * expanded template to the model. Folders, first wins: the `paths` option; in the project root
 * `.coil/prompt-templates`, `.agents/prompt-templates`, `.claude/commands/**` and `.pi/prompts`; then
 * `$COIL_HOME/prompt-templates`, `~/.claude/commands/**`, `~/.pi/agent/prompts`; the `commandDirs`
 * option; installed packages; coil's built-in `prompt-templates/` (docs/context.md).
 *
 * A body runs as in Claude Code: arguments fill `$ARGUMENTS`/`$1`/`$@`, `` !`cmd` `` lines run as bash
 * tool calls (gates and sandbox apply; not for an untrusted project's files) with their output inlined,
 * `@file` references are attached, and front matter `model` and `allowed-tools` hold for that command's
 * run only.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import {
  Type,
  definePlugin,
  type Agent,
  type ModelInfo,
  type SlashCommand,
  type ToolResultMessage,
} from "../../api/index.js";
import type { PromptTemplatesService } from "./api.js";
import { attachmentsPrompt, collectAttachments } from "../../lib/attachments.js";
import { componentPaths, installedClaudePlugins, isFile, placeOf } from "../../lib/claude-plugins.js";
import {
  bashRefusal,
  expandShellCommands,
  expandTemplate,
  parseAllowedTools,
  shellCommands,
} from "../../lib/command-body.js";
import { resolveModel } from "../../lib/models.js";
import type {} from "../skills/api.js"; // types the `skills` service (its `compat` is the shared setting)
import type {} from "../session-jsonl/api.js"; // types the `session` service (recording the model put back)
import {
  coilHome,
  expandVars,
  listTemplateFiles,
  packageDirs,
  packageRoot,
  parseTemplate,
  type PromptTemplate,
  type TemplateDir,
  type TemplateProblem,
} from "./templates.js";
import { CompatOption, compatOf, type Compat } from "../../lib/compat.js";
import { addDoctorSection } from "../../lib/doctor.js";
import { readPiSettings } from "../../lib/pi-settings.js";
import {
  claudeConfigDir,
  piAgentDir as piAgentDirOf,
  projectRoot,
  userHome as userHomeOf,
} from "../../lib/locations.js";

export type { PromptTemplatesService } from "./api.js";
export { expandTemplate, splitArgs, parseTemplate, type PromptTemplate, type TemplateDir } from "./templates.js";

export const PromptTemplateOptions = Type.Object({
  /** Extra folders of templates, relative to the preset file (looked at first). */
  paths: Type.Array(Type.String(), { default: [] }),
  project: Type.Boolean({ default: true }),
  user: Type.Boolean({ default: true }),
  packages: Type.Boolean({ default: true }),
  builtin: Type.Boolean({ default: true }),
  /** Where other agents keep commands: `claude` (`.claude/commands`, `~/.claude/commands`), `pi` (`.pi/prompts`, `~/.pi/agent/prompts`). */
  compat: Type.Optional(CompatOption),
  /**
   * More command folders, looked at after the user's: `namespace` prefixes every name (`plugin:command`),
   * `pluginRoot` is what `${CLAUDE_PLUGIN_ROOT}` becomes in their bodies (a Claude Code plugin's folder).
   */
  commandDirs: Type.Array(
    Type.Object({
      path: Type.String(),
      namespace: Type.Optional(Type.String()),
      pluginRoot: Type.Optional(Type.String()),
      recursive: Type.Optional(Type.Boolean()),
    }),
    { default: [] },
  ),
});

/** Names other built-in plugins use for their own commands; a template cannot take them. */
const RESERVED = new Set([
  "compact",
  "cost",
  "skills",
  "templates",
  "help",
  "model",
  "resume",
  "new",
  "quit",
  "exit",
  "tree",
  "fork",
  "clone",
]);

const realPath = (path: string) => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

type Options = {
  paths: string[];
  project: boolean;
  user: boolean;
  packages: boolean;
  builtin: boolean;
  compat?: Partial<Compat>;
  commandDirs: { path: string; namespace?: string; pluginRoot?: string; recursive?: boolean }[];
};

/** The template folders, in precedence order (first wins). */
export function templateDirs(
  ctx: { cwd: string; baseDir: string; projectTrusted: boolean; options: Options; sharedCompat?: Partial<Compat> },
  env: NodeJS.ProcessEnv = process.env,
): TemplateDir[] {
  const o = ctx.options;
  // Unset families follow the skills plugin's `compat` (the shared setting), else on.
  const compat = compatOf(o.compat, ctx.sharedCompat);
  const home = coilHome(env);
  const userHome = userHomeOf(env);
  const expand = (p: string) => resolve(ctx.baseDir, p.replace(/^~(?=$|\/)/, userHome));
  const claudeHome = claudeConfigDir(env);
  const piHome = piAgentDirOf(env);
  const dirs: TemplateDir[] = o.paths.map((p) => ({ dir: expand(p), source: "path", trusted: true }));
  if (o.project) {
    const root = projectRoot(ctx.cwd);
    const project = (dir: string, recursive = false): TemplateDir => ({
      dir,
      source: "project",
      trusted: ctx.projectTrusted,
      ...(recursive ? { recursive } : {}),
    });
    dirs.push(project(join(root, ".coil", "prompt-templates")), project(join(root, ".agents", "prompt-templates")));
    if (compat.claude) dirs.push(project(join(root, ".claude", "commands"), true));
    if (compat.pi) dirs.push(project(join(root, ".pi", "prompts")));
  }
  if (o.user) {
    dirs.push({ dir: join(home, "prompt-templates"), source: "user", trusted: true });
    if (compat.claude) dirs.push({ dir: join(claudeHome, "commands"), source: "user", recursive: true, trusted: true });
    if (compat.pi) dirs.push({ dir: join(piHome, "prompts"), source: "user", trusted: true });
  }
  // Pi's settings.json `prompts` paths (folders or template files); a trusted project's .pi/settings.json too.
  if (compat.pi)
    for (const p of readPiSettings({ cwd: ctx.cwd, trusted: ctx.projectTrusted, env }).prompts) {
      if (p.scope === "project" ? !o.project : !o.user) continue;
      const file = isFile(p.path);
      dirs.push({
        dir: file ? dirname(p.path) : p.path,
        ...(file ? { files: [p.path] } : {}),
        source: p.scope,
        trusted: p.scope === "user" || ctx.projectTrusted,
      });
    }
  for (const c of o.commandDirs) {
    const root = c.pluginRoot !== undefined ? expand(c.pluginRoot) : undefined;
    dirs.push({
      dir: expand(c.path),
      source: c.namespace ? `plugin ${c.namespace}` : "path",
      trusted: true,
      recursive: c.recursive ?? true,
      ...(c.namespace ? { namespace: c.namespace } : {}),
      ...(root ? { vars: { CLAUDE_PLUGIN_ROOT: root } } : {}),
    });
  }
  if (o.packages)
    dirs.push(
      ...packageDirs(home, { root: projectRoot(ctx.cwd), trusted: ctx.projectTrusted }).map((dir) => ({
        dir,
        source: "package",
        trusted: true,
      })),
    );
  // Installed Claude Code plugins' commands: `/<plugin>:<command>`, `${CLAUDE_PLUGIN_ROOT}` expanded.
  if (o.packages) {
    for (const p of installedClaudePlugins({
      home,
      cwd: projectRoot(ctx.cwd),
      trusted: ctx.projectTrusted,
      claudeCode: compat.claude,
    })) {
      for (const path of componentPaths(p, "commands", "commands")) {
        dirs.push({
          ...placeOf(path),
          source: `plugin ${p.name}`,
          trusted: true,
          recursive: true,
          namespace: p.name,
          vars: { CLAUDE_PLUGIN_ROOT: p.root },
        });
      }
    }
  }
  const builtin = packageRoot();
  if (o.builtin && builtin) dirs.push({ dir: join(builtin, "prompt-templates"), source: "builtin", trusted: true });
  // A home folder that is itself a git repository (dotfiles) makes `~/.claude/commands` look like a
  // project folder too: it is the user's, so it is read once, as the user's.
  const userDirs = new Set(dirs.filter((d) => d.source !== "project").map((d) => realPath(d.dir)));
  return dirs.filter((d) => d.source !== "project" || !userDirs.has(realPath(d.dir)));
}

/** What a command's front matter holds for its own run: the model and the tools it may use. */
interface RunScope {
  command: string;
  started: boolean;
  tools?: Set<string>;
  bashPrefixes?: string[];
  /** The model before the command switched it, put back when the run ends. */
  restore?: { provider: string; model: ModelInfo; switched: ModelInfo; agent: Agent };
}

const resultText = (r: ToolResultMessage) =>
  r.content
    .map((p) => (p.type === "text" ? p.text : ""))
    .join("")
    .trim();

export default definePlugin({
  id: "prompt-templates",
  description: "Markdown prompt templates as /name args commands",
  options: PromptTemplateOptions,
  setup(ctx) {
    const dirs = templateDirs({ ...ctx, options: ctx.options, sharedCompat: ctx.services.get("skills")?.compat });
    const templates: (PromptTemplate & { from: TemplateDir })[] = [];
    const problems: TemplateProblem[] = [];
    const notes: string[] = [];
    const byName = new Map<string, PromptTemplate>();
    /** Read one place's templates into `into`; a name already taken (`byName`) or reserved is a problem. */
    const readPlace = (from: TemplateDir, into: (PromptTemplate & { from: TemplateDir })[]) => {
      for (const { file, folder } of from.files
        ? from.files.map((file) => ({ file, folder: undefined }))
        : listTemplateFiles(from.dir, from.recursive === true)) {
        let parsed: PromptTemplate | TemplateProblem;
        try {
          parsed = parseTemplate(file, readFileSync(file, "utf8"), from.source, { folder, namespace: from.namespace });
        } catch (error) {
          parsed = { file, reason: `cannot read it: ${(error as Error).message}` };
        }
        if ("reason" in parsed) {
          problems.push(parsed);
          continue;
        }
        if (RESERVED.has(parsed.name) || parsed.name.startsWith("skill:"))
          problems.push({ file, reason: `/${parsed.name} is a command of coil itself; rename the file` });
        else if (byName.has(parsed.name))
          problems.push({
            file,
            reason: `/${parsed.name} is already defined by ${byName.get(parsed.name)!.file}, which takes precedence`,
          });
        else {
          byName.set(parsed.name, parsed);
          into.push({ ...parsed, from });
          if (parsed.ignored)
            notes.push(
              `/${parsed.name} (${parsed.file}): ${parsed.ignored.map((k) => `'${k}'`).join(", ")} in its front matter ${parsed.ignored.length > 1 ? "are" : "is"} not acted on by coil; the rest of the file is read`,
            );
        }
      }
    };
    for (const from of dirs) readPlace(from, templates);
    for (const p of problems) ctx.log.warn(`prompt template ${p.file} not loaded: ${p.reason}`);

    let scope: RunScope | undefined;
    let calls = 0;
    const end = () => {
      const r = scope?.restore;
      scope = undefined;
      // Put the model back unless someone chose another one during the run, and say so in the session,
      // so `coil -c` continues on the user's model rather than the command's.
      if (r && r.agent.state.model === r.switched) {
        r.agent.setModel(r.provider, r.model);
        try {
          ctx.services.get("session")?.appendModelChange(r.provider, r.model.id);
        } catch (error) {
          ctx.log.warn(
            `could not record the model put back (${r.provider}/${r.model.id}) in the session: ${(error as Error).message}`,
          );
        }
      }
    };
    ctx.on("agent_start", () => {
      if (scope) scope.started = true;
    });
    ctx.on("agent_end", () => {
      if (scope?.started) end();
    });
    ctx.tap(
      "before_request",
      (request) => {
        const tools = scope?.started ? scope.tools : undefined;
        return tools ? { ...request, tools: request.tools.filter((t) => tools.has(t.name)) } : undefined;
      },
      // After mcp (EARLY), which adds its servers' tools at the first request; before system-prompt
      // (LATE), so the prompt describes only the tools this run offers.
      { stage: -50 },
    );
    ctx.tap(
      "tool_call",
      ({ call, args }) => {
        if (!scope?.started || !scope.tools) return undefined;
        if (!scope.tools.has(call.name))
          return {
            block: true,
            reason: `/${scope.command} allows only these tools (its allowed-tools): ${[...scope.tools].join(", ") || "none"}`,
          };
        if (call.name === "bash" && scope.bashPrefixes && typeof args.command === "string") {
          const why = bashRefusal(args.command, scope.bashPrefixes);
          if (why) return { block: true, reason: `/${scope.command}'s allowed-tools limit bash: ${why}` };
        }
        return undefined;
      },
      { stage: "GUARD" },
    );

    const runTemplate = async (t: PromptTemplate & { from: TemplateDir }, args: string, agent: Agent | undefined) => {
      // Read again so an edited template applies without a restart.
      let current: PromptTemplate = t;
      try {
        const fresh = parseTemplate(t.file, readFileSync(t.file, "utf8"), t.source, {
          folder: t.folder,
          namespace: t.from.namespace,
        });
        if (!("reason" in fresh)) current = { ...fresh, name: t.name };
      } catch {
        // the file went away: use what was read at start-up
      }
      const warn = (m: string) => ctx.log.warn(`/${t.name}: ${m}`);
      // A scope whose run never started (its prompt was not sent) ends here, putting its model back.
      if (scope && !scope.started && !agent?.isRunning) end();

      // Front matter that holds for this command's run: decided before any `!` line runs.
      let next: RunScope | undefined;
      if (agent && (current.model || current.allowedTools !== undefined)) {
        if (agent.isRunning)
          return `/${t.name} sets ${current.model ? "its own model" : "the tools it may use"} for its run, so it cannot join the run going now. Wait for it to end (or stop it), then run /${t.name} again.`;
        next = { command: t.name, started: false };
        if (current.allowedTools !== undefined) {
          // MCP servers' tools join the tool list at the first request, after this runs: their names count.
          const allowed = parseAllowedTools(
            current.allowedTools,
            (name) => agent.view.tools.has(name) || name.startsWith("mcp__"),
          );
          if (!allowed) warn(`allowed-tools in ${t.file} must be a string or a list; ignored`);
          else {
            if (allowed.unknown.length)
              warn(
                `allowed-tools in ${t.file} names tools coil does not have, left out: ${allowed.unknown.join(", ")}`,
              );
            next.tools = allowed.tools;
            if (allowed.bashPrefixes) next.bashPrefixes = allowed.bashPrefixes;
          }
        }
        if (current.model) {
          try {
            const chosen = resolveModel([...agent.view.providers.values()], current.model);
            const before = agent.state;
            if (chosen.provider.id !== before.provider || chosen.model.id !== before.model.id) {
              agent.setModel(chosen.provider.id, chosen.model);
              next.restore = { provider: before.provider, model: before.model, switched: agent.state.model, agent };
            }
          } catch (error) {
            warn(
              `model '${current.model}' in ${t.file} is not available (${(error as Error).message}); running with ${agent.state.provider}/${agent.state.model.id}`,
            );
          }
        }
      }

      try {
        const prompt = await expand(t, current, args, agent, warn);
        if (next) scope = next;
        return { prompt };
      } catch (error) {
        if (next) {
          scope = next;
          end();
        }
        throw error;
      }
    };

    /** The body with its arguments, `!` outputs and `@file` attachments. */
    const expand = async (
      t: PromptTemplate & { from: TemplateDir },
      current: PromptTemplate,
      args: string,
      agent: Agent | undefined,
      warn: (m: string) => void,
    ) => {
      const text = expandTemplate(expandVars(current.body, t.from.vars), args);
      const outside = (abs: string) => {
        const rel = relative(realPath(projectRoot(ctx.cwd)), realPath(abs));
        return rel.startsWith("..") || isAbsolute(rel)
          ? `it is outside the project, and ${t.file} is an untrusted project's command`
          : undefined;
      };
      const attachments = collectAttachments(
        text,
        ctx.cwd,
        agent?.state.model,
        warn,
        t.from.trusted ? undefined : outside,
      );

      let body = text;
      if (shellCommands(text).length) {
        body = await expandShellCommands(text, async (command) => {
          if (!t.from.trusted) {
            warn(`!\`${command}\` not run: ${t.file} is a project file and this project is not trusted (coil trust)`);
            return `[not run: !\`${command}\`: commands in an untrusted project's templates do not run]`;
          }
          if (!agent) return `[not run: !\`${command}\`: no agent]`;
          const result = await agent.runTool({
            id: `template-${t.name}-${Date.now()}-${++calls}`,
            name: "bash",
            arguments: { command },
          });
          const out = resultText(result);
          return result.isError ? `[!\`${command}\` failed: ${out || "no output"}]` : out;
        });
      }
      return attachmentsPrompt(body, attachments);
    };

    const command = (t: PromptTemplate & { from: TemplateDir }): SlashCommand => ({
      name: t.name,
      description: t.description,
      argumentHint: t.argumentHint,
      run: (args, agent) => runTemplate(t, args, agent),
    });
    for (const t of templates) {
      try {
        ctx.commands.register(command(t));
      } catch (error) {
        ctx.log.warn(`prompt template ${t.file} not loaded: ${(error as Error).message}`);
      }
    }
    // Claude Code names a subfolder's command after its folder (`/tools:api-scaffold`) and rejects the bare
    // `/api-scaffold`; coil keeps the bare name only to say which command was meant, when nothing else has it.
    const bare = new Map<string, string[]>();
    for (const t of templates) {
      if (!t.folder || t.from.namespace) continue;
      const plain = t.name.slice(t.folder.length + 1);
      if (byName.has(plain) || RESERVED.has(plain) || plain.startsWith("skill:")) continue;
      bare.set(plain, [...(bare.get(plain) ?? []), t.name]);
    }
    for (const [plain, names] of bare) {
      const meant = names.sort().map((n) => `/${n}`);
      const answer = `Unknown command /${plain}. Did you mean ${meant.join(" or ")}? (A command in a subfolder of .claude/commands is named after its folder, as in Claude Code.)`;
      try {
        ctx.commands.register({
          name: plain,
          description: `not a command: see ${meant.join(", ")}`,
          run: () => answer,
        });
      } catch {
        // another plugin's command has the name: it is a command after all
      }
    }
    // Places added at run time (a Pi extension's resources_discover): read then, after every other place, their
    // templates registered late (replaced at each call). A name another plugin's command has is a problem.
    const added = new Map<string, { dirs: TemplateDir[]; templates: (PromptTemplate & { from: TemplateDir })[] }>();
    const addedDirs = () => [...added.values()].flatMap((a) => a.dirs);
    /** The names of the commands addPlaces registered (late): ours to replace, not another's. */
    let synced = new Set<string>();
    const service: PromptTemplatesService = {
      list: () => [...templates, ...[...added.values()].flatMap((a) => a.templates)],
      problems: () => problems,
      dirs: () =>
        [...dirs, ...addedDirs()].map((d) => ({
          ...d,
          exists: existsSync(d.dir),
          loaded: service.list().filter((t) => (t as { from?: TemplateDir }).from === d).length,
        })),
      addPlaces(by, paths) {
        for (const t of added.get(by)?.templates ?? []) byName.delete(t.name);
        const place = (path: string): TemplateDir => ({ ...placeOf(path), source: by, trusted: true });
        const entry = { dirs: paths.map(place), templates: [] as (PromptTemplate & { from: TemplateDir })[] };
        added.set(by, entry);
        const before = problems.length;
        const read: (PromptTemplate & { from: TemplateDir })[] = [];
        for (const from of entry.dirs) readPlace(from, read);
        for (const t of read) {
          if (ctx.commands.get(t.name) && !synced.has(t.name)) {
            byName.delete(t.name);
            problems.push({ file: t.file, reason: `/${t.name} is already a command of coil or another plugin` });
          } else entry.templates.push(t);
        }
        for (const p of problems.slice(before)) ctx.log.warn(`prompt template ${p.file} not loaded: ${p.reason}`);
        const late = [...added.values()].flatMap((a) => a.templates);
        ctx.commands.sync(late.map(command));
        synced = new Set(late.map((t) => t.name));
      },
    };
    ctx.services.provide("prompt-templates", service);
    addDoctorSection(ctx, {
      title: "prompt templates",
      report: () =>
        [
          `${service.list().length} loaded: ${
            service
              .list()
              .map((t) => `/${t.name}`)
              .join(" ") || "(none)"
          }`,
          "searched, first name wins:",
          ...service.dirs().map((d) => `  ${d.dir}  [${d.source}]  ${d.exists ? `${d.loaded} template(s)` : "(none)"}`),
          ...problems.map((p) => `not loaded: ${p.file}: ${p.reason}`),
          ...notes.map((n) => `note: ${n}`),
        ].join("\n"),
    });
    ctx.commands.register({
      name: "templates",
      description: "list the prompt templates",
      run: () =>
        [
          ...service
            .list()
            .map((t) => `/${t.name}${t.argumentHint ? ` ${t.argumentHint}` : ""}  ${t.description}  [${t.source}]`),
          ...notes.map((n) => `note: ${n}`),
          ...problems.map((p) => `not loaded: ${p.file}: ${p.reason}`),
        ].join("\n") || "no prompt templates found",
    });
  },
});
