/**
 * One conversation that moves between providers with `/model`: OpenAI Responses → Anthropic →
 * a Chat Completions server → back to Responses. Every request must pass the servers' validation
 * (tool results answer the previous turn's calls, no call left unanswered), thinking that the
 * target cannot replay is dropped, and the switch is recorded in history without reaching a model.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent, Type, definePlugin, type CustomMessage } from "../../api/index.js";
import { testHost } from "../support/host.js";
import anthropicPlugin from "../../plugins/provider-anthropic/index.js";
import openaiPlugin from "../../plugins/provider-openai/index.js";
import modelsPlugin from "../../plugins/models/index.js";
import { reply, startMockAnthropic, text, type MockAnthropic, type Step } from "../support/mock-anthropic.js";
import { chat, responses, startMockOpenAI, type MockOpenAI, type OpenAIStep } from "../support/mock-openai.js";
import { until } from "../support/harness.js";

const home = mkdtempSync(join(tmpdir(), "coil-switch-"));
process.env.COIL_HOME = home;
let a: MockAnthropic;
let o: MockOpenAI;
beforeAll(async () => {
  a = await startMockAnthropic({ key: "ak" });
  o = await startMockOpenAI({ key: "ok" });
});
afterAll(async () => {
  await a.close();
  await o.close();
  rmSync(home, { recursive: true, force: true });
});

const calc = definePlugin({
  id: "calc",
  setup(ctx) {
    ctx.tools.register({
      name: "add",
      description: "Add",
      parameters: Type.Object({ a: Type.Number(), b: Type.Number() }),
      async execute(args) {
        return { content: [{ type: "text", text: String(args.a + args.b) }] };
      },
    });
  },
});

/** A tool that runs until the run is aborted, and one that answers at once. */
const slowTool = definePlugin({
  id: "slow",
  setup(ctx) {
    ctx.tools.register({
      name: "edit",
      description: "Edit a file (slowly)",
      parameters: Type.Object({ path: Type.String() }),
      execute: (_args, run) =>
        new Promise((resolve) =>
          run.signal.addEventListener(
            "abort",
            () => resolve({ content: [{ type: "text", text: "stopped" }], isError: true }),
            { once: true },
          ),
        ),
    });
    ctx.tools.register({
      name: "read",
      description: "Read a file",
      parameters: Type.Object({ path: Type.String() }),
      execute: async (args) => ({ content: [{ type: "text", text: `contents of ${args.path}` }] }),
    });
  },
});

type Thinking = "off" | "high";
interface Side {
  label: string;
  provider: "anthropic" | "openai" | "local";
  model: string;
  thinking: Thinking;
}

/** Who wrote the tool turn that was cut off: each API, with and without thinking. */
const SOURCES: (Side & { call: Step | OpenAIStep })[] = [
  {
    label: "openai/gpt-5.4 (reasoning)",
    provider: "openai",
    model: "gpt-5.4",
    thinking: "high",
    call: responses([
      { reasoning: "plan the edit", id: "rs_9" },
      { call: { name: "edit", args: { path: "a.ts" }, callId: "call_src", id: "fc_src" } },
    ]),
  },
  {
    label: "local chat model",
    provider: "local",
    model: "some-model",
    thinking: "off",
    call: chat({ tools: [{ id: "call_chat", name: "edit", args: { path: "a.ts" } }] }),
  },
  {
    label: "claude-sonnet-4-5, thinking off",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    thinking: "off",
    call: reply([{ tool: { id: "toolu_s45", name: "edit", input: { path: "a.ts" } } }]),
  },
  {
    label: "claude-sonnet-5-5, thinking off",
    provider: "anthropic",
    model: "claude-sonnet-5-5",
    thinking: "off",
    call: reply([{ tool: { id: "toolu_s55", name: "edit", input: { path: "a.ts" } } }]),
  },
  {
    label: "claude-opus-5-5 (always thinks)",
    provider: "anthropic",
    model: "claude-opus-5-5",
    thinking: "high",
    call: reply([
      { thinking: "opus plans", signature: "SIG_O" },
      { tool: { id: "toolu_o55", name: "edit", input: { path: "a.ts" } } },
    ]),
  },
];

/** The model `-c` continues with. */
const TARGETS: Side[] = [
  { label: "claude-opus-5-5", provider: "anthropic", model: "claude-opus-5-5", thinking: "high" },
  { label: "claude-fable-5-1", provider: "anthropic", model: "claude-fable-5-1", thinking: "off" },
  { label: "claude-sonnet-5-5 thinking", provider: "anthropic", model: "claude-sonnet-5-5", thinking: "high" },
  { label: "claude-sonnet-5-5 no thinking", provider: "anthropic", model: "claude-sonnet-5-5", thinking: "off" },
  { label: "claude-sonnet-4-5 thinking", provider: "anthropic", model: "claude-sonnet-4-5", thinking: "high" },
  { label: "claude-sonnet-4-5 no thinking", provider: "anthropic", model: "claude-sonnet-4-5", thinking: "off" },
  { label: "openai/gpt-5.4", provider: "openai", model: "gpt-5.4", thinking: "high" },
  { label: "local chat model", provider: "local", model: "some-model", thinking: "off" },
];

