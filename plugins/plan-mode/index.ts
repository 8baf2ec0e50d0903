/**
 * plan-mode: `/plan` and `--plan` switch to read-only tools (read, grep, find, ls, and bash limited to
 * read-only commands); the model explores and writes a plan with `write_plan` to `.coil/plans/<time>.md`.
 * The user approves it through the ui service (or `/plan approve`); then all tools come back and the plan
 * stays in the context as a system block, re-read from its file each request, so ticked checkboxes
 * (`- [x]`) show progress; `/plan status` prints it. The mode and the approved plan are kept in the session
 * (a `plan-mode` custom entry on each change), so `-c`, `--session`, `/resume` and `/reload` come back to
 * them. See docs/safety.md.
 */
import { definePlugin, Stage, Type, type Static } from "../../api/index.js";
import { READ_ONLY_COMMANDS } from "../../lib/shell/read-only-commands.js";
import { PlanMode } from "./planner.js";

export { PLAN_STATE_ENTRY, progress, type PlanState } from "./planner.js";

export { notReadOnly, READ_ONLY_COMMANDS } from "../../lib/shell/read-only-commands.js";

export const PlanOptions = Type.Object({
  /** Where plans are written, relative to the working directory. */
  dir: Type.String({ default: ".coil/plans" }),
  /** Tools available in plan mode besides `bash` (limited) and `write_plan`. */
  /** `task` is here because a child goes through the same gates: in plan mode it is read-only too. */
  readOnlyTools: Type.Array(Type.String(), { default: ["read", "grep", "find", "ls", "lsp", "task"] }),
  /** Programs a bash command may start with in plan mode. */
  readOnlyCommands: Type.Array(Type.String(), { default: READ_ONLY_COMMANDS }),
});
export type PlanOptions = Static<typeof PlanOptions>;

export default definePlugin({
  id: "plan-mode",
  description: "Plan mode: read-only exploration, a plan file, approval, then execution with progress",
  options: PlanOptions,
  setup(ctx) {
    const plan = new PlanMode(ctx);
    ctx.flags.register({
      name: "plan",
      description: "start in plan mode: read-only tools until you approve a plan",
      type: "boolean",
    });
    ctx.onStart(() => plan.start());
    ctx.onStop(() => plan.stop());
    ctx.tools.register({
      name: "write_plan",
      label: "Write plan",
      description: `Plan mode only: save your plan (Markdown, steps as "- [ ] ..." checkboxes) to ${ctx.options.dir}/ and ask the user to approve it. Calling it again replaces the plan. After approval all tools are available.`,
      parameters: Type.Object({ plan: Type.String({ minLength: 1, description: "The plan in Markdown" }) }),
      executionMode: "sequential",
      execute: (args, run) => plan.writePlan(args, run),
    });
    ctx.tap("before_request", (request) => plan.request(request));
    ctx.tap("tool_call", (info) => plan.gate(info), { stage: Stage.GUARD });
    ctx.tap("turn_end", () => plan.turnEnd());
    ctx.commands.register({
      name: "plan",
      description: "plan mode: `/plan [task]` turns it on, `/plan status`, `/plan approve [file]`, `/plan off`",
      argumentHint: "[task | status | approve [file] | off]",
      run: (args) => plan.command(args),
    });
  },
});
