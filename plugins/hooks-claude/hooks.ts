/**
 * What the Claude Code hooks do at each coil hook: fire the matching scripts with Claude Code's input,
 * and turn their exit codes and JSON into blocks, verdicts and context. The plugin's setup only loads
 * the definitions and registers these methods at the hooks that have scripts.
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
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
} from "../../api/index.js";
import { coilHome } from "../../lib/paths.js";
import type {} from "../session-jsonl/api.js"; // types the `session` service (transcript path and id)
import type {} from "../skills/api.js"; // types the `skills` service (its `compat` is the shared setting)
import type { ClaudeHooksService, PermissionAnswer } from "./api.js";
import type { HooksOptions } from "./index.js";
import { claudeToolInput, claudeToolName, claudeToolResponse, coilToolArgs } from "./mapping.js";
import { ruleMatches } from "./if-rule.js";
import { runPromptHook } from "./prompt.js";
import { runHook, type HookJson, type HookOutcome } from "./run.js";
import { matches, type HookDef, type HookEvent } from "./settings.js";
import { Transcript } from "./transcript.js";
import { locationsOf } from "../../lib/locations.js";

type Ctx = PluginContext<Static<typeof HooksOptions>>;

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
  /** `once` hooks that ran in this session. */
  private readonly ranOnce = new Set<HookDef>();
  /** Background hooks still running (ended when coil stops). */
  private readonly running = new Set<AbortController>();
  /** Output of background hooks (and wake-ups during a run) for the next request. */
  private pendingContext: string[] = [];
  /** The SessionStart hooks' CLAUDE_ENV_FILEs, and the variables they set for the bash tool. */
  private readonly envFiles = new Set<string>();
  private envVars: Record<string, string> = {};
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

  /**
   * Run the matching hooks of an event: matcher, `if` rule (tool events: `call` is the call in Claude Code's
   * names) and `once`. The others run in parallel and are waited for (as Claude Code does); `async` ones, and
   * `asyncRewake` ones when someone is there to wake (a UI), run in the background (see `background`).
   */
  private async fire(
    event: HookEvent,
    fields: Record<string, unknown>,
    names: string[] = [],
    signal?: AbortSignal,
    call?: { tool: string; input: Record<string, unknown> },
  ): Promise<HookOutcome[]> {
    const { ctx } = this;
    const root = locationsOf(ctx).projectRoot;
    const hooks = this.of(event).filter(
      (d) =>
        matches(d.matcher, ...names) &&
        (!d.if || (call !== undefined && ruleMatches(d.if, call.tool, call.input, { cwd: ctx.cwd, root }))) &&
        !(d.once && this.ranOnce.has(d)),
    );
    if (!hooks.length) return [];
    for (const d of hooks) if (d.once) this.ranOnce.add(d);
    const s = this.session;
    const input = {
      session_id: s?.id ?? this.fallbackId,
      transcript_path: this.transcriptPath(),
      cwd: ctx.cwd,
      permission_mode: "default",
      hook_event_name: event,
      ...fields,
    };
    const wakeable = Boolean(ctx.services.get("ui"));
    const inBackground = (d: HookDef) =>
      d.type === "command" && (d.async === true || (d.asyncRewake === true && wakeable));
    for (const d of hooks.filter(inBackground)) this.background(d, event, input);
    const outcomes = await Promise.all(hooks.filter((d) => !inBackground(d)).map((d) => this.runOne(d, input, signal)));
    for (const out of outcomes) this.report(event, out);
    return outcomes;
  }

  /** One hook: a command with Claude Code's environment (and `CLAUDE_ENV_FILE` for SessionStart), or a prompt to the model. */
  private runOne(d: HookDef, input: Record<string, unknown>, signal?: AbortSignal): Promise<HookOutcome> {
    if (d.type === "prompt") return runPromptHook(d, input, this.agent, signal);
    const root = locationsOf(this.ctx).projectRoot;
    const envFile = d.event === "SessionStart" ? this.envFileFor(d) : undefined;
    return runHook(d.command, input, {
      cwd: this.ctx.cwd,
      env: {
        ...process.env,
        CLAUDE_PROJECT_DIR: root,
        COIL_PROJECT_DIR: root,
        ...d.env,
        ...(envFile ? { CLAUDE_ENV_FILE: envFile } : {}),
      },
      timeoutMs: d.timeoutMs,
      signal,
    });
  }

  /** What a hook's outcome says to the user: errors, failures, `systemMessage`; `continue: false` stops the agent. */
  private report(event: HookEvent, out: HookOutcome): void {
    if (out.error && out.error !== "aborted") this.warn(`${event} hook \`${out.command}\` ${out.error}; ignored`);
    else if (out.code !== undefined && out.code !== 0 && out.code !== 2)
      this.warn(
        `${event} hook \`${out.command}\` failed (exit ${out.code})${out.stderr.trim() ? `: ${out.stderr.trim()}` : ""}; ignored`,
      );
    if (out.json?.systemMessage) this.warn(`${event} hook: ${out.json.systemMessage}`);
    if (out.json?.continue === false)
      this.stopRequested = String(out.json.stopReason ?? `a ${event} hook stopped the agent`);
  }

  /**
   * A hook in the background: nothing waits for it, and it cannot decide anything. When it ends, its
   * `systemMessage` and `additionalContext` reach the model with the next request (as Claude Code delivers an
   * async hook's output); an `asyncRewake` hook that exits with 2 wakes the agent with its stderr: added to
   * the next request of a run that is going, else a new run. Hooks still running when coil stops are ended.
   */
  private background(d: HookDef, event: HookEvent, input: Record<string, unknown>): void {
    const controller = new AbortController();
    this.running.add(controller);
    void this.runOne(d, input, controller.signal).then(
      (out) => {
        this.running.delete(controller);
        if (controller.signal.aborted) return;
        this.report(event, out);
        if (d.asyncRewake) {
          if (out.code === 2)
            this.wake(
              `${d.rewakeMessage ?? `A background ${event} hook reported:`}\n${out.stderr.trim() || out.stdout.trim()}`,
            );
          return;
        }
        const said = [out.json?.systemMessage, out.json ? additionalContextOf(out.json) : undefined].filter(
          (t): t is string => typeof t === "string" && t.length > 0,
        );
        if (said.length) this.pendingContext.push(`[${event} hook, run in the background]\n${said.join("\n")}`);
      },
      (error: unknown) => {
        this.running.delete(controller);
        this.warn(`${event} hook \`${d.command}\` failed: ${messageOf(error)}`);
      },
    );
  }

  /** Wake the agent: the text joins the next request of a run that is going, or starts a run. */
  private wake(text: string): void {
    const agent = this.agent;
    if (!agent || agent.isRunning) {
      this.pendingContext.push(text);
      return;
    }
    agent.prompt(text).catch((error: unknown) => this.warn(`could not wake the agent for a hook: ${messageOf(error)}`));
  }

  /** `CLAUDE_ENV_FILE` for one SessionStart hook: a file of its own in `$COIL_HOME/session-env/<session id>/`. */
  private envFileFor(d: HookDef): string | undefined {
    const id = this.session?.id ?? this.fallbackId;
    const dir =
      this.session?.persistent === false ? join(tmpdir(), "coil-session-env", id) : join(coilHome(), "session-env", id);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (error) {
      this.warn(`cannot create ${dir} for CLAUDE_ENV_FILE: ${messageOf(error)}`);
      return undefined;
    }
    const file = join(dir, `sessionstart-hook-${this.defs.indexOf(d)}.sh`);
    this.envFiles.add(file);
    return file;
  }

  /**
   * What the SessionStart hooks wrote to their `CLAUDE_ENV_FILE`s, as the variables a shell that sources
   * them has (`export PATH="$HOME/bin:$PATH"` expands as in Claude Code, which sources them before each Bash
   * command). Only the bash tool gets them (through the `claude-hooks` service), not hooks or servers.
   */
  private loadEnvFiles(): void {
    const vars: Record<string, string> = {};
    for (const file of this.envFiles) {
      if (!existsSync(file)) continue;
      const ran = spawnSync("sh", ["-c", 'set -a; . "$1" >/dev/null 2>&1; env -0', "sh", file], {
        cwd: this.ctx.cwd,
        env: process.env,
        encoding: "utf8",
        timeout: 10_000,
      });
      if (ran.status !== 0) {
        this.warn(`cannot read ${file} (CLAUDE_ENV_FILE): ${ran.stderr?.trim() || `exit ${ran.status}`}; ignored`);
        continue;
      }
      for (const pair of ran.stdout.split("\0")) {
        const at = pair.indexOf("=");
        if (at <= 0) continue;
        const [key, value] = [pair.slice(0, at), pair.slice(at + 1)];
        if (!["PWD", "OLDPWD", "SHLVL", "_"].includes(key) && process.env[key] !== value) vars[key] = value;
      }
    }
    this.envVars = vars;
  }

  /** The variables the bash tool adds, from the SessionStart hooks' `CLAUDE_ENV_FILE`s. */
  shellEnv(): Record<string, string> | undefined {
    return Object.keys(this.envVars).length ? this.envVars : undefined;
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
    this.envFiles.clear();
    const outs = await this.fire("SessionStart", { source }, [source], signal);
    this.sessionContext = outs.map(contextOf).filter((t): t is string => Boolean(t));
    this.loadEnvFiles();
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

  /**
   * SessionEnd, when coil stops, for a session that started: a subcommand (`coil list`, `coil doctor`)
   * sets the plugins up and stops them without ever starting an agent, and runs no session hooks.
   */
  async stop(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (!this.agent) return;
    await this.fire("SessionEnd", { reason: "other" }, ["other"]);
    // Claude Code leaves no background hook running after it exits.
    for (const c of this.running) c.abort();
    this.running.clear();
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
      if (last && extra.length)
        this.attach(last, `<user-prompt-submit-hook>\n${extra.join("\n\n")}\n</user-prompt-submit-hook>`);
    }
    // Background hooks' output: added to the newest message the model sees (the history before it stays as it was).
    if (this.pendingContext.length) {
      const last = [...request.messages].reverse().find((m) => m.role === "user" || m.role === "toolResult");
      if (last) {
        this.attach(last, this.pendingContext.splice(0).join("\n\n"));
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

  /** Add text to what the model sees of `message` in this and every later request (the session keeps the original). */
  private attach(message: AgentMessage, text: string): void {
    const current = (this.promptContext.get(message) ?? message) as AgentMessage & { content: unknown };
    const content =
      typeof current.content === "string"
        ? [{ type: "text" as const, text: current.content }]
        : (current.content as unknown[]);
    if (!this.promptContext.has(message)) this.withPromptContext++;
    this.promptContext.set(message, { ...current, content: [...content, { type: "text", text }] } as AgentMessage);
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
    const tool = claudeToolName(name);
    const toolInput = claudeToolInput(name, info.args, this.ctx.cwd);
    return this.fire(
      "PreToolUse",
      { tool_name: tool, tool_input: toolInput, tool_use_id: info.call.id },
      [tool, name],
      info.signal,
      { tool, input: toolInput },
    );
  }

  /** PermissionRequest: the permission gate is about to ask; a hook may allow (with `updatedInput`) or deny instead. */
  async permissionRequest(info: ToolCallInfo, why: string): Promise<PermissionAnswer | undefined> {
    const name = info.call.name;
    const toolInput = claudeToolInput(name, info.args, this.ctx.cwd);
    const outs = await this.fire(
      "PermissionRequest",
      {
        tool_name: claudeToolName(name),
        tool_input: toolInput,
        tool_use_id: info.call.id,
        reason: why,
        permission_suggestions: [],
      },
      [claudeToolName(name), name],
      info.signal,
      { tool: claudeToolName(name), input: toolInput },
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
    const outs = await this.fire(event, fields, [claudeToolName(name), name], info.signal, {
      tool: claudeToolName(name),
      input,
    });
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
    const outs = await this.fire("Stop", {
      stop_hook_active: this.stopContinuations > 0,
      last_assistant_message: textOf(query.turn.message),
    });
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
        last_assistant_message: textOf(result),
      },
      [type],
      info.signal,
    );
    return undefined;
  }

  /** The user did something other than start a run (`/compact`): the idle countdown stops. */
  userActive(): undefined {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    return undefined;
  }

  /** PreCompact: observe only; compaction strategies run after. */
  async preCompact(req: CompactRequest): Promise<undefined> {
    this.userActive();
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
