/**
 * provider-anthropic against a local server that speaks the Messages API (test/support/mock-anthropic.ts),
 * through the real SDK client: streaming, thinking, tools, usage and cost, caching breakpoints,
 * errors, retries, dropped connections, abort, overflow, key hygiene, history from other providers.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  Agent,
  Type,
  definePlugin,
  type AgentEvent,
  type AgentMessage,
  type AssistantMessage,
  type Message,
  type ProviderEvent,
  type ToolResultMessage,
} from "../../../api/index.js";
import type { PluginHost } from "../../../boot/host.js";
import { testHost } from "../../support/host.js";
import anthropic from "../../../plugins/provider-anthropic/index.js";
import { apiError, drop, reply, startMockAnthropic, text, type MockAnthropic } from "../../support/mock-anthropic.js";
import { PNG, testTools } from "../../support/provider-tools.js";

const home = mkdtempSync(join(tmpdir(), "coil-anthropic-"));
process.env.COIL_HOME = home;
const KEY = "sk-ant-test-0123456789abcdef";

let mock: MockAnthropic;
beforeAll(async () => {
  mock = await startMockAnthropic({ key: KEY });
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

function setup(
  o: {
    model?: string;
    options?: Record<string, unknown>;
    plugins?: Parameters<PluginHost["install"]>[0][];
    thinking?: "off" | "high";
    key?: string | null;
    messages?: AgentMessage[];
  } = {},
) {
  if (o.key === null) delete process.env.ANTHROPIC_API_KEY;
  else process.env.ANTHROPIC_API_KEY = o.key ?? KEY;
  const host = testHost();
  const events: AgentEvent[] = [];
  host.subscribe("*", (e) => void events.push(e));
  host.install(anthropic, { baseUrl: mock.url, baseDelayMs: 5, maxRetryDelayMs: 2000, ...o.options });
  host.install(tools);
  for (const p of o.plugins ?? []) host.install(p);
  const provider = host.providers.get("anthropic")!;
  const model = provider.resolveModel!(o.model ?? "claude-sonnet-5-5")!;
  const agent = new Agent(host, {
    provider: "anthropic",
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

describe("provider-anthropic: streaming", () => {
  it("streams plain text, with usage in four buckets and cost from the catalog", async () => {
    mock.push(
      text("Hello there, how can I help?", {
        usage: { input: 1200, output: 300, cacheRead: 50_000, cacheWrite: 4000 },
      }),
    );
    const { agent, updates } = setup();
    const result = await agent.prompt("hi");
    const last = lastAssistant(result.messages);
    expect(last.content).toEqual([{ type: "text", text: "Hello there, how can I help?" }]);
    expect(last.stopReason).toBe("stop");
    expect(last).toMatchObject({ provider: "anthropic", model: "claude-sonnet-5-5" });
    expect(last.usage).toMatchObject({ input: 1200, output: 300, cacheRead: 50_000, cacheWrite: 4000 });
    // Sonnet 5.5: $2 in, $10 out, $0.10 cache read, $2.50 cache write per million
    expect(last.usage.cost.input).toBeCloseTo(0.0024, 10);
    expect(last.usage.cost.output).toBeCloseTo(0.003, 10);
    expect(last.usage.cost.cacheRead).toBeCloseTo(0.005, 10);
    expect(last.usage.cost.cacheWrite).toBeCloseTo(0.01, 10);
    expect(last.usage.cost.total).toBeCloseTo(0.0204, 10);
    const deltas = updates().filter((e) => e.type === "text_delta");
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas.map((d) => (d as { delta: string }).delta).join("")).toBe("Hello there, how can I help?");
    const body = mock.requests[0]!.body;
    expect(body).toMatchObject({
      model: "claude-sonnet-5-5",
      stream: true,
      system: [{ type: "text", text: "You are a test." }],
    });
    const sent = mock.requests[0]!.headers;
    expect(sent["x-api-key"] ?? sent.authorization).toContain(KEY);
  });

  it("applies a long-context price tier to the whole request", async () => {
    mock.push(text("long", { usage: { input: 150_000, output: 1000 } }));
    const { agent } = setup({ model: "claude-haiku-5-5" });
    const last = lastAssistant((await agent.prompt("a lot of text")).messages);
    // over 100K prompt tokens: $0.50 in, $2.50 out for every token
    expect(last.usage.cost.input).toBeCloseTo(0.075, 10);
    expect(last.usage.cost.output).toBeCloseTo(0.0025, 10);
  });

  it("keeps thinking with its signature and replays it on the next turn", async () => {
    mock.push(
      reply([
        { thinking: "Let me add these numbers carefully.", signature: "sig-abc123" },
        { tool: { id: "toolu_01", name: "add", input: { a: 2, b: 3 } } },
      ]),
      reply([{ text: "It is 5." }]),
    );
    const { agent, updates } = setup({ thinking: "high" });
    const result = await agent.prompt("2+3?");
    const first = assistants(result.messages)[0]!;
    expect(first.content[0]).toEqual({
      type: "thinking",
      thinking: "Let me add these numbers carefully.",
      signature: "sig-abc123",
    });
    expect(updates().some((e) => e.type === "thinking_delta")).toBe(true);
    expect(mock.requests[0]!.body.thinking).toEqual({ type: "adaptive", display: "summarized" });
    expect(mock.requests[0]!.body.output_config).toEqual({ effort: "high" });
    const replay = mock.requests[1]!.body.messages[1];
    expect(replay.role).toBe("assistant");
    expect(replay.content[0]).toEqual({
      type: "thinking",
      thinking: "Let me add these numbers carefully.",
      signature: "sig-abc123",
    });
    expect(mock.rejected()).toEqual([]);
  });

  it("keeps redacted thinking opaque and sends it back unchanged", async () => {
    mock.push(
      reply([{ redacted: "ENCRYPTED-PAYLOAD" }, { tool: { id: "toolu_02", name: "add", input: { a: 1, b: 1 } } }]),
      text("2"),
    );
    const { agent } = setup();
    const result = await agent.prompt("1+1");
    expect(assistants(result.messages)[0]!.content[0]).toEqual({
      type: "thinking",
      thinking: "",
      signature: "ENCRYPTED-PAYLOAD",
      redacted: true,
    });
    expect(mock.requests[1]!.body.messages[1].content[0]).toEqual({
      type: "redacted_thinking",
      data: "ENCRYPTED-PAYLOAD",
    });
  });

  it("uses a token budget for models with budget thinking, below max_tokens", async () => {
    mock.push(text("ok"));
    const { agent } = setup({ model: "claude-sonnet-4-6", thinking: "off" });
    await agent.prompt("x");
    expect(mock.requests[0]!.body.thinking).toEqual({ type: "disabled" });
    mock.push(text("ok"));
    const budget = setup({ model: "claude-haiku-4-5", thinking: "high" });
    await budget.agent.prompt("x");
    const body = mock.requests[1]!.body;
    expect(body.thinking.type).toBe("enabled");
    expect(body.thinking.budget_tokens).toBeGreaterThanOrEqual(1024);
    expect(body.thinking.budget_tokens).toBeLessThan(body.max_tokens);
    expect(body.max_tokens).toBeLessThanOrEqual(64_000);
  });

  it("runs two parallel tool calls whose arguments arrive across many deltas", async () => {
    mock.push(
      reply(
        [
          { text: "Adding both." },
          { tool: { id: "toolu_a", name: "add", input: { a: 10, b: 20 } } },
          { tool: { id: "toolu_b", name: "add", input: { a: 1.5, b: 2.25 } } },
        ],
        { chunk: 2 },
      ),
      (body) => {
        const results = body.messages.at(-1).content;
        expect(
          results.map((r: { tool_use_id: string; content: { text: string }[] }) => [r.tool_use_id, r.content[0]!.text]),
        ).toEqual([
          ["toolu_a", "30"],
          ["toolu_b", "3.75"],
        ]);
        return text("30 and 3.75");
      },
    );
    const { agent, updates } = setup();
    const result = await agent.prompt("add things");
    const calls = assistants(result.messages)[0]!.content.filter((c) => c.type === "toolCall");
    expect(calls).toEqual([
      { type: "toolCall", id: "toolu_a", name: "add", arguments: { a: 10, b: 20 } },
      { type: "toolCall", id: "toolu_b", name: "add", arguments: { a: 1.5, b: 2.25 } },
    ]);
    const toolDeltas = updates().filter(
      (e): e is Extract<ProviderEvent, { type: "toolcall_delta" }> => e.type === "toolcall_delta",
    );
    expect(toolDeltas.length).toBeGreaterThan(10);
    // previews parse the arguments seen so far
    expect(
      toolDeltas.some(
        (d) => JSON.stringify((d.partial.content[d.contentIndex] as { arguments: unknown }).arguments) === '{"a":10}',
      ),
    ).toBe(true);
    expect(lastAssistant(result.messages).content).toEqual([{ type: "text", text: "30 and 3.75" }]);
    expect(mock.rejected()).toEqual([]);
  });

  it("hitting max_tokens in the middle of a tool call ends with `length` and the call is not run", async () => {
    mock.push(
      reply([{ tool: { id: "toolu_cut", name: "add", input: {}, raw: '{"a": 1, "b' } }], { stop: "max_tokens" }),
      text("Sorry, retrying later."),
    );
    const { agent } = setup();
    const result = await agent.prompt("add");
    const first = assistants(result.messages)[0]!;
    expect(first.stopReason).toBe("length");
    const resultMsg = result.messages.find((m): m is ToolResultMessage => m.role === "toolResult")!;
    expect(resultMsg.isError).toBe(true);
    expect(resultMsg.content[0]).toMatchObject({ text: expect.stringContaining("output token limit") });
    expect(mock.requests).toHaveLength(2);
    expect(mock.rejected()).toEqual([]);
  });

  it("a tool call whose arguments are not valid JSON is marked, answered with an error and never run", async () => {
    let ran = 0;
    const counting = definePlugin({
      id: "counting",
      setup(ctx) {
        ctx.tools.register({
          name: "count",
          description: "count",
          parameters: Type.Object({ n: Type.Number() }),
          execute: async () => {
            ran++;
            return { content: [{ type: "text", text: "ok" }] };
          },
        });
      },
    });
    mock.push(reply([{ tool: { id: "toolu_bad", name: "count", input: {}, raw: '{"n": 1,, }' } }]), text("sorry"));
    const { agent } = setup({ plugins: [counting] });
    const result = await agent.prompt("count");
    const call = assistants(result.messages)[0]!.content[0] as { parseError?: string };
    expect(call.parseError).toMatch(/JSON/);
    expect(ran).toBe(0);
    expect(result.messages.find((m): m is ToolResultMessage => m.role === "toolResult")).toMatchObject({
      isError: true,
      content: [{ text: expect.stringContaining("not valid JSON") }],
    });
    expect(mock.rejected()).toEqual([]);
  });

  it("maps refusal and pause_turn stop reasons", async () => {
    mock.push(text("I can't help with that.", { stop: "refusal" }));
    const { agent } = setup();
    expect(lastAssistant((await agent.prompt("bad")).messages).stopReason).toBe("refusal");
    mock.push(text("working...", { stop: "pause_turn" }), text("done"));
    const second = setup();
    const result = await second.agent.prompt("long task");
    expect(assistants(result.messages).map((m) => m.stopReason)).toEqual(["pause", "stop"]);
  });

  it("sends images in user messages and tool results, and text in their place for text-only models", async () => {
    mock.push(reply([{ tool: { id: "toolu_img", name: "look", input: {} } }]), text("A pixel."));
    const { agent } = setup();
    await agent.prompt([
      {
        role: "user",
        content: [
          { type: "text", text: "what is this?" },
          { type: "image", data: PNG, mimeType: "image/png" },
        ],
        timestamp: 1,
      },
    ]);
    expect(mock.requests[0]!.body.messages[0].content[1]).toMatchObject({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: PNG },
    });
    const result = mock.requests[1]!.body.messages[2].content[0];
    expect(result.type).toBe("tool_result");
    expect(result.content[1]).toMatchObject({ type: "image", source: { type: "base64", data: PNG } });

    mock.push(text("ok"));
    const textOnly = setup({
      options: {
        modelsFile: writeModels(
          "providers:\n  anthropic:\n    models:\n      - id: claude-text-only\n        input: [text]\n",
        ),
      },
      model: "claude-text-only",
    });
    await textOnly.agent.prompt([
      { role: "user", content: [{ type: "image", data: PNG, mimeType: "image/png" }], timestamp: 1 },
    ]);
    expect(mock.requests[2]!.body.messages[0].content[0]).toMatchObject({
      type: "text",
      text: "(image omitted: this model does not accept images)",
    });
  });
});

function writeModels(yaml: string): string {
  const file = join(home, `models-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, yaml);
  return file;
}

describe("provider-anthropic: prompt caching", () => {
  it("marks the stable prefix and the newest message, and the previous turn's end as the conversation grows", async () => {
    mock.push(reply([{ tool: { id: "toolu_c1", name: "add", input: { a: 1, b: 2 } } }]), text("3"));
    const { agent } = setup();
    await agent.prompt("add 1 and 2");
    const [first, second] = mock.requests.map((r) => r.body);
    expect(first!.system.at(-1).cache_control).toEqual({ type: "ephemeral" });
    expect(first!.tools.at(-1).cache_control).toEqual({ type: "ephemeral" });
    expect(first!.messages.at(-1).content.at(-1).cache_control).toEqual({ type: "ephemeral" });
    // second request: [user, assistant(tool_use), user(tool_result)]
    expect(second!.messages).toHaveLength(3);
    expect(second!.messages[2].content.at(-1).cache_control).toEqual({ type: "ephemeral" });
    expect(second!.messages[0].content.at(-1).cache_control).toEqual({ type: "ephemeral" });
    expect(second!.messages[1].content.some((b: { cache_control?: unknown }) => b.cache_control)).toBe(false);
  });

  it("uses the 1h lifetime when configured and none when switched off", async () => {
    mock.push(text("a"));
    await setup({ options: { cacheRetention: "1h" } }).agent.prompt("x");
    expect(mock.requests[0]!.body.system[0].cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
    mock.push(text("b"));
    await setup({ options: { cacheRetention: "none" } }).agent.prompt("x");
    expect(JSON.stringify(mock.requests[1]!.body)).not.toContain("cache_control");
  });
});

describe("provider-anthropic: errors and retries", () => {
  it("reports a 400 with the API's error type and message, without retrying", async () => {
    mock.push(apiError(400, "invalid_request_error", "messages.0.content: something is off"));
    const { agent } = setup();
    const result = await agent.prompt("x");
    expect(result.stopReason).toBe("error");
    const last = lastAssistant(result.messages);
    expect(last.stopReason).toBe("error");
    expect(last.errorMessage).toContain("HTTP 400 invalid_request_error: messages.0.content: something is off");
    expect(mock.requests).toHaveLength(1);
  });

  it("a prompt whose run failed is not sent again with the next prompt; continue() still retries it (#12.5)", async () => {
    mock.push(apiError(400, "invalid_request_error", "something is off"));
    const { agent } = setup();
    expect((await agent.prompt("first question")).stopReason).toBe("error");
    mock.push(text("second answer"));
    await agent.prompt("second question");
    expect(mock.requests[1]!.body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "second question", cache_control: { type: "ephemeral" } }] },
    ]);
    // a failed continue() keeps the prompt it retried
    mock.push(apiError(400, "invalid_request_error", "still off"), text("third answer"));
    const again = setup();
    expect((await again.agent.prompt("only question")).stopReason).toBe("error");
    await again.agent.continue();
    expect(mock.requests[3]!.body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "only question", cache_control: { type: "ephemeral" } }] },
    ]);
  });

  it("a 401 names the variable to set and never shows the key", async () => {
    const { agent, events } = setup({ key: "sk-ant-wrong-key-0000000000000" });
    const result = await agent.prompt("x");
    const last = lastAssistant(result.messages);
    expect(last.errorMessage).toContain("HTTP 401");
    expect(last.errorMessage).toContain("ANTHROPIC_API_KEY");
    expect(last.errorMessage).not.toContain("sk-ant-wrong-key-0000000000000");
    expect(JSON.stringify(events)).not.toContain("sk-ant-wrong-key-0000000000000");
    expect(mock.requests).toHaveLength(1);
  });

  it("retries a 429 after the server's retry-after, and shows the wait as an event", async () => {
    mock.push(apiError(429, "rate_limit_error", "slow down", { "retry-after": "1" }), text("finally"));
    const { agent, events } = setup();
    const started = Date.now();
    const result = await agent.prompt("x");
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(lastAssistant(result.messages).content).toEqual([{ type: "text", text: "finally" }]);
    const retries = events.filter((e) => e.type === "retry");
    expect(retries).toEqual([
      { type: "retry", attempt: 1, delayMs: 1000, reason: expect.stringContaining("429 rate_limit_error: slow down") },
    ]);
  });

  it("honours retry-after-ms and fails fast when the server asks for more than maxRetryDelayMs", async () => {
    mock.push(apiError(429, "rate_limit_error", "wait a bit", { "retry-after-ms": "30" }), text("ok"));
    const quick = setup();
    await quick.agent.prompt("x");
    expect(quick.events.find((e) => e.type === "retry")).toMatchObject({ delayMs: 30 });
    mock.push(apiError(429, "rate_limit_error", "come back tomorrow", { "retry-after": "86400" }));
    const slow = setup();
    const result = await slow.agent.prompt("x");
    expect(lastAssistant(result.messages).errorMessage).toContain("longer than maxRetryDelayMs=2000");
    expect(slow.events.filter((e) => e.type === "retry")).toHaveLength(0);
  });

  it("retries 500 and 529 (overloaded) with backoff", async () => {
    mock.push(
      apiError(500, "api_error", "Internal server error"),
      apiError(529, "overloaded_error", "Overloaded"),
      text("recovered"),
    );
    const { agent, events } = setup();
    const result = await agent.prompt("x");
    expect(lastAssistant(result.messages).content).toEqual([{ type: "text", text: "recovered" }]);
    expect(events.filter((e) => e.type === "retry").map((e) => (e as { attempt: number }).attempt)).toEqual([1, 2]);
  });

  it("retries an overloaded error event that arrives in the stream before any output", async () => {
    mock.push(
      text("never shown", { errorAfter: { frames: 2, type: "overloaded_error", message: "Overloaded" } }),
      text("second try"),
    );
    const { agent } = setup();
    const result = await agent.prompt("x");
    expect(lastAssistant(result.messages).content).toEqual([{ type: "text", text: "second try" }]);
    expect(mock.requests).toHaveLength(2);
  });

  it("gives up after maxRetries and says how many retries were made", async () => {
    mock.push(
      apiError(503, "api_error", "unavailable"),
      apiError(503, "api_error", "unavailable"),
      apiError(503, "api_error", "unavailable"),
    );
    const { agent, events } = setup({ options: { maxRetries: 2 } });
    const result = await agent.prompt("x");
    expect(lastAssistant(result.messages).errorMessage).toMatch(/HTTP 503.*unavailable \(after 2 retries\)/);
    expect(events.filter((e) => e.type === "retry")).toHaveLength(2);
  });

  it("retries a connection dropped before the first event", async () => {
    mock.push(drop(), text("after the drop"));
    const { agent, events } = setup();
    const result = await agent.prompt("x");
    expect(lastAssistant(result.messages).content).toEqual([{ type: "text", text: "after the drop" }]);
    expect(events.filter((e) => e.type === "retry")).toHaveLength(1);
  });

  it("retries a stream that closes after message_start but before any content", async () => {
    mock.push(text("lost", { dropAfter: 2 }), text("kept"));
    const { agent } = setup();
    const result = await agent.prompt("x");
    expect(lastAssistant(result.messages).content).toEqual([{ type: "text", text: "kept" }]);
  });

  it("retries the turn when the connection drops after output started, discarding the partial reply (#12.6)", async () => {
    mock.push(
      reply([{ thinking: "first try", signature: "S0" }, { text: "The answer is forty-two, because" }], {
        dropAfter: 9,
        chunk: 4,
      }),
      reply([
        { thinking: "second try", signature: "S1" },
        { tool: { id: "toolu_r", name: "add", input: { a: 40, b: 2 } } },
      ]),
      text("42"),
    );
    const { agent, events } = setup();
    const result = await agent.prompt("x");
    expect(result.stopReason).toBe("stop");
    expect(mock.requests).toHaveLength(3);
    expect(mock.rejected()).toEqual([]);
    // the dropped attempt left nothing in history: one reply with the second try's thinking and call
    const replies = assistants(result.messages);
    expect(replies).toHaveLength(2);
    expect(replies[0]!.content).toEqual([
      { type: "thinking", thinking: "second try", signature: "S1" },
      { type: "toolCall", id: "toolu_r", name: "add", arguments: { a: 40, b: 2 } },
    ]);
    expect(JSON.stringify(result.messages)).not.toContain("first try");
    const retry = events.findIndex((e) => e.type === "retry");
    expect(retry).toBeGreaterThan(0);
    expect((events[retry] as { reason: string }).reason).toMatch(/connection|ended before message_stop/);
    // before the retry the partial text streamed; after it, updates carry only the new attempt
    const before = events.slice(0, retry).filter((e) => e.type === "message_update");
    expect(before.length).toBeGreaterThan(0);
    const after = events
      .slice(retry)
      .filter((e): e is Extract<AgentEvent, { type: "message_update" }> => e.type === "message_update");
    expect(after.length).toBeGreaterThan(0);
    expect(JSON.stringify(after.map((e) => e.message))).not.toContain("first try");
    // one message_start for the reply, not one per attempt
    const starts = events.filter((e) => e.type === "message_start" && e.message.role === "assistant");
    expect(starts).toHaveLength(2);
    expect(agent.state.messages.filter((m) => m.role === "assistant")).toHaveLength(2);
  });

  it("gives up on drops after output started once maxRetries is used, with an error naming the retries", async () => {
    mock.push(
      text("one two three four", { dropAfter: 5, chunk: 4 }),
      text("one two three four", { dropAfter: 5, chunk: 4 }),
    );
    const { agent, events } = setup({ options: { maxRetries: 1 } });
    const result = await agent.prompt("x");
    expect(result.stopReason).toBe("error");
    const last = lastAssistant(result.messages);
    expect(last.errorMessage).toMatch(/after 1 retry/);
    expect(last.content).toEqual([{ type: "text", text: "one two " }]);
    expect(events.filter((e) => e.type === "retry")).toHaveLength(1);
  });

  it("does not retry a dropped reply in which a server-side tool already ran (#12.6)", async () => {
    mock.push(
      reply(
        [
          { serverTool: { id: "srvtoolu_1", name: "web_search", input: { query: "x" } } },
          { text: "Found it: the answer is" },
        ],
        { dropAfter: 7, chunk: 4 },
      ),
    );
    const { agent, events } = setup();
    const result = await agent.prompt("x");
    expect(result.stopReason).toBe("error");
    const last = lastAssistant(result.messages);
    expect(last.errorMessage).toContain("a server-side tool had already run");
    expect(mock.requests).toHaveLength(1);
    expect(events.filter((e) => e.type === "retry")).toHaveLength(0);
  });

  it("aborts mid-stream promptly", async () => {
    mock.push(text("a long answer that streams slowly, chunk by chunk, for a while", { chunk: 3, delayMs: 40 }));
    const { agent, events } = setup();
    const running = agent.prompt("x");
    await new Promise<void>((resolve) => {
      const stop = agent.subscribe((e) => {
        if (e.type === "message_update" && e.event.type === "text_delta") {
          stop();
          resolve();
        }
      });
    });
    const abortedAt = Date.now();
    agent.abort();
    const result = await running;
    expect(Date.now() - abortedAt).toBeLessThan(500);
    expect(result.stopReason).toBe("aborted");
    expect(lastAssistant(result.messages).stopReason).toBe("aborted");
    expect(events.filter((e) => e.type === "retry")).toHaveLength(0);
  });

  it("an abort during the retry wait ends the run", async () => {
    mock.push(apiError(429, "rate_limit_error", "wait", { "retry-after": "1.5" }));
    const { agent } = setup();
    const running = agent.prompt("x");
    await new Promise<void>((resolve) => {
      const stop = agent.subscribe((e) => {
        if (e.type === "retry") {
          stop();
          resolve();
        }
      });
    });
    agent.abort();
    const result = await running;
    expect(result.stopReason).toBe("aborted");
    expect(mock.requests).toHaveLength(1);
  });

  it("reports context overflow as the kernel's overflow error, so compaction runs and the turn is retried once", async () => {
    mock.push(
      apiError(400, "invalid_request_error", "prompt is too long: 215000 tokens > 200000 maximum"),
      text("fits now"),
    );
    const compactor = definePlugin({
      id: "test-compact",
      setup(ctx) {
        ctx.tap("compact", async (req) => ({ messages: req.messages.slice(-1) }));
      },
    });
    const history: AgentMessage[] = [
      { role: "user", content: "old question", timestamp: 1 },
      {
        role: "assistant",
        content: [{ type: "text", text: "old answer" }],
        provider: "anthropic",
        model: "claude-sonnet-5-5",
        usage: {
          input: 0,
          output: 0,
          cacheRead: 0,
          cacheWrite: 0,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: "stop",
        timestamp: 2,
      },
    ];
    const { agent, events } = setup({ plugins: [compactor], messages: history });
    const result = await agent.prompt("new question");
    expect(mock.requests[0]!.status).toBe(400);
    expect(events.some((e) => e.type === "compaction" && e.reason === "overflow")).toBe(true);
    expect(lastAssistant(result.messages).content).toEqual([{ type: "text", text: "fits now" }]);
    expect(mock.requests[1]!.body.messages).toHaveLength(1);
  });

  it("without a key: not configured, the hint names ANTHROPIC_API_KEY, and a request says what to set", async () => {
    const { agent, provider } = setup({ key: null });
    expect(provider.isConfigured!()).toBe(false);
    expect(provider.setupHint).toContain("ANTHROPIC_API_KEY");
    const result = await agent.prompt("x");
    expect(lastAssistant(result.messages).errorMessage).toMatch(
      /no API key for provider 'anthropic': set ANTHROPIC_API_KEY/,
    );
    expect(mock.requests).toHaveLength(0);
  });
});

describe("provider-anthropic: auth", () => {
  it("falls back to ANTHROPIC_AUTH_TOKEN as a bearer token", async () => {
    process.env.ANTHROPIC_AUTH_TOKEN = KEY;
    try {
      mock.push(text("token ok"));
      const { agent, provider } = setup({ key: null });
      expect(provider.isConfigured!()).toBe(true);
      expect(lastAssistant((await agent.prompt("x")).messages).content).toEqual([{ type: "text", text: "token ok" }]);
      expect(mock.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    } finally {
      delete process.env.ANTHROPIC_AUTH_TOKEN;
    }
  });
});

describe("provider-anthropic: history from other providers", () => {
  it("drops foreign thinking, rewrites tool-call ids, and pairs every call with exactly one result", async () => {
    const usage = {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    };
    const history: Message[] = [
      { role: "user", content: "start", timestamp: 1 },
      {
        role: "assistant",
        provider: "openai",
        model: "gpt-5.4",
        usage,
        stopReason: "toolUse",
        timestamp: 2,
        content: [
          {
            type: "thinking",
            thinking: "openai reasoning summary",
            signature: '{"type":"reasoning","id":"rs_1","encrypted_content":"xyz"}',
          },
          {
            type: "toolCall",
            id: "call_abc|fc_0123456789abcdef0123456789abcdef0123456789abcdef0123456789",
            name: "add",
            arguments: { a: 1, b: 2 },
          },
          { type: "toolCall", id: "call.with.dots", name: "add", arguments: { a: 3, b: 4 } },
        ],
      },
      {
        role: "toolResult",
        toolCallId: "call_abc|fc_0123456789abcdef0123456789abcdef0123456789abcdef0123456789",
        toolName: "add",
        content: [{ type: "text", text: "3" }],
        isError: false,
        timestamp: 3,
      },
      // the second call has no result; an orphan result for an unknown call follows
      {
        role: "toolResult",
        toolCallId: "call_unknown",
        toolName: "add",
        content: [{ type: "text", text: "?" }],
        isError: false,
        timestamp: 4,
      },
      {
        role: "assistant",
        provider: "openai",
        model: "gpt-5.4",
        usage,
        stopReason: "error",
        errorMessage: "boom",
        timestamp: 5,
        content: [{ type: "text", text: "partial" }],
      },
      { role: "user", content: "continue with claude", timestamp: 6 },
    ];
    mock.push((body) => {
      const [, assistant, results] = body.messages;
      const ids = assistant.content
        .filter((b: { type: string }) => b.type === "tool_use")
        .map((b: { id: string }) => b.id);
      expect(assistant.content.some((b: { type: string }) => b.type === "thinking")).toBe(false);
      expect(ids.every((id: string) => /^[A-Za-z0-9_-]{1,64}$/.test(id))).toBe(true);
      expect(
        results.content
          .filter((b: { type: string }) => b.type === "tool_result")
          .map((b: { tool_use_id: string }) => b.tool_use_id),
      ).toEqual(ids);
      expect(JSON.stringify(body)).not.toContain("partial");
      return text("continuing");
    });
    const { agent } = setup({ messages: history });
    const result = await agent.continue();
    expect(lastAssistant(result.messages).content).toEqual([{ type: "text", text: "continuing" }]);
    expect(mock.rejected()).toEqual([]);
  });

  it("does not replay thinking signed by another Claude model", async () => {
    const usage = {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    };
    mock.push((body) => {
      expect(JSON.stringify(body.messages)).not.toContain("opus-thought");
      return text("ok");
    });
    const { agent } = setup({
      messages: [
        { role: "user", content: "q", timestamp: 1 },
        {
          role: "assistant",
          provider: "anthropic",
          model: "claude-opus-5-5",
          usage,
          stopReason: "stop",
          timestamp: 2,
          content: [
            { type: "thinking", thinking: "opus-thought", signature: "s" },
            { type: "text", text: "a" },
          ],
        },
      ],
    });
    await agent.prompt("next");
  });
});

describe("provider-anthropic: models", () => {
  it("resolves fuzzy ids to the newest match, keeps dated snapshots, and gives unknown ids default limits", () => {
    const { provider } = setup();
    expect(provider.models![0]!.id).toBe("claude-opus-5-5");
    expect(provider.resolveModel!("sonnet")!.id).toBe("claude-sonnet-5-5");
    expect(provider.resolveModel!("claude-sonnet-4")!.id).toBe("claude-sonnet-4-6");
    expect(provider.resolveModel!("haiku 4.5")!.id).toBe("claude-haiku-4-5");
    const dated = provider.resolveModel!("claude-sonnet-4-5-20250929")!;
    expect(dated).toMatchObject({
      id: "claude-sonnet-4-5-20250929",
      contextWindow: 200_000,
      maxOutput: 64_000,
      cost: { input: 3 },
    });
    expect(provider.resolveModel!("my-local-claude")).toMatchObject({
      id: "my-local-claude",
      provider: "anthropic",
      contextWindow: 200_000,
    });
  });

  it("an anthropic-messages server: apiKey from a command, headers from ${VAR} and the model, params in the body", async () => {
    const file = writeModels(`providers:
  gateway:
    api: anthropic-messages
    baseUrl: ${mock.url}
    apiKey: "!printf %s ${KEY}"
    headers: { X-Tenant: "\${GATEWAY_TENANT}" }
    params: { metadata: { user_id: team-7 }, top_k: 5 }
    models:
      - id: claude-sonnet-5-5
        headers: { X-Route: eu }
`);
    process.env.GATEWAY_TENANT = "acme";
    mock.push(text("via gateway"));
    const { host } = setup({ options: { modelsFile: file, piModelsFile: "none" }, key: null });
    const gateway = host.providers.get("gateway")!;
    expect(gateway.isConfigured!()).toBe(true);
    const agent = new Agent(host, { provider: "gateway", model: gateway.models![0]! });
    expect(lastAssistant((await agent.prompt("hi")).messages).content).toEqual([{ type: "text", text: "via gateway" }]);
    const req = mock.requests[0]!;
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.headers["x-tenant"]).toBe("acme");
    expect(req.headers["x-route"]).toBe("eu");
    expect(req.body).toMatchObject({ model: "claude-sonnet-5-5", metadata: { user_id: "team-7" }, top_k: 5 });
  });

  it("Pi's models.json: an anthropic-messages provider, its key named by variable, its model over the built-in entry", async () => {
    const dir = mkdtempSync(join(home, "pi-"));
    writeFileSync(
      join(dir, "models.json"),
      JSON.stringify({
        providers: {
          "pi-claude": {
            api: "anthropic-messages",
            baseUrl: mock.url,
            apiKey: "PI_CLAUDE_KEY",
            authHeader: true,
            models: [{ id: "claude-haiku-4-5", maxTokens: 2000 }],
          },
        },
      }),
    );
    process.env.PI_CLAUDE_KEY = KEY;
    mock.push(text("pi claude"));
    const { host } = setup({
      options: { modelsFile: writeModels(""), piModelsFile: join(dir, "models.json") },
      key: null,
    });
    const provider = host.providers.get("pi-claude")!;
    expect(provider.models![0]).toMatchObject({
      id: "claude-haiku-4-5",
      maxOutput: 2000,
      source: "pi models.json",
      cost: { input: 1 },
    });
    await new Agent(host, { provider: "pi-claude", model: provider.models![0]! }).prompt("hi");
    expect(mock.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(mock.requests[0]!.body.max_tokens).toBe(2000);
  });

  it("registers an Anthropic-compatible server from models.yaml, keyless on localhost", async () => {
    const open = await startMockAnthropic({ steps: [text("from the proxy")] });
    try {
      const file = writeModels(
        `providers:\n  my-proxy:\n    api: anthropic-messages\n    baseUrl: ${open.url}\n    headers: { X-Team: coil }\n    models:\n      - id: proxy-model\n        contextWindow: 50000\n        maxOutput: 4000\n        cost: { input: 1, output: 2 }\n`,
      );
      const { host } = setup({ options: { modelsFile: file }, key: null });
      const proxy = host.providers.get("my-proxy")!;
      expect(proxy.isConfigured!()).toBe(true);
      const model = proxy.models![0]!;
      expect(model).toMatchObject({ id: "proxy-model", provider: "my-proxy", contextWindow: 50_000, maxOutput: 4000 });
      const agent = new Agent(host, { provider: "my-proxy", model });
      const result = await agent.prompt("hi");
      expect(lastAssistant(result.messages)).toMatchObject({
        provider: "my-proxy",
        model: "proxy-model",
        content: [{ type: "text", text: "from the proxy" }],
      });
      expect(open.requests[0]!.body.max_tokens).toBe(4000);
      expect(open.requests[0]!.headers["x-team"]).toBe("coil");
    } finally {
      await open.close();
    }
  });
});
