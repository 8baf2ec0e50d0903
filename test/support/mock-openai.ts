/**
 * A local server that speaks OpenAI's Chat Completions and Responses APIs as OpenAI documents them:
 * Chat Completions SSE (`data: <chunk>` frames, `data: [DONE]`, usage in a final chunk when
 * `stream_options.include_usage` is set), Responses SSE (`event: <type>` + `data: <json>`, with
 * sequence numbers), and JSON error bodies `{ error: { message, type, param, code } }`.
 * Requests are validated the way the real APIs do: tool messages / function_call_output items must
 * answer a call of the preceding assistant turn, every call must be answered, ids within limits.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenLocal } from "./local-server.js";

export interface ChatReply {
  kind: "chat";
  reasoning?: string;
  text?: string;
  tools?: { id: string; name: string; args?: unknown; raw?: string }[];
  finish?: "stop" | "length" | "tool_calls" | "content_filter";
  usage?: { prompt: number; completion: number; cached?: number };
  chunk?: number;
  delayMs?: number;
  /** Close the connection after this many frames. */
  dropAfter?: number;
  /** Send `data: {"error": ...}` after this many frames. */
  errorAfter?: { frames: number; message: string; type?: string; code?: string };
  /** After this many frames, send a frame whose data is not JSON, then end the response. */
  malformedAfter?: number;
  /** With malformedAfter: the frame's `event:` line (the OpenAI SDK parses `thread.*` events on a path of its own). */
  malformedEvent?: string;
  /** Leave out the final `data: [DONE]`. */
  noDone?: boolean;
}

export type ResponsesItem =
  | { reasoning: string; id?: string; encrypted?: string }
  | { text: string; id?: string }
  | { call: { name: string; args?: unknown; raw?: string; callId?: string; id?: string } };

export interface ResponsesReply {
  kind: "responses";
  items: ResponsesItem[];
  status?: "completed" | "incomplete";
  incompleteReason?: "max_output_tokens" | "content_filter";
  usage?: { input: number; output: number; cached?: number; reasoning?: number };
  chunk?: number;
  delayMs?: number;
  dropAfter?: number;
  /** Fail after this many frames with `response.failed` (or an `error` event). */
  failAfter?: { frames: number; code: string; message: string; as?: "failed" | "error" };
}

export type OpenAIStep =
  | ChatReply
  | ResponsesReply
  | {
      kind: "error";
      status: number;
      message: string;
      type?: string;
      code?: string | null;
      headers?: Record<string, string>;
    }
  | { kind: "drop" }
  | ((body: Record<string, any>, path: string) => OpenAIStep);

export const chat = (r: Omit<ChatReply, "kind">): ChatReply => ({ kind: "chat", ...r });
export const responses = (items: ResponsesItem[], r: Omit<ResponsesReply, "kind" | "items"> = {}): ResponsesReply => ({
  kind: "responses",
  items,
  ...r,
});
export const oaiError = (
  status: number,
  message: string,
  extra: { type?: string; code?: string | null; headers?: Record<string, string> } = {},
): OpenAIStep => ({ kind: "error", status, message, ...extra });
export const oaiDrop = (): OpenAIStep => ({ kind: "drop" });

export interface Recorded {
  path: string;
  body: Record<string, any>;
  headers: IncomingMessage["headers"];
  status: number;
  error?: string;
  /** Azure: the deployment named in the path. */
  deployment?: string;
}

export interface MockOpenAI {
  /** Base URL including `/v1`, for OPENAI_BASE_URL / baseUrl. */
  url: string;
  requests: Recorded[];
  rejected(): Recorded[];
  push(...steps: OpenAIStep[]): void;
  remaining(): number;
  /** Drop the scripted steps not used yet (so one failing test does not feed the next). */
  clear(): void;
  close(): Promise<void>;
}

