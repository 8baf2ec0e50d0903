/**
 * The `task` tool's work: one child agent per call, on a child host with the parent's tools (narrowed
 * to the agent type's), its own session file, live progress for front ends, and the answer with its
 * usage as the tool result. The plugin's setup only registers what this builds.
 */
import {
  type Agent,
  type ForkTap,
  Type,
  emptyUsage,
  lastAssistantText,
  usageTotal,
  messageOf,
  type AgentMessage,
  type ModelInfo,
  type ModelRequest,
  type PluginContext,
  type RequestOptions,
  type Static,
  type ToolDefinition,
  type ToolOutput,
  type ToolRunContext,
} from "../../api/index.js";
import type { ChildSession } from "../session-jsonl/api.js";
import { notReadOnly } from "../../lib/shell/read-only-commands.js";
import { addUsage, subagentRunOf, type SubagentRun } from "../../lib/subagent-usage.js";
import { cutHead, formatSize, MAX_BYTES, MAX_LINES } from "../../lib/tool-budget.js";
import type { AgentType } from "./agents.js";
import type { SubagentUpdate, TaskDetails } from "./api.js";
import { CHILD_STAGE, resolveAgentModel } from "./child.js";
import type { SubagentsOptions } from "./index.js";

export const TaskParams = Type.Object({
  description: Type.String({
    minLength: 1,
    description: "A few words for the user on what it does",
  }),
  prompt: Type.String({
    minLength: 1,
    description: "The whole brief: what to do, what you know, what to report",
  }),
  agent: Type.Optional(Type.String({ description: "Agent type (default general)" })),
});

/** One level of delegation: the agent the `task` tool runs in and what a child of it inherits. */
export interface Scope {
  /** Undefined for the main agent's level (the main agent is known once coil has started). */
  agent: Agent | undefined;
  depth: number;
  /** `maxParallel` slots for the children of the agent at this level (a child's own children have theirs). */
  slots: Slots;
  /** Provider and model of the agent at this level. */
  current(): { provider: string; model: ModelInfo } | undefined;
  /** Request options (thinking level, max tokens) of the agent at this level, which its children inherit. */
  options(): RequestOptions;
}

