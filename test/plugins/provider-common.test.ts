/**
 * The kit both provider plugins share (lib/provider-kit):
 * catalog matching and cost, models.yaml errors, auth.json, retry timing, partial JSON, history.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CoilError, AssistantMessage, Message } from "../../api/index.js";
import { computeCost, findModel, type CatalogModel } from "../../lib/provider-kit/catalog.js";
import {
  authFileTooOpen,
  parseModelsFile,
  readAuth,
  readModelsFile,
  redact,
  writeAuthKey,
} from "../../lib/provider-kit/config.js";
import { normalizeToolCallId, prepareHistory } from "../../lib/provider-kit/history.js";
import { parsePartialJson } from "../../lib/provider-kit/partial-json.js";
import { backoffMs, isConnectionDrop, retryAfterMs } from "../../lib/provider-kit/retry.js";
import { validate as validateAnthropic } from "../support/mock-anthropic.js";
import { validateChat, validateResponses } from "../support/mock-openai.js";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "coil-provider-common-"));
  temps.push(d);
  return d;
};

const model = (id: string, extra: Partial<CatalogModel> = {}): CatalogModel => ({
  id,
  provider: "p",
  name: id,
  api: "anthropic-messages",
  contextWindow: 1,
  maxOutput: 1,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  ...extra,
});

describe("catalog", () => {
  const list = [
    model("claude-opus-5-5"),
    model("claude-sonnet-5-5"),
    model("claude-sonnet-4-6"),
    model("claude-sonnet-4-5"),
    model("gpt-5.4"),
    model("gpt-5.4-mini"),
  ];
  it("matches exact ids, dated snapshots, and tokens in order (first in catalog order wins)", () => {
    expect(findModel(list, "CLAUDE-SONNET-4-5")!.id).toBe("claude-sonnet-4-5");
    expect(findModel(list, "claude-sonnet-4-5-20250929")!.id).toBe("claude-sonnet-4-5-20250929");
    expect(findModel(list, "sonnet")!.id).toBe("claude-sonnet-5-5");
    expect(findModel(list, "sonnet-4")!.id).toBe("claude-sonnet-4-6");
    expect(findModel(list, "sonnet 4.5")!.id).toBe("claude-sonnet-4-5");
    expect(findModel(list, "5.4 mini")!.id).toBe("gpt-5.4-mini");
    expect(findModel(list, "gemini")).toBeUndefined();
  });

  it("prices each bucket, and a tier the prompt exceeds prices every token", () => {
    const m = {
      cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      tiers: [{ above: 200_000, input: 6, output: 22.5, cacheRead: 0.6, cacheWrite: 7.5 }],
    };
    const small = computeCost({ input: 100_000, output: 1000, cacheRead: 50_000, cacheWrite: 10_000 }, m);
    expect(small).toEqual({
      input: 0.3,
      output: 0.015,
      cacheRead: 0.015,
      cacheWrite: 0.0375,
      total: expect.closeTo(0.3675, 10),
    });
    const big = computeCost({ input: 150_000, output: 1000, cacheRead: 50_000, cacheWrite: 10_000 }, m);
    expect(big.input).toBeCloseTo(0.9, 10);
    expect(big.output).toBeCloseTo(0.0225, 10);
  });
});

describe("models.yaml", () => {
  it("parses providers and models", () => {
    const f = parseModelsFile(
      "/x/models.yaml",
      "providers:\n  ollama:\n    api: openai-completions\n    baseUrl: http://localhost:11434/v1\n    auth: none\n    models:\n      - id: qwen3:32b\n        contextWindow: 32768\n        cost: { input: 0.1 }\n        tiers: [{ above: 1000, input: 1, output: 2 }]\n",
    );
    expect(f.providers).toEqual([
      expect.objectContaining({
        id: "ollama",
        api: "openai-completions",
        baseUrl: "http://localhost:11434/v1",
        auth: "none",
        models: [
          {
            id: "qwen3:32b",
            source: "models.yaml",
            contextWindow: 32768,
            cost: { input: 0.1 },
            tiers: [{ above: 1000, input: 1, output: 2, cacheRead: 0, cacheWrite: 0 }],
          },
        ],
      }),
    ]);
  });

  const errorOf = (text: string): CoilError => {
    try {
      parseModelsFile("/home/u/.coil/models.yaml", text);
    } catch (e) {
      return e as CoilError;
    }
    throw new Error("no error");
  };

  it("a bad field names the file, line, column and field path", () => {
    const e = errorOf(
      "providers:\n  ollama:\n    baseUrl: http://localhost:11434/v1\n    models:\n      - id: a\n      - id: b\n        contextWindow: big\n",
    );
    expect(e.code).toBe("CONFIG_INVALID");
    expect(e.file).toBe("/home/u/.coil/models.yaml");
    expect(e.line).toBe(7);
    expect(e.column).toBe(24);
    expect(e.message).toContain("'providers.ollama.models[1].contextWindow' must be a positive integer, got \"big\"");
    expect(e.message).toContain("(/home/u/.coil/models.yaml:7:24)");
  });

  it("an unknown key is pointed at, with the known ones listed", () => {
    const e = errorOf("providers:\n  x:\n    baseUrl: http://h/v1\n    apikey: oops\n");
    expect(e.line).toBe(4);
    expect(e.message).toContain(
      "'providers.x.apikey' is not a known field (known: api, baseUrl, apiKeyEnv, apiKey, auth, headers, compat, params, defaults, models)",
    );
  });

  it("malformed YAML gives its line; a key pasted into apiKeyEnv is refused", () => {
    const e = errorOf("providers:\n  x: [unclosed\n");
    expect(e.message).toContain("malformed YAML");
    expect(e.line).toBeGreaterThan(0);
    const k = errorOf("providers:\n  x:\n    apiKeyEnv: sk-ant-api03-abc\n");
    expect(k.message).toContain("must be the NAME of an environment variable");
    expect(k.line).toBe(3);
  });

  it("a missing file is no configuration", () => {
    expect(readModelsFile(join(temp(), "nope.yaml"))).toBeUndefined();
  });
});

describe("auth.json", () => {
  it("is written with mode 0600 whatever the umask, and read back", () => {
    const home = join(temp(), "home");
    const old = process.umask(0);
    try {
      const file = writeAuthKey(home, "anthropic", "sk-ant-stored-key");
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readAuth(home)).toEqual({ anthropic: { type: "api_key", key: "sk-ant-stored-key" } });
      expect(authFileTooOpen(home)).toBe(false);
      writeAuthKey(home, "openai", "sk-openai");
      writeAuthKey(home, "anthropic", undefined);
      expect(Object.keys(readAuth(home))).toEqual(["openai"]);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      process.umask(old);
    }
  });

  it("a malformed file is a configuration error naming it", () => {
    const home = temp();
    writeFileSync(join(home, "auth.json"), "{ not json");
    expect(() => readAuth(home)).toThrow(/auth\.json is not valid JSON/);
  });

  it("redacts keys from text", () => {
    expect(redact("Incorrect API key provided: sk-proj-SECRET0123456789.", ["sk-proj-SECRET0123456789"])).not.toContain(
      "SECRET0123456789",
    );
    expect(redact("bearer sk-ant-api03-abcdefghijklmnopqrstuvwxyz", [])).not.toContain("klmnopqrstuvwxyz");
  });
});

describe("retry timing", () => {
  it("reads retry-after-ms, retry-after seconds and HTTP dates", () => {
    expect(retryAfterMs(new Headers({ "retry-after-ms": "250" }))).toBe(250);
    expect(retryAfterMs(new Headers({ "retry-after": "3" }))).toBe(3000);
    expect(retryAfterMs(new Headers({ "retry-after": new Date(10_000 + 5000).toUTCString() }), 10_000)).toBeCloseTo(
      5000,
      -3,
    );
    expect(retryAfterMs(new Headers({}))).toBeUndefined();
  });

  it("tells a dropped connection from a JSON parse error that merely contains the word", () => {
    expect(isConnectionDrop(new TypeError("terminated", { cause: new Error("other side closed") }))).toBe(true);
    expect(isConnectionDrop(new SyntaxError("Unterminated string in JSON at position 65"))).toBe(false);
  });

  it("backs off exponentially with jitter, capped", () => {
    const policy = { maxRetries: 5, baseDelayMs: 1000, maxRetryDelayMs: 5000 };
    expect(backoffMs(1, policy, () => 0)).toBe(750);
    expect(backoffMs(1, policy, () => 1)).toBe(1250);
    expect(backoffMs(3, policy, () => 0.5)).toBe(4000);
    expect(backoffMs(6, policy, () => 0.5)).toBe(5000);
  });
});

describe("partial JSON", () => {
  it("parses what has arrived so far", () => {
    expect(parsePartialJson('{"path": "/tm')).toEqual({ path: "/tm" });
    expect(parsePartialJson('{"a": 1, "b')).toEqual({ a: 1 });
    expect(parsePartialJson('{"a": [1, 2, {"c": tr')).toEqual({ a: [1, 2, {}] });
    expect(parsePartialJson('{"text": "line\\')).toEqual({ text: "line" });
    expect(parsePartialJson('{"u": "\\u00')).toEqual({ u: "" });
    expect(parsePartialJson('{"n": -1.')).toEqual({});
    expect(parsePartialJson("")).toBeUndefined();
  });
});

describe("history", () => {
  const usage = {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
  const assistant = (
    content: AssistantMessage["content"],
    extra: Partial<AssistantMessage> = {},
  ): AssistantMessage => ({
    role: "assistant",
    content,
    provider: "x",
    model: "m",
    usage,
    stopReason: "toolUse",
    timestamp: 0,
    ...extra,
  });

  it("normalizes ids deterministically within the length limit", () => {
    const long = "call_abc|fc_" + "z".repeat(80);
    const a = normalizeToolCallId(long, 40);
    expect(a).toMatch(/^[A-Za-z0-9_-]{1,40}$/);
    expect(normalizeToolCallId(long, 40)).toBe(a);
    expect(normalizeToolCallId(long + "x", 40)).not.toBe(a);
    expect(normalizeToolCallId("toolu_01", 40)).toBe("toolu_01");
  });

  it("drops failed replies and orphan results, and answers every call exactly once", () => {
    const msgs: Message[] = [
      { role: "user", content: "go", timestamp: 0 },
      assistant([
        { type: "toolCall", id: "a", name: "t", arguments: {} },
        { type: "toolCall", id: "b", name: "t", arguments: {} },
      ]),
      {
        role: "toolResult",
        toolCallId: "b",
        toolName: "t",
        content: [{ type: "text", text: "B" }],
        isError: false,
        timestamp: 0,
      },
      {
        role: "toolResult",
        toolCallId: "b",
        toolName: "t",
        content: [{ type: "text", text: "B again" }],
        isError: false,
        timestamp: 0,
      },
      {
        role: "toolResult",
        toolCallId: "zzz",
        toolName: "t",
        content: [{ type: "text", text: "orphan" }],
        isError: false,
        timestamp: 0,
      },
      assistant([{ type: "text", text: "half" }], { stopReason: "error" }),
      { role: "user", content: "again", timestamp: 0 },
      assistant([{ type: "toolCall", id: "c", name: "t", arguments: {} }]),
    ];
    const out = prepareHistory(msgs, { normalizeId: (id) => id, keepThinking: () => true });
    const shape = out.map((m) => (m.role === "toolResult" ? `result:${m.toolCallId}:${m.isError}` : m.role));
    expect(shape).toEqual([
      "user",
      "assistant",
      "result:b:false",
      "result:a:true",
      "user",
      "assistant",
      "result:c:true",
    ]);
  });

  it("keeps signed thinking only where allowed, and drops messages left empty", () => {
    const msgs: Message[] = [
      { role: "user", content: "q", timestamp: 0 },
      assistant(
        [
          { type: "thinking", thinking: "hmm", signature: "s" },
          { type: "text", text: "a" },
        ],
        { stopReason: "stop" },
      ),
      { role: "user", content: "q2", timestamp: 0 },
      assistant([{ type: "thinking", thinking: "only thinking", signature: "s2" }], { stopReason: "stop" }),
      { role: "user", content: "q3", timestamp: 0 },
    ];
    const kept = prepareHistory(msgs, { normalizeId: (id) => id, keepThinking: () => true });
    expect((kept[1] as AssistantMessage).content[0]).toMatchObject({ type: "thinking" });
    const dropped = prepareHistory(msgs, { normalizeId: (id) => id, keepThinking: () => false });
    expect(dropped.map((m) => m.role)).toEqual(["user", "assistant", "user", "user"]);
    expect((dropped[1] as AssistantMessage).content).toEqual([{ type: "text", text: "a" }]);
  });
});

describe("the mock servers reject what the real APIs reject", () => {
  const user = (content: unknown) => ({ role: "user", content });
  const base = { model: "m", max_tokens: 100 };
  it("Anthropic Messages", () => {
    const call = { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "x", input: {} }] };
    const result = (id: string) => user([{ type: "tool_result", tool_use_id: id, content: "ok" }]);
    expect(validateAnthropic({ ...base, messages: [user("hi"), call, result("t1")] })).toBeUndefined();
    const both = user([
      { type: "tool_result", tool_use_id: "t1", content: "ok" },
      { type: "tool_result", tool_use_id: "t2", content: "?" },
    ]);
    expect(validateAnthropic({ ...base, messages: [user("hi"), call, both] })).toMatch(
      /unexpected `tool_use_id` found in `tool_result` blocks: t2/,
    );
    expect(validateAnthropic({ ...base, messages: [user("hi"), call, result("t2")] })).toMatch(
      /without `tool_result` blocks immediately after: t1/,
    );
    expect(validateAnthropic({ ...base, messages: [user("hi"), call, user("no result")] })).toMatch(
      /`tool_use` ids were found without `tool_result` blocks immediately after: t1/,
    );
    expect(validateAnthropic({ ...base, messages: [user([{ type: "text", text: "" }])] })).toMatch(
      /text content blocks must be non-empty/,
    );
    expect(validateAnthropic({ ...base, messages: [{ role: "assistant", content: "hi" }] })).toMatch(
      /first message must use the "user" role/,
    );
    expect(validateAnthropic({ model: "m", messages: [user("hi")] })).toMatch(/max_tokens/);
    expect(
      validateAnthropic({
        ...base,
        messages: [user("hi"), { role: "assistant", content: [{ type: "thinking", thinking: "t" }] }, user("x")],
      }),
    ).toMatch(/signature/);
    // thinking on: the final assistant turn of a tool loop must open with thinking (unless, with
    // adaptive thinking, it is the same model's own turn, which may skip thinking)
    const thinkingOn = { ...base, max_tokens: 5000, thinking: { type: "enabled", budget_tokens: 2000 } };
    expect(validateAnthropic({ ...thinkingOn, messages: [user("hi"), call, result("t1")] })).toMatch(
      /Expected `thinking` or `redacted_thinking`, but found `tool_use`/,
    );
    const signed = {
      role: "assistant",
      content: [{ type: "thinking", thinking: "t", signature: "s" }, ...call.content],
    };
    expect(validateAnthropic({ ...thinkingOn, messages: [user("hi"), signed, result("t1")] })).toBeUndefined();
    expect(
      validateAnthropic({
        ...thinkingOn,
        messages: [user("hi"), call, result("t1"), { role: "assistant", content: "done" }, user("more")],
      }),
    ).toBeUndefined();
    const adaptive = { ...base, thinking: { type: "adaptive" } };
    expect(validateAnthropic({ ...adaptive, messages: [user("hi"), call, result("t1")] })).toMatch(/found `tool_use`/);
    expect(
      validateAnthropic({ ...adaptive, messages: [user("hi"), call, result("t1")] }, new Map([["t1", "m"]])),
    ).toBeUndefined();
    expect(
      validateAnthropic({ ...adaptive, messages: [user("hi"), call, result("t1")] }, new Map([["t1", "other-model"]])),
    ).toMatch(/found `tool_use`/);
    expect(
      validateAnthropic({ ...base, thinking: { type: "disabled" }, messages: [user("hi"), call, result("t1")] }),
    ).toBeUndefined();
    const five = Array.from({ length: 5 }, () => ({ type: "text", text: "x", cache_control: { type: "ephemeral" } }));
    expect(validateAnthropic({ ...base, messages: [user(five)] })).toMatch(/maximum of 4 blocks with cache_control/);
  });

  it("Chat Completions", () => {
    const call = {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "x", arguments: "{}" } }],
    };
    expect(
      validateChat({ model: "m", messages: [user("hi"), call, { role: "tool", tool_call_id: "c1", content: "ok" }] }),
    ).toBeUndefined();
    expect(validateChat({ model: "m", messages: [user("hi"), call, user("no result")] })).toMatch(
      /did not have response messages: c1/,
    );
    expect(
      validateChat({ model: "m", messages: [user("hi"), { role: "tool", tool_call_id: "c9", content: "ok" }] }),
    ).toMatch(/must be a response to a preceeding message with 'tool_calls'/);
    const long = { ...call, tool_calls: [{ ...call.tool_calls[0], id: "c".repeat(41) }] };
    expect(
      validateChat({
        model: "m",
        messages: [user("hi"), long, { role: "tool", tool_call_id: "c".repeat(41), content: "ok" }],
      }),
    ).toMatch(/maximum length 40/);
    expect(validateChat({ model: "m", max_tokens: 5, messages: [user("hi")] }, { rejectField: "max_tokens" })).toMatch(
      /Use 'max_completion_tokens' instead/,
    );
  });

  it("Responses", () => {
    const call = { type: "function_call", call_id: "c1", name: "x", arguments: "{}" };
    expect(
      validateResponses({
        model: "m",
        input: [user("hi"), call, { type: "function_call_output", call_id: "c1", output: "ok" }],
      }),
    ).toBeUndefined();
    expect(validateResponses({ model: "m", input: [user("hi"), call] })).toMatch(
      /No tool output found for function call c1/,
    );
    expect(
      validateResponses({
        model: "m",
        input: [user("hi"), { type: "function_call_output", call_id: "c2", output: "ok" }],
      }),
    ).toMatch(/No tool call found for function call output with call_id c2/);
    expect(
      validateResponses({
        model: "m",
        store: false,
        input: [user("hi"), { type: "reasoning", id: "rs_1", summary: [] }, user("x")],
      }),
    ).toMatch(/Items are not persisted/);
  });
});
