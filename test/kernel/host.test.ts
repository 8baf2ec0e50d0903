import { describe, expect, it } from "vitest";
import { Agent, Type, definePlugin, type CoilError } from "../../api/index.js";
import { PluginHost } from "../../boot/host.js";
import { testHost } from "../support/host.js";
import scripted from "../../plugins/provider-scripted/index.js";
import { startPlugins } from "../../boot/lifecycle.js";

const withOptions = definePlugin({
  id: "gate-test",
  options: Type.Object({
    mode: Type.Union([Type.Literal("default"), Type.Literal("yolo")], { default: "default" }),
    deny: Type.Array(Type.String(), { default: [] }),
    nested: Type.Object({ depth: Type.Integer({ minimum: 1, default: 2 }) }, { default: {} }),
  }),
  setup() {},
});

function thrown(fn: () => unknown): CoilError {
  try {
    fn();
  } catch (e) {
    return e as CoilError;
  }
  throw new Error("expected a throw");
}

describe("plugin host", () => {
  it("fills option defaults and passes validated options to setup", () => {
    let seen: unknown;
    const p = definePlugin({
      ...withOptions,
      id: "opts",
      setup: (ctx) => {
        seen = ctx.options;
      },
    });
    testHost().install(p, { deny: ["rm"] });
    expect(seen).toEqual({ mode: "default", deny: ["rm"], nested: { depth: 2 } });
  });

  it("rejects an unknown option key, naming the plugin, the key and the preset file", () => {
    const e = thrown(() =>
      testHost().install(withOptions, { mdoe: "yolo" }, { file: "/p/.coil/preset.yaml", line: 4, column: 5 }),
    );
    expect(e.code).toBe("PLUGIN_OPTIONS_INVALID");
    expect(e.message).toBe(
      "[plugin gate-test] options: PLUGIN_OPTIONS_INVALID unknown option 'mdoe' (known: mode, deny, nested) (/p/.coil/preset.yaml:4:5)",
    );
  });

  it("rejects a wrong type and an unknown nested key", () => {
    const e = thrown(() =>
      testHost().install(withOptions, { deny: "rm", nested: { depht: 3 } }, { file: "preset.yaml" }),
    );
    expect(e.message).toContain("option 'deny' must be array");
    expect(e.message).toContain("unknown option 'nested.depht'");
    expect(e.message).toContain("preset.yaml");
  });

  it("rejects options for a plugin that takes none", () => {
    const e = thrown(() => testHost().install(definePlugin({ id: "plain", setup() {} }), { x: 1 }));
    expect(e.message).toContain("takes no options, but got 'x'");
  });

  it("names both plugins when two register the same tool name", () => {
    const tool = (id: string) =>
      definePlugin({
        id,
        setup: (ctx) =>
          ctx.tools.register({
            name: "read",
            description: "r",
            parameters: Type.Object({}),
            execute: async () => ({ content: [] }),
          }),
      });
    const host = testHost();
    host.install(tool("tools-a"), {}, { file: "a.yaml", line: 2 });
    const e = thrown(() => host.install(tool("tools-b"), {}, { file: "b.yaml", line: 7 }));
    expect(e.code).toBe("REGISTRY_DUPLICATE");
    expect(e.message).toContain(
      "tool 'read' is registered by both plugin tools-a (a.yaml:2) and plugin tools-b (b.yaml:7)",
    );
  });

  it("reports a throwing setup with the plugin id and phase", () => {
    const e = thrown(() =>
      testHost().install(
        definePlugin({
          id: "boom",
          setup() {
            throw new Error("no config");
          },
        }),
        {},
        { file: "x.yaml" },
      ),
    );
    expect(e).toMatchObject({ code: "PLUGIN_SETUP_FAILED", plugin: "boom", phase: "setup" });
    expect(e.message).toBe("[plugin boom] setup: PLUGIN_SETUP_FAILED no config (x.yaml)");
  });

  it("rejects an async setup, which would miss its own registrations", () => {
    const e = thrown(() => testHost().install(definePlugin({ id: "async", setup: (async () => undefined) as never })));
    expect(e.message).toContain("setup() returned a promise");
  });

  it("rejects the same plugin id twice, and a plugin without id or setup", () => {
    const host = testHost();
    host.install(definePlugin({ id: "once", setup() {} }), {}, { file: "a.yaml" });
    expect(
      thrown(() => host.install(definePlugin({ id: "once", setup() {} }), {}, { file: "b.yaml" })).message,
    ).toContain("loaded twice: from a.yaml and from b.yaml");
    expect(thrown(() => host.install({ id: "", setup() {} } as never)).code).toBe("PLUGIN_INVALID");
  });

  it("closes registration before the first model call", () => {
    let late: (() => void) | undefined;
    const host = testHost();
    host.install(scripted, { replies: [{ text: "x" }] });
    host.install(
      definePlugin({
        id: "late",
        setup: (ctx) => {
          late = () => ctx.tap("turn_end", () => undefined);
        },
      }),
    );
    new Agent(host, {
      provider: "scripted",
      model: { id: "m", provider: "scripted", contextWindow: 1000, maxOutput: 100 },
    });
    expect(() => late!()).toThrow(/REGISTRATION_CLOSED/);
    expect(() => host.install(definePlugin({ id: "later", setup() {} }))).toThrow(/after start-up/);
  });

  it("offers services between plugins and says which is missing", () => {
    const host = testHost();
    let got: unknown;
    host.install(definePlugin({ id: "offer", setup: (ctx) => ctx.services.provide("clock", { now: () => 42 }) }));
    host.install(
      definePlugin({
        id: "use",
        setup: (ctx) => {
          got = (ctx.services.require("clock") as { now(): number }).now();
        },
      }),
    );
    expect(got).toBe(42);
    const e = thrown(() =>
      host.install(definePlugin({ id: "needy", setup: (ctx) => void ctx.services.require("session") })),
    );
    expect(e.message).toContain("service 'session' is not provided by any plugin in this preset");
  });

  it("names the registered providers when the requested one is missing", () => {
    const host = testHost();
    host.install(scripted, {});
    const e = thrown(
      () =>
        new Agent(host, {
          provider: "anthropic",
          model: { id: "m", provider: "anthropic", contextWindow: 1, maxOutput: 1 },
        }),
    );
    expect(e.code).toBe("PROVIDER_MISSING");
    expect(e.hint).toBe("registered providers: scripted");
  });

  it("isolates a throwing event listener", async () => {
    const host = testHost();
    host.install(scripted, { replies: [{ text: "fine" }] });
    const diagnostics: string[] = [];
    const owners: string[] = [];
    host.install(
      definePlugin({
        id: "ui-flaky",
        setup(ctx) {
          ctx.on("diagnostic", (d) => void (d.plugin === "ui-flaky" && owners.push(d.plugin)));
          ctx.on("message_update", () => {
            throw new Error("render failed");
          });
          ctx.on("diagnostic", (d) => void diagnostics.push(d.message));
        },
      }),
    );
    const agent = new Agent(host, {
      provider: "scripted",
      model: { id: "m", provider: "scripted", contextWindow: 1000, maxOutput: 100 },
    });
    const run = await agent.prompt("hi");
    expect(run.stopReason).toBe("stop");
    expect(diagnostics[0]).toContain("render failed");
    expect(owners[0]).toBe("ui-flaky"); // attributed to the plugin that subscribed
  });

  it("hands each plugin the registrars its host's creator declared, guarded like the kernel's own", () => {
    const made: { id: string; source: string }[] = [];
    const registered: string[] = [];
    const host = new PluginHost({
      declare: {
        widgets: (plugin) => {
          made.push({ id: plugin.id, source: plugin.source });
          return {
            add: (name: string) => {
              plugin.guard();
              registered.push(`${plugin.id}:${name}`);
            },
          };
        },
      },
    });
    let late: (() => void) | undefined;
    host.install(
      definePlugin({
        id: "w",
        setup: (ctx) => {
          const widgets = (ctx as unknown as { widgets: { add(name: string): void } }).widgets;
          widgets.add("clock");
          late = () => widgets.add("too-late");
        },
      }),
      {},
      { ref: "./w.ts", file: "team.yaml", line: 3 },
    );
    expect(made).toEqual([{ id: "w", source: "./w.ts in team.yaml:3" }]);
    expect(registered).toEqual(["w:clock"]);
    host.close();
    expect(thrown(() => late!()).message).toContain("REGISTRATION_CLOSED");
    const hiding = new PluginHost({ declare: { tools: () => ({}) } });
    expect(thrown(() => hiding.install(definePlugin({ id: "x", setup: () => undefined }))).message).toContain(
      "a declared registrar may not be named 'tools'",
    );
  });

  it("serves the running front end's dialogs (its registration's ui) as the ui service, and only while it runs", async () => {
    const dialogs = {
      confirm: async () => true,
      select: async () => undefined,
      input: async () => undefined,
      notify: () => undefined,
    };
    const host = testHost();
    const seen: unknown[] = [];
    host.install(
      definePlugin({ id: "asker", setup: (ctx) => ctx.onStart(() => void seen.push(ctx.services.get("ui"))) }),
    );
    host.install(
      definePlugin({
        id: "dialog-fe",
        setup: (ctx) =>
          ctx.frontEnds.register({
            id: "dialog-fe",
            modes: ["interactive"],
            ui: dialogs,
            run: async () => {
              seen.push(ctx.services.get("ui"));
              return 0;
            },
          }),
      }),
    );
    host.install(scripted, { replies: [{ text: "x" }] });
    const agent = new Agent(host, {
      provider: "scripted",
      model: { id: "m", provider: "scripted", contextWindow: 1000, maxOutput: 100 },
    });
    await startPlugins(
      host,
      agent,
      { cwd: ".", env: {}, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
      { mode: "text", modelFromCli: false },
    );
    const fe = host.frontEnds.get("dialog-fe")!;
    expect(
      await host.runFrontEnd(fe, {
        agent,
        cwd: ".",
        mode: "interactive",
        stdin: process.stdin,
        stdout: process.stdout,
        stderr: process.stderr,
      }),
    ).toBe(0);
    expect(seen).toEqual([undefined, dialogs]); // print mode: nobody can answer; then the running front end's dialogs
    expect(host.ui).toBeUndefined();
    const child = testHost({ ui: () => host.ui });
    await host.runFrontEnd(
      {
        id: "x",
        modes: [],
        ui: dialogs,
        run: async () => {
          seen.push(child.ui);
          return 0;
        },
      },
      {
        agent,
        cwd: ".",
        mode: "x",
        stdin: process.stdin,
        stdout: process.stdout,
        stderr: process.stderr,
      },
    );
    expect(seen[2]).toBe(dialogs); // a child host (subagents) sees its parent's
  });
});
