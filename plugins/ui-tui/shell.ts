/**
 * `!cmd` in the editor: the user's own shell command, run as a `bash` tool call through
 * `agent.runTool`. It passes the same gates as the model's bash calls (argument validation, the
 * `tool_call` taps: permission rules, plan mode, hooks; then `tool_result`) and runs through the bash
 * tool, so the `operations` backend (a sandbox) confines it too. Its tool events carry `id`, so the
 * transcript shows it live like any tool call. The result is returned; nothing enters history here.
 *
 * A plugin's `user-shell` service (Pi extensions' `user_bash`) is asked first: it may give the output itself
 * or run the command with its own runner (a remote shell); then the plugin, not the bash tool, ran it.
 */
import type { Agent, ToolResultMessage } from "../../api/index.js";
import type { UserShellService } from "../../lib/front-end.js";
import { resultText } from "./render.js";

export interface ShellRun {
  result: ToolResultMessage;
  /** The tool's output text (or the reason it was refused). */
  output: string;
  /** Whether the command ran: false when a gate refused it, the arguments were invalid or the preset has no bash tool. */
  ran: boolean;
  /** The exit code when it ran (null when a signal ended it). */
  exitCode: number | null;
  /** Who ran it instead of the bash tool (the `user-shell` service's answer), when someone did. */
  by?: string;
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

/**
 * The user's `!cmd` (`!!cmd`: `excludeFromContext`): the `user-shell` service's answer when it gives one, else
 * the bash tool's. Either way it is the bash call of runShellCommand, through the same gates: a plugin's answer
 * only takes the tool's place once they let it through (`agent.runTool`'s `run`), its output streamed as the
 * tool's. A `cancelled` answer (the plugin refused, or failed) is shown but counts as not run.
 */
export async function runUserCommand(
  agent: Pick<Agent, "runTool">,
  shell: UserShellService | undefined,
  command: string,
  o: { id: string; excludeFromContext: boolean; cwd: string; signal?: AbortSignal },
): Promise<ShellRun> {
  const answer = shell
    ? await shell.intercept(command, { excludeFromContext: o.excludeFromContext, cwd: o.cwd })
    : undefined;
  if (!answer) return runShellCommand(agent, command, o.id, o.signal);
  const answered = (text: string, exitCode: number | null, cancelled = false) => ({
    content: [
      {
        type: "text" as const,
        text:
          exitCode === 0
            ? text
            : `${text}${text && !text.endsWith("\n") ? "\n" : ""}(exit code ${exitCode ?? "none: ended by a signal"})`,
      },
    ],
    details: { exitCode, by: answer.by, ...(cancelled ? { cancelled } : {}) },
    isError: exitCode !== 0,
  });
  let output = "";
  const result = await agent.runTool(
    { id: o.id, name: "bash", arguments: { command } },
    o.signal,
    async (_args, run) => {
      if ("result" in answer) {
        output = answer.result.output;
        return answered(output, answer.result.exitCode, answer.result.cancelled);
      }
      const decoder = new TextDecoder();
      const { exitCode } = await answer.exec(command, o.cwd, {
        signal: run.signal,
        onData(chunk) {
          output += decoder.decode(chunk, { stream: true });
          run.update({ content: [{ type: "text", text: output }] });
        },
      });
      output += decoder.decode();
      return answered(output, exitCode);
    },
  );
  const details = result.details as { exitCode?: number | null; by?: string; cancelled?: boolean } | undefined;
  if (details?.by === undefined) return { result, output: resultText(result), ran: false, exitCode: null };
  return { result, output, ran: !details.cancelled, exitCode: details.exitCode ?? null, by: details.by };
}
