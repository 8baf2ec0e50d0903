/**
 * provider-openai against a local server that speaks Chat Completions and the Responses API
 * (test/support/mock-openai.ts), through the real SDK client.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  Agent,
  type AgentEvent,
  type AgentMessage,
  type AssistantMessage,
  type Message,
  type ProviderEvent,
  type ToolResultMessage,
} from "../../../api/index.js";
import { testHost } from "../../support/host.js";
import openai from "../../../plugins/provider-openai/index.js";
import { chat, oaiDrop, oaiError, responses, startMockOpenAI, type MockOpenAI } from "../../support/mock-openai.js";
import { PNG, testTools } from "../../support/provider-tools.js";

const home = mkdtempSync(join(tmpdir(), "coil-openai-"));
process.env.COIL_HOME = home;
const KEY = "sk-proj-test-abcdefghijklmnop0123";
const usage0 = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

let mock: MockOpenAI;
beforeAll(async () => {
  mock = await startMockOpenAI({ key: KEY });
});
afterAll(async () => {
  await mock.close();
  rmSync(home, { recursive: true, force: true });
});
afterEach(() => {
  expect(mock.remaining(), "every scripted step was used").toBe(0);
  mock.requests.length = 0;
});

const tools = testTools;

function modelsFile(yaml: string): string {
  const file = join(home, `models-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, yaml);
  return file;
}

/** A Chat Completions server declared in models.yaml, keyed by MOCK_OPENAI_KEY. */
function localYaml(url: string, compat = "", extra = ""): string {
  return `providers:
  local:
    api: openai-completions
    baseUrl: ${url}
    apiKeyEnv: MOCK_OPENAI_KEY
${compat ? `    compat: ${compat}\n` : ""}    models:
      - id: llama-test
        contextWindow: 32000
        maxOutput: 4000
        reasoning: true
        cost: { input: 1, output: 2, cacheRead: 0.5 }
      - id: text-only
        input: [text]
${extra}`;
}

function setup(
  o: {
    provider?: string;
    model?: string;
    yaml?: string;
    thinking?: "off" | "high";
    options?: Record<string, unknown>;
    messages?: AgentMessage[];
    key?: string | null;
  } = {},
) {
  if (o.key === null) delete process.env.MOCK_OPENAI_KEY;
  else process.env.MOCK_OPENAI_KEY = o.key ?? KEY;
  process.env.OPENAI_API_KEY = KEY;
  const host = testHost();
  const events: AgentEvent[] = [];
  host.subscribe("*", (e) => void events.push(e));
  host.install(openai, {
    baseUrl: mock.url,
    baseDelayMs: 5,
    maxRetryDelayMs: 2000,
    modelsFile: modelsFile(o.yaml ?? localYaml(mock.url)),
    ...o.options,
  });
  host.install(tools);
  const providerId = o.provider ?? "local";
  const provider = host.providers.get(providerId)!;
  const model = provider.resolveModel!(o.model ?? "llama-test")!;
  const agent = new Agent(host, {
    provider: providerId,
    model,
    system: [{ id: "role", text: "You are a test." }],
    requestOptions: o.thinking ? { thinking: o.thinking } : {},
    messages: o.messages,
  });
  const updates = () =>
    events
      .filter((e): e is Extract<AgentEvent, { type: "message_update" }> => e.type === "message_update")
      .map((e) => e.event);
  return { host, agent, events, provider, updates };
}

const assistants = (messages: readonly AgentMessage[]) =>
  messages.filter((m): m is AssistantMessage => m.role === "assistant");
const lastAssistant = (messages: readonly AgentMessage[]) => assistants(messages).at(-1)!;

