/**
 * What the Claude Code hooks do at each coil hook: fire the matching scripts with Claude Code's input,
 * and turn their exit codes and JSON into blocks, verdicts and context. The plugin's setup only loads
 * the definitions and registers these methods at the hooks that have scripts.
 */
import { randomUUID } from "node:crypto";
import { homedir } from "node:os";
import { join } from "node:path";
import { projectRoot } from "../../lib/project.js";
import { textOf, type Agent, type AgentMessage, type CompactRequest, type ModelRequest, type PluginContext, type Static, type StopQuery, type StopVerdict, type SystemBlock, type ToolCallInfo, type ToolResult, type TurnInfo } from "../../kernel/index.js";
import type {} from "../session-jsonl/api.js"; // types the `session` service (transcript path and id)
import type { HooksOptions } from "./index.js";
import { claudeToolInput, claudeToolName, claudeToolResponse } from "./mapping.js";
import { runHook, type HookOutcome } from "./run.js";
import { matches, parseHooks, readSettings, type HookDef, type HookEvent } from "./settings.js";

type Ctx = PluginContext<Static<typeof HooksOptions>>;


/** The hook definitions from settings files and options, each identical command once per event. */
export function loadHooks(ctx: Ctx): HookDef[] {
  const o = ctx.options;
  const env = process.env;
  const home = env.HOME || homedir();
  const warn = (m: string) => ctx.log.warn(m);
  const defs: HookDef[] = [];
  if (o.user) {
    const file = join(home, ".claude", "settings.json");
    defs.push(...parseHooks(readSettings(file, warn), file, o.timeout, warn));
  }
  const root = projectRoot(ctx.cwd);
  const projectFiles = [join(root, ".claude", "settings.json"), join(root, ".claude", "settings.local.json")].filter((f) => f !== join(home, ".claude", "settings.json"));
  const loadProject = o.project === true || (o.project === "trusted" && ctx.projectTrusted);
  if (loadProject) for (const file of projectFiles) defs.push(...parseHooks(readSettings(file, warn), file, o.timeout, warn));
  else if (o.project === "trusted" && projectFiles.some((f) => readSettings(f, () => undefined))) {
    ctx.onStart(() => warn(`project hooks in ${join(root, ".claude")} are not run: the project is not trusted (coil trust)`));
  }
  defs.push(...parseHooks(o.hooks, `the ${ctx.id} options`, o.timeout, warn));
  // Claude Code runs an identical command once per event even if several groups list it.
  const unique = defs.filter((d, i) => defs.findIndex((e) => e.event === d.event && e.command === d.command && e.matcher === d.matcher) === i);
  return unique;
}

/** The run-time side of the hooks: the state they keep across a session and a run, and one method per coil hook. */
export class ClaudeHooks {
  private readonly fallbackId = randomUUID();
  private agent: Agent | undefined;
  private stopRequested: string | undefined;
  private stopContinuations = 0;
  private sessionContext: string[] = [];
  private runContext: string[] = [];

  constructor(
    private readonly ctx: Ctx,
    private readonly defs: readonly HookDef[],
  ) {}

  /** The definitions for one event. */
  of(event: HookEvent): HookDef[] {
    return this.defs.filter((d) => d.event === event);
  }

  private warn(m: string): void {
    this.ctx.log.warn(m);
  }

