/**
 * coil's public surface: what plugins, presets' code and embedders import (`import { definePlugin } from "coil"`).
 * An explicit list of the kernel's contracts and of what a plugin is (./plugin.ts). The hosts, the tap wrapper,
 * option validation and the loop's helpers stay out of it (boot/, cli/ and the SDK import them by path;
 * plugins never do).
 */

import "./contracts.js";

export type { Static, TSchema } from "typebox";
export { Type } from "typebox";
export type {
  AgentOptions,
  AgentState,
  AgentView,
  ForkOptions,
  PromptInput,
  RunResult,
  SlashCommand,
  SlashResult,
} from "../kernel/agent.js";
export { Agent } from "../kernel/agent.js";
export { compactionLimit, DEFAULT_RESERVE_TOKENS } from "../kernel/compaction.js";
export type { CoilErrorOptions, ErrorCode, Phase } from "../kernel/errors.js";
export { CoilError, messageOf } from "../kernel/errors.js";
export type { HookName, HookTaps, RewriteFn, StageName, TapFn, TapOptions } from "../kernel/hooks.js";
export { HOOK_NAMES, Stage } from "../kernel/hooks.js";
export type { ForkHostOptions, ForkTap } from "../kernel/host.js";
export {
  emptyUsage,
  errorResult,
  estimateMessageTokens,
  toolCallsOf,
  unansweredCalls,
  usageTotal,
  userMessage,
} from "../kernel/messages.js";
export { lastAssistantText, textOf } from "./messages.js";
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
  StartFn,
  StartInfo,
  StopFn,
  UiService,
} from "./plugin.js";
export { definePlugin, defineTool } from "./plugin.js";
export type { Owned, ReadonlyRegistry } from "../kernel/registry.js";
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
  Usage,
  UserMessage,
} from "../kernel/types.js";
export { ERROR_CONTEXT_OVERFLOW } from "../kernel/types.js";