/** The target's answer: text, then (for Claude) a tool turn of its own with thinking, then text. */
function answer(target: Side, n: number): (Step | OpenAIStep)[] {
  if (target.provider === "anthropic") {
    const thinks =
      target.thinking === "high" || target.model === "claude-opus-5-5" || target.model === "claude-fable-5-1";
    const think = thinks ? [{ thinking: `think ${n}`, signature: `SIG_${n}` }] : [];
    return [
      reply([...think, { tool: { id: `toolu_t${n}`, name: "read", input: { path: "b.ts" } } }]),
      text(`answer ${n}`),
    ];
  }
  if (target.provider === "openai") return [responses([{ text: `answer ${n}` }])];
  return [chat({ text: `answer ${n}` })];
}

describe("continuing after a tool loop cut off by an abort, on another model (#12.0)", () => {
  for (const source of SOURCES) {
    for (const target of TARGETS) {
      it(`${source.label} → ${target.label}`, async () => {
        a.clear();
        o.clear();
        process.env.ANTHROPIC_API_KEY = "ak";
        process.env.OPENAI_API_KEY = "ok";
        process.env.LOCAL_KEY = "ok";
        const models = join(home, "models-abort.yaml");
        writeFileSync(
          models,
          `providers:\n  openai:\n    baseUrl: ${o.url}\n    compat: { store: true }\n  local:\n    baseUrl: ${o.url}\n    apiKeyEnv: LOCAL_KEY\n`,
        );
        const host = testHost();
        host.install(anthropicPlugin, { baseUrl: a.url, modelsFile: models });
        host.install(openaiPlugin, { modelsFile: models });
        host.install(slowTool);
        const resolve = (side: Side) => host.providers.get(side.provider)!.resolveModel!(side.model)!;
        const agent = new Agent(host, {
          provider: source.provider,
          model: resolve(source),
          requestOptions: { thinking: source.thinking },
        });
        const served = { a: a.requests.length, o: o.requests.length };
        const rejected = { a: a.rejected().length, o: o.rejected().length };

        if (source.provider === "anthropic") a.push(source.call as Step);
        else o.push(source.call as OpenAIStep);
        const first = agent.prompt("edit a.ts");
        await until(() => agent.state.pendingToolCalls.length > 0);
        agent.abort();
        const f = await first;
        expect(f.stopReason).toBe("aborted");

        agent.setModel(target.provider, resolve(target));
        agent.setRequestOptions({ thinking: target.thinking });
        const push = (steps: (Step | OpenAIStep)[]) =>
          target.provider === "anthropic" ? a.push(...(steps as Step[])) : o.push(...(steps as OpenAIStep[]));
        // `-c` without a new prompt, then with one, then once more: every request must be accepted
        push(answer(target, 1));
        const resumed = await agent.continue();
        expect(resumed.stopReason, resumed.error).toBe("stop");
        push(answer(target, 2));
        const next = await agent.prompt("now edit b.ts");
        expect(next.stopReason, next.error).toBe("stop");

        expect(
          a
            .rejected()
            .slice(rejected.a)
            .map((r) => r.error),
        ).toEqual([]);
        expect(
          o
            .rejected()
            .slice(rejected.o)
            .map((r) => r.error),
        ).toEqual([]);
        const sent =
          target.provider === "anthropic"
            ? a.requests.slice(served.a + (source.provider === "anthropic" ? 1 : 0))
            : o.requests.slice(served.o + (source.provider !== "anthropic" ? 1 : 0));
        expect(sent.length).toBeGreaterThanOrEqual(2);
        if (target.provider === "anthropic") {
          const always = target.model === "claude-opus-5-5" || target.model === "claude-fable-5-1";
          const ownTurn =
            source.provider === target.provider && source.model === target.model && source.thinking === "high";
          if (always) {
            // thinking cannot be switched off: the cut-off turn is closed by writing its call as text
            expect(sent.every((r) => r.body.thinking?.type === "adaptive")).toBe(true);
            const resumedBody = JSON.stringify(sent[0]!.body.messages);
            if (ownTurn) expect(resumedBody).toContain('"tool_use"');
            else expect(resumedBody).toContain('[called tool edit with {\\"path\\":\\"a.ts\\"}]');
          }
          // once the model has made a tool turn of its own (with thinking), thinking is on again
          if (target.thinking === "high") expect(sent.at(-1)!.body.thinking?.type).toMatch(/^(enabled|adaptive)$/);
        }
        expect(a.remaining()).toBe(0);
        expect(o.remaining()).toBe(0);
      });
    }
  }
});

