/**
 * subagents: the `task` tool. The model delegates a job to a child agent that runs its own loop in its
 * own context (it never sees the parent's messages) with a filtered tool set, and gets the child's final
 * text back as the tool result. Children run in parallel (`maxParallel`), go through the parent's gates,
 * are aborted with the parent, keep their conversation in their own session file, and their usage is
 * carried on the result so the parent's totals and budgets include it. See docs/subagents.md.
 */
import { homedir } from "node:os";
import { resolve } from "node:path";
import { coilHome } from "../../lib/paths.js";
import {
  Agent,
  hostOf,
  Type,
  definePlugin,
  messageOf,
  textOf,
  type AgentMessage,
  type ModelInfo,
  type ModelRequest,
  type RequestOptions,
  type PluginHost,
  type ToolDefinition,
  type ToolOutput,
  type ToolRunContext,
} from "../../kernel/index.js";
import type { ChildSession, SessionService } from "../session-jsonl/api.js";
import { notReadOnly } from "../../lib/shell/read-only-commands.js";
import { runAsSubagent } from "../../lib/subagent-scope.js";
import { addUsage, subagentRunOf, zeroUsage, type SubagentRun } from "../../lib/subagent-usage.js";
import { cutHead, formatSize, MAX_BYTES, MAX_LINES } from "../../lib/tool-budget.js";
import { discoverAgents, type AgentType } from "./agents.js";
import type { SubagentUpdate, TaskDetails } from "./api.js";
import { CHILD_STAGE, childHost, resolveAgentModel } from "./child.js";

export { BUILTIN_AGENTS, discoverAgents, parseAgentFile, type AgentType, type AgentProblem } from "./agents.js";
export type { SubagentRun, SubagentUpdate, SubagentsService, TaskDetails } from "./api.js";

export const SubagentsOptions = Type.Object({
  /** `task` calls of one reply that run at the same time; the others wait for a free slot. */
  maxParallel: Type.Integer({ minimum: 1, default: 4 }),
  /** How deep delegation may nest: 1 = children cannot delegate further. 0 turns the `task` tool off. */
  maxDepth: Type.Integer({ minimum: 0, default: 1 }),
  /** Plugins whose conversation-level taps (before_request, turn_end, should_stop, compact) stay with the parent. Their tool_call/tool_result gates always apply to children. */
  isolate: Type.Array(Type.String(), { default: ["session-jsonl", "cost-audit", "hooks-claude", "ui-tui", "ui-rpc", "ui-print"] }),
  /** Read agent files of installed packages (`"coil": { "agents": [...] }`). */
  packages: Type.Boolean({ default: true }),
  /** More folders of agent files (relative to the preset file), read after the standard ones. */
  dirs: Type.Array(Type.String(), { default: [] }),
  /** Write each child's conversation to its own session file (when the session plugin is in the preset). */
  sessions: Type.Boolean({ default: true }),
});


const TaskParams = Type.Object({
  description: Type.String({ minLength: 1, description: "A few words saying what the sub-agent does (shown to the user)" }),
  prompt: Type.String({ minLength: 1, description: "The whole brief: the sub-agent sees nothing of this conversation, so say what to do, what you know, and what to report back" }),
  agent: Type.Optional(Type.String({ description: "The agent type (default general)" })),
});

/** One level of delegation: the host the `task` tool runs in and what a child of it inherits. */
interface Scope {
  /** Undefined for the main agent's level (its host is known once coil has started). */
  host: PluginHost | undefined;
  depth: number;
  /** `maxParallel` slots for the children of the agent at this level (a child's own children have theirs). */
  slots: Slots;
  /** Provider and model of the agent at this level. */
  current(): { provider: string; model: ModelInfo } | undefined;
  /** Request options (thinking level, max tokens) of the agent at this level, which its children inherit. */
  options(): RequestOptions;
}

class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly size: number) {}
  async take(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) throw new Error("aborted before the sub-agent started");
    if (this.used >= this.size) {
      await new Promise<void>((done, fail) => {
        const go = () => (signal.removeEventListener("abort", stop), done());
        const stop = () => {
          this.waiting.splice(this.waiting.indexOf(go), 1);
          fail(new Error("aborted before the sub-agent started"));
        };
        this.waiting.push(go);
        signal.addEventListener("abort", stop, { once: true });
      });
    }
    this.used++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used--;
      this.waiting.shift()?.();
    };
  }
}