  /** Run the matching hooks of an event in parallel (as Claude Code does). */
  private async fire(event: HookEvent, fields: Record<string, unknown>, names: string[] = [], signal?: AbortSignal): Promise<HookOutcome[]> {
    const { ctx } = this;
    const hooks = this.of(event).filter((d) => matches(d.matcher, ...names));
    if (!hooks.length) return [];
    const s = ctx.services.get("session");
    const input = { session_id: s?.id ?? this.fallbackId, transcript_path: s?.file ?? "", cwd: ctx.cwd, permission_mode: "default", hook_event_name: event, ...fields };
    const hookEnv = { ...process.env, CLAUDE_PROJECT_DIR: projectRoot(ctx.cwd), COIL_PROJECT_DIR: projectRoot(ctx.cwd) };
    const outcomes = await Promise.all(hooks.map((h) => runHook(h.command, input, { cwd: ctx.cwd, env: hookEnv, timeoutMs: h.timeoutMs, signal })));
    for (const out of outcomes) {
      if (out.error && out.error !== "aborted") this.warn(`${event} hook \`${out.command}\` ${out.error}; ignored`);
      else if (out.code !== undefined && out.code !== 0 && out.code !== 2) this.warn(`${event} hook \`${out.command}\` failed (exit ${out.code})${out.stderr.trim() ? `: ${out.stderr.trim()}` : ""}; ignored`);
      if (out.json?.systemMessage) this.warn(`${event} hook: ${out.json.systemMessage}`);
      if (out.json?.continue === false) this.stopRequested = String(out.json.stopReason ?? `a ${event} hook stopped the agent`);
    }
    return outcomes;
  }

  /** SessionStart, when coil starts: context from the hooks goes into every request's system prompt. */
  async start(agent: Agent): Promise<void> {
    this.agent = agent;
    const outs = await this.fire("SessionStart", { source: "startup" }, ["startup"]);
    this.sessionContext = outs.map(contextOf).filter((t): t is string => Boolean(t));
  }

  /** SessionEnd, when coil stops. */
  async stop(): Promise<void> {
    await this.fire("SessionEnd", { reason: "other" }, ["other"]);
  }

  /** A run ended: its context, stop request and continuation count go. */
  runEnded(): void {
    this.runContext = [];
    this.stopRequested = undefined;
    this.stopContinuations = 0;
  }

  /** UserPromptSubmit: before the first request of a run. Context from hooks goes into the system prompt. */
  async beforeRequest(request: ModelRequest, turn: TurnInfo): Promise<ModelRequest | undefined> {
    if (turn.turn === 0 && turn.attempt === 0 && this.of("UserPromptSubmit").length) {
      const last = [...request.messages].reverse().find((m: AgentMessage) => m.role === "user");
      const outs = await this.fire("UserPromptSubmit", { prompt: textOf(last) }, [], turn.signal);
      const blocked = outs.find((x) => x.code === 2 || x.json?.decision === "block");
      if (blocked) {
        const reason = blocked.code === 2 ? blocked.stderr.trim() : String(blocked.json?.reason ?? "");
        this.warn(`UserPromptSubmit hook blocked the prompt${reason ? `: ${reason}` : ""}`);
        this.agent?.abort();
        return undefined;
      }
      this.runContext = outs.map(contextOf).filter((t): t is string => Boolean(t));
    }
    const extra = [...this.sessionContext, ...this.runContext];
    if (!extra.length) return undefined;
    const block: SystemBlock = { id: "hooks-claude", text: `Context from hooks:\n${extra.join("\n\n")}` };
    return { ...request, system: [...request.system, block] };
  }

  /** PreToolUse: a gate. Exit 2 blocks with stderr as the reason; JSON permission decisions are honoured. */
  async preToolUse(info: ToolCallInfo): Promise<{ block: true; reason: string } | undefined> {
    const { ctx } = this;
    if (this.stopRequested) return { block: true, reason: `not run: ${this.stopRequested}` };
    const name = info.call.name;
    const outs = await this.fire("PreToolUse", { tool_name: claudeToolName(name), tool_input: claudeToolInput(name, info.args, ctx.cwd), tool_use_id: info.call.id }, [claudeToolName(name), name], info.signal);
    for (const out of outs) {
      const specific = out.json?.hookSpecificOutput ?? {};
      const decision = specific.permissionDecision ?? (out.json?.decision === "block" ? "deny" : out.json?.decision === "approve" ? "allow" : undefined);
      const reason = String(specific.permissionDecisionReason ?? out.json?.reason ?? "");
      if (out.code === 2) return { block: true, reason: out.stderr.trim() || `blocked by a PreToolUse hook (${out.command})` };
      if (out.json?.continue === false) return { block: true, reason: `not run: ${this.stopRequested}` };
      if (decision === "deny") return { block: true, reason: reason || `denied by a PreToolUse hook (${out.command})` };
      if (decision === "ask") {
        const ui = ctx.services.get("ui");
        const ok = ui ? await ui.confirm(`Run ${name}?`, reason || `a hook asks before ${claudeToolName(name)} runs`, info.signal) : false;
        if (!ok) return { block: true, reason: `${reason || "a PreToolUse hook asked for approval"}${ui ? " (the user declined)" : " (no one to ask in this mode: denied)"}` };
      }
      if (specific.updatedInput) this.warn(`PreToolUse hook \`${out.command}\` returned updatedInput; coil does not rewrite tool arguments from hooks (ignored)`);
    }
    return undefined;
  }