describe("switching providers mid-conversation", () => {
  it("keeps every request valid across Responses, Messages and Chat Completions, and records each switch", async () => {
    process.env.ANTHROPIC_API_KEY = "ak";
    process.env.OPENAI_API_KEY = "ok";
    process.env.LOCAL_KEY = "ok";
    const models = join(home, "models.yaml");
    writeFileSync(
      models,
      `providers:\n  openai:\n    baseUrl: ${o.url}\n    compat: { store: true }\n  local:\n    baseUrl: ${o.url}\n    apiKeyEnv: LOCAL_KEY\n`,
    );
    const host = testHost();
    host.install(anthropicPlugin, { baseUrl: a.url, modelsFile: models });
    host.install(openaiPlugin, { modelsFile: models });
    host.install(modelsPlugin);
    host.install(calc);
    const start = host.providers.get("openai")!.resolveModel!("gpt-5.4")!;
    const agent = new Agent(host, { provider: "openai", model: start, requestOptions: { thinking: "medium" } });
    const model = host.commands.get("model")!;

    o.push(
      responses([
        { reasoning: "plan: add", id: "rs_1", encrypted: "E1" },
        { call: { name: "add", args: { a: 1, b: 2 }, callId: "call_1", id: "fc_1" } },
      ]),
      responses([{ text: "3" }]),
    );
    await agent.prompt("1+2");

    expect(await model.run("anthropic/sonnet", agent)).toBe("switched to anthropic/claude-sonnet-5-5");
    a.push((body) => {
      expect(JSON.stringify(body)).not.toContain("plan: add");
      expect(JSON.stringify(body)).not.toContain("Model switched");
      return reply([
        { thinking: "claude plan", signature: "S1" },
        { tool: { id: "toolu_1", name: "add", input: { a: 3, b: 4 } } },
      ]);
    }, text("7"));
    await agent.prompt("+4");

    expect(await model.run("local/some-model", agent)).toBe("switched to local/some-model");
    o.push(
      (body, path) => {
        expect(path).toBe("/v1/chat/completions");
        expect(JSON.stringify(body)).not.toContain("claude plan");
        return chat({ tools: [{ id: "call_c", name: "add", args: { a: 7, b: 1 } }] });
      },
      chat({ text: "8" }),
    );
    await agent.prompt("+1");

    expect(await model.run("openai/gpt-5.4", agent)).toBe("switched to openai/gpt-5.4");
    o.push((body, path) => {
      expect(path).toBe("/v1/responses");
      const types = body.input.map((i: { type?: string; role?: string }) => i.type ?? i.role);
      // the first turn's own reasoning is replayed; the other providers' turns are plain items
      expect(types.filter((t: string) => t === "reasoning")).toHaveLength(1);
      expect(types.filter((t: string) => t === "function_call")).toHaveLength(3);
      expect(types.filter((t: string) => t === "function_call_output")).toHaveLength(3);
      return responses([{ text: "done" }]);
    });
    const last = await agent.prompt("summary?");
    expect(last.stopReason).toBe("stop");

    expect(a.rejected()).toEqual([]);
    expect(o.rejected()).toEqual([]);
    const switches = agent.state.messages.filter(
      (m): m is CustomMessage => m.role === "custom" && m.customType === "model_change",
    );
    expect(switches.map((m) => (m.details as { to: { provider: string } }).to.provider)).toEqual([
      "anthropic",
      "local",
      "openai",
    ]);
  });

  it("/model records the switch through a session store's `session` service when there is one", async () => {
    process.env.ANTHROPIC_API_KEY = "ak";
    process.env.OPENAI_API_KEY = "ok";
    const recorded: string[] = [];
    const store = definePlugin({
      id: "fake-session",
      setup(ctx) {
        ctx.services.provide("session", {
          appendModelChange: (provider: string, modelId: string) => void recorded.push(`${provider}/${modelId}`),
        } as never);
      },
    });
    const host = testHost();
    host.install(store);
    host.install(anthropicPlugin, { baseUrl: a.url });
    host.install(openaiPlugin, { baseUrl: o.url });
    host.install(modelsPlugin);
    const agent = new Agent(host, {
      provider: "openai",
      model: host.providers.get("openai")!.resolveModel!("gpt-5.4")!,
    });
    await host.commands.get("model")!.run("anthropic/haiku", agent);
    expect(recorded).toEqual(["anthropic/claude-haiku-5-5"]);
    expect(agent.state.messages).toEqual([]);
    expect(agent.state.provider).toBe("anthropic");
  });

  it("/model names the problem when the model or provider cannot be used", async () => {
    delete process.env.ANTHROPIC_API_KEY;
    const host = testHost();
    host.install(anthropicPlugin, { baseUrl: a.url });
    host.install(openaiPlugin, { baseUrl: o.url });
    host.install(modelsPlugin);
    process.env.OPENAI_API_KEY = "ok";
    const agent = new Agent(host, {
      provider: "openai",
      model: host.providers.get("openai")!.resolveModel!("gpt-5.4")!,
    });
    const model = host.commands.get("model")!;
    expect(await model.run("", agent)).toBe("current model: openai/gpt-5.4");
    expect(await model.run("anthropic/opus", agent)).toContain(
      "provider 'anthropic' is not configured: set ANTHROPIC_API_KEY",
    );
    expect(await model.run("nowhere/x", agent)).toMatch(
      /^unknown provider 'nowhere': known providers: anthropic, bedrock, vertex, openai, /,
    );
    expect(await model.run("gemini-3-pro", agent)).toMatch(/^no model 'gemini-3-pro'/);
  });
});
