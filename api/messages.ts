/** Helpers over messages that plugins and front ends use and the loop does not: a message's text, a run's answer. */
import type { AgentMessage } from "../kernel/types.js";

export function textOf(message: AgentMessage | undefined): string {
  if (!message) return "";
  if (typeof message.content === "string") return message.content;
  return (message.content as { type: string; text?: string }[])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("");
}

/** The text of the last assistant message (a run's answer). */
export const lastAssistantText = (messages: readonly AgentMessage[]): string =>
  textOf([...messages].reverse().find((m) => m.role === "assistant"));
