/**
 * tools-coding: the default tool set — read, bash, edit, write.
 * Files and processes go through the `operations` service when a plugin provides one (a sandbox or a
 * remote backend), looked up at each call; otherwise through the local file system and shell.
 */
import { definePlugin, type ToolDefinition, type ToolResultMessage } from "../../api/index.js";
import { createBashTool } from "./bash.js";
import { ConfinementNotice, confinementReport } from "./confinement.js";
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
    // `coil doctor` (the doctor plugin) says how the commands bash runs are confined.
    ctx.services.provide("confinement", {
      report: (env) => confinementReport(ctx.services.get("operations"), ctx.options.tools.includes("bash"), env),
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
