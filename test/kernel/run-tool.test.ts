/** agent.runTool(): one call through the loop's own validation, tool_call gates, execution and tool_result; history untouched. */
import { describe, expect, it } from "vitest";
import { Type } from "typebox";
import { Agent, definePlugin, type AgentEvent, type ModelInfo, type Provider } from "../../api/index.js";
import { testHost } from "../support/host.js";

const model: ModelInfo = { id: "m", provider: "p", contextWindow: 100_000, maxOutput: 1_000, input: ["text"] };
const provider = {
  id: "p",
  models: [model],
  stream: () => {
    throw new Error("no model call expected");
  },
} as unknown as Provider;

function rig() {
  const ran: string[] = [];
  const host = testHost({ cwd: "/" });
  const events: AgentEvent[] = [];
  host.subscribe("*", (e) => void events.push(e));
  host.install(definePlugin({ id: "prov", setup: (ctx) => ctx.providers.register(provider) }));
  host.install(
    definePlugin({
      id: "echo",
      setup: (ctx) =>
        ctx.tools.register({
          name: "echo",
          description: "echo",
          parameters: Type.Object({ text: Type.String() }),
          execute: async (args: { text: string }) => {
            ran.push(args.text);
            return { content: [{ type: "text", text: args.text }] };
          },
        }),
    }),
  );
  host.install(
    definePlugin({
      id: "guard",
      setup: (ctx) => {
        ctx.tap("tool_call", (info) =>
          info.args.text === "secret" ? { block: true, reason: "secrets stay in" } : undefined,
        );
        ctx.tap("tool_result", (result) => ({
          ...result,
          content: [{ type: "text", text: `${(result.content[0] as { text: string }).text}!` }],
        }));
      },
    }),
  );
  const agent = new Agent(host, { provider: "p", model });
  return { agent, ran, events };
}

describe("agent.runTool", () => {
  it("runs an allowed call through execution and tool_result, with tool events, and leaves history alone", async () => {
    const { agent, ran, events } = rig();
    const result = await agent.runTool({ id: "u1", name: "echo", arguments: { text: "hi" } });
    expect(result).toMatchObject({
      role: "toolResult",
      toolCallId: "u1",
      toolName: "echo",
      isError: false,
      content: [{ type: "text", text: "hi!" }],
    });
    expect(ran).toEqual(["hi"]);
    expect(events.map((e) => e.type)).toEqual(["tool_execution_start", "tool_execution_end"]);
    expect(agent.state.messages).toEqual([]);
  });

  it("a tool_call gate refuses with its reason and plugin; invalid arguments and unknown tools are errors; nothing runs", async () => {
    const { agent, ran } = rig();
    const blocked = await agent.runTool({ name: "echo", arguments: { text: "secret" } });
    expect(blocked).toMatchObject({
      isError: true,
      content: [{ type: "text", text: "Blocked: secrets stay in (guard)" }],
    });
    const invalid = await agent.runTool({ name: "echo", arguments: {} });
    expect((invalid.content[0] as { text: string }).text).toMatch(/^Invalid arguments for tool 'echo'/);
    const unknown = await agent.runTool({ name: "nope", arguments: {} });
    expect((unknown.content[0] as { text: string }).text).toBe("Tool 'nope' does not exist. Available tools: echo.");
    expect(ran).toEqual([]);
  });
});
