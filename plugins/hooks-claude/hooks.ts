/**
 * What the Claude Code hooks do at each coil hook: fire the matching scripts with Claude Code's input,
 * and turn their exit codes and JSON into blocks, verdicts and context. The plugin's setup only loads
 * the definitions and registers these methods at the hooks that have scripts.
 */
import { randomUUID } from "node:crypto";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import {
  messageOf,
  textOf,
  type Agent,
  type AgentMessage,
  type CompactRequest,
  type ModelRequest,
  type PluginContext,
  type Static,
  type StopQuery,
  type StopVerdict,
  type SystemBlock,
  type ToolBlock,
  type ToolCallInfo,
  type ToolResult,
  type ToolRewrite,
  type TurnInfo,
} from "../../kernel/index.js";
import { claudePluginHooks } from "../../lib/claude-plugins.js";
import { coilHome } from "../../lib/paths.js";
import { projectRoot } from "../../lib/project.js";
import type {} from "../session-jsonl/api.js"; // types the `session` service (transcript path and id)
import type { ClaudeHooksService, PermissionAnswer } from "./api.js";
import type { HooksOptions } from "./index.js";
import { claudeToolInput, claudeToolName, claudeToolResponse, coilToolArgs } from "./mapping.js";
import { runHook, type HookJson, type HookOutcome } from "./run.js";
import { matches, parseHooks, readSettings, type HookDef, type HookEvent } from "./settings.js";
import { Transcript } from "./transcript.js";

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
  const projectFiles = [join(root, ".claude", "settings.json"), join(root, ".claude", "settings.local.json")].filter(
    (f) => f !== join(home, ".claude", "settings.json"),
  );
  const loadProject = o.project === true || (o.project === "trusted" && ctx.projectTrusted);
  if (loadProject)
    for (const file of projectFiles) defs.push(...parseHooks(readSettings(file, warn), file, o.timeout, warn));
  else if (o.project === "trusted" && projectFiles.some((f) => readSettings(f, () => undefined))) {
    ctx.onStart(() =>
      warn(`project hooks in ${join(root, ".claude")} are not run: the project is not trusted (coil trust)`),
    );
  }
  defs.push(...parseHooks(o.hooks, `the ${ctx.id} options`, o.timeout, warn));
  // Extra hook files, each with its own environment: the `sources` option's, and installed Claude Code
  // plugins' hooks/hooks.json (run with CLAUDE_PLUGIN_ROOT set to the plugin's folder).
  const sources = [
    ...o.sources.map((s) => ({
      hooks: readSettings(s.file, warn, true),
      source: s.file,
      env: { ...(s.root ? { CLAUDE_PLUGIN_ROOT: s.root } : {}), ...s.env },
    })),
    ...claudePluginHooks({ home: coilHome(), cwd: projectRoot(ctx.cwd), trusted: ctx.projectTrusted }, warn),
  ];
  for (const h of sources)
    defs.push(...parseHooks(h.hooks, h.source, o.timeout, warn).map((d) => ({ ...d, env: h.env })));
  // Claude Code runs an identical command once per event even if several groups list it.
  const unique = defs.filter(
    (d, i) =>
      defs.findIndex(
        (e) =>
          e.event === d.event &&
          e.command === d.command &&
          e.matcher === d.matcher &&
          JSON.stringify(e.env) === JSON.stringify(d.env),
      ) === i,
  );
  return unique;
}

/** The run-time side of the hooks: the state they keep across a session and a run, and one method per coil hook. */
export class ClaudeHooks implements ClaudeHooksService {
  private readonly fallbackId = randomUUID();
  private agent: Agent | undefined;
  private stopRequested: string | undefined;
  private stopContinuations = 0;
  private sessionContext: string[] = [];
  /** UserPromptSubmit context, kept with the prompt it was given for: every later request carries it in that message. */
  private readonly promptContext = new WeakMap<AgentMessage, AgentMessage>();
  private withPromptContext = 0;
  /** The session the last SessionStart was for, and a SessionStart still to fire (after /new, /resume, a compaction). */
  private sessionSeen: string | undefined;
  private pendingStart: "resume" | "clear" | "compact" | undefined;
  private sessionLeft: string | undefined;
  private transcript: Transcript | undefined;
  private transcriptFailed = false;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** PreToolUse outputs from the rewrite step, by call id, with the arguments they were given. */
  private readonly preToolUseRuns = new Map<string, { seen: string; outs: HookOutcome[] }>();

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

