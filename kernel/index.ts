/**
 * coil's public surface: what plugins, presets' code and embedders import (`import { definePlugin } from "coil"`).
 */
export { Type } from "typebox";
export type { Static, TSchema } from "typebox";
export * from "./types.js";
export { Stage, FAILURE, HOOK_NAMES, type HookName, type KernelHooks, type StageName, type TapFn } from "./hooks.js";
export { CoilError, formatError, messageOf, type ErrorCode, type Phase } from "./errors.js";
export { Registry } from "./registry.js";
export {
  PluginHost,
  definePlugin,
  isPlugin,
  validateOptions,
  type CliStreams,
  type FlagSpec,
  type StartFn,
  type StopFn,
  type Subcommand,
  type FrontEnd,
  type FrontEndContext,
  type InstallSource,
  type Plugin,
  type PluginContext,
  type PluginLog,
  type Services,
  type SlashCommand,
  type TapOptions,
} from "./plugin.js";
export { Agent, type AgentOptions, type AgentState, type PromptInput, type RunResult } from "./agent.js";
export {
  emptyUsage,
  errorResult,
  estimateContextTokens,
  estimateMessageTokens,
  textOf,
  toolCallsOf,
  unansweredCalls,
  usageTotal,
  userMessage,
} from "./context.js";

import type { TSchema } from "typebox";
import type { ToolDefinition } from "./types.js";
/** Identity helper that types a tool's `execute` arguments from its schema. */
export function defineTool<P extends TSchema, D = unknown>(tool: ToolDefinition<P, D>): ToolDefinition<P, D> {
  return tool;
}
