/**
 * models.yaml as expressive as Pi's models.json, checked on the wire: `${ENV}` / `!command` values in
 * `apiKey` and `headers`, per-model headers, compat and `params`, Pi's compat switches, the `store`
 * → `stateless` rename, and Pi's own `models.json` read as an extra source. Real SDK client, local
 * mock server (test/support/mock-openai.ts).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
} from "../../../api/index.js";
import { testHost } from "../../support/host.js";
import openai from "../../../plugins/provider-openai/index.js";
import anthropic from "../../../plugins/provider-anthropic/index.js";
import { chooseModel } from "../../../lib/models.js";
import { forgetCommandOutputs, resolveHeaders } from "../../../lib/provider-kit/values.js";
import { chat, responses, startMockOpenAI, type MockOpenAI } from "../../support/mock-openai.js";

const home = mkdtempSync(join(tmpdir(), "coil-models-yaml-"));
process.env.COIL_HOME = home;
const KEY = "sk-proj-yaml-abcdefghijklmnop0123";

let mock: MockOpenAI;
beforeAll(async () => {
  mock = await startMockOpenAI({ key: KEY });
});
afterAll(async () => {
  await mock.close();
  rmSync(home, { recursive: true, force: true });
});
afterEach(() => {
  mock.clear();
  mock.requests.length = 0;
  forgetCommandOutputs();
});

const tools = definePlugin({
  id: "test-tools",
  setup(ctx) {
    ctx.tools.register({
      name: "add",
      description: "Add two numbers",
      parameters: Type.Object({ a: Type.Number(), b: Type.Number() }),
      async execute(args) {
        return { content: [{ type: "text", text: String(args.a + args.b) }] };
      },
    });
  },
});

let n = 0;
function file(name: string, text: string): string {
  const path = join(home, `${n++}-${name}`);
  writeFileSync(path, text);
  return path;
}

function setup(o: {
  yaml: string;
  provider?: string;
  model?: string;
  thinking?: "off" | "high";
  messages?: AgentMessage[];
  pi?: string;
  env?: Record<string, string>;
}) {
  for (const [k, v] of Object.entries(o.env ?? {})) process.env[k] = v;
  const host = testHost();
  const events: AgentEvent[] = [];
  host.subscribe("*", (e) => void events.push(e));
  host.install(openai, {
    baseDelayMs: 5,
    maxRetries: 0,
    modelsFile: file("models.yaml", o.yaml),
    piModelsFile: o.pi ?? "none",
  });
  host.install(tools);
  const providerId = o.provider ?? "acme";
  const provider = host.providers.get(providerId)!;
  const model = provider.resolveModel!(o.model ?? "acme-large")!;
  const agent = new Agent(host, {
    provider: providerId,
    model,
    system: [{ id: "role", text: "You are a test." }],
    requestOptions: o.thinking ? { thinking: o.thinking } : {},
    messages: o.messages,
  });
  const warnings = () =>
    events
      .filter((e): e is Extract<AgentEvent, { type: "diagnostic" }> => e.type === "diagnostic" && e.level === "warn")
      .map((e) => e.message);
  return { host, agent, provider, warnings };
}

const last = (messages: readonly AgentMessage[]) =>
  messages.filter((m): m is AssistantMessage => m.role === "assistant").at(-1)!;

/** A history that ends in tool results, so the next prompt puts a user message right after them. */
const afterTools: AgentMessage[] = [
  { role: "user", content: "add 1 and 2", timestamp: 1 },
  {
    role: "assistant",
    content: [{ type: "toolCall", id: "call_1", name: "add", arguments: { a: 1, b: 2 } }],
    provider: "acme",
    model: "acme-large",
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: "toolUse",
    timestamp: 2,
  },
  {
    role: "toolResult",
    toolCallId: "call_1",
    toolName: "add",
    content: [{ type: "text", text: "3" }],
    isError: false,
    timestamp: 3,
  },
];