  private get session() {
    return this.ctx.services.get("session");
  }

  /** The Claude Code–format transcript of the session, brought up to date; "" when it cannot be written. */
  private transcriptPath(): string {
    const s = this.session;
    const id = s?.id ?? this.fallbackId;
    if (this.transcriptFailed) return "";
    try {
      // --no-session keeps the conversation off disk in coil's home: its transcript goes to the temp folder.
      if (this.transcript?.sessionId !== id)
        this.transcript = new Transcript(transcriptFile(id, s?.persistent === false), id, this.ctx.cwd, (m) =>
          s?.entryIdOf(m),
        );
      if (this.agent) this.transcript.update(this.agent.state.messages);
      return this.transcript.file;
    } catch (error) {
      this.transcriptFailed = true;
      this.warn(
        `cannot write the Claude Code transcript for hooks (${this.transcript?.file}): ${messageOf(error)}; hooks get an empty transcript_path`,
      );
      return "";
    }
  }

  /** Run the matching hooks of an event in parallel (as Claude Code does). */
  private async fire(
    event: HookEvent,
    fields: Record<string, unknown>,
    names: string[] = [],
    signal?: AbortSignal,
  ): Promise<HookOutcome[]> {
    const { ctx } = this;
    const hooks = this.of(event).filter((d) => matches(d.matcher, ...names));
    if (!hooks.length) return [];
    const s = this.session;
    const input = {
      session_id: s?.id ?? this.fallbackId,
      transcript_path: this.transcriptPath(),
      cwd: ctx.cwd,
      permission_mode: "default",
      hook_event_name: event,
      ...fields,
    };
    const hookEnv = {
      ...process.env,
      CLAUDE_PROJECT_DIR: projectRoot(ctx.cwd),
      COIL_PROJECT_DIR: projectRoot(ctx.cwd),
    };
    const outcomes = await Promise.all(
      hooks.map((h) =>
        runHook(h.command, input, {
          cwd: ctx.cwd,
          env: h.env ? { ...hookEnv, ...h.env } : hookEnv,
          timeoutMs: h.timeoutMs,
          signal,
        }),
      ),
    );
    for (const out of outcomes) {
      if (out.error && out.error !== "aborted") this.warn(`${event} hook \`${out.command}\` ${out.error}; ignored`);
      else if (out.code !== undefined && out.code !== 0 && out.code !== 2)
        this.warn(
          `${event} hook \`${out.command}\` failed (exit ${out.code})${out.stderr.trim() ? `: ${out.stderr.trim()}` : ""}; ignored`,
        );
      if (out.json?.systemMessage) this.warn(`${event} hook: ${out.json.systemMessage}`);
      if (out.json?.continue === false)
        this.stopRequested = String(out.json.stopReason ?? `a ${event} hook stopped the agent`);
    }
    return outcomes;
  }

  /** Start-up: SessionStart with `startup`, or `resume` when the session already holds a conversation (-c, -r, /reload). */
  async start(agent: Agent): Promise<void> {
    this.agent = agent;
    this.sessionSeen = this.session?.id;
    await this.sessionStart(this.hasConversation() ? "resume" : "startup");
  }

  /** Whether the open session already holds messages (false when there is none, or it is not open yet). */
  private hasConversation(): boolean {
    try {
      return this.session?.entries().some((e) => e.type === "message") ?? false;
    } catch {
      return false;
    }
  }

  private async sessionStart(source: string, signal?: AbortSignal): Promise<void> {
    const outs = await this.fire("SessionStart", { source }, [source], signal);
    this.sessionContext = outs.map(contextOf).filter((t): t is string => Boolean(t));
  }

