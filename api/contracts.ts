/**
 * What plugins read of the kernel's contracts beyond what the kernel reads, declared by augmenting them, so
 * `coil`'s `Provider`, `ToolDefinition` and `RequestOptions` are whole while kernel/types.ts holds what the
 * loop uses: a provider's catalog and set-up (model resolution in lib/models.ts, the CLI's hints), a tool's
 * label, read-only mark and prompt lines (front ends, plan mode, the system prompt), and the provider-neutral
 * request knobs (front ends and thinking set them, providers read them). Types only.
 */
import type { TSchema } from "typebox";
import type { ModelInfo } from "../kernel/types.js";

declare module "../kernel/types.js" {
  interface Provider {
    /** Models this provider knows; the first is its default. */
    models?: readonly ModelInfo[];
    /** A model for an id it does not list (local servers); undefined means unknown. */
    resolveModel?(id: string): ModelInfo | undefined;
    /** Whether the provider can run now (e.g. its API key is set). Undefined means yes. */
    isConfigured?(): boolean;
    /** One line telling the user how to configure it, shown when no provider is usable. */
    setupHint?: string;
  }

  interface ToolDefinition<P extends TSchema = TSchema, D = unknown> {
    /** Human label for front ends. */
    label?: string;
    /** True when the tool changes nothing (an MCP tool marked `readOnlyHint`): plan mode keeps it. */
    readOnly?: boolean;
    /** One line for the system prompt's tool list. */
    promptSnippet?: string;
    /** Usage guidelines for the system prompt. */
    promptGuidelines?: readonly string[];
  }

  interface RequestOptions {
    maxTokens?: number;
    temperature?: number;
    /** Reasoning effort; `off` disables thinking. */
    thinking?: "off" | "minimal" | "low" | "medium" | "high" | "xhigh";
  }
}