describe("models.yaml: apiKey and headers from the environment and from commands", () => {
  it("sends the key a command printed and headers from ${VAR}, a command and the model; the command runs once", async () => {
    const counter = join(home, "ran-count");
    const yaml = `providers:
  acme:
    baseUrl: ${mock.url}
    apiKey: "!echo run >> ${counter}; printf %s \\"$ACME_SECRET\\""
    headers:
      X-Team: "team-\${ACME_TEAM}"
      X-Token: "!printf tok-%s 42"
    models:
      - id: acme-large
        headers: { X-Route: "\${ACME_ROUTE}" }
`;
    mock.push(chat({ text: "one" }), chat({ text: "two" }));
    const { agent, provider } = setup({
      yaml,
      env: { ACME_SECRET: KEY, ACME_TEAM: "platform", ACME_ROUTE: "fast-lane" },
    });
    expect(provider.isConfigured!()).toBe(true);
    expect(() => readFileSync(counter)).toThrow(); // not run to find out whether the provider is configured
    await agent.prompt("hi");
    await agent.prompt("again");
    expect(mock.rejected()).toEqual([]);
    for (const r of mock.requests) {
      expect(r.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(r.headers["x-team"]).toBe("team-platform");
      expect(r.headers["x-token"]).toBe("tok-42");
      expect(r.headers["x-route"]).toBe("fast-lane");
    }
    expect(mock.requests).toHaveLength(2);
    expect(readFileSync(counter, "utf8")).toBe("run\n");
  });

  it("a failing key command ends the turn with an error naming the file, provider, field, exit code and stderr", async () => {
    const yaml = `providers:\n  acme:\n    baseUrl: ${mock.url}\n    apiKey: "!echo vault is locked >&2; exit 3"\n    models: [{ id: acme-large }]\n`;
    const { agent } = setup({ yaml });
    const reply = last((await agent.prompt("hi")).messages);
    expect(reply.stopReason).toBe("error");
    expect(reply.errorMessage).toMatch(
      /provider 'acme' apiKey: the command `echo vault is locked >&2; exit 3` failed \(exit 3\): vault is locked/,
    );
    expect(reply.errorMessage).toMatch(/models\.yaml:4/);
    expect(mock.requests).toHaveLength(0);
  });

  it("a header whose variable is not set fails the request, naming the header and the variable", async () => {
    delete process.env.ACME_MISSING;
    const yaml = `providers:\n  acme:\n    baseUrl: ${mock.url}\n    apiKey: "\${ACME_SECRET}"\n    headers: { X-Org: "\${ACME_MISSING}" }\n    models: [{ id: acme-large }]\n`;
    const { agent } = setup({ yaml, env: { ACME_SECRET: KEY } });
    const reply = last((await agent.prompt("hi")).messages);
    expect(reply.stopReason).toBe("error");
    expect(reply.errorMessage).toContain(
      "provider 'acme' headers.X-Org: the environment variable ACME_MISSING is not set",
    );
    expect(mock.requests).toHaveLength(0);
  });

  it("header values from a variable or a command are redacted from messages; text written in the file is not", () => {
    process.env.ACME_SECRET_HEADER = "hdr-secret-123456";
    const at = { file: "/x/models.yaml", provider: "acme" };
    const { headers, secrets } = resolveHeaders(
      [
        { ...at, raw: "platform", key: "headers.X-Team", header: "X-Team" },
        { ...at, raw: "Bearer ${ACME_SECRET_HEADER}", key: "headers.X-Auth", header: "X-Auth" },
      ],
      [{ ...at, raw: "!printf cmd-secret-987", key: "models[0].headers.X-Cmd", header: "X-Cmd" }],
    );
    expect(headers).toEqual({ "X-Team": "platform", "X-Auth": "Bearer hdr-secret-123456", "X-Cmd": "cmd-secret-987" });
    expect(secrets).toEqual(["Bearer hdr-secret-123456", "cmd-secret-987"]);
  });

  it("an apiKey written out is refused: only ${VAR} or !command", () => {
    const yaml = `providers:\n  acme:\n    baseUrl: ${mock.url}\n    apiKey: sk-live-123\n`;
    expect(() => setup({ yaml })).toThrow(/'providers\.acme\.apiKey' must be \$\{VARIABLE\} or !command/);
  });
});

describe("models.yaml: per-model compat and params change the body", () => {
  const yaml = (providerExtra: string, modelExtra: string) => `providers:
  acme:
    baseUrl: ${mock.url}
    apiKey: "\${ACME_SECRET}"
${providerExtra}    models:
      - id: acme-large
        reasoning: true
${modelExtra}      - id: acme-plain
`;

  it("requiresToolResultName and requiresAssistantAfterToolResult (set on the model only)", async () => {
    mock.push(chat({ text: "done" }), chat({ text: "done" }));
    const y = yaml("", "        compat: { requiresToolResultName: true, requiresAssistantAfterToolResult: true }\n");
    await setup({ yaml: y, env: { ACME_SECRET: KEY }, messages: afterTools }).agent.prompt("thanks");
    const body = mock.requests[0]!.body;
    expect(body.messages.slice(-3)).toEqual([
      { role: "tool", tool_call_id: "call_1", content: "3", name: "add" },
      { role: "assistant", content: "I have processed the tool results." },
      { role: "user", content: "thanks" },
    ]);
    // the other model of the same provider keeps the plain shape
    await setup({ yaml: y, env: { ACME_SECRET: KEY }, messages: afterTools, model: "acme-plain" }).agent.prompt(
      "thanks",
    );
    expect(mock.requests[1]!.body.messages.slice(-2)).toEqual([
      { role: "tool", tool_call_id: "call_1", content: "3" },
      { role: "user", content: "thanks" },
    ]);
  });

  it("requiresMistralToolIds: another provider's tool-call ids become 9 letters and digits, the same in the call and its result", async () => {
    mock.push(chat({ text: "done" }));
    await setup({
      yaml: yaml("    compat: { requiresMistralToolIds: true }\n", ""),
      env: { ACME_SECRET: KEY },
      messages: afterTools,
    }).agent.prompt("thanks");
    const [call, result] = mock.requests[0]!.body.messages.slice(-3, -1);
    const id = call.tool_calls[0].id;
    expect(id).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(result).toMatchObject({ role: "tool", tool_call_id: id });
  });

  it("thinking formats: qwen's enable_thinking, zai's thinking.type, and a reasoning effort map", async () => {
    mock.push(chat({ text: "a" }), chat({ text: "b" }), chat({ text: "c" }));
    await setup({
      yaml: yaml("", "        compat: { thinkingFormat: qwen }\n"),
      env: { ACME_SECRET: KEY },
      thinking: "high",
    }).agent.prompt("x");
    await setup({
      yaml: yaml("    compat: { thinkingFormat: zai }\n", ""),
      env: { ACME_SECRET: KEY },
      thinking: "off",
    }).agent.prompt("x");
    await setup({
      yaml: yaml("    compat: { reasoningEffort: true, reasoningEffortMap: { high: max } }\n", ""),
      env: { ACME_SECRET: KEY },
      thinking: "high",
    }).agent.prompt("x");
    const [qwen, zai, mapped] = mock.requests.map((r) => r.body);
    expect(qwen!.enable_thinking).toBe(true);
    expect(qwen!.reasoning_effort).toBeUndefined();
    expect(zai!.thinking).toEqual({ type: "disabled" });
    expect(mapped!.reasoning_effort).toBe("max");
  });

  it("supportsStrictMode: strict: false on tools when on, no strict field when off (Responses API)", async () => {
    const y = (strict: string) =>
      `providers:\n  proxy:\n    api: openai-responses\n    baseUrl: ${mock.url}\n    apiKey: "\${ACME_SECRET}"\n${strict}    models: [{ id: gpt-proxy }]\n`;
    mock.push(responses([{ text: "a" }]), responses([{ text: "b" }]));
    await setup({ yaml: y(""), provider: "proxy", model: "gpt-proxy", env: { ACME_SECRET: KEY } }).agent.prompt("x");
    await setup({
      yaml: y("    compat: { supportsStrictMode: false }\n"),
      provider: "proxy",
      model: "gpt-proxy",
      env: { ACME_SECRET: KEY },
    }).agent.prompt("x");
    expect(mock.requests[0]!.body.tools[0]).toMatchObject({ name: "add", strict: false });
    expect(mock.requests[1]!.body.tools[0].name).toBe("add");
    expect("strict" in mock.requests[1]!.body.tools[0]).toBe(false);
  });

  it("params of the provider and the model are merged into the body (objects deeply)", async () => {
    mock.push(chat({ text: "a" }));
    const y = yaml(
      "    params: { provider: { order: [groq, together] }, top_k: 20 }\n",
      "        params: { provider: { allow_fallbacks: false }, top_k: 40 }\n",
    );
    await setup({ yaml: y, env: { ACME_SECRET: KEY } }).agent.prompt("x");
    const body = mock.requests[0]!.body;
    expect(body.provider).toEqual({ order: ["groq", "together"], allow_fallbacks: false });
    expect(body.top_k).toBe(40);
    expect(body.model).toBe("acme-large");
  });

  it("compat.store is still read, with a deprecation note; stateless is the new name", async () => {
    const y = (compat: string) =>
      `providers:\n  proxy:\n    api: openai-responses\n    baseUrl: ${mock.url}\n    apiKey: "\${ACME_SECRET}"\n    compat: { ${compat} }\n    models: [{ id: gpt-proxy, reasoning: true }]\n`;
    mock.push(responses([{ text: "a" }]), responses([{ text: "b" }]));
    const old = setup({ yaml: y("store: true"), provider: "proxy", model: "gpt-proxy", env: { ACME_SECRET: KEY } });
    await old.agent.prompt("x");
    await setup({
      yaml: y("stateless: false"),
      provider: "proxy",
      model: "gpt-proxy",
      env: { ACME_SECRET: KEY },
    }).agent.prompt("x");
    expect(old.warnings().join("\n")).toMatch(
      /'providers\.proxy\.compat\.store' is deprecated .* write 'stateless: true' instead/,
    );
    expect(mock.requests[0]!.body).toMatchObject({ store: false, include: ["reasoning.encrypted_content"] });
    expect(mock.requests[1]!.body.store).toBeUndefined();
  });
});

describe("Pi's models.json as an extra source", () => {
  function piDir(json: unknown): string {
    const dir = join(home, `pi-${n++}`, "agent");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "models.json"), JSON.stringify(json, null, 2));
    return dir;
  }
  const piJson = {
    providers: {
      "pi-local": {
        baseUrl: mock?.url,
        api: "openai-completions",
        apiKey: "PI_TEST_KEY",
        headers: { "X-From": "pi", "X-Both": "pi" },
        compat: { supportsDeveloperRole: false, requiresToolResultName: true, supportsStore: false },
        models: [
          {
            id: "qwen-pi",
            name: "Qwen (Pi)",
            contextWindow: 65536,
            maxTokens: 4096,
            reasoning: true,
            thinkingLevelMap: { high: "deep" },
            cost: { input: 1, output: 2 },
          },
        ],
      },
      vertex: { api: "google-vertex", models: [] },
    },
  };

  it("reads providers, keys, headers, compat and models from PI_CODING_AGENT_DIR/models.json; models.yaml wins on clashes", async () => {
    const dir = piDir({
      ...piJson,
      providers: { ...piJson.providers, "pi-local": { ...piJson.providers["pi-local"], baseUrl: mock.url } },
    });
    process.env.PI_CODING_AGENT_DIR = dir;
    const yaml = `providers:\n  pi-local:\n    headers: { X-Both: yaml }\n    models:\n      - id: qwen-pi\n        contextWindow: 32768\n`;
    mock.push((body) => {
      expect(body.messages.slice(-2)).toEqual([
        { role: "tool", tool_call_id: "call_1", content: "3", name: "add" },
        { role: "user", content: "go" },
      ]);
      return chat({ text: "from pi" });
    });
    const host = testHost();
    const events: AgentEvent[] = [];
    host.subscribe("*", (e) => void events.push(e));
    process.env.PI_TEST_KEY = KEY;
    host.install(openai, { baseDelayMs: 5, maxRetries: 0, modelsFile: file("models.yaml", yaml) });
    host.install(tools);
    const provider = host.providers.get("pi-local")!;
    const model = provider.models!.find((m) => m.id === "qwen-pi")!;
    expect(model).toMatchObject({
      name: "Qwen (Pi)",
      contextWindow: 32768,
      maxOutput: 4096,
      source: "models.yaml over pi models.json",
      cost: { input: 1, output: 2 },
    });
    const agent = new Agent(host, {
      provider: "pi-local",
      model,
      system: [{ id: "r", text: "sys" }],
      requestOptions: { thinking: "high" },
      messages: afterTools.map((m) => (m.role === "assistant" ? { ...m, provider: "pi-local", model: "qwen-pi" } : m)),
    });
    const reply = last((await agent.prompt("go")).messages);
    expect(reply.content).toEqual([{ type: "text", text: "from pi" }]);
    const req = mock.requests[0]!;
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.headers["x-from"]).toBe("pi");
    expect(req.headers["x-both"]).toBe("yaml");
    expect(req.body.messages[0]).toEqual({ role: "system", content: "sys" });
    expect(host.providers.get("vertex")).toBeUndefined();
    const warned = events
      .filter((e) => e.type === "diagnostic")
      .map((e) => (e as { message: string }).message)
      .join("\n");
    expect(warned).toContain("provider 'vertex' not read: coil does not speak api 'google-vertex'");
    expect(warned).toMatch(/provider 'pi-local': not read: compat\.supportsStore/);
    delete process.env.PI_CODING_AGENT_DIR;
  });

  it("entries written for Pi's own built-in providers (no baseUrl coil could use) are skipped with a note; models.yaml's are refused", () => {
    const dir = piDir({
      providers: {
        zai: { apiKey: "ZAI_KEY" },
        "claude-proxy": { api: "anthropic-messages" },
        anthropic: { api: "openai-completions", baseUrl: "http://localhost:9/v1" },
      },
    });
    const host = testHost();
    const notes: string[] = [];
    host.subscribe("diagnostic", (e) => void (e.type === "diagnostic" && notes.push(`${e.level}: ${e.message}`)));
    const options = { modelsFile: file("models.yaml", ""), piModelsFile: join(dir, "models.json") };
    host.install(anthropic, options);
    host.install(openai, options);
    expect(host.providers.get("zai")).toBeUndefined();
    expect(host.providers.get("claude-proxy")).toBeUndefined();
    expect(host.providers.get("anthropic")).toBeDefined();
    expect(notes.join("\n")).toMatch(/info: .*models\.json: provider 'zai' not read: it needs a baseUrl/);
    expect(notes.join("\n")).toMatch(/info: .*provider 'claude-proxy' not read: it needs a baseUrl/);
    expect(notes.join("\n")).toMatch(
      /info: .*provider 'anthropic' not read: it is built in with api anthropic-messages/,
    );
    expect(() =>
      testHost().install(openai, {
        modelsFile: file("models.yaml", "providers:\n  zai: {}\n"),
        piModelsFile: "none",
      }),
    ).toThrow(/models\.yaml: provider 'zai' needs a baseUrl/);
  });

  it("piModelsFile: none leaves Pi's file out", () => {
    const dir = piDir({ providers: { "pi-only": { baseUrl: "http://localhost:9/v1", models: [{ id: "pi-model" }] } } });
    process.env.PI_CODING_AGENT_DIR = dir;
    const { host } = setup({
      yaml: `providers:\n  acme:\n    baseUrl: ${mock.url}\n    models: [{ id: acme-large }]\n`,
      pi: "none",
    });
    expect(host.providers.get("pi-only")).toBeUndefined();
    const withPi = testHost();
    withPi.install(openai, { modelsFile: file("models.yaml", "") });
    expect(withPi.providers.get("pi-only")?.models?.[0]).toMatchObject({ id: "pi-model", source: "pi models.json" });
    delete process.env.PI_CODING_AGENT_DIR;
  });
});

