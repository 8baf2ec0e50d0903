/**
 * The rules the validating mock servers (test/support/mock-anthropic.ts, mock-openai.ts) apply to a
 * request's messages, checked on coil's own message shapes: custom messages are dropped (as the loop
 * drops them), the first message is the user's, content is not empty, every tool call of an assistant
 * message is answered by a result in the messages right after it, and every result answers a call of
 * the assistant message right before its run of results. Returns the problems (empty when valid).
 */
import type { AgentMessage, Message } from "../../api/index.js";

export function historyProblems(history: readonly AgentMessage[]): string[] {
  const messages = history.filter((m): m is Message => m.role !== "custom");
  const problems: string[] = [];
  if (messages.length === 0) return ["no messages"];
  if (messages[0]!.role !== "user")
    problems.push(`messages.0: the first message must be the user's, not ${messages[0]!.role}`);
  let open: Set<string> | undefined; // calls of the last assistant message still waiting for results
  let inResults = false;
  messages.forEach((m, i) => {
    if (m.role === "toolResult") {
      if (!open || !inResults)
        problems.push(
          `messages.${i}: tool result ${m.toolCallId} does not follow an assistant message with tool calls`,
        );
      else if (!open.delete(m.toolCallId))
        problems.push(
          `messages.${i}: tool result ${m.toolCallId} answers no open call of the assistant message before it`,
        );
      if (m.content.length === 0) problems.push(`messages.${i}: tool result ${m.toolCallId} has no content`);
      return;
    }
    if (open && open.size > 0)
      problems.push(`messages.${i}: tool call(s) ${[...open].join(", ")} have no result before this ${m.role} message`);
    open = undefined;
    inResults = false;
    if (m.role === "user") {
      const empty =
        typeof m.content === "string"
          ? m.content.length === 0
          : m.content.length === 0 || m.content.some((c) => c.type === "text" && c.text.length === 0);
      if (empty) problems.push(`messages.${i}: user message with empty content`);
    } else {
      const calls = m.content.filter((c) => c.type === "toolCall").map((c) => (c as { id: string }).id);
      if (m.content.length === 0 && i < messages.length - 1)
        problems.push(`messages.${i}: assistant message with empty content`);
      if (calls.length) {
        open = new Set(calls);
        inResults = true;
      }
    }
  });
  if (open && open.size > 0) problems.push(`end: tool call(s) ${[...open].join(", ")} have no result`);
  return problems;
}
