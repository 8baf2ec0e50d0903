/**
 * permission-gate: decides, before each tool call runs, whether it may. Rules from the preset are
 * evaluated deny → ask → allow (first match wins within a list), then the mode's default. Bash command
 * lines are split into their simple commands and every one must pass. "ask" goes through the `ui`
 * service; without one (print and JSON modes) it means deny, and the model is told why. Decisions are
 * recorded in the session as `custom` entries of type `permission-gate`. Paths are judged as typed and
 * resolved (symlinks followed). grep, find and ls results that deny or ask rules cover are withheld.
 * See docs/safety.md.
 */
import { definePlugin, Stage, Type, type Static } from "../../kernel/index.js";
import { Gate } from "./gate.js";
import { READ_ONLY_COMMANDS } from "./read-only-command.js";
import { MODES } from "./policy.js";

export { splitCommand } from "./shell.js";
export { isReadOnlyCommand, READ_ONLY_COMMANDS } from "./read-only-command.js";
export { MODES, Policy, type Mode, type Verdict } from "./policy.js";
export { globToRegExp, parseRule, pathSubject, realPathOf, ruleMatches, subjectOf } from "./rules.js";

export const GateOptions = Type.Object({
  mode: Type.Union(
    MODES.map((m) => Type.Literal(m)),
    { default: "default" },
  ),
  allow: Type.Array(Type.String(), { default: [] }),
  ask: Type.Array(Type.String(), { default: [] }),
  deny: Type.Array(Type.String(), { default: [] }),
  /** Tools that only look (allowed in every mode unless a rule says otherwise). */
  readOnlyTools: Type.Array(Type.String(), { default: ["read", "grep", "find", "ls", "lsp", "write_plan", "task"] }),
  /** Programs a bash command may start with in plan mode. */
  readOnlyCommands: Type.Array(Type.String(), { default: READ_ONLY_COMMANDS }),
});
export type GateOptions = Static<typeof GateOptions>;

export default definePlugin({
  id: "permission-gate",
  description: "Allow, ask or deny each tool call by rules and a mode",
  options: GateOptions,
  setup(ctx) {
    const gate = new Gate(ctx);
    ctx.flags.register({
      name: "permission-mode",
      description: `permission mode for this run: ${MODES.join(", ")}`,
      type: "string",
      valueName: "mode",
    });
    ctx.onStart(() => gate.applyFlag());
    // Rules judge the final arguments (the gate step); PermissionRequest hooks may rewrite before (the rewrite step).
    ctx.tap("tool_call", (info) => gate.rewrite(info), { stage: Stage.FALLBACK, step: "rewrite" });
    ctx.tap("tool_call", (info) => gate.check(info), { stage: Stage.GUARD });
    ctx.tap("tool_result", (result, info) => gate.withhold(result, info), { stage: Stage.GUARD });
    ctx.commands.register({
      name: "permissions",
      description: "show the permission mode and rules; `/permissions mode <mode>` switches the mode",
      argumentHint: "[mode <default|accept-edits|plan|yolo>]",
      run: (args) => gate.command(args),
    });
  },
});