export interface MockOpenAIOptions {
  key?: string;
  /** Reject `max_tokens` (as OpenAI does for reasoning models) or `max_completion_tokens` (as older servers do). */
  rejectField?: "max_tokens" | "max_completion_tokens";
  /** Reject the `developer` role (as many compatible servers do). */
  rejectDeveloper?: boolean;
  /** Ignore `stream_options` and never send usage (servers without streaming usage). */
  noStreamUsage?: boolean;
  /**
   * Speak Azure OpenAI instead: `/openai/deployments/{deployment}/chat/completions` and `/openai/responses`,
   * each with `?api-version=`, authenticated by the `api-key` header. The deployment is recorded as `deployment`.
   */
  azure?: { apiVersion: string; key: string };
  steps?: OpenAIStep[];
}

type Msg = Record<string, any>;

/** Chat Completions validation; the error message the real API gives, or undefined. */
export function validateChat(body: Record<string, any>, o: MockOpenAIOptions = {}): string | undefined {
  if (typeof body.model !== "string") return "you must provide a model parameter";
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "[] is too short - 'messages'";
  if (o.rejectField && body[o.rejectField] !== undefined) {
    return `Unsupported parameter: '${o.rejectField}' is not supported with this model. Use '${o.rejectField === "max_tokens" ? "max_completion_tokens" : "max_tokens"}' instead.`;
  }
  if (body.stream_options && body.stream !== true)
    return "The 'stream_options' parameter is only allowed when 'stream' is enabled.";
  for (const [i, t] of (body.tools ?? []).entries()) {
    if (t.type !== "function" || !/^[a-zA-Z0-9_-]{1,64}$/.test(t.function?.name ?? ""))
      return `Invalid 'tools[${i}].function.name'`;
  }
  const msgs: Msg[] = body.messages;
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i]!;
    if (!["system", "developer", "user", "assistant", "tool"].includes(m.role))
      return `Invalid value: '${m.role}'. Supported values are: 'system', 'assistant', 'user', 'tool', 'function', and 'developer'.`;
    if (m.role === "developer" && o.rejectDeveloper)
      return "Invalid value: 'developer'. Supported values are: 'system', 'assistant', 'user', 'tool'.";
    if (m.role === "assistant") {
      if ((m.content === null || m.content === undefined || m.content === "") && !m.tool_calls?.length)
        return `Invalid value for 'content': expected a string, got null.`;
      const calls: Msg[] = m.tool_calls ?? [];
      for (const [j, c] of calls.entries()) {
        if (typeof c.id !== "string" || c.id.length > 40) {
          return `Invalid 'messages[${i}].tool_calls[${j}].id': string too long. Expected a string with maximum length 40, but got a string with length ${String(c.id).length} instead.`;
        }
      }
      if (calls.length) {
        const answered = new Set<string>();
        let k = i + 1;
        for (; k < msgs.length && msgs[k]!.role === "tool"; k++) answered.add(msgs[k]!.tool_call_id);
        const missing = calls.map((c) => c.id).filter((id) => !answered.has(id));
        if (missing.length)
          return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(", ")}`;
      }
    }
    if (m.role === "tool") {
      let k = i - 1;
      while (k >= 0 && msgs[k]!.role === "tool") k--;
      const prev = msgs[k];
      if (prev?.role !== "assistant" || !prev.tool_calls?.some((c: Msg) => c.id === m.tool_call_id)) {
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      }
      if (typeof m.content !== "string" && !Array.isArray(m.content))
        return `Invalid type for 'messages[${i}].content'`;
    }
  }
  return undefined;
}

/** Responses API validation. */
export function validateResponses(body: Record<string, any>): string | undefined {
  if (typeof body.model !== "string") return "Missing required parameter: 'model'.";
  const input: Msg[] = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input;
  if (!Array.isArray(input)) return "Invalid type for 'input'";
  for (const [i, t] of (body.tools ?? []).entries())
    if (t.type === "function" && !t.name) return `Missing required parameter: 'tools[${i}].name'.`;
  const calls = new Map<string, number>();
  const outputs = new Set<string>();
  for (let i = 0; i < input.length; i++) {
    const item = input[i]!;
    if (item.type === "function_call") {
      if (typeof item.call_id !== "string" || item.call_id.length > 64)
        return `Invalid 'input[${i}].call_id': string too long. Expected a string with maximum length 64.`;
      if (typeof item.arguments !== "string") return `Invalid type for 'input[${i}].arguments': expected a string.`;
      calls.set(item.call_id, i);
    } else if (item.type === "function_call_output") {
      if (!calls.has(item.call_id)) return `No tool call found for function call output with call_id ${item.call_id}.`;
      if (outputs.has(item.call_id)) return `Duplicate function call output for call_id ${item.call_id}.`;
      outputs.add(item.call_id);
    } else if (item.type === "reasoning") {
      if (!item.id) return `Missing required parameter: 'input[${i}].id'.`;
      if (!Array.isArray(item.summary)) return `Missing required parameter: 'input[${i}].summary'.`;
      if (body.store === false && !item.encrypted_content)
        return `Item with id '${item.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`;
      if (i === input.length - 1)
        return `Item '${item.id}' of type 'reasoning' was provided without its required following item.`;
    } else if (
      item.role !== "user" &&
      item.role !== "assistant" &&
      item.role !== "system" &&
      item.role !== "developer"
    ) {
      return `Invalid value for 'input[${i}]'.`;
    }
  }
  for (const [callId] of calls) if (!outputs.has(callId)) return `No tool output found for function call ${callId}.`;
  return undefined;
}

