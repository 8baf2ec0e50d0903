/**
 * The RPC wire protocol (`coil --mode rpc`): JSON lines over stdin/stdout, LF-framed. Shared by the
 * front end (plugins/ui-rpc) and the typed client (sdk/rpc-client/index.ts). Types only. See docs/rpc.md.
 */
import type { AgentEvent, AgentMessage, ImageContent, ModelInfo, RunStopReason } from "../../api/index.js";

/** What each command takes (`params`) and answers (`data`). */
export interface RpcCommands {
  prompt: { params: { message: string; images?: ImageContent[] }; data: { started: boolean; output?: string } };
  steer: { params: { message: string }; data: { queued: number } };
  follow_up: { params: { message: string }; data: { queued: number } };
  abort: { params: Record<string, never>; data: { unsent: AgentMessage[] } };
  get_state: { params: Record<string, never>; data: RpcState };
  get_messages: { params: Record<string, never>; data: { messages: AgentMessage[] } };
  set_model: { params: { model: string; provider?: string }; data: { provider: string; model: ModelInfo } };
  compact: { params: { instructions?: string }; data: { compacted: boolean; tokensAfter?: number } };
  new_session: { params: Record<string, never>; data: { session: RpcSession } };
  fork: { params: { entryId: string | null }; data: { session: RpcSession } };
  switch_session: { params: { session: string }; data: { session: RpcSession } };
  list_commands: {
    params: Record<string, never>;
    data: { commands: { name: string; description: string; argumentHint?: string }[] };
  };
}
export type RpcCommandName = keyof RpcCommands;

export interface RpcSession {
  id: string;
  file?: string;
  leafId: string | null;
}

export interface RpcState {
  provider: string;
  model: ModelInfo;
  isRunning: boolean;
  messageCount: number;
  pendingToolCalls: readonly string[];
  queued: { steering: number; followUp: number };
  session?: RpcSession;
  /** How the latest run ended (as in its `agent_end`); absent before the first run. `halted`: a guard stopped it. */
  lastRun?: { stopReason: RunStopReason; reason?: string };
}

/** Client → coil. */
export type RpcInbound =
  | { id?: string | number; type: RpcCommandName; [param: string]: unknown }
  | { type: "ui_response"; id: string; result?: unknown };

/** coil → client. */
export type RpcOutbound =
  | { type: "ready"; version: 1 }
  | { type: "response"; id?: string | number; command: string; success: true; data?: unknown }
  | { type: "response"; id?: string | number; command: string; success: false; error: string }
  | { type: "event"; event: AgentEvent }
  | {
      type: "ui_request";
      id: string;
      /** Dialogs (answered with `ui_response`) and fire-and-forget calls (no answer): see docs/rpc.md. */
      method: "confirm" | "select" | "input" | "notify" | "setStatus" | "setWidget" | "setTitle" | "setEditorText";
      params: Record<string, unknown>;
    }
  | { type: "ui_cancel"; id: string };

export const RPC_COMMANDS: readonly RpcCommandName[] = [
  "prompt",
  "steer",
  "follow_up",
  "abort",
  "get_state",
  "get_messages",
  "set_model",
  "compact",
  "new_session",
  "fork",
  "switch_session",
  "list_commands",
];

/** Split LF-framed text: returns complete lines (a trailing `\r` removed) and the unfinished rest. */
export function splitLines(buffer: string): { lines: string[]; rest: string } {
  const parts = buffer.split("\n");
  const rest = parts.pop() ?? "";
  return { lines: parts.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l)).filter((l) => l.trim() !== ""), rest };
}
