/** coil/sdk createAgent (the CLI's agent, in process) and coil/testing createTestKit. */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { definePlugin, Type, type AgentEvent } from "../../api/index.js";
import { createAgent, PluginHost } from "../../sdk/index.js";
import { createTestKit, createWorkspace, importPlugin } from "../../sdk/testing/index.js";
import { cleanTemps, tempDir, writeFiles } from "../support/ecosystem.js";

afterAll(cleanTemps);

const shout = definePlugin({
  id: "shout",
  setup(ctx) {
    ctx.tools.register({
      name: "shout",
      description: "Upper-case a text",
      parameters: Type.Object({ text: Type.String() }),
      async execute(args) {
        return { content: [{ type: "text", text: args.text.toUpperCase() }] };
      },
    });
  },
});

describe("createAgent", () => {
  it("runs the preset's agent in process: tools, plugin flags, sessions written, close() runs stop callbacks", async () => {
    const base = tempDir("coil-sdk-");
    const project = writeFiles(join(base, "project"), {
      "notes.txt": "alpha\nbeta\n",
      // A small preset keeps the in-process load quick; `default` works the same way.
      "sdk.yaml": "plugins: [provider-scripted, tools-coding, session-jsonl]\n",
      "replies.yaml":
        "- toolCalls:\n    - { name: read, arguments: { path: notes.txt } }\n    - { name: shout, arguments: { text: hey } }\n- text: Read it.\n",
    });
    const home = join(base, "coil-home");
    const coil = await createAgent({
      cwd: project,
      home,
      preset: "sdk.yaml",
      env: { ...process.env, COIL_HOME: home },
      provider: "scripted",
      flags: { script: "replies.yaml" },
      extraPlugins: [shout],
    });
    const events: AgentEvent[] = [];
    coil.subscribe((e) => events.push(e));
    expect(coil.agent.state.model.id).toBe("scripted");
    expect(coil.preset.entries.map((e) => e.key)).toContain("tools-coding");
    const result = await coil.prompt("read notes.txt");
    expect(result.stopReason).toBe("stop");
    expect(coil.lastText()).toBe("Read it.");
    const results = events.flatMap((e) => (e.type === "tool_execution_end" ? [e.result] : []));
    expect(results.map((r) => [r.toolName, r.isError]).sort()).toEqual([
      ["read", false],
      ["shout", false],
    ]);
    expect(JSON.stringify(results.find((r) => r.toolName === "read")!.content)).toContain("alpha");
    expect(results.find((r) => r.toolName === "shout")!.content).toEqual([{ type: "text", text: "HEY" }]);
    await coil.close();
    const sessions = join(home, "sessions");
    expect(existsSync(sessions) && readdirSync(sessions).length).toBe(1);
  });

  it("createAgent({ trust: true }) builds the host the CLI builds: plugins see projectTrusted, the project preset loads", async () => {
    const base = tempDir("coil-sdk-");
    const project = writeFiles(join(base, "project"), {
      "sdk.yaml": "plugins: [provider-scripted]\n",
      // The project layer adds a plugin that reports what it was told about trust.
      ".coil/preset.yaml": "plugins:\n  - ./trust-probe.ts\n",
      ".coil/trust-probe.ts": `import { definePlugin } from "coil";\nexport default definePlugin({ id: "trust-probe", setup(ctx) { ctx.services.provide("trust-probe", { trusted: ctx.projectTrusted }); } });\n`,
      "replies.yaml": "- text: ok\n",
    });
    const home = join(base, "coil-home");
    const trusted = await createAgent({
      cwd: project,
      home,
      preset: "sdk.yaml",
      trust: true,
      provider: "scripted",
      flags: { script: "replies.yaml" },
    });
    try {
      expect(trusted.host.projectTrusted).toBe(true);
      expect(trusted.host.services.get("trust-probe")).toEqual({ trusted: true });
    } finally {
      await trusted.close();
    }
    const untrusted = await createAgent({
      cwd: project,
      home,
      preset: "sdk.yaml",
      provider: "scripted",
      flags: { script: "replies.yaml" },
    });
    try {
      expect(untrusted.host.projectTrusted).toBe(false);
      expect(untrusted.host.services.get("trust-probe")).toBeUndefined();
    } finally {
      await untrusted.close();
    }
  });

  it("without trust refuses a plugin package found only in the project's node_modules, as the CLI does (one assemble())", async () => {
    const base = tempDir("coil-sdk-");
    const project = writeFiles(join(base, "project"), {
      "node_modules/coil-probe/package.json": JSON.stringify({ name: "coil-probe", type: "module", main: "index.js" }),
      "node_modules/coil-probe/index.js": `export default { id: "coil-probe", setup() { globalThis.__coilProbeRan = true; } };\n`,
      "sdk.yaml": "plugins: [provider-scripted, coil-probe]\n",
      "replies.yaml": "- text: ok\n",
    });
    const home = join(base, "coil-home");
    const g = globalThis as { __coilProbeRan?: boolean };
    delete g.__coilProbeRan;
    await expect(
      createAgent({ cwd: project, home, preset: "sdk.yaml", provider: "scripted", flags: { script: "replies.yaml" } }),
    ).rejects.toThrow(/project is not trusted, so it was not loaded/);
    expect(g.__coilProbeRan).toBeUndefined();
    const trusted = await createAgent({
      cwd: project,
      home,
      preset: "sdk.yaml",
      trust: true,
      provider: "scripted",
      flags: { script: "replies.yaml" },
    });
    await trusted.close();
    expect(g.__coilProbeRan).toBe(true);
  });

  it("fails like the CLI on a bad preset or a missing provider", async () => {
    const base = tempDir("coil-sdk-");
    await expect(createAgent({ cwd: base, home: join(base, "h"), preset: "nope" })).rejects.toThrow(
      /unknown preset "nope"/,
    );
    writeFiles(base, { "p.yaml": "plugins: [provider-scripted]\n" });
    await expect(
      createAgent({ cwd: base, home: join(base, "h"), preset: "p.yaml", provider: "scripted" }),
    ).rejects.toThrow(/provider 'scripted' is not configured/);
  });
});

