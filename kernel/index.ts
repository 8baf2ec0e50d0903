/**
 * coil's public surface: what plugins, presets' code and embedders import (`import { definePlugin } from "coil"`).
 */
import type { TSchema } from "typebox";
import type { ToolDefinition } from "./types.js";

export { Type } from "typebox";
export type { Static, TSchema } from "typebox";
export * from "./types.js";
export * from "./hooks.js";
export * from "./errors.js";
export * from "./registry.js";
export * from "./plugin.js";
export * from "./host.js";
export * from "./agent.js";
export * from "./messages.js";

/** Identity helper that types a tool's `execute` arguments from its schema. */
export function defineTool<P extends TSchema, D = unknown>(tool: ToolDefinition<P, D>): ToolDefinition<P, D> {
  return tool;
}