  /** A run starts (observer): another session than the last SessionStart's means /new (`clear`) or /resume (`resume`). */
  runStarting(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const s = this.session;
    if (!s || s.id === this.sessionSeen) return;
    this.sessionLeft = this.sessionSeen;
    this.sessionSeen = s.id;
    this.pendingStart = this.hasConversation() ? "resume" : "clear";
  }

  /** A compaction happened (observer): SessionStart `compact` fires before the next request. */
  compacted(): void {
    this.pendingStart = "compact";
  }

  /** SessionEnd, when coil stops. */
  async stop(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    await this.fire("SessionEnd", { reason: "other" }, ["other"]);
  }

  /** A run ended: its stop request and continuation count go; with someone to ask, Notification `idle_prompt` after a while. */
  runEnded(): void {
    this.preToolUseRuns.clear();
    this.stopRequested = undefined;
    this.stopContinuations = 0;
    const idle = this.ctx.options.idleNotification;
    if (idle > 0 && this.of("Notification").length && this.ctx.services.get("ui")) {
      this.idleTimer = setTimeout(() => this.notify("coil is waiting for your input", "idle_prompt"), idle * 1000);
      this.idleTimer.unref?.();
    }
  }

  /** Notification hooks, in the background (nothing waits for them). */
  notify(message: string, type: string): void {
    void this.fire("Notification", { message, notification_type: type }, [type]).catch((e: unknown) =>
      this.warn(`Notification hook failed: ${messageOf(e)}`),
    );
  }

