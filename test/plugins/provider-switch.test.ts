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
import { Agent, PluginHost, Type, definePlugin, type CustomMessage } from "../../kernel/index.js";
import anthropicPlugin from "../../plugins/provider-anthropic/index.js";
import openaiPlugin from "../../plugins/provider-openai/index.js";
import { reply, startMockAnthropic, text, type MockAnthropic } from "../support/mock-anthropic.js";
import { chat, responses, startMockOpenAI, type MockOpenAI } from "../support/mock-openai.js";

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

describe("switching providers mid-conversation", () => {
  it("keeps every request valid across Responses, Messages and Chat Completions, and records each switch", async () => {
    process.env.ANTHROPIC_API_KEY = "ak";
    process.env.OPENAI_API_KEY = "ok";
    process.env.LOCAL_KEY = "ok";
    const models = join(home, "models.yaml");
    writeFileSync(models, `providers:\n  openai:\n    baseUrl: ${o.url}\n    compat: { store: true }\n  local:\n    baseUrl: ${o.url}\n    apiKeyEnv: LOCAL_KEY\n`);
    const host = new PluginHost();
    host.install(anthropicPlugin, { baseUrl: a.url, modelsFile: models });
    host.install(openaiPlugin, { modelsFile: models });
    host.install(calc);
    const start = host.providers.get("openai")!.resolveModel!("gpt-5.4")!;
    const agent = new Agent(host, { provider: "openai", model: start, requestOptions: { thinking: "medium" } });
    const model = host.commands.get("model")!;

    o.push(responses([{ reasoning: "plan: add", id: "rs_1", encrypted: "E1" }, { call: { name: "add", args: { a: 1, b: 2 }, callId: "call_1", id: "fc_1" } }]), responses([{ text: "3" }]));
    await agent.prompt("1+2");

    expect(await model.run("anthropic/sonnet", agent)).toBe("switched to anthropic/claude-sonnet-5-5");
    a.push(
      (body) => {
        expect(JSON.stringify(body)).not.toContain("plan: add");
        expect(JSON.stringify(body)).not.toContain("Model switched");
        return reply([{ thinking: "claude plan", signature: "S1" }, { tool: { id: "toolu_1", name: "add", input: { a: 3, b: 4 } } }]);
      },
      text("7"),
    );
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
    const switches = agent.state.messages.filter((m): m is CustomMessage => m.role === "custom" && m.customType === "model_change");
    expect(switches.map((m) => (m.details as { to: { provider: string } }).to.provider)).toEqual(["anthropic", "local", "openai"]);
  });

  it("/model records the switch through a session store's `session` service when there is one", async () => {
    process.env.ANTHROPIC_API_KEY = "ak";
    process.env.OPENAI_API_KEY = "ok";
    const recorded: string[] = [];
    const store = definePlugin({
      id: "fake-session",
      setup(ctx) {
        ctx.services.provide("session", { appendModelChange: (provider: string, modelId: string) => void recorded.push(`${provider}/${modelId}`) } as never);
      },
    });
    const host = new PluginHost();
    host.install(store);
    host.install(anthropicPlugin, { baseUrl: a.url });
    host.install(openaiPlugin, { baseUrl: o.url });
    const agent = new Agent(host, { provider: "openai", model: host.providers.get("openai")!.resolveModel!("gpt-5.4")! });
    await host.commands.get("model")!.run("anthropic/haiku", agent);
    expect(recorded).toEqual(["anthropic/claude-haiku-5-5"]);
    expect(agent.state.messages).toEqual([]);
    expect(agent.state.provider).toBe("anthropic");
  });

  it("/model names the problem when the model or provider cannot be used", async () => {
    delete process.env.ANTHROPIC_API_KEY;
    const host = new PluginHost();
    host.install(anthropicPlugin, { baseUrl: a.url });
    host.install(openaiPlugin, { baseUrl: o.url });
    process.env.OPENAI_API_KEY = "ok";
    const agent = new Agent(host, { provider: "openai", model: host.providers.get("openai")!.resolveModel!("gpt-5.4")! });
    const model = host.commands.get("model")!;
    expect(await model.run("", agent)).toBe("current model: openai/gpt-5.4");
    expect(await model.run("anthropic/opus", agent)).toContain("provider 'anthropic' is not configured: set ANTHROPIC_API_KEY");
    expect(await model.run("nowhere/x", agent)).toMatch(/^unknown provider 'nowhere'. Known providers: anthropic, openai/);
    expect(await model.run("gemini-3-pro", agent)).toMatch(/^no model 'gemini-3-pro'/);
  });
});