describe("createTestKit", () => {
  it("runs a plugin on the scripted provider in a temporary workspace and exposes requests and results", async () => {
    const kit = createTestKit({
      plugins: [shout],
      files: { "a.txt": "x" },
      replies: [{ toolCalls: [{ name: "shout", arguments: { text: "quiet" } }] }, { text: "QUIET it is." }],
    });
    try {
      expect(kit.workspace.read("a.txt")).toBe("x");
      const result = await kit.run("shout quiet");
      expect(result.stopReason).toBe("stop");
      expect(kit.text(kit.toolResults("shout")[0])).toBe("QUIET");
      expect(kit.requests).toHaveLength(2);
      expect(kit.requests[0]!.tools.map((t) => t.name)).toEqual(["shout"]);
      expect(kit.text()).toBe("QUIET it is.");
      expect(kit.diagnostics()).toEqual([]);
    } finally {
      kit.dispose();
    }
    expect(existsSync(kit.workspace.dir)).toBe(false);
    const ws = createWorkspace({ "d/e.txt": "y" });
    expect(ws.exists("d/e.txt")).toBe(true);
    ws.dispose();
  });
});

describe("importPlugin", () => {
  it("loads a .ts plugin file (path or file URL) the way coil does, ready for createTestKit", async () => {
    const dir = tempDir("coil-sdk-");
    writeFiles(dir, {
      "echo.ts": `import { definePlugin, Type } from "coil";\nconst n: number = 2;\nexport default definePlugin({ id: "echo-twice", setup(ctx) { ctx.tools.register({ name: "echo_twice", description: "echo", parameters: Type.Object({ text: Type.String() }), async execute(a) { return { content: [{ type: "text", text: a.text.repeat(n) }] }; } }); } });\n`,
    });
    const plugin = await importPlugin(pathToFileURL(join(dir, "echo.ts")));
    expect(plugin.id).toBe("echo-twice");
    expect((await importPlugin(join(dir, "echo.ts"))).id).toBe("echo-twice");
    const kit = createTestKit({
      plugins: [plugin],
      replies: [{ toolCalls: [{ name: "echo_twice", arguments: { text: "ab" } }] }, { text: "done" }],
    });
    try {
      await kit.run("go");
      expect(kit.text(kit.toolResults("echo_twice")[0])).toBe("abab");
    } finally {
      kit.dispose();
    }
    await expect(importPlugin(join(dir, "missing.ts"))).rejects.toThrow(/missing\.ts does not exist/);
  });
});

describe("coil/sdk PluginHost", () => {
  it("validates and defaults plugin options at install, as boot does", () => {
    let seen: unknown;
    const greeter = definePlugin({
      id: "greeter",
      options: Type.Object({ greeting: Type.String({ default: "hello" }) }),
      setup(ctx) {
        seen = ctx.options;
      },
    });
    new PluginHost().install(greeter, {});
    expect(seen).toEqual({ greeting: "hello" });
    expect(() => new PluginHost().install(greeter, { greting: "hi" })).toThrow(/PLUGIN_OPTIONS_INVALID.*greting/);
  });
});
