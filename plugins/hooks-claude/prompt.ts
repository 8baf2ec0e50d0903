/**
 * `type: "prompt"` hooks, as Claude Code runs them: the hook's prompt (with `$ARGUMENTS` replaced by the
 * hook's JSON input) goes to the session's model (or the hook's own `model`), thinking off, and the answer
 * is a JSON object `{ "ok": boolean, "reason": string }`. `ok: false` is a blocking answer (as exit 2 with
 * the reason on stderr: the call is refused, a Stop hook keeps the agent going, ...). A Stop or SubagentStop
 * hook sees the conversation before the question, as in Claude Code.
 */
import type { Agent, AssistantMessage, Message, ModelInfo, Provider } from "../../api/index.js";
import { resolveModel } from "../../lib/models.js";
import type { HookOutcome } from "./run.js";
import type { HookDef } from "./settings.js";

const SYSTEM = `You judge a condition for a hook of the coding agent you are part of. Read the condition (and, when given, the conversation before it), decide whether the condition is met, and answer with one JSON object and nothing else:
{"ok": true, "reason": "<why it is met>"} or {"ok": false, "reason": "<what is missing or wrong>"}.
Always give a reason.`;

/** The prompt's text with the input: `$ARGUMENTS` replaced, else the input after it. */
export function promptText(prompt: string, input: unknown): string {
  const json = JSON.stringify(input);
  return prompt.includes("$ARGUMENTS") ? prompt.replaceAll("$ARGUMENTS", json) : `${prompt}\n\nInput: ${json}`;
}

/** Ask the model; the answer as a hook outcome (exit 0 for ok, 2 with the reason for not ok, an error otherwise). */
export async function runPromptHook(
  def: HookDef,
  input: Record<string, unknown>,
  agent: Agent | undefined,
  signal?: AbortSignal,
): Promise<HookOutcome> {
  const base = { command: def.command, stdout: "", stderr: "" };
  if (!agent) return { ...base, error: "no agent to ask (prompt hooks need a model)" };
  let provider: Provider | undefined;
  let model: ModelInfo;
  try {
    if (def.model) {
      const chosen = resolveModel([...agent.view.providers.values()], def.model);
      provider = chosen.provider;
      model = chosen.model;
    } else {
      provider = agent.view.providers.get(agent.state.provider);
      model = agent.state.model;
    }
  } catch (error) {
    return { ...base, error: `model '${def.model}' is not available: ${(error as Error).message}` };
  }
  if (!provider) return { ...base, error: `provider '${agent.state.provider}' is not registered` };
  const question = promptText(def.prompt ?? def.command, input);
  const stop = def.event === "Stop" || def.event === "SubagentStop";
  const history: Message[] = stop
    ? (agent.state.messages.filter(
        (m) => m.role === "user" || m.role === "assistant" || m.role === "toolResult",
      ) as Message[])
    : [];
  const text = stop ? `Judge from the conversation above whether this condition is met:\n\n${question}` : question;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), def.timeoutMs);
  const onAbort = () => controller.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  let final: AssistantMessage | undefined;
  try {
    const stream = provider.stream(
      {
        model,
        system: [{ id: "hooks-claude-prompt", text: SYSTEM }],
        messages: [...history, { role: "user", content: text, timestamp: Date.now() }],
        tools: [],
        options: { maxTokens: Math.min(model.maxOutput || 4096, 4096), thinking: "off" },
      },
      controller.signal,
    );
    for await (const event of stream) {
      if (event.type === "done" || event.type === "error") {
        final = event.message;
        break;
      }
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
  if (controller.signal.aborted && !signal?.aborted)
    return { ...base, timedOut: true, error: `timed out after ${def.timeoutMs / 1000} s` };
  if (!final || final.stopReason === "error" || final.stopReason === "aborted")
    return { ...base, error: `the model did not answer: ${final?.errorMessage ?? final?.stopReason ?? "no reply"}` };
  const reply = final.content
    .map((c) => (c.type === "text" ? c.text : ""))
    .join("")
    .trim();
  const answer = parseAnswer(reply);
  if (!answer)
    return {
      ...base,
      stdout: reply,
      error: `the model's answer is not {"ok": ..., "reason": ...}: ${reply.slice(0, 200)}`,
    };
  return answer.ok ? { ...base, code: 0, stdout: reply } : { ...base, code: 2, stdout: reply, stderr: answer.reason };
}

/** `{ "ok": boolean, "reason"?: string }`, also inside a code fence or after some words. */
function parseAnswer(text: string): { ok: boolean; reason: string } | undefined {
  const candidates = [text, /\{[\s\S]*\}/.exec(text)?.[0]].filter((t): t is string => Boolean(t));
  for (const c of candidates) {
    try {
      const data = JSON.parse(c) as { ok?: unknown; reason?: unknown };
      if (typeof data?.ok === "boolean")
        return {
          ok: data.ok,
          reason: typeof data.reason === "string" && data.reason ? data.reason : "no reason given",
        };
    } catch {
      // not this one
    }
  }
  return undefined;
}