  /**
   * Before each request: a pending SessionStart (clear, resume, compact); UserPromptSubmit before the first
   * request of a run, its context added to the prompt's message (history's prefix, and so the prompt cache,
   * stays as it was); SessionStart context as a system block.
   */
  async beforeRequest(request: ModelRequest, turn: TurnInfo): Promise<ModelRequest | undefined> {
    if (this.pendingStart) {
      const source = this.pendingStart;
      this.pendingStart = undefined;
      // SessionEnd `clear` is about the session left behind (its id and transcript).
      const left = this.sessionLeft && {
        session_id: this.sessionLeft,
        transcript_path: transcriptFile(this.sessionLeft),
      };
      if (source === "clear") await this.fire("SessionEnd", { reason: "clear", ...left }, ["clear"], turn.signal);
      await this.sessionStart(source, turn.signal);
    }
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
      const extra = outs.map(contextOf).filter((t): t is string => Boolean(t));
      if (last && extra.length) {
        const content =
          typeof last.content === "string" ? [{ type: "text" as const, text: last.content }] : last.content;
        this.promptContext.set(last, {
          ...last,
          content: [
            ...content,
            { type: "text", text: `<user-prompt-submit-hook>\n${extra.join("\n\n")}\n</user-prompt-submit-hook>` },
          ],
        } as AgentMessage);
        this.withPromptContext++;
      }
    }
    let next = request;
    if (this.withPromptContext) next = { ...next, messages: next.messages.map((m) => this.promptContext.get(m) ?? m) };
    if (this.sessionContext.length) {
      const block: SystemBlock = {
        id: "hooks-claude",
        text: `Context from hooks:\n${this.sessionContext.join("\n\n")}`,
      };
      next = { ...next, system: [...next.system, block] };
    }
    return next === request ? undefined : next;
  }

  /**
   * PreToolUse, in tool_call's rewrite step: the hooks run once per call, and `updatedInput` (Claude Code's
   * input shape) replaces the call's arguments, checked against the tool's schema by coil. Their decisions
   * are judged in the gate step (`preToolUseGate`), on the arguments that will run.
   */
  async preToolUse(info: ToolCallInfo): Promise<ToolRewrite | undefined> {
    if (this.stopRequested) return undefined;
    const outs = await this.firePreToolUse(info);
    this.preToolUseRuns.set(info.call.id, { seen: JSON.stringify(info.args), outs });
    const updated = updatedInputOf(outs);
    return updated ? { args: coilToolArgs(info.call.name, updated, info.args, this.ctx.cwd) } : undefined;
  }

  /**
   * PreToolUse, in the gate step: exit 2 blocks with stderr as the reason; JSON permission decisions are
   * honoured. They are the rewrite step's outputs when no other plugin changed the arguments since; else
   * the hooks run again on the final arguments (and a hook that would change those blocks the call).
   */
  async preToolUseGate(info: ToolCallInfo): Promise<ToolBlock | undefined> {
    const { ctx } = this;
    if (this.stopRequested) return { block: true, reason: `not run: ${this.stopRequested}` };
    const name = info.call.name;
    const kept = this.preToolUseRuns.get(info.call.id);
    this.preToolUseRuns.delete(info.call.id);
    const unchanged = kept && (kept.seen === JSON.stringify(info.args) || info.rewrittenBy?.at(-1) === ctx.id);
    const outs = unchanged ? kept.outs : await this.firePreToolUse(info);
    const late = unchanged ? undefined : updatedInputOf(outs);
    if (late && JSON.stringify(coilToolArgs(name, late, info.args, ctx.cwd)) !== JSON.stringify(info.args)) {
      const by = info.rewrittenBy?.join(", ") ?? "another plugin";
      return { block: true, reason: `a PreToolUse hook would change the arguments that ${by} rewrote; not run` };
    }
    for (const out of outs) {
      const specific = out.json?.hookSpecificOutput ?? {};
      const decision =
        specific.permissionDecision ??
        (out.json?.decision === "block" ? "deny" : out.json?.decision === "approve" ? "allow" : undefined);
      const reason = String(specific.permissionDecisionReason ?? out.json?.reason ?? "");
      if (out.code === 2)
        return { block: true, reason: out.stderr.trim() || `blocked by a PreToolUse hook (${out.command})` };
      if (out.json?.continue === false) return { block: true, reason: `not run: ${this.stopRequested}` };
      if (decision === "deny") return { block: true, reason: reason || `denied by a PreToolUse hook (${out.command})` };
      if (decision === "ask") {
        const ui = ctx.services.get("ui");
        if (ui) this.notify(`coil needs your permission to use ${claudeToolName(name)}`, "permission_prompt");
        const ok = ui
          ? await ui.confirm(`Run ${name}?`, reason || `a hook asks before ${claudeToolName(name)} runs`, info.signal)
          : false;
        if (!ok)
          return {
            block: true,
            reason: `${reason || "a PreToolUse hook asked for approval"}${ui ? " (the user declined)" : " (no one to ask in this mode: denied)"}`,
          };
      }
    }
    return undefined;
  }

  private firePreToolUse(info: ToolCallInfo) {
    const name = info.call.name;
    const input = { tool_name: claudeToolName(name), tool_input: claudeToolInput(name, info.args, this.ctx.cwd) };
    return this.fire("PreToolUse", { ...input, tool_use_id: info.call.id }, [claudeToolName(name), name], info.signal);
  }

  /** PermissionRequest: the permission gate is about to ask; a hook may allow (with `updatedInput`) or deny instead. */
  async permissionRequest(info: ToolCallInfo, why: string): Promise<PermissionAnswer | undefined> {
    const name = info.call.name;
    const outs = await this.fire(
      "PermissionRequest",
      {
        tool_name: claudeToolName(name),
        tool_input: claudeToolInput(name, info.args, this.ctx.cwd),
        tool_use_id: info.call.id,
        reason: why,
        permission_suggestions: [],
      },
      [claudeToolName(name), name],
      info.signal,
    );
    let answer: { behavior: "allow"; args?: Record<string, unknown> } | undefined;
    for (const out of outs) {
      const decision = out.json?.hookSpecificOutput?.decision;
      if (out.code === 2 || decision?.behavior === "deny")
        return {
          behavior: "deny",
          message: String((out.code === 2 ? out.stderr.trim() : decision?.message) || "") || undefined,
        };
      if (decision?.behavior === "allow") {
        const input = decision.updatedInput;
        answer = {
          behavior: "allow",
          args:
            input && typeof input === "object"
              ? coilToolArgs(name, input as Record<string, unknown>, info.args, this.ctx.cwd)
              : answer?.args,
        };
      }
    }
    return answer;
  }

  /**
   * PostToolUse (successful calls) and PostToolUseFailure (failed ones): stderr (exit 2), a
   * `decision: "block"` reason and additionalContext are added to the result the model sees.
   */
  async postToolUse(result: ToolResult, info: ToolCallInfo): Promise<ToolResult | undefined> {
    const name = info.call.name;
    const input = claudeToolInput(name, info.args, this.ctx.cwd);
    const common = { tool_name: claudeToolName(name), tool_input: input, tool_use_id: info.call.id };
    const event = result.isError ? "PostToolUseFailure" : "PostToolUse";
    const fields = result.isError
      ? { ...common, error: textOf(result), is_interrupt: info.signal.aborted }
      : { ...common, tool_response: claudeToolResponse(name, input, result) };
    const outs = await this.fire(event, fields, [claudeToolName(name), name], info.signal);
    const notes = outs.flatMap((out) => {
      const parts: string[] = [];
      if (out.code === 2 && out.stderr.trim()) parts.push(out.stderr.trim());
      if (out.json?.decision === "block" && out.json.reason) parts.push(String(out.json.reason));
      const extra = out.json ? additionalContextOf(out.json) : undefined;
      if (extra) parts.push(extra);
      return parts;
    });
    const blocked = outs.some((out) => out.code === 2 || out.json?.decision === "block");
    if (!notes.length) return undefined;
    const text = `\n\n[${event} hook ${blocked ? "feedback" : "context"}]\n${notes.join("\n")}`;
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
      this.warn(
        `Stop hook \`${keep.command}\` asked to continue ${this.stopContinuations} times in this run; stopping (maxStopContinuations)`,
      );
      return undefined;
    }
    this.stopContinuations++;
    const reason =
      (keep.code === 2 ? keep.stderr.trim() : String(keep.json?.reason ?? "")) || "A Stop hook asked you to continue.";
    return {
      stop: false,
      reason: `Stop hook: ${reason}`,
      followUp: [{ role: "user", content: reason, timestamp: Date.now() }],
    };
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
    await this.fire(
      "SubagentStop",
      {
        agent_id: info.call.id,
        agent_type: type,
        agent_transcript_path: child?.session?.file ?? "",
        stop_hook_active: false,
      },
      [type],
      info.signal,
    );
    return undefined;
  }

  /** PreCompact: observe only; compaction strategies run after. */
  async preCompact(req: CompactRequest): Promise<undefined> {
    const trigger = req.reason === "manual" ? "manual" : "auto";
    await this.fire("PreCompact", { trigger, custom_instructions: req.instructions ?? "" }, [trigger], req.signal);
    return undefined;
  }
}

