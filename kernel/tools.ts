/**
 * Tool execution: each call of a reply is looked up, validated, rewritten (tool_call's rewrite step),
 * gated on its final arguments (the gate step), run and passed through `tool_result`. Every call gets
 * exactly one result, in call order, whatever happens.
 */
import { ABORT, untilAborted } from "./abort.js";
import { messageOf } from "./errors.js";
import type { LoopInputs } from "./loop.js";
import { assistantMessage, errorResult } from "./messages.js";
import type {
  AssistantMessage,
  ToolBlock,
  ToolCall,
  ToolCallInfo,
  ToolDefinition,
  ToolOutput,
  ToolResultMessage,
} from "./types.js";

export const ABORTED = "Not executed: the run was aborted by the user.";
const ABORTED_RUNNING = "Aborted by the user before the tool finished.";
const SKIPPED = "Skipped: the user sent a new message.";

type ToolInputs = Pick<LoopInputs, "host" | "agent" | "config" | "queues" | "run">;

/** A call ready to finish: `result` when it is answered without running, else `info` to run it with. */
type Prepared =
  | { call: ToolCall; info?: ToolCallInfo; result: ToolResultMessage }
  | { call: ToolCall; info: ToolCallInfo; result?: undefined };

const skipped = (call: ToolCall): Prepared => ({ call, result: errorResult(call, SKIPPED) });

/**
 * Validate, rewrite and gate every call in order, then execute: in parallel unless anything asks for
 * sequence. A call not started yet when steering is queued is skipped (answered, never run), so the user's
 * new message takes effect before the next call rather than after the whole batch.
 */
export async function executeBatch(
  loop: ToolInputs,
  message: AssistantMessage,
  calls: ToolCall[],
): Promise<ToolResultMessage[]> {
  const { run, queues } = loop;
  const sequential =
    loop.config().toolExecution === "sequential" ||
    calls.some((call) => loop.host.tools.get(call.name)?.executionMode === "sequential");
  if (sequential) {
    const results: ToolResultMessage[] = [];
    for (const call of calls) {
      if (run.signal.aborted) results.push(errorResult(call, ABORTED));
      else if (queues.steering.length > 0) results.push(await finish(loop, skipped(call)));
      else results.push(await finish(loop, await prepare(loop, message, call)));
    }
    return results;
  }
  const prepared: Prepared[] = [];
  for (const call of calls) {
    if (run.signal.aborted) prepared.push({ call, result: errorResult(call, ABORTED) });
    else if (queues.steering.length > 0) prepared.push(skipped(call));
    else prepared.push(await prepare(loop, message, call));
  }
  // steering that came while calls were gated (a permission prompt) still stops them from starting
  const skip = queues.steering.length > 0;
  return Promise.all(prepared.map((p) => finish(loop, skip && !p.result ? skipped(p.call) : p)));
}

/** One call outside a reply (`agent.runTool`): the same validation, steps, execution and `tool_result`. */
export async function runToolCall(loop: ToolInputs, call: ToolCall, run?: ToolDefinition["execute"]) {
  const prepared = await prepare(loop, assistantMessage(loop.config(), [call], "toolUse"), call);
  if (!run || prepared.result) return finish(loop, prepared);
  return finish(loop, { call, info: { ...prepared.info, tool: { ...prepared.info.tool, execute: run } } });
}

/** Look the tool up, repair and validate the arguments, run the rewrite step and then the gates. */
async function prepare(loop: ToolInputs, message: AssistantMessage, call: ToolCall): Promise<Prepared> {
  const { host } = loop;
  const refused = (text: string): Prepared => {
    started(loop, call, call.arguments);
    return { call, result: errorResult(call, text) };
  };
  const tool = host.tools.get(call.name);
  if (!tool) {
    const known = host.tools.names().join(", ") || "(none)";
    return refused(`Tool '${call.name}' does not exist. Available tools: ${known}.`);
  }
  if (call.parseError) {
    return refused(
      `Not executed: the arguments of this call are not valid JSON (${call.parseError}). ` +
        "Re-issue the call with valid JSON arguments.",
    );
  }
  let args = call.arguments ?? {};
  if (tool.prepareArguments) {
    try {
      args = tool.prepareArguments(structuredClone(args as Record<string, unknown>));
    } catch {
      // a repair that fails leaves the arguments as the model sent them; validation reports the problem
    }
  }
  const checked = await validateArgs(tool, args);
  if (typeof checked === "string") return refused(checked);
  const { signal } = loop.run;
  const first: ToolCallInfo = Object.freeze({
    call,
    args: Object.freeze(checked),
    tool,
    message,
    signal,
    agent: loop.agent,
  });
  // Step 1: every rewrite, in stage order. Step 2: every gate, on the arguments that will run.
  const info = await host.hooks.tool_call.rewrite.promise(first);
  if ("block" in info) {
    started(loop, call, first.args);
    return { call, result: blocked(loop, call, info) };
  }
  started(loop, call, info.args, info.rewrittenBy);
  const block = await host.hooks.tool_call.gate.promise(info);
  if (block?.block) return { call, info, result: blocked(loop, call, block) };
  return { call, info };
}