describe("provider-openai: Chat Completions", () => {
  it("streams text with usage from include_usage (cached tokens split out) and cost", async () => {
    mock.push(chat({ text: "Hello from a compatible server.", usage: { prompt: 1000, completion: 200, cached: 600 } }));
    const { agent, updates } = setup();
    const last = lastAssistant((await agent.prompt("hi")).messages);
    expect(last).toMatchObject({
      provider: "local",
      model: "llama-test",
      stopReason: "stop",
      content: [{ type: "text", text: "Hello from a compatible server." }],
    });
    expect(last.usage).toMatchObject({ input: 400, output: 200, cacheRead: 600, cacheWrite: 0 });
    expect(last.usage.cost.total).toBeCloseTo((400 * 1 + 200 * 2 + 600 * 0.5) / 1e6, 12);
    expect(updates().filter((e) => e.type === "text_delta").length).toBeGreaterThan(2);
    const body = mock.requests[0]!.body;
    expect(body).toMatchObject({
      model: "llama-test",
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 4000,
    });
    expect(body.messages[0]).toEqual({ role: "system", content: "You are a test." });
    expect(body.max_completion_tokens).toBeUndefined();
  });

  it("turns reasoning_content into thinking and never sends it back", async () => {
    mock.push(
      chat({ reasoning: "Thinking about the sum.", tools: [{ id: "call_1", name: "add", args: { a: 1, b: 2 } }] }),
      chat({ text: "3" }),
    );
    const { agent, updates } = setup();
    const result = await agent.prompt("1+2");
    expect(assistants(result.messages)[0]!.content[0]).toEqual({
      type: "thinking",
      thinking: "Thinking about the sum.",
    });
    expect(updates().some((e) => e.type === "thinking_delta")).toBe(true);
    expect(JSON.stringify(mock.requests[1]!.body)).not.toContain("Thinking about the sum");
  });

  it("runs two parallel tool calls with arguments split across many deltas", async () => {
    mock.push(
      chat({
        text: "Adding.",
        tools: [
          { id: "call_a", name: "add", args: { a: 10, b: 20 } },
          { id: "call_b", name: "add", args: { a: 0.5, b: 0.25 } },
        ],
        chunk: 2,
      }),
      (body) => {
        const tail = body.messages.slice(-2);
        expect(tail).toEqual([
          { role: "tool", tool_call_id: "call_a", content: "30" },
          { role: "tool", tool_call_id: "call_b", content: "0.75" },
        ]);
        return chat({ text: "30 and 0.75" });
      },
    );
    const { agent, updates } = setup();
    const result = await agent.prompt("add");
    expect(assistants(result.messages)[0]!.content.filter((c) => c.type === "toolCall")).toEqual([
      { type: "toolCall", id: "call_a", name: "add", arguments: { a: 10, b: 20 } },
      { type: "toolCall", id: "call_b", name: "add", arguments: { a: 0.5, b: 0.25 } },
    ]);
    expect(updates().filter((e) => e.type === "toolcall_delta").length).toBeGreaterThan(10);
    expect(assistants(result.messages)[0]!.stopReason).toBe("toolUse");
    expect(mock.rejected()).toEqual([]);
  });

  it("finish_reason length in the middle of a tool call ends with `length`; the next request is still valid", async () => {
    mock.push(
      chat({ tools: [{ id: "call_cut", name: "add", raw: '{"a": 1, "b' }], finish: "length" }),
      chat({ text: "ok" }),
    );
    const { agent } = setup();
    const result = await agent.prompt("add");
    expect(assistants(result.messages)[0]!.stopReason).toBe("length");
    expect(result.messages.find((m): m is ToolResultMessage => m.role === "toolResult")!.isError).toBe(true);
    expect(mock.rejected()).toEqual([]);
  });

  it("follows the compat switches: max_completion_tokens, developer role, no stream usage", async () => {
    const strict = await startMockOpenAI({
      key: KEY,
      rejectField: "max_tokens",
      noStreamUsage: true,
      steps: [chat({ text: "fine" })],
    });
    try {
      const { agent } = setup({
        yaml: localYaml(
          strict.url,
          "{ maxTokensField: max_completion_tokens, systemRole: developer, streamUsage: false }",
        ),
      });
      const last = lastAssistant((await agent.prompt("x")).messages);
      expect(last.content).toEqual([{ type: "text", text: "fine" }]);
      expect(last.usage).toMatchObject({ input: 0, output: 0 });
      const body = strict.requests[0]!.body;
      expect(body).toMatchObject({
        max_completion_tokens: 4000,
        messages: [
          { role: "developer", content: "You are a test." },
          { role: "user", content: "x" },
        ],
      });
      expect(body.stream_options).toBeUndefined();
    } finally {
      await strict.close();
    }
  });

  it("sends images in user messages, and tool-result images as a user message after the tool messages", async () => {
    mock.push(chat({ tools: [{ id: "call_img", name: "look", args: {} }] }), chat({ text: "a pixel" }));
    const { agent } = setup();
    await agent.prompt([
      {
        role: "user",
        content: [
          { type: "text", text: "see" },
          { type: "image", data: PNG, mimeType: "image/png" },
        ],
        timestamp: 1,
      },
    ]);
    expect(mock.requests[0]!.body.messages[1].content[1]).toEqual({
      type: "image_url",
      image_url: { url: `data:image/png;base64,${PNG}` },
    });
    const msgs = mock.requests[1]!.body.messages;
    expect(msgs.at(-2)).toEqual({ role: "tool", tool_call_id: "call_img", content: "a picture:" });
    expect(msgs.at(-1).role).toBe("user");
    expect(msgs.at(-1).content[1]).toEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } });
    expect(mock.rejected()).toEqual([]);

    mock.push(chat({ text: "ok" }));
    await setup({ model: "text-only" }).agent.prompt([
      { role: "user", content: [{ type: "image", data: PNG, mimeType: "image/png" }], timestamp: 1 },
    ]);
    expect(mock.requests[2]!.body.messages[1].content).toBe("(image omitted: this model does not accept images)");
  });

  it("rewrites long and foreign tool-call ids to 40 characters and keeps every call paired", async () => {
    const history: Message[] = [
      { role: "user", content: "start", timestamp: 1 },
      {
        role: "assistant",
        provider: "anthropic",
        model: "claude-sonnet-5-5",
        usage: usage0,
        stopReason: "toolUse",
        timestamp: 2,
        content: [
          { type: "thinking", thinking: "claude thought", signature: "sig" },
          {
            type: "toolCall",
            id: "call_0123456789abcdef|fc_0123456789abcdef0123456789abcdef0123456789",
            name: "add",
            arguments: { a: 1, b: 1 },
          },
          { type: "toolCall", id: "toolu_01XyZ", name: "add", arguments: { a: 2, b: 2 } },
        ],
      },
      {
        role: "toolResult",
        toolCallId: "call_0123456789abcdef|fc_0123456789abcdef0123456789abcdef0123456789",
        toolName: "add",
        content: [{ type: "text", text: "2" }],
        isError: false,
        timestamp: 3,
      },
      { role: "user", content: "and now?", timestamp: 4 },
    ];
    mock.push((body) => {
      const assistant = body.messages.find((m: { role: string }) => m.role === "assistant");
      const ids = assistant.tool_calls.map((c: { id: string }) => c.id);
      expect(ids.every((id: string) => id.length <= 40)).toBe(true);
      expect(
        body.messages
          .filter((m: { role: string }) => m.role === "tool")
          .map((m: { tool_call_id: string }) => m.tool_call_id),
      ).toEqual(ids);
      expect(JSON.stringify(body)).not.toContain("claude thought");
      return chat({ text: "done" });
    });
    const { agent } = setup({ messages: history });
    await agent.continue();
    expect(mock.rejected()).toEqual([]);
  });
});

