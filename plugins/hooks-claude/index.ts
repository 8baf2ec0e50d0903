/**
 * hooks-claude: runs hook scripts written for Claude Code at the matching coil hooks. Definitions come
 * from ~/.claude/settings.json, the project's .claude/settings.json and .claude/settings.local.json
 * (only when the project is trusted), and this plugin's `hooks` option, all in Claude Code's shape.
 * See docs/hooks.md for the event mapping and how decisions are honoured.
 */
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { Type } from "typebox";
import { definePlugin, messageOf, textOf, type Agent, type AgentMessage, type StopVerdict, type SystemBlock, type ToolCallInfo, type ToolResult } from "../../kernel/index.js";
import type { SessionService } from "../session-jsonl/api.js";
import { claudeToolInput, claudeToolName, claudeToolResponse } from "./mapping.js";
import { runHook, type HookOutcome } from "./run.js";

export const EVENTS = ["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart", "SessionEnd", "PreCompact", "SubagentStart", "SubagentStop"] as const;
export type HookEvent = (typeof EVENTS)[number];

const Handler = Type.Object({
  type: Type.String({ default: "command" }),
  command: Type.String(),
  /** Seconds. */
  timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
}, { additionalProperties: true });
const Matcher = Type.Object({ matcher: Type.Optional(Type.String()), hooks: Type.Array(Handler) }, { additionalProperties: true });
const HooksShape = Type.Record(Type.String(), Type.Array(Matcher));

export const HooksOptions = Type.Object({
  /** Read ~/.claude/settings.json. */
  user: Type.Boolean({ default: true }),
  /** Project hooks (.claude/settings.json, .claude/settings.local.json): `trusted` loads them only when the project is trusted (coil trust). */
  project: Type.Union([Type.Boolean(), Type.Literal("trusted")], { default: "trusted" }),
  /** Hooks in Claude Code's `"hooks"` shape, e.g. `{ PreToolUse: [{ matcher: Bash, hooks: [{ type: command, command: ... }] }] }`. */
  hooks: Type.Optional(HooksShape),
  /** Default timeout per hook, in seconds (Claude Code's default is 60). */
  timeout: Type.Number({ exclusiveMinimum: 0, default: 60 }),
  /** Most times Stop hooks may keep one run going (a guard against a hook that never lets go). */
  maxStopContinuations: Type.Integer({ minimum: 0, default: 5 }),
});

/**
 * "No opinion" for tool_call and should_stop taps. The kernel's tap wrapper reads `.block` / `.stop` of the
 * returned value without checking for undefined (kernel/plugin.ts), so an undefined answer would be turned
 * into a failure (fail-closed). These values are the documented "no opinion" shapes it maps to undefined.
 */
const PASS = { block: false } as unknown as undefined;
const NO_VERDICT: StopVerdict = { stop: false, followUp: [] };

interface HookDef { event: HookEvent; matcher?: string; command: string; timeoutMs: number; source: string }

/** Hook definitions from a settings-shaped object; unknown events are reported, non-command handlers skipped. */
export function parseHooks(hooks: unknown, source: string, defaultTimeout: number, warn: (m: string) => void): HookDef[] {
  if (!hooks || typeof hooks !== "object") return [];
  const out: HookDef[] = [];
  for (const [event, groups] of Object.entries(hooks as Record<string, unknown>)) {
    if (!EVENTS.includes(event as HookEvent)) {
      warn(`${source}: hook event '${event}' is not supported by coil (supported: ${EVENTS.join(", ")}); skipped`);
      continue;
    }
    for (const group of Array.isArray(groups) ? groups : []) {
      for (const h of Array.isArray(group?.hooks) ? group.hooks : []) {
        if ((h?.type ?? "command") !== "command" || typeof h?.command !== "string") {
          warn(`${source}: ${event} hook of type '${h?.type}' is not supported (only "command"); skipped`);
          continue;
        }
        const seconds = typeof h.timeout === "number" && h.timeout > 0 ? h.timeout : defaultTimeout;
        out.push({ event: event as HookEvent, matcher: typeof group.matcher === "string" ? group.matcher : undefined, command: h.command, timeoutMs: seconds * 1000, source });
      }
    }
  }
  return out;
}

