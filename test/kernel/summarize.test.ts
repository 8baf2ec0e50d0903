/** agent.summarize(): the compaction strategies summarise messages the caller names, history untouched; only the kernel calls the hook. */
import { describe, expect, it } from "vitest";
import {
  Agent,
  definePlugin,
  PluginHost,
  type AgentMessage,
  type ModelInfo,
  type Provider,
} from "../../kernel/index.js";

const model: ModelInfo = { id: "m", provider: "p", contextWindow: 100_000, maxOutput: 1_000, input: ["text"] };
const provider = {
  id: "p",
  models: [model],
  stream: () => {
    throw new Error("no model call expected");
  },
} as unknown as Provider;
const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 0 });

function agentWith(strategy?: (messages: readonly AgentMessage[], instructions?: string) => AgentMessage[]): Agent {
  const host = new PluginHost({ cwd: "/" });
  host.install(definePlugin({ id: "prov", setup: (ctx) => ctx.providers.register(provider) }));
  if (strategy)
    host.install(
      definePlugin({
        id: "sum",
        setup: (ctx) => ctx.tap("compact", (req) => ({ messages: strategy(req.messages, req.instructions) })),
      }),
    );
  return new Agent(host, { provider: "p", model, messages: [user("history stays")] });
}

describe("agent.summarize", () => {
  it("runs the compact hook on the given messages with the instructions, and leaves history alone", async () => {
    const seen: string[] = [];
    const agent = agentWith((messages, instructions) => {
      seen.push(`${messages.length}:${instructions}`);
      return [user("summary of the branch")];
    });
    const result = await agent.summarize([user("a"), user("b")], { instructions: "focus on files" });
    expect(result?.messages.map((m) => m.content)).toEqual(["summary of the branch"]);
    expect(seen).toEqual(["2:focus on files"]);
    expect(agent.state.messages.map((m) => m.content)).toEqual(["history stays"]);
  });

  it("throws NO_COMPACTION naming the fix when the preset has no compaction strategy", async () => {
    await expect(agentWith().summarize([user("a")])).rejects.toMatchObject({
      code: "NO_COMPACTION",
      hint: "add a compaction plugin to the preset",
    });
  });
});
