/**
 * `!cmd` in the editor: the user's own shell command, run as a `bash` tool call through
 * `agent.runTool`. It passes the same gates as the model's bash calls (argument validation, the
 * `tool_call` taps: permission rules, plan mode, hooks; then `tool_result`) and runs through the bash
 * tool, so the `operations` backend (a sandbox) confines it too. Its tool events carry `id`, so the
 * transcript shows it live like any tool call. The result is returned; nothing enters history here.
 */
import type { Agent, ToolResultMessage } from "../../api/index.js";
import { resultText } from "./render.js";

export interface ShellRun {
  result: ToolResultMessage;
  /** The tool's output text (or the reason it was refused). */
  output: string;
  /** Whether the command ran: false when a gate refused it, the arguments were invalid or the preset has no bash tool. */
  ran: boolean;
  /** The exit code when it ran (null when a signal ended it). */
  exitCode: number | null;
}

export async function runShellCommand(
  agent: Pick<Agent, "runTool">,
  command: string,
  id: string,
  signal?: AbortSignal,
): Promise<ShellRun> {
  const result = await agent.runTool({ id, name: "bash", arguments: { command } }, signal);
  const details = result.details as { exitCode?: number | null } | undefined;
  const ran = details !== undefined && details !== null && "exitCode" in details;
  return { result, output: resultText(result), ran, exitCode: ran ? (details.exitCode ?? null) : null };
}