function pieces(s: string, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out;
}

function chatFrames(r: ChatReply, model: string, usage: boolean): string[] {
  const n = r.chunk ?? 8;
  const base = { id: "chatcmpl-mock", object: "chat.completion.chunk", created: 1_700_000_000, model };
  const frame = (delta: unknown, finish: string | null = null) =>
    JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const frames = [frame({ role: "assistant", content: "" })];
  for (const p of r.reasoning ? pieces(r.reasoning, n) : []) frames.push(frame({ reasoning_content: p }));
  for (const p of r.text ? pieces(r.text, n) : []) frames.push(frame({ content: p }));
  (r.tools ?? []).forEach((t, index) => {
    frames.push(
      frame({ tool_calls: [{ index, id: t.id, type: "function", function: { name: t.name, arguments: "" } }] }),
    );
    for (const p of pieces(t.raw ?? JSON.stringify(t.args ?? {}), n))
      frames.push(frame({ tool_calls: [{ index, function: { arguments: p } }] }));
  });
  frames.push(frame({}, r.finish ?? (r.tools?.length ? "tool_calls" : "stop")));
  if (usage) {
    const u = r.usage ?? { prompt: 12, completion: 8 };
    frames.push(
      JSON.stringify({
        ...base,
        choices: [],
        usage: {
          prompt_tokens: u.prompt,
          completion_tokens: u.completion,
          total_tokens: u.prompt + u.completion,
          prompt_tokens_details: { cached_tokens: u.cached ?? 0 },
        },
      }),
    );
  }
  return frames;
}