describe("the default model", () => {
  const keys = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "GEMINI_API_KEY",
    "OPENROUTER_API_KEY",
    "DEEPSEEK_API_KEY",
    "GROQ_API_KEY",
    "TOGETHER_API_KEY",
    "XAI_API_KEY",
    "CEREBRAS_API_KEY",
    "MISTRAL_API_KEY",
  ];
  function providers(env: Record<string, string>, yaml = "") {
    const saved = Object.fromEntries(keys.map((k) => [k, process.env[k]]));
    for (const k of keys) delete process.env[k];
    Object.assign(process.env, env);
    try {
      const host = testHost();
      host.install(anthropic, { modelsFile: file("models.yaml", yaml), piModelsFile: "none" });
      host.install(openai, { modelsFile: file("models.yaml", yaml), piModelsFile: "none" });
      return chooseModel(host.providers.values(), {});
    } finally {
      for (const k of keys) delete process.env[k];
      for (const [k, v] of Object.entries(saved)) if (v !== undefined) process.env[k] = v;
    }
  }

  it("is the balanced model of the first provider with a key, not its most expensive, and says why", () => {
    expect(providers({ ANTHROPIC_API_KEY: "k", OPENAI_API_KEY: "k" })).toMatchObject({
      provider: { id: "anthropic" },
      model: { id: "claude-sonnet-5-5" },
      why: "default: anthropic is the first provider with a key",
    });
    expect(providers({ OPENAI_API_KEY: "k" })).toMatchObject({ provider: { id: "openai" }, model: { id: "gpt-5.4" } });
    expect(providers({ GEMINI_API_KEY: "k" })).toMatchObject({
      provider: { id: "gemini" },
      model: { id: "gemini-2.5-flash" },
    });
    expect(providers({ MISTRAL_API_KEY: "k" })).toMatchObject({
      provider: { id: "mistral" },
      model: { id: "mistral-medium-latest" },
    });
  });

  it("models.yaml `default:` comes first, also for an id the provider does not list", () => {
    expect(
      providers({ ANTHROPIC_API_KEY: "k", GROQ_API_KEY: "k" }, "default: groq/llama-3.3-70b-versatile\n"),
    ).toMatchObject({
      provider: { id: "groq" },
      model: { id: "llama-3.3-70b-versatile" },
      why: "default: in models.yaml",
    });
    expect(providers({ ANTHROPIC_API_KEY: "k" }, "default: anthropic/haiku-4.5\n").model.id).toBe("claude-haiku-4-5");
    expect(providers({}, "default: ollama/qwen3:32b\nproviders:\n  ollama: {}\n")).toMatchObject({
      provider: { id: "ollama" },
      model: { id: "qwen3:32b" },
    });
    expect(() => providers({ ANTHROPIC_API_KEY: "k" }, "default: xai/grok-4\n")).toThrow(
      /provider 'xai' of the models.yaml default 'xai\/grok-4' is not configured/,
    );
  });
});