  /** PostToolUse: stderr (exit 2), a `decision: "block"` reason and additionalContext are added to the result the model sees. */
  async postToolUse(result: ToolResult, info: ToolCallInfo): Promise<ToolResult | undefined> {
    if (result.isError) return undefined; // Claude Code runs PostToolUse after a successful call only
    const name = info.call.name;
    const input = claudeToolInput(name, info.args, this.ctx.cwd);
    const outs = await this.fire("PostToolUse", { tool_name: claudeToolName(name), tool_input: input, tool_response: claudeToolResponse(name, input, result), tool_use_id: info.call.id }, [claudeToolName(name), name], info.signal);
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
  }

  /** Stop: when the agent would stop, a hook may keep it going (exit 2 or decision "block", with a reason). */
  async shouldStop(query: StopQuery): Promise<StopVerdict | undefined> {
    if (this.stopRequested) return { stop: true, reason: this.stopRequested };
    const finished = query.turn.toolResults.length === 0 && query.steering === 0;
    if (!finished || !this.of("Stop").length) return undefined;
    const outs = await this.fire("Stop", { stop_hook_active: this.stopContinuations > 0 });
    if (this.stopRequested) return { stop: true, reason: this.stopRequested };
    const keep = outs.find((x) => x.code === 2 || x.json?.decision === "block");
    if (!keep) return undefined;
    if (this.stopContinuations >= this.ctx.options.maxStopContinuations) {
      this.warn(`Stop hook \`${keep.command}\` asked to continue ${this.stopContinuations} times in this run; stopping (maxStopContinuations)`);
      return undefined;
    }
    this.stopContinuations++;
    const reason = (keep.code === 2 ? keep.stderr.trim() : String(keep.json?.reason ?? "")) || "A Stop hook asked you to continue.";
    return { stop: false, reason: `Stop hook: ${reason}`, followUp: [{ role: "user", content: reason, timestamp: Date.now() }] };
  }

  /** SubagentStart, before a `task` call (observe only: the child starts after every gate allowed it). */
  async subagentStart(info: ToolCallInfo): Promise<undefined> {
    const type = String(info.args.agent || "general");
    await this.fire("SubagentStart", { agent_id: info.call.id, agent_type: type }, [type], info.signal);
    return undefined;
  }

  /** SubagentStop, after a `task` call (the child has finished). */
  async subagentStop(result: ToolResult, info: ToolCallInfo): Promise<undefined> {
    const type = String(info.args.agent || "general");
    const child = (result.details as { subagent?: { session?: { file?: string } } } | undefined)?.subagent;
    await this.fire("SubagentStop", { agent_id: info.call.id, agent_type: type, agent_transcript_path: child?.session?.file ?? "", stop_hook_active: false }, [type], info.signal);
    return undefined;
  }

  /** PreCompact: observe only; compaction strategies run after. */
  async preCompact(req: CompactRequest): Promise<undefined> {
    const trigger = req.reason === "manual" ? "manual" : "auto";
    await this.fire("PreCompact", { trigger, custom_instructions: req.instructions ?? "" }, [trigger], req.signal);
    return undefined;
  }
}

function contextOf(out: HookOutcome): string | undefined {
  const extra = out.json?.hookSpecificOutput?.additionalContext;
  if (typeof extra === "string" && extra) return extra;
  return out.code === 0 && !out.json && out.stdout.trim() ? out.stdout.trim() : undefined;
}
