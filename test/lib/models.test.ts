/** Model resolution (lib/models.ts): the one set of rules behind --model, presets, /model and RPC set_model. */
import { describe, expect, it } from "vitest";
import { PassThrough } from "node:stream";
import { Agent, type ModelInfo, type Provider } from "../../api/index.js";
import { testHost } from "../support/host.js";
import { chooseModel, resolveModel } from "../../lib/models.js";
import uiRpc from "../../plugins/ui-rpc/index.js";

const model = (provider: string, id: string, name?: string): ModelInfo => ({
  id,
  provider,
  name,
  contextWindow: 100_000,
  maxOutput: 8_000,
  input: ["text"],
});
const provider = (id: string, ids: string[], extra: Partial<Provider> = {}): Provider =>
  ({
    id,
    models: ids.map((m) => model(id, m)),
    stream: () => {
      throw new Error("not used");
    },
    ...extra,
  }) as unknown as Provider;

const providers = [
  provider("anthropic", ["claude-sonnet-4-5", "claude-opus-4-1"]),
  provider("local", ["qwen3"], { resolveModel: (id: string) => model("local", id) }),
  provider("offline", ["offline-only"], { isConfigured: () => false, setupHint: "set OFFLINE_KEY" }),
];

describe("resolveModel", () => {
  it("splits provider/id when the head is a provider, and lets that provider serve ids it does not list", () => {
    expect(resolveModel(providers, "anthropic/claude-opus-4-1").model.id).toBe("claude-opus-4-1");
    expect(resolveModel(providers, "local/llama-3").model).toMatchObject({ id: "llama-3", provider: "local" });
  });

  it("matches fuzzily (case, a date suffix, tokens in order) with or without a provider", () => {
    expect(resolveModel(providers, "Claude-Sonnet-4-5").model.id).toBe("claude-sonnet-4-5");
    expect(resolveModel(providers, "anthropic/claude-sonnet-4-5-20250929").model.id).toBe("claude-sonnet-4-5-20250929");
    expect(resolveModel(providers, "claude opus").provider.id).toBe("anthropic");
  });

  it("names what failed: unknown provider, unknown model, unconfigured provider (with its hint)", () => {
    expect(() => resolveModel(providers, "nope/x")).toThrow(/unknown provider 'nope'.*/);
    expect(() => resolveModel(providers, "gpt-9")).toThrow(/no model 'gpt-9'/);
    expect(() => resolveModel(providers, "offline-only")).toThrow(/provider 'offline' is not configured/);
  });

  it("chooseModel (presets, --model, --provider) uses the same rules", () => {
    expect(chooseModel(providers, { model: "claude opus" }).model.id).toBe("claude-opus-4-1");
    expect(chooseModel(providers, { provider: "local" }).model.id).toBe("qwen3");
    expect(chooseModel(providers, {}).provider.id).toBe("anthropic");
  });
});

describe("RPC set_model", () => {
  it("resolves the model by the same rules as /model and --model (fuzzy names included)", async () => {
    const host = testHost({ cwd: "/" });
    for (const p of providers) host.providers.register(p.id, p, "test");
    host.install(uiRpc);
    const agent = new Agent(host, { provider: "anthropic", model: providers[0]!.models![0]! });
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let out = "";
    stdout.on("data", (c) => (out += c.toString()));
    const fe = host.frontEnds.values().find((f) => f.modes.includes("rpc"))!;
    const running = fe.run({
      agent,
      cwd: "/",
      mode: "rpc",
      stdin,
      stdout,
      stderr: new PassThrough(),
    });
    stdin.write(JSON.stringify({ id: "1", type: "set_model", model: "claude opus" }) + "\n");
    await new Promise((r) => setTimeout(r, 200));
    stdin.end();
    await running;
    expect(agent.state.model.id).toBe("claude-opus-4-1");
    expect(out).toContain('"provider":"anthropic"');
  });
});