describe("provider-openai: errors and retries", () => {
  it("reports a 400 error body without retrying", async () => {
    mock.push(oaiError(400, "Invalid 'messages[1].content': something", { code: "invalid_value" }));
    const { agent } = setup();
    const last = lastAssistant((await agent.prompt("x")).messages);
    expect(last.errorMessage).toContain("HTTP 400 invalid_value: Invalid 'messages[1].content': something");
    expect(mock.requests).toHaveLength(1);
  });

  it("a prompt whose run failed is not sent again with the next prompt (#12.5)", async () => {
    mock.push(oaiError(400, "bad request"), chat({ text: "fine" }));
    const { agent } = setup();
    expect((await agent.prompt("first question")).stopReason).toBe("error");
    await agent.prompt("second question");
    const users = mock.requests[1]!.body.messages.filter((m: { role: string }) => m.role === "user");
    expect(JSON.stringify(users)).not.toContain("first question");
    expect(JSON.stringify(users)).toContain("second question");
  });

  it("a 401 names the variable, and the key the server echoes back is redacted everywhere", async () => {
    const { agent, events } = setup({ key: "sk-wrong-0123456789abcdefghij" });
    const result = await agent.prompt("x");
    const last = lastAssistant(result.messages);
    expect(last.errorMessage).toContain("HTTP 401");
    expect(last.errorMessage).toContain("MOCK_OPENAI_KEY");
    expect(mock.requests[0]!.error).toContain("sk-wrong-0123456789abcdefghij");
    expect(JSON.stringify(events)).not.toContain("sk-wrong-0123456789abcdefghij");
    expect(JSON.stringify(result)).not.toContain("sk-wrong-0123456789abcdefghij");
  });

  it("retries 429 (retry-after-ms), 500 and a connection dropped before the first event", async () => {
    mock.push(
      oaiError(429, "Rate limit reached", {
        type: "requests",
        code: "rate_limit_exceeded",
        headers: { "retry-after-ms": "20" },
      }),
      oaiError(500, "The server had an error", { type: "server_error" }),
      oaiDrop(),
      chat({ text: "third time lucky" }),
    );
    const { agent, events } = setup();
    const last = lastAssistant((await agent.prompt("x")).messages);
    expect(last.content).toEqual([{ type: "text", text: "third time lucky" }]);
    const retries = events.filter((e): e is Extract<AgentEvent, { type: "retry" }> => e.type === "retry");
    expect(retries.map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(retries[0]!.delayMs).toBe(20);
  });

  it("retries an error sent inside the stream before any output", async () => {
    mock.push(
      chat({ text: "lost", errorAfter: { frames: 1, message: "The server is overloaded", type: "server_error" } }),
      chat({ text: "back" }),
    );
    const { agent } = setup();
    expect(lastAssistant((await agent.prompt("x")).messages).content).toEqual([{ type: "text", text: "back" }]);
  });

  it("retries when the connection drops after output started, discarding the partial reply (#12.6)", async () => {
    mock.push(chat({ text: "Partial answer that gets cut", chunk: 4, dropAfter: 4 }), chat({ text: "Whole answer." }));
    const { agent, events } = setup();
    const result = await agent.prompt("x");
    expect(result.stopReason).toBe("stop");
    expect(assistants(result.messages).map((m) => m.content)).toEqual([[{ type: "text", text: "Whole answer." }]]);
    expect(mock.requests).toHaveLength(2);
    expect(events.filter((e) => e.type === "retry")).toHaveLength(1);
  });

  it("a stream that ends without finish_reason or [DONE] is a dropped connection", async () => {
    mock.push(chat({ text: "x", noDone: true, dropAfter: 1 }), chat({ text: "complete" }));
    const { agent } = setup();
    expect(lastAssistant((await agent.prompt("x")).messages).content).toEqual([{ type: "text", text: "complete" }]);
  });

  it("aborts mid-stream promptly", async () => {
    mock.push(chat({ text: "slowly streamed words keep coming for a while", chunk: 3, delayMs: 40 }));
    const { agent } = setup();
    const running = agent.prompt("x");
    await new Promise<void>((resolve) => {
      const stop = agent.subscribe((e) => {
        if (e.type === "message_update" && e.event.type === "text_delta") {
          stop();
          resolve();
        }
      });
    });
    const t = Date.now();
    agent.abort();
    const result = await running;
    expect(Date.now() - t).toBeLessThan(500);
    expect(result.stopReason).toBe("aborted");
  });

  it("recognises context overflow from OpenAI and from compatible servers", async () => {
    mock.push(
      oaiError(
        400,
        "This model's maximum context length is 32000 tokens. However, your messages resulted in 40000 tokens.",
        { code: "context_length_exceeded" },
      ),
    );
    const a = setup();
    const events: ProviderEvent[] = [];
    for await (const e of a.provider.stream(
      {
        model: a.provider.resolveModel!("llama-test")!,
        system: [],
        messages: [{ role: "user", content: "x", timestamp: 1 }],
        tools: [],
        options: {},
      },
      new AbortController().signal,
    ))
      events.push(e);
    expect(events.at(-1)).toMatchObject({
      type: "error",
      message: { stopReason: "error", errorCode: "context_overflow" },
    });
    mock.push(
      oaiError(400, "the request exceeds the available context size, try increasing it", {
        type: "exceed_context_size_error",
      }),
    );
    const b: ProviderEvent[] = [];
    for await (const e of a.provider.stream(
      {
        model: a.provider.resolveModel!("llama-test")!,
        system: [],
        messages: [{ role: "user", content: "x", timestamp: 1 }],
        tools: [],
        options: {},
      },
      new AbortController().signal,
    ))
      b.push(e);
    expect(b.at(-1)).toMatchObject({ type: "error", message: { errorCode: "context_overflow" } });
  });

  it("a refused connection says which URL and does not retry", async () => {
    const dead = await startMockOpenAI();
    const url = dead.url;
    await dead.close();
    const { agent, events } = setup({ yaml: localYaml(url) });
    const last = lastAssistant((await agent.prompt("x")).messages);
    expect(last.errorMessage).toContain(`cannot connect to ${url}`);
    expect(events.filter((e) => e.type === "retry")).toHaveLength(0);
  });
});

const statelessYaml = (url: string) =>
  `providers:\n  openai:\n    baseUrl: ${url}\n    compat: { stateless: true, systemRole: developer, maxTokensField: max_completion_tokens }\n`;

describe("provider-openai: Responses API", () => {
  it("streams text with cached-token usage and cost from the catalog", async () => {
    mock.push(responses([{ text: "Hi from responses." }], { usage: { input: 2000, output: 100, cached: 1500 } }));
    const { agent } = setup({ provider: "openai", model: "gpt-5.4" });
    const last = lastAssistant((await agent.prompt("hi")).messages);
    expect(last).toMatchObject({
      provider: "openai",
      model: "gpt-5.4",
      stopReason: "stop",
      content: [{ type: "text", text: "Hi from responses." }],
    });
    expect(last.usage).toMatchObject({ input: 500, output: 100, cacheRead: 1500 });
    expect(last.usage.cost.total).toBeCloseTo((500 * 2.5 + 100 * 15 + 1500 * 0.25) / 1e6, 12);
    const body = mock.requests[0]!;
    expect(body.path).toBe("/v1/responses");
    expect(body.body).toMatchObject({
      model: "gpt-5.4",
      instructions: "You are a test.",
      stream: true,
      input: [{ role: "user", content: [{ type: "input_text", text: "hi" }] }],
    });
  });

  it("keeps reasoning (encrypted content) and function calls, and replays them statelessly", async () => {
    mock.push(
      responses(
        [
          { reasoning: "I should call add twice.", id: "rs_abc", encrypted: "ENC-1" },
          { call: { name: "add", args: { a: 2, b: 2 }, callId: "call_one", id: "fc_one" } },
          { call: { name: "add", args: { a: 3, b: 3 }, callId: "call_two", id: "fc_two" } },
        ],
        { chunk: 3 },
      ),
      (body) => {
        const types = body.input.map((i: { type?: string; role?: string }) => i.type ?? i.role);
        expect(types).toEqual([
          "user",
          "reasoning",
          "function_call",
          "function_call",
          "function_call_output",
          "function_call_output",
        ]);
        expect(body.input[1]).toEqual({
          type: "reasoning",
          id: "rs_abc",
          summary: [{ type: "summary_text", text: "I should call add twice." }],
          encrypted_content: "ENC-1",
        });
        expect(body.input[2]).toMatchObject({
          type: "function_call",
          call_id: "call_one",
          id: "fc_one",
          name: "add",
          arguments: '{"a":2,"b":2}',
        });
        expect(body.input.slice(4)).toEqual([
          { type: "function_call_output", call_id: "call_one", output: "4" },
          { type: "function_call_output", call_id: "call_two", output: "6" },
        ]);
        return responses([{ text: "4 and 6" }]);
      },
    );
    const { agent } = setup({ provider: "openai", model: "gpt-5.4", yaml: statelessYaml(mock.url), thinking: "high" });
    const result = await agent.prompt("add");
    const first = assistants(result.messages)[0]!;
    expect(first.content[0]).toMatchObject({ type: "thinking", thinking: "I should call add twice." });
    expect(JSON.parse((first.content[0] as { signature: string }).signature)).toMatchObject({
      type: "reasoning",
      id: "rs_abc",
      encrypted_content: "ENC-1",
    });
    expect(first.content.slice(1)).toEqual([
      { type: "toolCall", id: "call_one|fc_one", name: "add", arguments: { a: 2, b: 2 } },
      { type: "toolCall", id: "call_two|fc_two", name: "add", arguments: { a: 3, b: 3 } },
    ]);
    const req = mock.requests[0]!.body;
    expect(req).toMatchObject({
      store: false,
      include: ["reasoning.encrypted_content"],
      reasoning: { effort: "high", summary: "auto" },
    });
    expect(lastAssistant(result.messages).content).toEqual([{ type: "text", text: "4 and 6" }]);
    expect(mock.rejected()).toEqual([]);
  });

  it("maps an incomplete response (max_output_tokens) to `length`", async () => {
    mock.push(
      responses([{ call: { name: "add", raw: '{"a":' } }], { status: "incomplete" }),
      responses([{ text: "ok" }]),
    );
    const { agent } = setup({ provider: "openai", model: "gpt-5.4" });
    const result = await agent.prompt("x");
    expect(assistants(result.messages)[0]!.stopReason).toBe("length");
    expect(mock.rejected()).toEqual([]);
  });

  it("retries response.failed with a server error before output; overflow in an error event is reported as such", async () => {
    mock.push(
      responses([{ text: "lost" }], {
        failAfter: { frames: 2, code: "server_error", message: "An error occurred while processing your request." },
      }),
      responses([{ text: "retried" }]),
    );
    const { agent } = setup({ provider: "openai", model: "gpt-5.4" });
    expect(lastAssistant((await agent.prompt("x")).messages).content).toEqual([{ type: "text", text: "retried" }]);

    mock.push(
      responses([{ text: "never" }], {
        failAfter: {
          frames: 0,
          code: "context_length_exceeded",
          message: "Your input exceeds the context window of this model.",
          as: "error",
        },
      }),
    );
    const p = setup({ provider: "openai", model: "gpt-5.4" }).provider;
    const events: ProviderEvent[] = [];
    for await (const e of p.stream(
      {
        model: p.resolveModel!("gpt-5.4")!,
        system: [],
        messages: [{ role: "user", content: "x", timestamp: 1 }],
        tools: [],
        options: {},
      },
      new AbortController().signal,
    ))
      events.push(e);
    expect(events.at(-1)).toMatchObject({ type: "error", message: { errorCode: "context_overflow" } });
  });

  it("drops a connection after output: retried, the partial reply discarded (#12.6)", async () => {
    mock.push(
      responses([{ reasoning: "first try", id: "rs_a" }, { text: "Some text that will be cut off" }], {
        chunk: 4,
        dropAfter: 9,
      }),
      responses([{ text: "Complete." }]),
    );
    const { agent } = setup({ provider: "openai", model: "gpt-5.4" });
    const result = await agent.prompt("x");
    expect(result.stopReason).toBe("stop");
    expect(assistants(result.messages).map((m) => m.content)).toEqual([[{ type: "text", text: "Complete." }]]);
    expect(mock.requests).toHaveLength(2);
  });

  it("does not replay Anthropic thinking or foreign reasoning, and pairs calls by call id", async () => {
    const history: Message[] = [
      { role: "user", content: "q", timestamp: 1 },
      {
        role: "assistant",
        provider: "anthropic",
        model: "claude-opus-5-5",
        usage: usage0,
        stopReason: "toolUse",
        timestamp: 2,
        content: [
          { type: "thinking", thinking: "secret claude thinking", signature: "anthropic-signature" },
          { type: "toolCall", id: "toolu_01ABC", name: "add", arguments: { a: 1, b: 1 } },
        ],
      },
      {
        role: "toolResult",
        toolCallId: "toolu_01ABC",
        toolName: "add",
        content: [{ type: "text", text: "2" }],
        isError: false,
        timestamp: 3,
      },
      { role: "user", content: "next", timestamp: 4 },
    ];
    mock.push((body) => {
      expect(JSON.stringify(body)).not.toContain("secret claude thinking");
      expect(body.input[1]).toEqual({
        type: "function_call",
        call_id: "toolu_01ABC",
        name: "add",
        arguments: '{"a":1,"b":1}',
      });
      return responses([{ text: "ok" }]);
    });
    const { agent } = setup({ provider: "openai", model: "gpt-5.4", yaml: statelessYaml(mock.url), messages: history });
    await agent.continue();
    expect(mock.rejected()).toEqual([]);
  });
});

describe("provider-openai: models and providers", () => {
  it("resolves OpenAI ids fuzzily and unknown ids with default limits and the right API", () => {
    const { host } = setup({ provider: "openai", model: "gpt-5.4" });
    const p = host.providers.get("openai")!;
    expect(p.models![0]!.id).toBe("gpt-5.4");
    expect(p.resolveModel!("mini")!.id).toBe("gpt-5.4-mini");
    expect(p.resolveModel!("gpt 5.5")!.id).toBe("gpt-5.5");
    expect(p.resolveModel!("llama3.3:70b")).toMatchObject({
      id: "llama3.3:70b",
      provider: "openai",
      contextWindow: 128_000,
      api: "openai-completions",
    });
  });

  it("registers the compatible clouds, each configured by its own variable", () => {
    delete process.env.DEEPSEEK_API_KEY;
    const { host } = setup();
    expect(host.providers.names()).toEqual(
      expect.arrayContaining(["openai", "openrouter", "deepseek", "groq", "together", "xai", "local"]),
    );
    const deepseek = host.providers.get("deepseek")!;
    expect(deepseek.isConfigured!()).toBe(false);
    expect(deepseek.setupHint).toContain("DEEPSEEK_API_KEY");
    process.env.DEEPSEEK_API_KEY = "sk-deepseek-test";
    expect(deepseek.isConfigured!()).toBe(true);
    delete process.env.DEEPSEEK_API_KEY;
  });

  it("a key missing for a provider that needs one is an error naming the variable", async () => {
    const { agent, provider } = setup({ key: null });
    expect(provider.isConfigured!()).toBe(false);
    const last = lastAssistant((await agent.prompt("x")).messages);
    expect(last.errorMessage).toContain("no API key for provider 'local': set MOCK_OPENAI_KEY");
    expect(mock.requests).toHaveLength(0);
  });
});
