/**
 * subagents: the `task` tool. The model delegates a job to a child agent that runs its own loop in its
 * own context (it never sees the parent's messages) with a filtered tool set, and gets the child's final
 * text back as the tool result. Children run in parallel (`maxParallel`), go through the parent's gates,
 * are aborted with the parent, keep their conversation in their own session file, and their usage is
 * carried on the result so the parent's totals and budgets include it. See docs/subagents.md.
 */
import { resolve } from "node:path";
import { Type, definePlugin, type ModelRequest } from "../../api/index.js";
import { discoverAgents } from "./agents.js";
import { TaskRunner } from "./runner.js";
import { locationsOf } from "../../lib/locations.js";

export { BUILTIN_AGENTS, discoverAgents, parseAgentFile, type AgentType, type AgentProblem } from "./agents.js";
export type { SubagentRun, SubagentUpdate, SubagentsService, TaskDetails } from "./api.js";

export const SubagentsOptions = Type.Object({
  /** `task` calls of one reply that run at the same time; the others wait for a free slot. */
  maxParallel: Type.Integer({ minimum: 1, default: 4 }),
  /** How deep delegation may nest: 1 = children cannot delegate further. 0 turns the `task` tool off. */
  maxDepth: Type.Integer({ minimum: 0, default: 1 }),
  /** Plugins whose conversation-level taps (before_request, turn_end, should_stop, compact) stay with the parent. Their tool_call/tool_result gates always apply to children. */
  isolate: Type.Array(Type.String(), {
    default: ["session-jsonl", "cost-audit", "hooks-claude", "ui-tui", "ui-rpc", "ui-print"],
  }),
  /** Read agent files of installed packages (`"coil": { "agents": [...] }`). */
  packages: Type.Boolean({ default: true }),
  /** More folders of agent files (relative to the preset file), read after the standard ones. */
  dirs: Type.Array(Type.String(), { default: [] }),
  /** Write each child's conversation to its own session file (when the session plugin is in the preset). */
  sessions: Type.Boolean({ default: true }),
});

export default definePlugin({
  id: "subagents",
  description: "The task tool: delegate work to child agents with their own context, in parallel",
  options: SubagentsOptions,
  setup(ctx) {
    const o = ctx.options;
    if (o.maxDepth < 1) return;
    const found = discoverAgents({
      cwd: locationsOf(ctx).projectRoot,
      home: locationsOf(ctx).coilHome,
      userHome: locationsOf(ctx).home,
      packages: o.packages,
      trusted: ctx.projectTrusted,
      extra: o.dirs.map((d) => resolve(ctx.baseDir, d)),
    });
    const agents = found.agents;
    if (found.problems.length)
      ctx.onStart(() => {
        for (const p of found.problems) ctx.log.warn(`agent file ${p.file} skipped: ${p.reason}`);
      });
    ctx.services.provide("subagents", { agents: () => agents, problems: () => found.problems });
    ctx.commands.register({
      name: "agents",
      description: "list the sub-agent types the task tool offers, and agent files that were skipped",
      run: () =>
        [
          ...agents.map(
            (a) =>
              `${a.name} (${a.file ?? a.source}): ${a.description}${a.tools ? ` [tools: ${a.tools.join(", ")}]` : ""}${a.model && a.model !== "inherit" ? ` [model: ${a.model}]` : ""}`,
          ),
          ...found.problems.map((p) => `skipped ${p.file}: ${p.reason}`),
        ].join("\n"),
    });
    const runner = new TaskRunner(ctx, agents);
    ctx.onStop(() => runner.stop());
    ctx.onStart((agent) => {
      runner.root = agent;
    });
    // The main agent's request options, as its latest request had them (this tap stays out of children).
    ctx.tap(
      "before_request",
      (request: ModelRequest) => {
        runner.rootOptions = request.options;
        return undefined;
      },
      { stage: "FALLBACK" },
    );
    ctx.tools.register(runner.taskTool(runner.rootScope()));
  },
});
