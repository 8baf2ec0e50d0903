/**
 * permission-gate: decides, before each tool call runs, whether it may. Rules from the preset are
 * evaluated deny → ask → allow (first match wins within a list), then the mode's default. Bash command
 * lines are split into their simple commands and every one must pass. "ask" goes through the `ui`
 * service; without one (print and JSON modes) it means deny, and the model is told why. Decisions are
 * recorded in the session as `custom` entries of type `permission-gate`. Paths are judged as typed and
 * resolved (symlinks followed). grep, find and ls results that deny or ask rules cover are withheld.
 * See docs/safety.md.
 */
import { definePlugin, Stage, Type, type Static } from "../../api/index.js";
import { claudeEnv, claudeModel } from "../../lib/claude-settings.js";
import { addDoctorSection } from "../../lib/doctor.js";
import { Gate } from "./gate.js";
import type {} from "./api.js"; // types the `permissions` service it provides
import { READ_ONLY_COMMANDS } from "./read-only-command.js";
import { MODES } from "./policy.js";

export type { PermissionsService } from "./api.js";
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
  readOnlyTools: Type.Array(Type.String(), {
    default: ["read", "grep", "find", "ls", "lsp", "write_plan", "task", "tool_search"],
  }),
  /** Programs a bash command may start with in plan mode. */
  readOnlyCommands: Type.Array(Type.String(), { default: READ_ONLY_COMMANDS }),
  /**
   * Folders that count as the project besides the working directory and its git root (relative to the
   * preset file, `~` allowed): `accept-edits` edits and `project` mode writes there without asking.
   */
  directories: Type.Array(Type.String(), { default: [] }),
  /**
   * Apply Claude Code's `permissions` from ~/.claude/settings.json and the project's .claude/settings.json and
   * .claude/settings.local.json (deny and ask always; allow, defaultMode and additionalDirectories of the
   * project's files only when it is trusted).
   */
  claudeSettings: Type.Boolean({ default: true }),
});
export type GateOptions = Static<typeof GateOptions>;

/** `coil doctor`: which variables of the settings files' `env` were set, which the environment overrode, and the model. */
function claudeEnvReport(cwd: string, trusted: boolean): string {
  const { vars, skipped } = claudeEnv(cwd, trusted);
  const lines = Object.entries(vars).map(([k, { value, file }]) =>
    process.env[k] === value
      ? `env ${k}: set from ${file}`
      : `env ${k}: not used: coil's environment sets it (${file})`,
  );
  for (const f of skipped) lines.push(`env of ${f}: not applied: the project is not trusted (coil trust)`);
  const model = claudeModel(cwd);
  lines.push(
    model
      ? `model: ${model.model} from ${model.source}, used when no preset, --model or models.yaml default names one${model.note ? ` (${model.note})` : ""}`
      : "model: none (ANTHROPIC_MODEL and the settings' model are unset)",
  );
  return lines.join("\n");
}

export default definePlugin({
  id: "permission-gate",
  description: "Allow, ask or deny each tool call by rules and a mode",
  options: GateOptions,
  setup(ctx) {
    const gate = new Gate(ctx);
    ctx.services.provide("permissions", {
      readDenied: (path) => gate.readDenied(path),
      inProject: (path) => gate.inProject(path),
    });
    ctx.flags.register({
      name: "permission-mode",
      description: `permission mode for this run: ${MODES.join(", ")}`,
      type: "string",
      valueName: "mode",
    });
    ctx.onStart(() => {
      gate.applyFlag();
      gate.announce();
    });
    addDoctorSection(ctx, { title: "permissions", report: () => gate.doctor() });
    addDoctorSection(ctx, {
      title: "Claude Code env and model",
      report: () => claudeEnvReport(ctx.cwd, ctx.projectTrusted),
    });
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
