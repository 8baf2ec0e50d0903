/**
 * The subagents plugin's contract for front ends and other plugins (types only): what a `task` result
 * and the child events forwarded as `tool_execution_update` carry, and the `subagents` service.
 */
import type { AgentEvent } from "../../api/index.js";
import type { SubagentRun } from "../../lib/subagent-usage.js";
import type { AgentProblem, AgentType } from "./agents.js";

export type { SubagentRun, AgentType, AgentProblem };

/** What `details` of a `task` result holds. */
export interface TaskDetails {
  subagent: SubagentRun;
}

/** A child event as the parent's front ends see it: `tool_execution_update` of the `task` call, `partial.details`. */
export interface SubagentUpdate {
  subagent: { id: string; agent: string; description: string; depth: number; session?: { id: string; file?: string } };
  /** The child's own event, as its agent emitted it (nested children's updates arrive as its `tool_execution_update`). */
  event: AgentEvent;
  /** Live status: the tool the child is running, tokens used so far, turns done. */
  status: { tool?: string; tokens: number; turns: number };
}

/** The `subagents` service: the agent types (for front ends' listings). */
export interface SubagentsService {
  agents(): readonly AgentType[];
  problems(): readonly AgentProblem[];
}

declare module "coil" {
  interface Services {
    subagents: SubagentsService;
  }
}
