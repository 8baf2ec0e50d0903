/**
 * A local server that speaks the Anthropic Messages API the way Anthropic documents it: SSE with
 * `event: <name>` + `data: <json>` frames (message_start, content_block_start/delta/stop, ping,
 * message_delta, message_stop, error), JSON error bodies `{ type: "error", error: { type, message } }`,
 * and request validation like the real API's (tool_use/tool_result pairing, empty text blocks,
 * first message from the user, max_tokens, thinking budgets, cache_control limits, and with thinking
 * on, a final assistant turn with tool_use that must start with thinking).
 * Tests script replies step by step; every request is recorded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type AnthropicBlock =
  | { text: string }
  | { thinking: string; signature: string }
  | { redacted: string }
  | { tool: { id: string; name: string; input: unknown /** raw JSON text to send instead of `input` */; raw?: string } }
  /** A server tool the API runs itself (web search, code execution): `server_tool_use` with its input. */
  | { serverTool: { id: string; name: string; input: unknown } };

export interface ReplyOptions {
  stop?: "end_turn" | "tool_use" | "max_tokens" | "refusal" | "pause_turn" | "model_context_window_exceeded";
  usage?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number };
  /** Characters per delta. */
  chunk?: number;
  /** Delay between SSE frames. */
  delayMs?: number;
  /** Close the connection after this many frames (message_start is frame 1). */
  dropAfter?: number;
  /** After this many frames, send a frame whose data is not JSON, then end the response. */
  malformedAfter?: number;
  /** Send an `event: error` frame after this many frames instead of finishing. */
  errorAfter?: { frames: number; type: string; message: string };
  model?: string;
}

export type Step =
  | { kind: "reply"; blocks: AnthropicBlock[]; options: ReplyOptions }
  | { kind: "error"; status: number; type: string; message: string; headers?: Record<string, string> }
  | { kind: "drop" }
  | ((body: Record<string, any>, index: number) => Step);

export const reply = (blocks: AnthropicBlock[], options: ReplyOptions = {}): Step => ({
  kind: "reply",
  blocks,
  options,
});
export const text = (t: string, options: ReplyOptions = {}): Step => reply([{ text: t }], options);
export const apiError = (status: number, type: string, message: string, headers?: Record<string, string>): Step => ({
  kind: "error",
  status,
  type,
  message,
  headers,
});
export const drop = (): Step => ({ kind: "drop" });

export interface Recorded {
  body: Record<string, any>;
  headers: IncomingMessage["headers"];
  status: number;
  error?: string;
}

export interface MockAnthropic {
  /** Base URL for ANTHROPIC_BASE_URL / baseUrl. */
  url: string;
  requests: Recorded[];
  /** Requests the validation rejected with HTTP 400. */
  rejected(): Recorded[];
  push(...steps: Step[]): void;
  remaining(): number;
  /** Drop the scripted steps not used yet (so one failing test does not feed the next). */
  clear(): void;
  close(): Promise<void>;
}

/** Every frame of a scripted reply, in the documented order. */
export function replyFrames(blocks: AnthropicBlock[], o: ReplyOptions = {}): { event: string; data: unknown }[] {
  const chunk = o.chunk ?? 8;
  const pieces = (s: string) => {
    const out: string[] = [];
    for (let i = 0; i < s.length; i += chunk) out.push(s.slice(i, i + chunk));
    return out.length ? out : [""];
  };
  const u = o.usage ?? {};
  const frames: { event: string; data: unknown }[] = [];
  frames.push({
    event: "message_start",
    data: {
      type: "message_start",
      message: {
        id: "msg_mock",
        type: "message",
        role: "assistant",
        model: o.model ?? "claude-mock",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: u.input ?? 10,
          output_tokens: 1,
          cache_read_input_tokens: u.cacheRead ?? 0,
          cache_creation_input_tokens: u.cacheWrite ?? 0,
        },
      },
    },
  });
  frames.push({ event: "ping", data: { type: "ping" } });
  blocks.forEach((b, index) => {
    if ("text" in b) {
      frames.push({
        event: "content_block_start",
        data: { type: "content_block_start", index, content_block: { type: "text", text: "" } },
      });
      for (const p of pieces(b.text))
        frames.push({
          event: "content_block_delta",
          data: { type: "content_block_delta", index, delta: { type: "text_delta", text: p } },
        });
    } else if ("thinking" in b) {
      frames.push({
        event: "content_block_start",
        data: { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } },
      });
      for (const p of pieces(b.thinking))
        frames.push({
          event: "content_block_delta",
          data: { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: p } },
        });
      frames.push({
        event: "content_block_delta",
        data: { type: "content_block_delta", index, delta: { type: "signature_delta", signature: b.signature } },
      });
    } else if ("serverTool" in b) {
      frames.push({
        event: "content_block_start",
        data: {
          type: "content_block_start",
          index,
          content_block: {
            type: "server_tool_use",
            id: b.serverTool.id,
            name: b.serverTool.name,
            input: b.serverTool.input,
          },
        },
      });
    } else if ("redacted" in b) {
      frames.push({
        event: "content_block_start",
        data: { type: "content_block_start", index, content_block: { type: "redacted_thinking", data: b.redacted } },
      });
    } else {
      frames.push({
        event: "content_block_start",
        data: {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: b.tool.id, name: b.tool.name, input: {} },
        },
      });
      const raw = b.tool.raw ?? JSON.stringify(b.tool.input);
      for (const p of pieces(raw))
        frames.push({
          event: "content_block_delta",
          data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: p } },
        });
    }
    frames.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
  });
  const stop = o.stop ?? (blocks.some((b) => "tool" in b) ? "tool_use" : "end_turn");
  frames.push({
    event: "message_delta",
    data: {
      type: "message_delta",
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: u.output ?? 20 },
    },
  });
  frames.push({ event: "message_stop", data: { type: "message_stop" } });
  return frames;
}

