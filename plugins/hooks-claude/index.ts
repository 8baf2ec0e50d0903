/**
 * hooks-claude: runs hook scripts written for Claude Code at the matching coil hooks. Definitions come
 * from ~/.claude/settings.json, the project's .claude/settings.json and .claude/settings.local.json
 * (only when the project is trusted), this plugin's `hooks` option and the hook files in its `sources`
 * option (a Claude Code plugin's hooks/hooks.json, with CLAUDE_PLUGIN_ROOT), all in Claude Code's shape.
 * It provides the `claude-hooks` service (api.ts): the permission gate's PermissionRequest and Notification.
 * See docs/hooks.md for the event mapping and how decisions are honoured.
 */
import { Type } from "typebox";
import { definePlugin } from "../../api/index.js";
import { addDoctorSection } from "../../lib/doctor.js";
import type { ClaudeHooksService } from "./api.js";
import type { ClaudeHooks } from "./hooks.js";
import { loadHooks } from "./load.js";
import { EVENTS, type HookDef, type HookEvent, type SkippedHook } from "./settings.js";

export { EVENTS, UNSUPPORTED_EVENTS, matches, parseHooks, type HookEvent } from "./settings.js";

/** `coil doctor`'s section: the files hooks come from, each event's hooks, and the hooks not run with why. */
function hooksReport(defs: readonly HookDef[], skipped: readonly SkippedHook[], files: readonly string[]): string {
  const lines = files.length ? [`read: ${[...new Set(files)].join(", ")}`] : [];
  for (const event of EVENTS) {
    const of = defs.filter((d) => d.event === event);
    if (!of.length) continue;
    const shown = of.map((d) => {
      const how = [
        d.type === "prompt" ? "prompt" : "",
        d.if ? `if ${d.if}` : "",
        d.async ? "async" : d.asyncRewake ? "asyncRewake" : "",
        d.once ? "once" : "",
        `${d.timeoutMs / 1000} s`,
      ].filter(Boolean);
      return `${d.matcher && d.matcher !== "*" ? `${d.matcher}: ` : ""}${d.command.length > 60 ? `${d.command.slice(0, 57)}...` : d.command} (${how.join(", ")})`;
    });
    lines.push(`${event}: ${shown.join("; ")}`);
  }
  for (const s of skipped) lines.push(`not run: ${s.event} ${s.what} (${s.source}): ${s.why}`);
  return lines.join("\n");
}