/** Claude Code matchers: empty or `*` matches everything; otherwise a regular expression over the whole name. */
export function matches(matcher: string | undefined, ...names: string[]): boolean {
  if (!matcher || matcher === "*") return true;
  try {
    const re = new RegExp(`^(?:${matcher})$`);
    return names.some((n) => re.test(n));
  } catch {
    return names.includes(matcher);
  }
}

function readSettings(file: string, warn: (m: string) => void): unknown {
  if (!existsSync(file)) return undefined;
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as { hooks?: unknown }).hooks;
  } catch (error) {
    warn(`cannot read hooks from ${file}: ${messageOf(error)}; its hooks are skipped`);
    return undefined;
  }
}

/** The part of the session service hooks use (transcript path and id). */

export default definePlugin({
  id: "hooks-claude",
  description: "Run Claude Code hook scripts (.claude/settings.json) at coil's hooks",
  options: HooksOptions,
  setup(ctx) {
    const o = ctx.options;
    const env = process.env;
    const home = env.HOME || homedir();
    const warn = (m: string) => ctx.log.warn(m);
    const defs: HookDef[] = [];
    if (o.user) {
      const file = join(home, ".claude", "settings.json");
      defs.push(...parseHooks(readSettings(file, warn), file, o.timeout, warn));
    }
    const projectFiles = [join(ctx.cwd, ".claude", "settings.json"), join(ctx.cwd, ".claude", "settings.local.json")].filter((f) => f !== join(home, ".claude", "settings.json"));
    const loadProject = o.project === true || (o.project === "trusted" && ctx.projectTrusted);
    if (loadProject) for (const file of projectFiles) defs.push(...parseHooks(readSettings(file, warn), file, o.timeout, warn));
    else if (o.project === "trusted" && projectFiles.some((f) => readSettings(f, () => undefined))) {
      ctx.onStart(() => warn(`project hooks in ${join(ctx.cwd, ".claude")} are not run: the project is not trusted (coil trust)`));
    }
    defs.push(...parseHooks(o.hooks, `the ${ctx.id} options`, o.timeout, warn));
    // Claude Code runs an identical command once per event even if several groups list it.
    const unique = defs.filter((d, i) => defs.findIndex((e) => e.event === d.event && e.command === d.command && e.matcher === d.matcher) === i);
    const of = (event: HookEvent) => unique.filter((d) => d.event === event);
    if (!unique.length) return;

    const fallbackId = randomUUID();
    let agent: Agent | undefined;
    let stopRequested: string | undefined;
    let stopContinuations = 0;
    let sessionContext: string[] = [];
    let runContext: string[] = [];
    const session = () => ctx.services.get("session");

    /** Run the matching hooks of an event in parallel (as Claude Code does). */
    const fire = async (event: HookEvent, fields: Record<string, unknown>, names: string[] = [], signal?: AbortSignal): Promise<HookOutcome[]> => {
      const hooks = of(event).filter((d) => matches(d.matcher, ...names));
      if (!hooks.length) return [];
      const s = session();
      const input = { session_id: s?.id ?? fallbackId, transcript_path: s?.file ?? "", cwd: ctx.cwd, permission_mode: "default", hook_event_name: event, ...fields };
      const hookEnv = { ...env, CLAUDE_PROJECT_DIR: ctx.cwd, COIL_PROJECT_DIR: ctx.cwd };
      const outcomes = await Promise.all(hooks.map((h) => runHook(h.command, input, { cwd: ctx.cwd, env: hookEnv, timeoutMs: h.timeoutMs, signal })));
      for (const out of outcomes) {
        if (out.error && out.error !== "aborted") warn(`${event} hook \`${out.command}\` ${out.error}; ignored`);
        else if (out.code !== undefined && out.code !== 0 && out.code !== 2) warn(`${event} hook \`${out.command}\` failed (exit ${out.code})${out.stderr.trim() ? `: ${out.stderr.trim()}` : ""}; ignored`);
        if (out.json?.systemMessage) warn(`${event} hook: ${out.json.systemMessage}`);
        if (out.json?.continue === false) stopRequested = String(out.json.stopReason ?? `a ${event} hook stopped the agent`);
      }
      return outcomes;
    };
    const contextOf = (out: HookOutcome): string | undefined => {
      const extra = out.json?.hookSpecificOutput?.additionalContext;
      if (typeof extra === "string" && extra) return extra;
      return out.code === 0 && !out.json && out.stdout.trim() ? out.stdout.trim() : undefined;
    };

    ctx.onStart(async (a) => {
      agent = a;
      const outs = await fire("SessionStart", { source: "startup" }, ["startup"]);
      sessionContext = outs.map(contextOf).filter((t): t is string => Boolean(t));
    });
    ctx.onStop(async () => {
      await fire("SessionEnd", { reason: "other" }, ["other"]);
    });
    ctx.on("agent_end", () => {
      runContext = [];
      stopRequested = undefined;
      stopContinuations = 0;
    });

    // UserPromptSubmit: before the first request of a run. Context from hooks goes into the system prompt.
    ctx.tap("before_request", async (request, turn) => {
      if (turn.turn === 0 && turn.attempt === 0 && of("UserPromptSubmit").length) {
        const last = [...request.messages].reverse().find((m: AgentMessage) => m.role === "user");
        const outs = await fire("UserPromptSubmit", { prompt: textOf(last) }, [], turn.signal);
        const blocked = outs.find((x) => x.code === 2 || x.json?.decision === "block");
        if (blocked) {
          const reason = blocked.code === 2 ? blocked.stderr.trim() : String(blocked.json?.reason ?? "");
          warn(`UserPromptSubmit hook blocked the prompt${reason ? `: ${reason}` : ""}`);
          agent?.abort();
          return undefined;
        }
        runContext = outs.map(contextOf).filter((t): t is string => Boolean(t));
      }
      const extra = [...sessionContext, ...runContext];
      if (!extra.length) return undefined;
      const block: SystemBlock = { id: "hooks-claude", text: `Context from hooks:\n${extra.join("\n\n")}` };
      return { ...request, system: [...request.system, block] };
    });

    // PreToolUse: a gate. Exit 2 blocks with stderr as the reason; JSON permission decisions are honoured.
    if (of("PreToolUse").length) {
      ctx.tap("tool_call", async (info: ToolCallInfo) => {
        if (stopRequested) return { block: true, reason: `not run: ${stopRequested}` };
        const name = info.call.name;
        const outs = await fire("PreToolUse", { tool_name: claudeToolName(name), tool_input: claudeToolInput(name, info.args, ctx.cwd), tool_use_id: info.call.id }, [claudeToolName(name), name], info.signal);
        for (const out of outs) {
          const specific = out.json?.hookSpecificOutput ?? {};
          const decision = specific.permissionDecision ?? (out.json?.decision === "block" ? "deny" : out.json?.decision === "approve" ? "allow" : undefined);
          const reason = String(specific.permissionDecisionReason ?? out.json?.reason ?? "");
          if (out.code === 2) return { block: true, reason: out.stderr.trim() || `blocked by a PreToolUse hook (${out.command})` };
          if (out.json?.continue === false) return { block: true, reason: `not run: ${stopRequested}` };
          if (decision === "deny") return { block: true, reason: reason || `denied by a PreToolUse hook (${out.command})` };
          if (decision === "ask") {
            const ui = ctx.services.get("ui");
            const ok = ui ? await ui.confirm(`Run ${name}?`, reason || `a hook asks before ${claudeToolName(name)} runs`, info.signal) : false;
            if (!ok) return { block: true, reason: `${reason || "a PreToolUse hook asked for approval"}${ui ? " (the user declined)" : " (no one to ask in this mode: denied)"}` };
          }
          if (specific.updatedInput) warn(`PreToolUse hook \`${out.command}\` returned updatedInput; coil does not rewrite tool arguments from hooks (ignored)`);
        }
        return PASS;
      }, { stage: "GUARD" });
    }

    // PostToolUse: stderr (exit 2), a `decision: "block"` reason and additionalContext are added to the result the model sees.
    if (of("PostToolUse").length) {
      ctx.tap("tool_result", async (result: ToolResult, info: ToolCallInfo) => {
        if (result.isError) return undefined; // Claude Code runs PostToolUse after a successful call only
        const name = info.call.name;
        const input = claudeToolInput(name, info.args, ctx.cwd);
        const outs = await fire("PostToolUse", { tool_name: claudeToolName(name), tool_input: input, tool_response: claudeToolResponse(name, input, result), tool_use_id: info.call.id }, [claudeToolName(name), name], info.signal);
        const notes = outs.flatMap((out) => {
          const parts: string[] = [];
          if (out.code === 2 && out.stderr.trim()) parts.push(out.stderr.trim());
          if (out.json?.decision === "block" && out.json.reason) parts.push(String(out.json.reason));
          const extra = out.json?.hookSpecificOutput?.additionalContext;
          if (typeof extra === "string" && extra) parts.push(extra);
          return parts;
        });
        const blocked = outs.some((out) => out.code === 2 || out.json?.decision === "block");
        if (!notes.length) return undefined;
        const text = `\n\n[${blocked ? "PostToolUse hook feedback" : "PostToolUse hook context"}]\n${notes.join("\n")}`;
        return { ...result, content: [...result.content, { type: "text", text }], details: result.details };
      }, { stage: "LATE" });
    }

    // Stop: when the agent would stop, a hook may keep it going (exit 2 or decision "block", with a reason).
    ctx.tap("should_stop", async (query) => {
      if (stopRequested) return { stop: true, reason: stopRequested };
      const finished = query.turn.toolResults.length === 0 && query.steering === 0;
      if (!finished || !of("Stop").length) return NO_VERDICT;
      const outs = await fire("Stop", { stop_hook_active: stopContinuations > 0 });
      if (stopRequested) return { stop: true, reason: stopRequested };
      const keep = outs.find((x) => x.code === 2 || x.json?.decision === "block");
      if (!keep) return NO_VERDICT;
      if (stopContinuations >= o.maxStopContinuations) {
        warn(`Stop hook \`${keep.command}\` asked to continue ${stopContinuations} times in this run; stopping (maxStopContinuations)`);
        return NO_VERDICT;
      }
      stopContinuations++;
      const reason = (keep.code === 2 ? keep.stderr.trim() : String(keep.json?.reason ?? "")) || "A Stop hook asked you to continue.";
      return { stop: false, reason: `Stop hook: ${reason}`, followUp: [{ role: "user", content: reason, timestamp: Date.now() }] };
    });

    // SubagentStart / SubagentStop: around each `task` call of the subagents plugin (matchers match the agent type).
    // Observe only: the child starts after every gate allowed the call, and has finished when SubagentStop runs.
    if (of("SubagentStart").length) {
      ctx.tap("tool_call", async (info: ToolCallInfo) => {
        const type = String(info.args.agent || "general");
        await fire("SubagentStart", { agent_id: info.call.id, agent_type: type }, [type], info.signal);
        return PASS;
      }, { stage: "FALLBACK", tools: ["task"] });
    }
    if (of("SubagentStop").length) {
      ctx.tap("tool_result", async (result: ToolResult, info: ToolCallInfo) => {
        const type = String(info.args.agent || "general");
        const child = (result.details as { subagent?: { session?: { file?: string } } } | undefined)?.subagent;
        await fire("SubagentStop", { agent_id: info.call.id, agent_type: type, agent_transcript_path: child?.session?.file ?? "", stop_hook_active: false }, [type], info.signal);
        return undefined;
      }, { tools: ["task"] });
    }

    // PreCompact: observe only; compaction strategies run after.
    if (of("PreCompact").length) {
      ctx.tap("compact", async (req) => {
        const trigger = req.reason === "manual" ? "manual" : "auto";
        await fire("PreCompact", { trigger, custom_instructions: req.instructions ?? "" }, [trigger], req.signal);
        return undefined;
      }, { stage: "EARLY" });
    }
  },
});