/** Where the Claude Code–format transcript of a session is kept. */
const transcriptFile = (sessionId: string, temporary = false) =>
  join(
    temporary ? join(tmpdir(), "coil-claude-transcripts") : join(coilHome(), "claude-transcripts"),
    `${sessionId}.jsonl`,
  );

/** `additionalContext`, in `hookSpecificOutput` or (as some hooks write it) at the top level. */
function additionalContextOf(json: HookJson): string | undefined {
  const extra = json.hookSpecificOutput?.additionalContext ?? json.additionalContext;
  return typeof extra === "string" && extra ? extra : undefined;
}

function contextOf(out: HookOutcome): string | undefined {
  if (out.json) return additionalContextOf(out.json);
  return out.code === 0 && out.stdout.trim() ? out.stdout.trim() : undefined;
}

/** The `updatedInput` of PreToolUse outputs, merged in order (Claude Code's input shape), if any gave one. */
function updatedInputOf(outs: readonly HookOutcome[]): Record<string, unknown> | undefined {
  let updated: Record<string, unknown> | undefined;
  for (const out of outs) {
    const input = out.json?.hookSpecificOutput?.updatedInput;
    if (input && typeof input === "object" && !Array.isArray(input)) updated = { ...updated, ...input };
  }
  return updated;
}
