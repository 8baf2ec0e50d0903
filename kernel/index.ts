/**
 * coil's public surface: what plugins, presets' code and embedders import (`import { definePlugin } from "coil"`).
 * An explicit list: the host, the tap wrapper, option validation and the loop's helpers are the kernel's own
 * (boot/, cli/ and the SDK import them by path; plugins never do).
 */
import type { TSchema } from "typebox";
import type { ToolDefinition } from "./types.js";

export type { Static, TSchema } from "typebox";
export { Type } from "typebox";
export type { AgentOptions, AgentState, AgentView, ForkOptions, PromptInput, RunResult } from "./agent.js";
export { Agent } from "./agent.js";
export { compactionLimit, DEFAULT_RESERVE_TOKENS } from "./compaction.js";
export type { CoilErrorOptions, ErrorCode, Phase } from "./errors.js";
export { CoilError, messageOf } from "./errors.js";
export type { HookName, HookTaps, RewriteFn, StageName, TapFn } from "./hooks.js";
export { HOOK_NAMES, Stage } from "./hooks.js";
export type { ForkHostOptions, ForkTap } from "./host.js";
export {
  emptyUsage,
  errorResult,
  estimateMessageTokens,
  lastAssistantText,
  textOf,
  toolCallsOf,
  unansweredCalls,
  usageTotal,
  userMessage,
} from "./messages.js";
export type {
  CliStreams,
  Declaration,
  FrontEnd,
  FrontEndContext,
  InstallSource,
  LateRegistrar,
  Plugin,
  PluginContext,
  PluginLog,
  Registrar,
  Services,
  SlashCommand,
  SlashResult,
  StartFn,
  StartInfo,
  StopFn,
  TapOptions,
} from "./plugin.js";
export { definePlugin } from "./plugin.js";
export type { Owned, ReadonlyRegistry } from "./registry.js";
export type {
  AgentEvent,
  AgentEventType,
  AgentMessage,
  AgentScope,
  AssistantMessage,
  CompactReason,
  CompactRequest,
  CompactResult,
  CustomMessage,
  ImageContent,
  Message,
  ModelInfo,
  ModelRequest,
  Provider,
  ProviderEvent,
  ProviderRequest,
  RequestOptions,
  RunStopReason,
  StopQuery,
  StopReason,
  StopVerdict,
  SystemBlock,
  TextContent,
  ThinkingContent,
  ToolBlock,
  ToolCall,
  ToolCallInfo,
  ToolDefinition,
  ToolOutput,
  ToolResult,
  ToolResultMessage,
  ToolRewrite,
  ToolRunContext,
  ToolSpec,
  TurnInfo,
  TurnRecord,
  UiService,
  Usage,
  UserMessage,
} from "./types.js";
export { ERROR_CONTEXT_OVERFLOW } from "./types.js";

/** Identity helper that types a tool's `execute` arguments from its schema. */
export function defineTool<P extends TSchema, D = unknown>(tool: ToolDefinition<P, D>): ToolDefinition<P, D> {
  return tool;
}