const Handler = Type.Object(
  {
    type: Type.String({ default: "command" }),
    /** `command` hooks. */
    command: Type.Optional(Type.String()),
    /** `prompt` hooks: the text sent to the model (`$ARGUMENTS` is the hook's input). */
    prompt: Type.Optional(Type.String()),
    /** Seconds. */
    timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    /** A permission rule the tool call must match (`Bash(git commit:*)`). */
    if: Type.Optional(Type.String()),
    async: Type.Optional(Type.Boolean()),
    asyncRewake: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);
const Matcher = Type.Object(
  { matcher: Type.Optional(Type.String()), hooks: Type.Array(Handler) },
  { additionalProperties: true },
);
const HooksShape = Type.Record(Type.String(), Type.Array(Matcher));

export const HooksOptions = Type.Object({
  /** Read ~/.claude/settings.json. */
  user: Type.Boolean({ default: true }),
  /** Project hooks (.claude/settings.json, .claude/settings.local.json): `trusted` loads them only when the project is trusted (coil trust). */
  project: Type.Union([Type.Boolean(), Type.Literal("trusted")], { default: "trusted" }),
  /** Hooks in Claude Code's `"hooks"` shape, e.g. `{ PreToolUse: [{ matcher: Bash, hooks: [{ type: command, command: ... }] }] }`. */
  hooks: Type.Optional(HooksShape),
  /** Default timeout per command hook, in seconds (Claude Code's: 600; a prompt hook's is 30; a hook's own `timeout` wins). */
  timeout: Type.Number({ exclusiveMinimum: 0, default: 600 }),
  /** Most times Stop hooks may keep one run going (a guard against a hook that never lets go). */
  maxStopContinuations: Type.Integer({ minimum: 0, default: 5 }),
  /** Seconds without input after a run (with a UI waiting) before Notification hooks get `idle_prompt`; 0: never. */
  idleNotification: Type.Number({ minimum: 0, default: 60 }),
  /**
   * More hook files in Claude Code's shape (`{ "hooks": { ... } }`, e.g. a Claude Code plugin's hooks/hooks.json),
   * each run with its own environment: `root` sets CLAUDE_PLUGIN_ROOT, `env` adds variables.
   */
  sources: Type.Array(
    Type.Object({
      file: Type.String(),
      root: Type.Optional(Type.String()),
      env: Type.Optional(Type.Record(Type.String(), Type.String())),
    }),
    { default: [] },
  ),
});

export default definePlugin({
  id: "hooks-claude",
  description: "Run Claude Code hook scripts (.claude/settings.json) at coil's hooks",
  options: HooksOptions,
  setup(ctx) {
    const { defs, skipped, files } = loadHooks(ctx);
    // `coil doctor`: where the hooks come from, what runs at each event, and what is not run (with why).
    if (defs.length || skipped.length)
      addDoctorSection(ctx, { title: "Claude Code hooks", report: () => hooksReport(defs, skipped, files) });
    if (!defs.length) return;
    // The run-time side (hooks.ts and what it uses) is imported only now that some hook is configured, while
    // the other plugins set up; every hook below waits for it (it is there before the run starts).
    let hooks: ClaudeHooks | undefined;
    const loading = import("./hooks.js").then((m) => {
      hooks = new m.ClaudeHooks(ctx, defs);
      return hooks;
    });
    const ready = () => hooks ?? loading;
    const has = (...events: HookEvent[]) => defs.some((d) => events.includes(d.event));
    const service: ClaudeHooksService = {
      notify: (message, type) => void Promise.resolve(ready()).then((h) => h.notify(message, type)),
      permissionRequest: async (info, why) => (await ready()).permissionRequest(info, why),
      shellEnv: () => hooks?.shellEnv(),
    };
    ctx.services.provide("claude-hooks", service);
    ctx.onStart(async (agent) => (await ready()).start(agent));
    ctx.onStop(() => hooks?.stop());
    ctx.on("agent_start", () => hooks?.runStarting());
    ctx.on("agent_end", () => hooks?.runEnded());
    ctx.on("compaction", () => hooks?.compacted());
    ctx.tap("before_request", async (request, turn) => (await ready()).beforeRequest(request, turn));
    if (has("PreToolUse")) {
      // Claude Code's PreToolUse both rewrites (`updatedInput`) and decides: the rewrite step, then the gate.
      ctx.tap("tool_call", async (info) => (await ready()).preToolUse(info), { stage: "GUARD", step: "rewrite" });
      ctx.tap("tool_call", async (info) => (await ready()).preToolUseGate(info), { stage: "GUARD" });
    }
    if (has("PostToolUse", "PostToolUseFailure"))
      ctx.tap("tool_result", async (result, info) => (await ready()).postToolUse(result, info), { stage: "LATE" });
    ctx.tap("should_stop", async (query) => (await ready()).shouldStop(query));
    // SubagentStart / SubagentStop: around each `task` call of the subagents plugin (matchers match the agent type).
    if (has("SubagentStart"))
      ctx.tap("tool_call", async (info) => (await ready()).subagentStart(info), { stage: "FALLBACK", tools: ["task"] });
    if (has("SubagentStop"))
      ctx.tap("tool_result", async (result, info) => (await ready()).subagentStop(result, info), { tools: ["task"] });
    if (has("PreCompact")) ctx.tap("compact", async (req) => (await ready()).preCompact(req), { stage: "EARLY" });
    // `/compact` is the user at work, not idle: no `idle_prompt` while it runs.
    else if (has("Notification")) ctx.tap("compact", async () => (await ready()).userActive(), { stage: "EARLY" });
  },
});
