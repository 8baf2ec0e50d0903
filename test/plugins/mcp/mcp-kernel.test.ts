/** The kernel support the mcp plugin needs: tools and commands a plugin syncs after start-up (Registry.sync). */
import { describe, expect, it } from "vitest";
import { Agent, definePlugin, Type, type PluginContext, type ToolDefinition } from "../../../api/index.js";
import { findCommand } from "../../../lib/front-end.js";
import scriptedPlugin, { type ScriptedService } from "../../../plugins/provider-scripted/index.js";
import { testHost } from "../../support/host.js";

const tool = (name: string, reply = name): ToolDefinition => ({
  name,
  description: `tool ${name}`,
  parameters: Type.Object({}),
  execute: async () => ({ content: [{ type: "text", text: reply }] }),
});

function setup() {
  let late!: PluginContext;
  const host = testHost();
  host.install(scriptedPlugin, {});
  host.install(definePlugin({ id: "other", setup: (ctx) => ctx.tools.register(tool("taken")) }));
  host.install(
    definePlugin({
      id: "late",
      setup: (ctx) => {
        late = ctx;
        ctx.tools.register(tool("fixed"));
      },
    }),
  );
  const agent = new Agent(host, {
    provider: "scripted",
    model: { id: "s", provider: "scripted", contextWindow: 100_000, maxOutput: 1000 },
  });
  return { host, agent, late: () => late, scripted: host.services.get("scripted") as ScriptedService };
}

describe("late registration (tools.sync, commands.sync)", () => {
  it("after start-up, sync replaces only what the plugin synced before; the loop sees it at the next request", async () => {
    const { host, agent, late, scripted } = setup();
    expect(host.isClosed).toBe(true);
    late().tools.sync([tool("a"), tool("b")]);
    scripted.push({ toolCalls: [{ name: "b", arguments: {} }] }, { text: "ok" });
    const run = await agent.prompt("go");
    expect(scripted.requests[0]!.tools.map((t) => t.name)).toEqual(["taken", "fixed", "a", "b"]);
    expect(run.messages.find((m) => m.role === "toolResult")).toMatchObject({
      isError: false,
      content: [{ text: "b" }],
    });
    late().tools.sync([tool("c")]);
    expect(host.tools.names()).toEqual(["taken", "fixed", "c"]);
    // registering the normal way is still closed
    expect(() => late().tools.register(tool("d"))).toThrow(/registration is closed/);
  });

  it("a name another plugin (or the plugin's own setup) holds is refused and nothing changes", () => {
    const { host, late } = setup();
    late().tools.sync([tool("a")]);
    expect(() => late().tools.sync([tool("z"), tool("taken")])).toThrow(
      /tool 'taken' is already registered by plugin other/,
    );
    expect(() => late().tools.sync([tool("fixed")])).toThrow(/already registered by plugin late/);
    expect(host.tools.names()).toEqual(["taken", "fixed", "a"]);
    expect(() => late().tools.sync([tool("bad name!")])).toThrow(/must be 1-64 letters/);
  });

  it("commands sync the same way", async () => {
    const { host, late } = setup();
    late().commands.sync([{ name: "hello", description: "hi", run: () => "hello back" }]);
    expect(await findCommand(host, "/hello")!.command.run("", {} as Agent)).toBe("hello back");
    late().commands.sync([]);
    expect(findCommand(host, "/hello")).toBeUndefined();
  });
});