export class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly size: number) {}
  async take(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) throw new Error("aborted before the sub-agent started");
    if (this.used >= this.size) {
      await new Promise<void>((done, fail) => {
        const go = () => {
          signal.removeEventListener("abort", stop);
          done();
        };
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

/** Runs `task` calls for one coil run: the agent types, the children still going, the main agent. */
export class TaskRunner {
  /** Children still running, so the process does not exit before they write their aborted results. */
  private readonly running = new Set<{ agent: Agent; done: Promise<unknown> }>();
  /** The main agent (its tools, provider and model), known once coil has started. */
  root: Agent | undefined;
  /** The main agent's request options, as its latest request had them. */
  rootOptions: RequestOptions = {};
  private readonly isolate: Set<string>;

  constructor(
    private readonly ctx: PluginContext<Static<typeof SubagentsOptions>>,
    private readonly agents: readonly AgentType[],
  ) {
    this.isolate = new Set([...ctx.options.isolate, ctx.id]);
  }

  /** The main agent's level: the agent and its model are known once coil has started. */
  rootScope(): Scope {
    return {
      agent: undefined,
      depth: 0,
      slots: new Slots(this.ctx.options.maxParallel),
      current: () => this.root && { provider: this.root.state.provider, model: this.root.state.model },
      options: () => this.rootOptions,
    };
  }

  /** Abort the children still running and wait for them to write their results. */
  async stop(): Promise<void> {
    for (const r of this.running) r.agent.abort();
    await Promise.all([...this.running].map((r) => r.done.catch(() => undefined)));
  }

  taskTool(scope: Scope): ToolDefinition<typeof TaskParams, TaskDetails> {
    const describeAgents = this.agents.map((a) => `- ${a.name}: ${a.description}`).join("\n");
    return {
      name: "task",
      label: "Task",
      description: [
        "Run a self-contained job in a sub-agent with a fresh context, to keep this one small (exploring code, running tests, independent searches); task calls in one reply run in parallel. It sees none of this conversation: `prompt` holds all it needs and what to report. Only its final answer comes back, unseen by the user: relay what matters.",
        `Agents (\`agent\`, default general):\n${describeAgents}`,
      ].join("\n\n"),
      promptSnippet:
        "task: delegate a self-contained job to a sub-agent with its own context (parallel when called several times)",
      parameters: TaskParams,
      execute: (args, run) => this.runChild(scope, args, run),
    };
  }

  async runChild(
    scope: Scope,
    args: { description: string; prompt: string; agent?: string },
    run: ToolRunContext,
  ): Promise<ToolOutput<TaskDetails>> {
    const parent = scope.agent ?? this.root;
    if (!parent)
      throw this.ctx.error(
        "CONFIG_INVALID",
        "the task tool ran before coil started its plugins (host.start was not called)",
      );
    const type = this.agents.find((a) => a.name === (args.agent || "general"));
    if (!type)
      throw new Error(`unknown agent type '${args.agent}'. Available: ${this.agents.map((a) => a.name).join(", ")}`);
    const inherit = scope.current();
    if (!inherit) throw new Error("the parent's model is not known yet");
    let chosen: { provider: string; model: ModelInfo };
    try {
      chosen = resolveAgentModel(parent.view, type.model, inherit);
    } catch (error) {
      throw new Error(`the ${type.name} agent${type.file ? ` (${type.file})` : ""} cannot start: ${messageOf(error)}`);
    }
    const { provider, model } = chosen;
    const depth = scope.depth + 1;
    const requestOptions = scope.options();

    // Tools: the parent's (never more), narrowed to the type's list; `task` only below maxDepth.
    const parentTools = parent.view.tools.values().filter((t) => t.name !== "task");
    const wanted = type.tools ? new Set(type.tools) : undefined;
    const tools = wanted ? parentTools.filter((t) => wanted.has(t.name)) : parentTools;
    const nest = depth < this.ctx.options.maxDepth && (!wanted || wanted.has("task"));
    // Worth a note for an agent file's list; a built-in type simply works with what there is.
    const missing =
      wanted && type.source !== "builtin"
        ? [...wanted].filter((t) => t !== "task" && !parentTools.some((p) => p.name === t))
        : [];

    const id = run.toolCallId;
    const release = await scope.slots.take(run.signal);
    let session: ChildSession | undefined;
    try {
      const taps: ForkTap[] = [
        {
          hook: "before_request",
          fn: (request: ModelRequest) => childRequest(request, type, depth),
          options: { stage: CHILD_STAGE.prompt },
        },
      ];
      if (type.readOnlyBash) {
        taps.push({
          hook: "tool_call",
          fn: (info) => {
            const why = notReadOnly(String(info.args.command ?? ""));
            if (!why) return undefined;
            return { block: true, reason: `the ${type.name} agent may run only read-only bash commands: ${why}` };
          },
          options: { stage: CHILD_STAGE.gate, tools: ["bash"] },
        });
      }
      let childTools: ToolDefinition[] = tools;
      let childScope: Scope | undefined;
      if (nest) {
        childScope = {
          agent: undefined,
          depth,
          slots: new Slots(this.ctx.options.maxParallel),
          current: () => ({ provider, model }),
          options: () => requestOptions,
        };
        childTools = [...tools, this.taskTool(childScope) as ToolDefinition];
      }
      const agent = parent.fork({
        id,
        by: this.ctx.id,
        label: `sub-agent ${type.name} (${id})`,
        tools: childTools,
        isolate: [...this.isolate],
        taps,
        provider,
        model,
        requestOptions,
      });
      if (childScope) childScope.agent = agent;

      const sessionService = this.ctx.services.get("session");
      if (this.ctx.options.sessions && sessionService?.createChild) {
        try {
          session = sessionService.createChild({ toolCallId: id, agent: type.name });
        } catch (error) {
          this.ctx.log.warn(`sub-agent ${id}: no session file: ${messageOf(error)}`);
        }
      }
      const tag = {
        id,
        agent: type.name,
        description: args.description,
        depth,
        session: session && { id: session.id, file: session.file },
      };
      const status: SubagentUpdate["status"] = { tokens: 0, turns: 0 };
      /** The child's latest tool calls, for the live block front ends show. */
      const recent: { id: string; line: string; mark: string }[] = [];
      let sessionError: string | undefined;
      agent.subscribe((event) => {
        if (event.type === "message_end") {
          try {
            session?.append(event.message);
          } catch (error) {
            sessionError ??= messageOf(error);
          }
          if (event.message.role === "assistant") status.tokens += usageTotal(event.message.usage);
        } else if (event.type === "tool_execution_start") {
          status.tool = event.toolName;
          recent.push({ id: event.toolCallId, line: `${event.toolName} ${briefArgs(event.args)}`.trim(), mark: "→" });
          if (recent.length > RECENT_TOOLS) recent.shift();
        } else if (event.type === "tool_execution_end") {
          status.tool = undefined;
          const item = recent.find((r) => r.id === event.toolCallId);
          if (item) item.mark = event.result.isError ? "✗" : "✓";
        } else if (event.type === "turn_end") status.turns++;
        const line = `${type.name}: ${args.description} · ${status.tool ? `running ${status.tool}` : event.type === "agent_end" ? "done" : "thinking"} · ${n(status.tokens)} tokens`;
        const text = [line, ...recent.map((r) => `  ${r.mark} ${r.line}`)].join("\n");
        run.update({
          content: [{ type: "text", text }],
          details: { subagent: tag, event, status: { ...status } } satisfies SubagentUpdate as never,
        });
      });

      const onAbort = () => agent.abort();
      run.signal.addEventListener("abort", onAbort, { once: true });
      const started = agent.prompt(args.prompt);
      const entry = { agent, done: started };
      this.running.add(entry);
      let result: Awaited<typeof started>;
      try {
        if (run.signal.aborted) agent.abort();
        result = await started;
      } finally {
        run.signal.removeEventListener("abort", onAbort);
        this.running.delete(entry);
      }
      const usage = childUsage(result.messages);
      const text = lastAssistantText(result.messages);
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
        ...(cut.truncated
          ? [
              `[answer cut to ${MAX_LINES} lines / ${formatSize(MAX_BYTES)} of ${cut.totalLines} lines${session?.file ? "; the whole answer is in the sub-agent's session" : ""}]`,
            ]
          : []),
        ...(missing.length
          ? [`[the ${type.name} agent asks for tools this agent does not have, left out: ${missing.join(", ")}]`]
          : []),
        ...(result.reason ? [`[the sub-agent was stopped: ${result.reason}]`] : []),
        ...(sessionError ? [`[the sub-agent's session file is incomplete: ${sessionError}]`] : []),
      ];
      const where = session
        ? `session ${session.id}${session.file ? ` (${session.file})` : " (in memory)"}`
        : "no session";
      const footer = `[sub-agent ${type.name} · ${where} · ${provider === inherit.provider ? "" : `${provider}/`}${model.id} · ${record.requests} requests · ${n(usageTotal(record.usage))} tokens · $${record.usage.cost.total.toFixed(4)}]`;
      const body = failed
        ? `The sub-agent ${result.stopReason === "aborted" ? "was aborted" : `failed: ${result.error ?? "the run ended with an error"}`}.${text ? `\nIts last text:\n${cut.text}` : ""}`
        : cut.text || "(the sub-agent gave no text answer)";
      return {
        content: [{ type: "text", text: [body, ...notes, footer].join("\n\n") }],
        details: { subagent: record },
        isError: failed,
      };
    } catch (error) {
      throw new Error(`the ${type.name} sub-agent could not run: ${messageOf(error)}`);
    } finally {
      release();
      try {
        session?.close();
      } catch (error) {
        this.ctx.log.warn(`sub-agent ${id}: ${messageOf(error)}`);
      }
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

/** Usage and requests of a child run: its replies, plus its own children's (from their task results). */
function childUsage(messages: readonly AgentMessage[]) {
  let usage = emptyUsage();
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