function responsesFrames(
  r: ResponsesReply,
  body: Record<string, any>,
): { event: string; data: Record<string, unknown> }[] {
  const n = r.chunk ?? 8;
  const frames: { event: string; data: Record<string, unknown> }[] = [];
  const resp = {
    id: "resp_mock",
    object: "response",
    created_at: 1_700_000_000,
    model: body.model,
    output: [] as unknown[],
    usage: null as unknown,
    status: "in_progress",
    error: null,
    incomplete_details: null,
  };
  const push = (type: string, data: Record<string, unknown>) => frames.push({ event: type, data: { type, ...data } });
  push("response.created", { response: { ...resp } });
  push("response.in_progress", { response: { ...resp } });
  const output: unknown[] = [];
  r.items.forEach((it, output_index) => {
    if ("reasoning" in it) {
      const id = it.id ?? `rs_${output_index}`;
      push("response.output_item.added", { output_index, item: { id, type: "reasoning", summary: [] } });
      push("response.reasoning_summary_part.added", {
        item_id: id,
        output_index,
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      });
      for (const p of pieces(it.reasoning, n))
        push("response.reasoning_summary_text.delta", { item_id: id, output_index, summary_index: 0, delta: p });
      push("response.reasoning_summary_text.done", { item_id: id, output_index, summary_index: 0, text: it.reasoning });
      push("response.reasoning_summary_part.done", {
        item_id: id,
        output_index,
        summary_index: 0,
        part: { type: "summary_text", text: it.reasoning },
      });
      const item = {
        id,
        type: "reasoning",
        summary: [{ type: "summary_text", text: it.reasoning }],
        ...(body.include?.includes("reasoning.encrypted_content")
          ? { encrypted_content: it.encrypted ?? `enc-${id}` }
          : {}),
      };
      push("response.output_item.done", { output_index, item });
      output.push(item);
    } else if ("text" in it) {
      const id = it.id ?? `msg_${output_index}`;
      push("response.output_item.added", {
        output_index,
        item: { id, type: "message", role: "assistant", status: "in_progress", content: [] },
      });
      push("response.content_part.added", {
        item_id: id,
        output_index,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      });
      for (const p of pieces(it.text, n))
        push("response.output_text.delta", { item_id: id, output_index, content_index: 0, delta: p, logprobs: [] });
      push("response.output_text.done", { item_id: id, output_index, content_index: 0, text: it.text, logprobs: [] });
      push("response.content_part.done", {
        item_id: id,
        output_index,
        content_index: 0,
        part: { type: "output_text", text: it.text, annotations: [] },
      });
      const item = {
        id,
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: it.text, annotations: [] }],
      };
      push("response.output_item.done", { output_index, item });
      output.push(item);
    } else {
      const c = it.call;
      const id = c.id ?? `fc_${output_index}`;
      const callId = c.callId ?? `call_${output_index}`;
      const raw = c.raw ?? JSON.stringify(c.args ?? {});
      push("response.output_item.added", {
        output_index,
        item: { id, type: "function_call", call_id: callId, name: c.name, arguments: "", status: "in_progress" },
      });
      for (const p of pieces(raw, n))
        push("response.function_call_arguments.delta", { item_id: id, output_index, delta: p });
      push("response.function_call_arguments.done", { item_id: id, output_index, arguments: raw });
      const item = { id, type: "function_call", call_id: callId, name: c.name, arguments: raw, status: "completed" };
      push("response.output_item.done", { output_index, item });
      output.push(item);
    }
  });
  const u = r.usage ?? { input: 20, output: 10 };
  const usage = {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: u.cached ?? 0 },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
    total_tokens: u.input + u.output,
  };
  if (r.status === "incomplete")
    push("response.incomplete", {
      response: {
        ...resp,
        status: "incomplete",
        output,
        usage,
        incomplete_details: { reason: r.incompleteReason ?? "max_output_tokens" },
      },
    });
  else push("response.completed", { response: { ...resp, status: "completed", output, usage } });
  for (const [i, f] of frames.entries()) f.data.sequence_number = i;
  return frames;
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  type = "invalid_request_error",
  code: string | null = null,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", "x-request-id": "req_mock", ...headers });
  res.end(JSON.stringify({ error: { message, type, param: null, code } }));
}