const n = (v: number) => v.toLocaleString("en-US");
const RECENT_TOOLS = 5;
/** The first string argument of a call, on one short line (`ls src`, `grep TODO`). */
const briefArgs = (args: Record<string, unknown>) => {
  const first = Object.values(args ?? {}).find((v) => typeof v === "string") as string | undefined;
  const line = (first ?? "").split("\n")[0]!;
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
};
const tokensOf = (u: { input: number; output: number; cacheRead: number; cacheWrite: number }) => u.input + u.output + u.cacheRead + u.cacheWrite;

export default definePlugin({
  id: "subagents",
  description: "The task tool: delegate work to child agents with their own context, in parallel",
  options: SubagentsOptions,
  setup(ctx) {
    const o = ctx.options;
    if (o.maxDepth < 1) return;
    const isolate = new Set([...o.isolate, ctx.id]);
    const found = discoverAgents({ cwd: ctx.cwd, home: coilHome(), userHome: homedir(), packages: o.packages, extra: o.dirs.map((d) => resolve(ctx.baseDir, d)) });
    const agents = found.agents;
    if (found.problems.length) ctx.onStart(() => found.problems.forEach((p) => ctx.log.warn(`agent file ${p.file} skipped: ${p.reason}`)));
    ctx.services.provide("subagents", { agents: () => agents, problems: () => found.problems });
    ctx.commands.register({
      name: "agents",
      description: "list the sub-agent types the task tool offers, and agent files that were skipped",
      run: () =>
        [
          ...agents.map((a) => `${a.name} (${a.file ?? a.source}): ${a.description}${a.tools ? ` [tools: ${a.tools.join(", ")}]` : ""}${a.model && a.model !== "inherit" ? ` [model: ${a.model}]` : ""}`),
          ...found.problems.map((p) => `skipped ${p.file}: ${p.reason}`),
        ].join("\n"),
    });

    /** Children still running, so the process does not exit before they write their aborted results. */
    const running = new Set<{ agent: Agent; done: Promise<unknown> }>();
    ctx.onStop(async () => {
      for (const r of running) r.agent.abort();
      await Promise.all([...running].map((r) => r.done.catch(() => undefined)));
    });

    /** The main agent (its host, provider and model), known once coil has started. */
    let root: Agent | undefined;
    ctx.onStart((agent) => void (root = agent));

    const describeAgents = () => agents.map((a) => `- ${a.name}: ${a.description}`).join("\n");

    const taskTool = (scope: Scope): ToolDefinition<typeof TaskParams, TaskDetails> => ({
      name: "task",
      label: "Task",
      description: [
        "Delegate a self-contained job to a sub-agent that works in its own fresh context and returns only its final answer. Use it to keep this context small: exploring a code base, running tests and summarising failures, independent searches. Several task calls in one reply run in parallel.",
        "The sub-agent sees none of this conversation: put everything it needs in `prompt`, and say what to report. Its answer is not shown to the user; relay what matters.",
        `Agent types (\`agent\`, default general):\n${describeAgents()}`,
      ].join("\n\n"),
      promptSnippet: "task: delegate a self-contained job to a sub-agent with its own context (parallel when called several times)",
      parameters: TaskParams,
      execute: (args, run) => runChild(scope, args, run),
    });

    // The main agent's request options, as its latest request had them (this tap stays out of children).
    let rootOptions: RequestOptions = {};
    ctx.tap("before_request", (request: ModelRequest) => void (rootOptions = request.options), { stage: "FALLBACK" });
    ctx.tools.register(taskTool({ host: undefined, depth: 0, slots: new Slots(o.maxParallel), current: () => root && { provider: root.state.provider, model: root.state.model }, options: () => rootOptions }));

    async function runChild(scope: Scope, args: { description: string; prompt: string; agent?: string }, run: ToolRunContext): Promise<ToolOutput<TaskDetails>> {
      const parentHost = scope.host ?? (root && hostOf(root));
      if (!parentHost) throw ctx.error("CONFIG_INVALID", "the task tool ran before coil started its plugins (host.start was not called)");
      const type = agents.find((a) => a.name === (args.agent || "general"));
      if (!type) throw new Error(`unknown agent type '${args.agent}'. Available: ${agents.map((a) => a.name).join(", ")}`);
      const inherit = scope.current();
      if (!inherit) throw new Error("the parent's model is not known yet");
      let chosen: { provider: string; model: ModelInfo };
      try {
        chosen = resolveAgentModel(parentHost, type.model, inherit);
      } catch (error) {
        throw new Error(`the ${type.name} agent${type.file ? ` (${type.file})` : ""} cannot start: ${messageOf(error)}`);
      }
      const { provider, model } = chosen;
      const depth = scope.depth + 1;
      const requestOptions = scope.options();

      // Tools: the parent's (never more), narrowed to the type's list; `task` only below maxDepth.
      const parentTools = parentHost.tools.values().filter((t) => t.name !== "task");
      const wanted = type.tools ? new Set(type.tools) : undefined;
      const tools = wanted ? parentTools.filter((t) => wanted.has(t.name)) : parentTools;
      const nest = depth < o.maxDepth && (!wanted || wanted.has("task"));
      // Worth a note for an agent file's list; a built-in type simply works with what there is.
      const missing = wanted && type.source !== "builtin" ? [...wanted].filter((t) => t !== "task" && !parentTools.some((p) => p.name === t)) : [];

      const id = run.toolCallId;
      const release = await scope.slots.take(run.signal);
      let session: ChildSession | undefined;
      try {
        const extra: NonNullable<Parameters<typeof childHost>[1]["extra"]> = [
          { hook: "before_request", plugin: ctx.id, stage: CHILD_STAGE.prompt, fn: ((request: ModelRequest) => childRequest(request, type, depth)) as never },
        ];
        if (type.readOnlyBash) {
          extra.push({
            hook: "tool_call",
            plugin: ctx.id,
            stage: CHILD_STAGE.gate,
            fn: ((info: { call: { name: string }; args: Record<string, unknown> }) => {
              if (info.call.name !== "bash") return undefined;
              const why = notReadOnly(String(info.args.command ?? ""));
              return why ? { block: true, reason: `the ${type.name} agent may run only read-only bash commands: ${why}` } : undefined;
            }) as never,
          });
        }
        let childTools: ToolDefinition[] = tools;
        let childScope: Scope | undefined;
        if (nest) {
          childScope = { host: undefined, depth, slots: new Slots(o.maxParallel), current: () => ({ provider, model }), options: () => requestOptions };
          childTools = [...tools, taskTool(childScope) as ToolDefinition];
        }
        const host = childHost(parentHost, { tools: childTools, isolate, extra });
        if (childScope) childScope.host = host;

        const sessionService = ctx.services.get("session");
        if (o.sessions && sessionService?.createChild) {
          try {
            session = sessionService.createChild({ toolCallId: id, agent: type.name });
          } catch (error) {
            ctx.log.warn(`sub-agent ${id}: no session file: ${messageOf(error)}`);
          }
        }
        const tag = { id, agent: type.name, description: args.description, depth, session: session && { id: session.id, file: session.file } };
        const status: SubagentUpdate["status"] = { tokens: 0, turns: 0 };
        /** The child's latest tool calls, for the live block front ends show. */
        const recent: { id: string; line: string; mark: string }[] = [];
        let sessionError: string | undefined;
        host.subscribe("*", (event) => {
          if (event.type === "message_end") {
            try {
              session?.append(event.message);
            } catch (error) {
              sessionError ??= messageOf(error);
            }
            if (event.message.role === "assistant") status.tokens += tokensOf(event.message.usage);
          } else if (event.type === "tool_execution_start") {
            status.tool = event.toolName;
            recent.push({ id: event.toolCallId, line: `${event.toolName} ${briefArgs(event.args)}`.trim(), mark: "→" });
            if (recent.length > RECENT_TOOLS) recent.shift();
          } else if (event.type === "tool_execution_end") {
            status.tool = undefined;
            const item = recent.find((r) => r.id === event.toolCallId);
            if (item) item.mark = event.result.isError ? "✗" : "✓";
          }
          else if (event.type === "turn_end") status.turns++;
          else if (event.type === "diagnostic") parentHost.emit({ ...event, message: `sub-agent ${type.name} (${id}): ${event.message}` });
          const line = `${type.name}: ${args.description} · ${status.tool ? `running ${status.tool}` : event.type === "agent_end" ? "done" : "thinking"} · ${n(status.tokens)} tokens`;
          const text = [line, ...recent.map((r) => `  ${r.mark} ${r.line}`)].join("\n");
          run.update({ content: [{ type: "text", text }], details: { subagent: tag, event, status: { ...status } } satisfies SubagentUpdate as never });
        });

        const agent = new Agent(host, { provider, model, requestOptions });
        const onAbort = () => agent.abort();
        run.signal.addEventListener("abort", onAbort, { once: true });
        const started = runAsSubagent({ id, agent: type.name, depth }, () => agent.prompt(args.prompt));
        const entry = { agent, done: started };
        running.add(entry);
        let result: Awaited<typeof started>;
        try {
          if (run.signal.aborted) agent.abort();
          result = await started;
        } finally {
          run.signal.removeEventListener("abort", onAbort);
          running.delete(entry);
        }
        const usage = childUsage(result.messages);
        const text = textOf([...result.messages].reverse().find((m) => m.role === "assistant"));
        const record: SubagentRun = {
          id,
          agent: type.name,
          description: args.description,
          provider,
          model: model.id,
          session: tag.session,
          usage: usage.usage,
          requests: usage.requests,
          stopReason: result.stopReason,
          depth,
        };
        const failed = result.stopReason === "error" || result.stopReason === "aborted";
        const cut = cutHead(text);
        const notes = [
          ...(cut.truncated ? [`[answer cut to ${MAX_LINES} lines / ${formatSize(MAX_BYTES)} of ${cut.totalLines} lines${session?.file ? "; the whole answer is in the sub-agent's session" : ""}]`] : []),
          ...(missing.length ? [`[the ${type.name} agent asks for tools this agent does not have, left out: ${missing.join(", ")}]`] : []),
          ...(result.reason ? [`[the sub-agent was stopped: ${result.reason}]`] : []),
          ...(sessionError ? [`[the sub-agent's session file is incomplete: ${sessionError}]`] : []),
        ];
        const where = session ? `session ${session.id}${session.file ? ` (${session.file})` : " (in memory)"}` : "no session";
        const footer = `[sub-agent ${type.name} · ${where} · ${provider === inherit.provider ? "" : `${provider}/`}${model.id} · ${record.requests} requests · ${n(tokensOf(record.usage))} tokens · $${record.usage.cost.total.toFixed(4)}]`;
        const body = failed
          ? `The sub-agent ${result.stopReason === "aborted" ? "was aborted" : `failed: ${result.error ?? "the run ended with an error"}`}.${text ? `\nIts last text:\n${cut.text}` : ""}`
          : cut.text || "(the sub-agent gave no text answer)";
        return { content: [{ type: "text", text: [body, ...notes, footer].join("\n\n") }], details: { subagent: record }, isError: failed };
      } catch (error) {
        throw new Error(`the ${type.name} sub-agent could not run: ${messageOf(error)}`);
      } finally {
        release();
        try {
          session?.close();
        } catch (error) {
          ctx.log.warn(`sub-agent ${id}: ${messageOf(error)}`);
        }
      }
    }

    /** The child's request: the agent type's prompt as the role, a note on being a sub-agent, its tools only. */
    function childRequest(request: ModelRequest, type: AgentType, depth: number): ModelRequest {
      const note = {
        id: "subagent",
        text: `You are a sub-agent (${type.name}, level ${depth}) working for another agent, not talking to the user. You see only the brief it gave you. Work on your own until the job is done; nobody can answer questions. Your final message is returned to that agent as your answer: make it self-contained and concise, with the facts, file paths and results it asked for.`,
      };
      let system = request.system;
      if (type.prompt) {
        const role = { id: "role", text: type.prompt };
        system = system.some((b) => b.id === "role") ? system.map((b) => (b.id === "role" ? role : b)) : [role, ...system];
      }
      return { ...request, system: [...system, note] };
    }
  },
});

/** Usage and requests of a child run: its replies, plus its own children's (from their task results). */
function childUsage(messages: readonly AgentMessage[]) {
  let usage = zeroUsage();
  let requests = 0;
  for (const m of messages) {
    if (m.role === "assistant") {
      usage = addUsage(usage, m.usage);
      requests++;
    }
    const nested = subagentRunOf(m);
    if (nested) {
      usage = addUsage(usage, nested.usage);
      requests += nested.requests;
    }
  }
  return { usage, requests };
}