type Block = Record<string, any>;

/**
 * What the real API would reject, as its error message; undefined when the body is valid.
 * `ownCalls` maps tool_use ids this server produced to the model that produced them: with adaptive
 * thinking the model may call a tool without thinking first, and that turn of its own is accepted.
 */
export function validate(
  body: Record<string, any>,
  ownCalls: ReadonlyMap<string, string> = new Map(),
): string | undefined {
  if (typeof body.model !== "string" || !body.model) return "model: Field required";
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return "max_tokens: Field required";
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "messages: at least one message is required";
  let breakpoints = 0;
  const countCache = (b: Block) => {
    if (b?.cache_control) breakpoints++;
  };
  if (body.system !== undefined) {
    if (Array.isArray(body.system)) {
      for (const b of body.system) {
        if (b.type !== "text" || typeof b.text !== "string")
          return "system: Input should be a valid list of text blocks";
        if (!b.text) return "system: text content blocks must be non-empty";
        countCache(b);
      }
    } else if (typeof body.system !== "string") return "system: Input should be a valid string";
  }
  for (const [i, t] of (body.tools ?? []).entries()) {
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(t.name ?? ""))
      return `tools.${i}.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`;
    if (t.input_schema?.type !== "object") return `tools.${i}.input_schema.type: Input should be 'object'`;
    countCache(t);
  }
  if (body.thinking?.type === "enabled") {
    if (!(body.thinking.budget_tokens >= 1024))
      return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024";
    if (body.thinking.budget_tokens >= body.max_tokens)
      return "`max_tokens` must be greater than `thinking.budget_tokens`";
  }
  // Consecutive turns of the same role are combined, as the API does.
  const turns: { role: string; content: Block[] }[] = [];
  for (const [i, m] of body.messages.entries()) {
    if (m.role !== "user" && m.role !== "assistant") return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    const content: Block[] = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    if (!Array.isArray(content) || content.length === 0)
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    for (const b of content) {
      if (b.type === "text" && (typeof b.text !== "string" || b.text.length === 0))
        return `messages.${i}: text content blocks must be non-empty`;
      if (b.type === "thinking" && (typeof b.signature !== "string" || !b.signature))
        return `messages.${i}.content: thinking blocks must have a signature`;
      if (b.type === "tool_use" && !/^[a-zA-Z0-9_-]+$/.test(b.id ?? ""))
        return `messages.${i}.content.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
      if (
        (b.type === "tool_use" || b.type === "tool_result" || b.type === "thinking") &&
        m.role !== (b.type === "tool_result" ? "user" : "assistant")
      )
        return `messages.${i}: ${b.type} blocks are not allowed in ${m.role} messages`;
      countCache(b);
    }
    const last = turns[turns.length - 1];
    if (last && last.role === m.role) last.content.push(...content);
    else turns.push({ role: m.role, content: [...content] });
  }
  if (breakpoints > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.`;
  // With thinking on, the final assistant turn of a tool loop must start with its thinking.
  const thinking = body.thinking?.type === "enabled" || body.thinking?.type === "adaptive";
  const lastAssistant = turns
    .map((t, i) => ({ t, i }))
    .filter((x) => x.t.role === "assistant")
    .at(-1);
  if (thinking && lastAssistant) {
    const { t, i } = lastAssistant;
    const calls = t.content.filter((b) => b.type === "tool_use");
    const own =
      body.thinking.type === "adaptive" && calls.length > 0 && calls.every((b) => ownCalls.get(b.id) === body.model);
    const first = t.content[0]?.type;
    if (calls.length > 0 && first !== "thinking" && first !== "redacted_thinking" && !own) {
      return `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`;
    }
  }
  if (turns[0]!.role !== "user") return 'messages: first message must use the "user" role';
  for (let t = 0; t < turns.length; t++) {
    const turn = turns[t]!;
    const prev = turns[t - 1];
    if (turn.role === "user") {
      const results = turn.content.filter((b) => b.type === "tool_result");
      const asked = new Set(
        prev?.role === "assistant" ? prev.content.filter((b) => b.type === "tool_use").map((b) => b.id) : [],
      );
      for (const r of results) {
        if (!asked.has(r.tool_use_id)) {
          return `messages.${t}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${r.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
      }
      const seen = turn.content.findIndex((b) => b.type !== "tool_result");
      if (seen >= 0 && turn.content.slice(seen).some((b) => b.type === "tool_result"))
        return `messages.${t}: tool_result blocks must come before any other content`;
    } else {
      const calls = turn.content.filter((b) => b.type === "tool_use").map((b) => b.id);
      if (calls.length === 0) continue;
      const next = turns[t + 1];
      const answered = new Set(next?.content.filter((b) => b.type === "tool_result").map((b) => b.tool_use_id) ?? []);
      const missing = calls.filter((id) => !answered.has(id));
      if (missing.length)
        return `messages.${t}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
  }
  return undefined;
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", "request-id": "req_mock", ...headers });
  res.end(JSON.stringify({ type: "error", error: { type, message }, request_id: "req_mock" }));
}

export async function startMockAnthropic(
  o: {
    key?: string;
    steps?: Step[];
    /**
     * The server's keep-alive timeout (default 1 s). Node's client does not reuse a connection whose server
     * announces `timeout=1`, so every request then opens a new one; the bench passes a longer one, as a
     * real API's connection is reused.
     */
    keepAliveMs?: number;
  } = {},
): Promise<MockAnthropic> {
  const steps: Step[] = [...(o.steps ?? [])];
  const requests: Recorded[] = [];
  const ownCalls = new Map<string, string>(); // tool_use id → model that produced it
  let served = 0;
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const c of req) raw += c;
    let body: Record<string, any> = {};
    try {
      body = JSON.parse(raw || "{}");
    } catch {
      return send(res, 400, "invalid_request_error", "request body is not valid JSON");
    }
    const record: Recorded = { body, headers: req.headers, status: 200 };
    requests.push(record);
    const fail = (status: number, type: string, message: string, headers?: Record<string, string>) => {
      record.status = status;
      record.error = message;
      send(res, status, type, message, headers);
    };
    if (req.method !== "POST" || req.url?.split("?")[0] !== "/v1/messages")
      return fail(404, "not_found_error", `Not found: ${req.method} ${req.url}`);
    const key = req.headers["x-api-key"] ?? String(req.headers.authorization ?? "").replace(/^Bearer /, "");
    if (!key) return fail(401, "authentication_error", "x-api-key header is required");
    if (o.key && key !== o.key) return fail(401, "authentication_error", `invalid x-api-key: ${key}`);
    if (!req.headers["anthropic-version"])
      return fail(400, "invalid_request_error", "anthropic-version: header is required");
    if (body.stream !== true) return fail(400, "invalid_request_error", "this mock only serves streaming requests");
    const invalid = validate(body, ownCalls);
    if (invalid) return fail(400, "invalid_request_error", invalid);

    let step = steps.shift();
    const index = served++;
    try {
      while (typeof step === "function") step = step(body, index);
    } catch (error) {
      // an assertion inside a scripted step: answer 400 so the run stops at once and the message shows
      return fail(400, "invalid_request_error", `mock step assertion failed: ${(error as Error).message}`);
    }
    if (!step) return fail(500, "api_error", `mock script exhausted at request ${index + 1}`);
    if (step.kind === "drop") {
      record.status = 0;
      req.socket.destroy();
      return;
    }
    if (step.kind === "error") return fail(step.status, step.type, step.message, step.headers);
    const opts = step.options;
    for (const b of step.blocks) if ("tool" in b) ownCalls.set(b.tool.id, body.model);
    const frames = replyFrames(step.blocks, { model: body.model, ...opts });
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": "req_mock" });
    for (let i = 0; i < frames.length; i++) {
      if (opts.dropAfter !== undefined && i === opts.dropAfter) {
        await new Promise((r) => setTimeout(r, 30)); // let the frames already written reach the client
        res.socket?.destroy();
        return;
      }
      if (opts.malformedAfter === i) {
        res.end(
          `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_del\n\n`,
        );
        return;
      }
      if (opts.errorAfter && i === opts.errorAfter.frames) {
        res.end(
          `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: opts.errorAfter.type, message: opts.errorAfter.message } })}\n\n`,
        );
        return;
      }
      if (res.destroyed) return;
      res.write(`event: ${frames[i]!.event}\ndata: ${JSON.stringify(frames[i]!.data)}\n\n`);
      if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
    }
    res.end();
  });
  server.keepAliveTimeout = o.keepAliveMs ?? 1000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    rejected: () => requests.filter((r) => r.status === 400),
    push: (...more) => void steps.push(...more),
    remaining: () => steps.length,
    clear: () => void steps.splice(0),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
