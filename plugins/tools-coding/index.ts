/**
 * tools-coding: the default tool set — read, bash, edit, write.
 * Files and processes go through the `operations` service when a plugin provides one (a sandbox or a
 * remote backend), looked up at each call; otherwise through the local file system and shell.
 */
import { definePlugin, type ToolDefinition, type ToolResultMessage } from "../../api/index.js";
import { createBashTool } from "./bash.js";
import { ConfinementNotice, confinementReport } from "./confinement.js";
import { doctorService, formatSections, reportSections } from "../../lib/doctor.js";
import { coilHome, coilVersion } from "../../lib/paths.js";
import { gitRoot, projectRoot } from "../../lib/project.js";
import { createEditTool } from "./edit.js";
import { resolveOperations } from "./local-operations.js";
import { CodingOptions, type ToolEnv } from "./options.js";
import { createReadTool } from "./read.js";
import { createWriteTool } from "./write.js";
import type {} from "../hooks-claude/api.js"; // types the `claude-hooks` service (CLAUDE_ENV_FILE variables for bash)

export { CodingOptions } from "./options.js";
export * from "./limits.js";
export type { Operations, ExecOptions, ExecResult, FileInfo, DirEntry } from "./local-operations.js";

const IMAGE_NOT_SUPPORTED = "[The image is not shown: the current model does not accept image input.]";

export default definePlugin({
  id: "tools-coding",
  description: "Coding tools: read, bash, edit, write",
  options: CodingOptions,
  setup(ctx) {
    const notice = new ConfinementNotice(ctx.log);
    const env: ToolEnv = {
      cwd: ctx.cwd,
      options: ctx.options,
      ops: () => resolveOperations(ctx.services.get("operations")),
      unconfined: () => {
        if (typeof ctx.services.get("operations")?.exec === "function") return false;
        notice.unconfined();
        return true;
      },
      shellEnv: () => ctx.services.get("claude-hooks")?.shellEnv?.(),
    };
    const factories: Record<(typeof ctx.options.tools)[number], (env: ToolEnv) => ToolDefinition> = {
      read: createReadTool,
      bash: createBashTool,
      edit: createEditTool,
      write: createWriteTool,
    };
    for (const name of ctx.options.tools) ctx.tools.register(factories[name](env));
    ctx.onStart((_agent, io, info) => notice.started(io, info));
    // Other plugins add sections to `coil doctor` (skills, context files): lib/doctor.ts.
    const sections = doctorService(ctx);
    ctx.subcommands.register({
      name: "doctor",
      description:
        "check the setup: versions, project trust, how commands are confined, providers and keys, MCP servers, skills, context files, templates",
      options: [{ name: "json", description: "print JSON: versions, project, confinement and each section's report" }],
      run: async (_args, io, options) => {
        const root = projectRoot(ctx.cwd);
        const git = Boolean(gitRoot(ctx.cwd));
        const confinement = await confinementReport(
          ctx.services.get("operations"),
          ctx.options.tools.includes("bash"),
          io.env,
        );
        const code = confinement.ok ? 0 : 1;
        if (options.json === true) {
          const report = {
            coil: coilVersion(),
            node: process.version,
            platform: `${process.platform} ${process.arch}`,
            home: coilHome(io.env),
            project: { root, git, trusted: ctx.projectTrusted },
            confinement,
            sections: await reportSections(sections.sections()),
          };
          io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
          return code;
        }
        io.stdout.write(
          `coil ${coilVersion()} (node ${process.version}, ${process.platform} ${process.arch}); $COIL_HOME ${coilHome(io.env)}\n`,
        );
        io.stdout.write(
          `project: ${root}${git ? " (git root)" : " (no git repository: the working directory)"}, ${ctx.projectTrusted ? "trusted: its .coil/ preset, hooks, .mcp.json servers, plugins and node_modules/.bin load" : "not trusted: its .coil/ preset, hooks, .mcp.json servers, plugins and node_modules/.bin do not load (coil trust)"}\n`,
        );
        io.stdout.write(`${confinement.report}\n`);
        io.stdout.write(await formatSections(sections.sections()));
        return code;
      },
    });

    if (ctx.options.tools.includes("read")) {
      // Models that declare they take no images get a note in place of the image read returned.
      ctx.tap("before_request", async (request) => {
        const input = request.model.input;
        if (!input || input.includes("image")) return undefined;
        let changed = false;
        const messages = request.messages.map((m) => {
          if (m.role !== "toolResult" || m.toolName !== "read" || !m.content.some((c) => c.type === "image")) return m;
          changed = true;
          const content = m.content.map((c) =>
            c.type === "image" ? { type: "text" as const, text: IMAGE_NOT_SUPPORTED } : c,
          );
          return { ...m, content } satisfies ToolResultMessage;
        });
        return changed ? { ...request, messages } : undefined;
      });
    }
  },
});
