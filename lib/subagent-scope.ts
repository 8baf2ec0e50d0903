/**
 * Which sub-agent the code running now works for. The subagents plugin runs each child inside
 * `runAsSubagent`; a tap that must behave differently in a child (guards' done-check belongs to the main
 * agent) asks `currentSubagent()`. Backed by one AsyncLocalStorage per process, whatever copy of this
 * module a plugin loaded.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface SubagentScope {
  /** The child's id (the parent's task call id). */
  id: string;
  agent: string;
  /** 1 for a child of the main agent. */
  depth: number;
}

const KEY = Symbol.for("coil.subagent-scope");
const shared = globalThis as Record<symbol, unknown>;
shared[KEY] ??= new AsyncLocalStorage<SubagentScope>();
const store = shared[KEY] as AsyncLocalStorage<SubagentScope>;

export function runAsSubagent<T>(scope: SubagentScope, fn: () => T): T {
  return store.run(scope, fn);
}

/** The sub-agent this code runs for, or undefined in the main agent. */
export function currentSubagent(): SubagentScope | undefined {
  return store.getStore();
}