export async function startMockOpenAI(o: MockOpenAIOptions = {}): Promise<MockOpenAI> {
  const steps: OpenAIStep[] = [...(o.steps ?? [])];
  const requests: Recorded[] = [];
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const c of req) raw += c;
    let path = req.url?.split("?")[0] ?? "";
    let body: Record<string, any> = {};
    try {
      body = JSON.parse(raw || "{}");
    } catch {
      return sendError(res, 400, "We could not parse the JSON body of your request.");
    }
    const record: Recorded = { path, body, headers: req.headers, status: 200 };
    requests.push(record);
    const fail = (
      status: number,
      message: string,
      type?: string,
      code?: string | null,
      headers?: Record<string, string>,
    ) => {
      record.status = status;
      record.error = message;
      sendError(res, status, message, type, code, headers);
    };
    if (o.azure) {
      const deployment = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(path)?.[1];
      if (!deployment && path !== "/openai/responses")
        return fail(404, "Resource not found", "invalid_request_error", "404");
      const version = new URL(req.url ?? "", "http://mock").searchParams.get("api-version");
      if (!version) return fail(404, "Resource not found", "invalid_request_error", "404");
      if (version !== o.azure.apiVersion)
        return fail(
          400,
          `API version ${version} is not supported by this mock (expected ${o.azure.apiVersion})`,
          "invalid_request_error",
          "BadRequest",
        );
      if (req.headers["api-key"] !== o.azure.key)
        return fail(
          401,
          "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.",
          "invalid_request_error",
          "401",
        );
      record.deployment = deployment && decodeURIComponent(deployment);
      path = deployment ? "/v1/chat/completions" : "/v1/responses";
      record.path = path;
    } else if (path !== "/v1/chat/completions" && path !== "/v1/responses")
      return fail(404, `Invalid URL (POST ${path})`, "invalid_request_error", "unknown_url");
    const key = String(req.headers.authorization ?? "").replace(/^Bearer /, "");
    if (o.key && !o.azure && key !== o.key)
      return fail(
        401,
        `Incorrect API key provided: ${key}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        "invalid_request_error",
        "invalid_api_key",
      );
    if (body.stream !== true) return fail(400, "this mock only serves streaming requests");
    const invalid = path === "/v1/chat/completions" ? validateChat(body, o) : validateResponses(body);
    if (invalid) return fail(400, invalid);

    let step = steps.shift();
    try {
      while (typeof step === "function") step = step(body, path);
    } catch (error) {
      // an assertion inside a scripted step: answer 400 so the run stops at once and the message shows
      return fail(400, `mock step assertion failed: ${(error as Error).message}`);
    }
    if (!step) return fail(500, "mock script exhausted", "server_error");
    if (step.kind === "drop") {
      record.status = 0;
      req.socket.destroy();
      return;
    }
    if (step.kind === "error") return fail(step.status, step.message, step.type, step.code ?? null, step.headers);
    if ((step.kind === "chat") !== (path === "/v1/chat/completions"))
      return fail(500, `mock scripted a ${step.kind} reply for ${path}`, "server_error");
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "x-request-id": "req_mock",
    });
    const wait = (ms?: number) => (ms ? new Promise((r) => setTimeout(r, ms)) : undefined);
    if (step.kind === "chat") {
      const frames = chatFrames(step, body.model, !o.noStreamUsage && body.stream_options?.include_usage === true);
      for (let i = 0; i < frames.length; i++) {
        if (step.dropAfter === i) {
          await wait(30);
          return res.socket?.destroy();
        }
        if (step.malformedAfter === i) {
          const event = step.malformedEvent ? `event: ${step.malformedEvent}\n` : "";
          res.end(`${event}data: {"id":"chatcmpl-mock","choices":[{"index":0,"delta":{"content":"br\n\n`);
          return;
        }
        if (step.errorAfter?.frames === i) {
          res.end(
            `data: ${JSON.stringify({ error: { message: step.errorAfter.message, type: step.errorAfter.type ?? "server_error", param: null, code: step.errorAfter.code ?? null } })}\n\n`,
          );
          return;
        }
        if (res.destroyed) return;
        res.write(`data: ${frames[i]}\n\n`);
        await wait(step.delayMs);
      }
      res.end(step.noDone ? "" : "data: [DONE]\n\n");
      return;
    }
    const frames = responsesFrames(step, body);
    for (let i = 0; i < frames.length; i++) {
      if (step.dropAfter === i) {
        await wait(30);
        return res.socket?.destroy();
      }
      const f = step.failAfter;
      if (f?.frames === i) {
        const data =
          f.as === "error"
            ? { type: "error", code: f.code, message: f.message, param: null, sequence_number: i }
            : {
                type: "response.failed",
                sequence_number: i,
                response: {
                  id: "resp_mock",
                  object: "response",
                  status: "failed",
                  error: { code: f.code, message: f.message },
                  output: [],
                  usage: null,
                },
              };
        res.end(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
        return;
      }
      if (res.destroyed) return;
      res.write(`event: ${frames[i]!.event}\ndata: ${JSON.stringify(frames[i]!.data)}\n\n`);
      await wait(step.delayMs);
    }
    res.end();
  });
  server.keepAliveTimeout = 1000;
  const { url, close } = await listenLocal(server);
  return {
    url: `${url}/v1`,
    requests,
    rejected: () => requests.filter((r) => r.status === 400),
    push: (...more) => void steps.push(...more),
    remaining: () => steps.length,
    clear: () => void steps.splice(0),
    close,
  };
}