function started(loop: ToolInputs, call: ToolCall, args: Record<string, unknown>, rewrittenBy?: readonly string[]) {
  loop.host.emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args, rewrittenBy });
}

/** The error result of a blocked call; the reason names the plugin that blocked it. */
function blocked(loop: ToolInputs, call: ToolCall, block: ToolBlock): ToolResultMessage {
  const by = loop.host.bailedBy(block);
  const reason = by && !block.reason.includes(by) ? `${block.reason} (${by})` : block.reason;
  return errorResult(call, `Blocked: ${reason}`);
}

const validators = new WeakMap<object, import("typebox/compile").Validator>();

/**
 * Defaults, then a strict check (converting types once, `"2"` → `2`): the arguments, or what is wrong.
 * TypeBox's compiler is imported at the first call (a run that calls no tool never compiles it), then found loaded.
 */
export async function validateArgs(tool: ToolDefinition, args: unknown): Promise<Record<string, unknown> | string> {
  const { Compile } = await import("typebox/compile");
  let validator = validators.get(tool.parameters);
  if (!validator) {
    validator = Compile(tool.parameters);
    validators.set(tool.parameters, validator);
  }
  const withDefaults = validator.Default(structuredClone(args));
  if (validator.Check(withDefaults)) return withDefaults as Record<string, unknown>;
  const converted = validator.Convert(structuredClone(withDefaults));
  if (validator.Check(converted)) return converted as Record<string, unknown>;
  const problems = validator
    .Errors(withDefaults)
    .slice(0, 8)
    .map((e) => `${e.instancePath || "(arguments)"} ${e.message}`);
  const received = JSON.stringify(args).slice(0, 2000);
  return (
    `Invalid arguments for tool '${tool.name}': ${problems.join("; ")}. Received: ${received}. ` +
    "Fix the arguments to match the tool's schema and call it again."
  );
}

/** Run a prepared call (unless it is answered already), then `tool_result`; emits `tool_execution_end`. */
async function finish(loop: ToolInputs, prepared: Prepared): Promise<ToolResultMessage> {
  const { host, run } = loop;
  const { call, info } = prepared;
  let result: ToolResultMessage;
  if (prepared.result) result = prepared.result;
  else {
    result = await execute(loop, prepared.info);
    const changed = run.signal.aborted ? undefined : await host.hooks.tool_result.promise(result, prepared.info);
    if (changed && changed !== result)
      result = { ...changed, role: "toolResult", toolCallId: call.id, toolName: call.name };
  }
  if (info?.rewrittenBy) result = { ...result, rewritten: { args: info.args, by: info.rewrittenBy } };
  host.emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result });
  return result;
}

/** The tool's answer as a result; a throw or an abort becomes an error result (a late answer is dropped). */
async function execute(loop: ToolInputs, info: ToolCallInfo): Promise<ToolResultMessage> {
  const { host, run } = loop;
  const { call } = info;
  run.pending.add(call.id);
  // The latest streamed output: a tool whose updates are output (bash) keeps it in an aborted result.
  let partialOutput: ToolOutput | undefined;
  try {
    const running = info.tool.execute(info.args as never, {
      toolCallId: call.id,
      signal: run.signal,
      update: (partial) => {
        partialOutput = partial;
        host.emit({ type: "tool_execution_update", toolCallId: call.id, toolName: call.name, partial });
      },
    });
    const output = await untilAborted(Promise.resolve(running), run.signal);
    if (output === ABORT) {
      void Promise.resolve(running).catch(() => undefined);
      const aborted = errorResult(call, ABORTED_RUNNING);
      if (!info.tool.partialIsOutput || !partialOutput?.content.length) return aborted;
      const note = { type: "text" as const, text: `\n\n${ABORTED_RUNNING} Its output until then is above.` };
      return { ...aborted, content: [...partialOutput.content, note], details: partialOutput.details };
    }
    const content = Array.isArray(output?.content)
      ? output.content
      : [{ type: "text" as const, text: String(output ?? "") }];
    return {
      role: "toolResult",
      toolCallId: call.id,
      toolName: call.name,
      content,
      details: output?.details,
      isError: output?.isError === true,
      timestamp: Date.now(),
    };
  } catch (cause) {
    return errorResult(call, run.signal.aborted ? ABORTED_RUNNING : `Error: ${messageOf(cause)}`);
  } finally {
    run.pending.delete(call.id);
  }
}
