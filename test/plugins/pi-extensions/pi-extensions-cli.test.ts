/**
 * Pi extensions (#34) through the built CLI: extensions written here to Pi's documented API
 * (`export default function (pi: ExtensionAPI)`), importing `@mariozechner/pi-coding-agent`, `typebox` and
 * `@mariozechner/pi-tui` as Pi's do, found in `~/.pi/agent/extensions`, `.pi/extensions` (trusted only) and
 * `-e`; the model is the validating Anthropic mock. Print, JSON, RPC and the TUI (tmux).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RpcClient } from "../../../sdk/rpc-client/index.js";
import { BIN, coil, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { reply, text } from "../../support/mock-anthropic.js";
import { mockPane, useMockAnthropic } from "../../support/provider-mocks.js";
import { chat, startMockOpenAI, type MockOpenAI } from "../../support/mock-openai.js";
import { useTmux } from "../../support/tmux.js";

const KEY = "sk-ant-pi-ext-test-0123456789";
const MODEL = ["--model", "anthropic/claude-sonnet-4-5"];
const mock = useMockAnthropic(KEY);
const tmux = useTmux();

/** A tool with streaming updates, details and its own rendering; a flag; a command; state in the session. */
const GREETER = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { Text } from "@mariozechner/pi-tui";

export default function (pi: ExtensionAPI) {
  let count = 0;
  pi.registerFlag("shout", { description: "shout the greeting", type: "boolean", default: false });
  pi.on("session_start", async (_event, ctx) => {
    for (const entry of ctx.sessionManager.getEntries()) {
      if (entry.type === "custom" && entry.customType === "greeter-state") count = entry.data.count;
    }
    ctx.ui.setStatus("greeter", "greeted " + count);
    ctx.ui.setWidget("greeter", ["greeter widget: " + count + " so far"]);
  });
  pi.registerTool({
    name: "greet",
    label: "Greet",
    description: "Greet someone by name",
    parameters: Type.Object({ name: Type.String({ description: "who" }) }),
    async execute(_toolCallId, params, _signal, onUpdate, _ctx) {
      onUpdate?.({ content: [{ type: "text", text: "warming up for " + params.name }], details: { stage: "warm" } });
      count++;
      pi.appendEntry("greeter-state", { count });
      const line = "Hello, " + params.name + "!";
      return { content: [{ type: "text", text: pi.getFlag("shout") ? line.toUpperCase() : line }], details: { count } };
    },
    renderCall(args, theme) {
      return new Text(theme.bold("👋 greeting " + args.name), 0, 0);
    },
    renderResult(result, _options, theme) {
      return new Text(theme.fg("success", "greeted, #" + result.details.count), 0, 0);
    },
  });
  pi.registerCommand("greetings", {
    description: "How many greetings so far",
    handler: async (_args, ctx) => {
      ctx.ui.notify("greeted " + count + " times", "info");
    },
  });
  pi.registerCommand("ask-greet", {
    description: "Ask the model to greet someone",
    handler: async (args) => {
      pi.sendUserMessage("Please greet " + (args || "everyone"));
    },
  });
  pi.registerShortcut("alt+m", {
    description: "say how many greetings",
    handler: async (ctx) => {
      ctx.ui.notify("shortcut says " + count + " greetings", "info");
    },
  });
  pi.registerMessageRenderer("greeter", () => undefined);
  pi.unregisterProvider("greeter-cloud");
}
`;

/** Pi's documented gate: rm -rf in bash needs a yes. */
const GUARD = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { isToolCallEventType } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
  pi.on("tool_call", async (event, ctx) => {
    if (isToolCallEventType("bash", event) && event.input.command.includes("rm -rf")) {
      const ok = await ctx.ui.confirm("Dangerous!", "Allow " + event.input.command + "?");
      if (!ok) return { block: true, reason: "Blocked by user" };
    }
    // modify: every echo gets a prefix (the rewrite step; the permission gate judges the new command)
    if (isToolCallEventType("bash", event) && event.input.command.startsWith("echo ")) {
      event.input.command = "echo [guarded] " + event.input.command.slice(5);
    }
  });
}
`;

function sandbox(files: Record<string, string> = {}) {
  const base = tempDir("coil-pi-ext-");
  const project = join(base, "project");
  writeFiles(project, { ".git/HEAD": "ref: refs/heads/main\n", ...files });
  const home = join(base, "home");
  const env = sandboxEnv(base, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url });
  return { base, project, home, env };
}

const events = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));

const toolUse = (name: string, input: Record<string, unknown>, id = "toolu_1") =>
  reply([{ tool: { id, name, input } }], { stop: "tool_use" });

describe("Pi extensions through the CLI", () => {
  it("a user extension's tool streams updates with details, its flag works, and an unsupported call is reported at load time and in coil doctor", async () => {
    const s = sandbox();
    writeFiles(s.home, { ".pi/agent/extensions/greeter.ts": GREETER });
    mock.requests.length = 0;
    mock.push(toolUse("greet", { name: "Ada" }), text("Greeted Ada."));
    const ran = await coil(s.project, [...MODEL, "--shout", "--mode", "json", "greet Ada"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    const all = events(ran.stdout);
    const update = all.find((e) => e.type === "tool_execution_update");
    expect(update.partial).toEqual({
      content: [{ type: "text", text: "warming up for Ada" }],
      details: { stage: "warm" },
    });
    const end = all.find((e) => e.type === "tool_execution_end");
    expect(end.result.content).toEqual([{ type: "text", text: "HELLO, ADA!" }]);
    expect(end.result.details).toEqual({ count: 1 });
    // the model saw the tool with its TypeBox schema, and the result
    expect(mock.requests[0]!.body.tools.find((t: { name: string }) => t.name === "greet").input_schema).toMatchObject({
      type: "object",
      properties: { name: { type: "string", description: "who" } },
      required: ["name"],
    });
    expect(JSON.stringify(mock.requests[1]!.body.messages.at(-1))).toContain("HELLO, ADA!");
    expect(mock.rejected()).toEqual([]);
    // reported once, with the extension's name and the call
    const warning = 'Pi extension greeter: pi.unregisterProvider("greeter-cloud") is not supported in coil';
    expect(ran.stderr.split(warning).length - 1).toBe(1);

    const doctor = await coil(s.project, ["doctor"], s.env);
    expect(doctor.stdout).toContain("Pi extensions:");
    expect(doctor.stdout).toMatch(
      /greeter \(user, .*greeter\.ts\): tools greet; commands \/greetings, \/ask-greet; flags --shout/,
    );
    expect(doctor.stdout).toContain(
      'not supported: pi.unregisterProvider("greeter-cloud"): coil\'s providers are fixed once start-up is done',
    );
    // a message renderer is drawn by the TUI (pi-extensions-ui.test.ts), so it is not reported
    expect(doctor.stdout).not.toContain("registerMessageRenderer");
  });

  it("TypeBox's value functions and compiler work in an extension's tool (coil's copy, bound when the run starts) and while it loads (loaded then), its flag too", async () => {
    const s = sandbox();
    const checker = (atLoad: boolean) => `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { Value } from "typebox/value";
import { Compile } from "@sinclair/typebox/compiler";

const Point = Type.Object({ x: Type.Number(), y: Type.Number() });
${atLoad ? "const ready = Value.Check(Point, { x: 1, y: 2 });" : "const ready = true;"}

export default function (pi: ExtensionAPI) {
  pi.registerFlag("strict-points", { type: "boolean", description: "check points" });
  pi.registerTool({
    name: "check_point",
    label: "Check point",
    description: "Checks a point",
    parameters: Type.Object({ point: Type.Unknown() }),
    async execute(_id, params) {
      const ok = Value.Check(Point, params.point) && Compile(Point).Check(params.point);
      const text = ok ? "a point" : "not a point: " + [...Value.Errors(Point, params.point)].map((e) => e.message).join("; ");
      return { content: [{ type: "text", text: text + (ready ? "" : " (not ready)") + (pi.getFlag("strict-points") ? " strict" : "") }] };
    },
  });
}
`;
    for (const atLoad of [false, true]) {
      writeFiles(s.home, { ".pi/agent/extensions/points.ts": checker(atLoad) });
      mock.requests.length = 0;
      mock.push(
        toolUse("check_point", { point: { x: 1, y: 2 } }),
        toolUse("check_point", { point: { x: "one" } }, "toolu_2"),
        text("checked"),
      );
      const ran = await coil(s.project, [...MODEL, "--strict-points", "-p", "check"], s.env);
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout.trim()).toBe("checked");
      expect(ran.stderr).not.toMatch(/points|Pi extension/);
      const results = mock.requests.slice(1).map((r) => JSON.stringify(r.body.messages.at(-1)));
      expect(results[0]).toContain("a point strict");
      expect(results[1]).toMatch(/not a point: .*number/);
    }
  });

  it("a command prints in print mode, appendEntry state comes back with -c, and sendUserMessage from a command prompts the model", async () => {
    const s = sandbox();
    writeFiles(s.home, { ".pi/agent/extensions/greeter/index.ts": GREETER });
    mock.requests.length = 0;
    mock.push(toolUse("greet", { name: "Bo" }), text("done"));
    expect((await coil(s.project, [...MODEL, "-p", "greet Bo"], s.env)).code).toBe(0);
    const fresh = await coil(s.project, [...MODEL, "-p", "/greetings"], s.env);
    expect(fresh.stdout.trim()).toBe("greeted 0 times");
    const resumed = await coil(s.project, [...MODEL, "-c", "-p", "/greetings"], s.env);
    expect(resumed.stdout.trim()).toBe("greeted 1 times");

    mock.push(text("Hello, team!"));
    const asked = await coil(s.project, [...MODEL, "-p", "/ask-greet the team"], s.env);
    expect(asked.stdout.trim()).toBe("Hello, team!");
    expect(JSON.stringify(mock.requests.at(-1)!.body.messages.at(-1))).toContain("Please greet the team");
    expect(mock.rejected()).toEqual([]);
  });

  it("RPC: a tool_call gate asks before rm -rf and blocks on no; yes lets it run; its rewrite of echo is what runs", async () => {
    const s = sandbox({ "victim/file.txt": "keep me\n" });
    const ext = join(s.base, "guard.ts");
    writeFiles(s.base, { "guard.ts": GUARD });
    const victim = join(s.project, "victim");
    const client = await RpcClient.start({
      bin: BIN,
      cwd: s.project,
      env: s.env,
      args: [...MODEL, "-e", ext],
      timeoutMs: 20_000,
    });
    try {
      const asked: string[] = [];
      let answer = false;
      client.onUi((req) => {
        if (req.method !== "confirm") return undefined;
        asked.push(req.params.message);
        return answer;
      });
      mock.requests.length = 0;
      mock.push(toolUse("bash", { command: `rm -rf ${victim}` }), text("could not"));
      await client.run("delete it");
      expect(asked).toEqual([`Allow rm -rf ${victim}?`]);
      expect(existsSync(victim)).toBe(true);
      expect(JSON.stringify(mock.requests[1]!.body.messages.at(-1))).toContain("Blocked by user (Pi extension guard)");

      answer = true;
      mock.push(toolUse("bash", { command: `rm -rf ${victim}` }, "toolu_2"), text("gone"));
      await client.run("delete it, really");
      expect(asked).toHaveLength(2);
      expect(existsSync(victim)).toBe(false);

      mock.push(toolUse("bash", { command: "echo hi" }, "toolu_3"), text("ok"));
      await client.run("say hi");
      expect(JSON.stringify(mock.requests.at(-1)!.body.messages.at(-1))).toContain("[guarded] hi");
      expect(mock.rejected()).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("print mode has no UI: the gate's confirm is a no and the call is blocked", async () => {
    const s = sandbox({ "victim/file.txt": "keep me\n" });
    writeFiles(s.base, { "guard.ts": GUARD });
    const victim = join(s.project, "victim");
    mock.push(toolUse("bash", { command: `rm -rf ${victim}` }), text("blocked"));
    const ran = await coil(s.project, [...MODEL, "--extension", join(s.base, "guard.ts"), "-p", "delete"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(existsSync(victim)).toBe(true);
  });

  it("an extension's tool is held back by plan mode like any tool that is not read-only", async () => {
    const s = sandbox();
    writeFiles(s.base, { "greeter.ts": GREETER });
    mock.push(toolUse("greet", { name: "Di" }), text("planned"));
    const ran = await coil(
      s.project,
      [...MODEL, "-e", join(s.base, "greeter.ts"), "--plugin", "plan-mode", "--plan", "--mode", "json", "greet Di"],
      s.env,
    );
    const end = events(ran.stdout).find((e) => e.type === "tool_execution_end");
    expect(end.result.isError).toBe(true);
    expect(end.result.content[0].text).toMatch(/^Blocked: plan mode is read-only: greet is not available/);
  });

  it("coil install of a Pi package (a folder with pi.extensions): its command works on the next run", async () => {
    const s = sandbox();
    const pkg = join(s.base, "pi-hello-pkg");
    writeFiles(pkg, {
      "package.json": JSON.stringify({
        name: "pi-hello-pkg",
        version: "1.0.0",
        keywords: ["pi-package"],
        pi: { extensions: ["./extensions"] },
      }),
      "extensions/hello.ts": `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerCommand("pkg-hello", { description: "hello from a package", handler: async (_a, ctx) => ctx.ui.notify("hello from pi-hello-pkg") });
}
`,
    });
    const installed = await coil(s.project, ["install", pkg], s.env);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain("pi-hello-pkg is a Pi package: its extensions load on every run");
    expect(installed.stderr).not.toContain("offers coil nothing");
    const ran = await coil(s.project, [...MODEL, "-p", "/pkg-hello"], s.env);
    expect(ran.stdout.trim()).toBe("hello from pi-hello-pkg");
  });

  it("an extension taking a name coil has (/mcp, read) is reported and left out; coil starts", async () => {
    const s = sandbox();
    writeFiles(s.home, {
      ".pi/agent/extensions/clash.ts": `export default function (pi) {
  pi.registerCommand("mcp", { description: "mine", handler: async () => {} });
  pi.registerTool({ name: "read", description: "mine", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [] }) });
  pi.registerCommand("clash-ok", { description: "kept", handler: async (_a, ctx) => ctx.ui.notify("kept") });
}
`,
    });
    const ran = await coil(s.project, [...MODEL, "-p", "/clash-ok"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout.trim()).toBe("kept");
    expect(ran.stderr).toMatch(
      /Pi extension clash: pi\.registerCommand\("mcp"\) is not supported in coil \(.*REGISTRY_DUPLICATE/,
    );
    expect(ran.stderr).toMatch(/Pi extension clash: pi\.registerTool\("read"\) is not supported in coil/);
  });

  it("a project's .pi/extensions load only in a trusted project", async () => {
    const s = sandbox({ ".pi/extensions/greeter.ts": GREETER });
    const untrusted = await coil(s.project, ["doctor"], s.env);
    expect(untrusted.stdout).toMatch(/skipped: .*\.pi\/extensions: the project is not trusted/);
    expect(untrusted.stdout).not.toContain("tools greet");
    const trusted = await coil(s.project, ["--trust", "doctor"], s.env);
    expect(trusted.stdout).toMatch(/greeter \(project, .*\): tools greet/);
  });

  it("a provider registered by an extension (openai-completions, key from an environment variable) answers through the validating OpenAI mock", async () => {
    const openai: MockOpenAI = await startMockOpenAI({ key: "sk-proxy-test-0123456789" });
    try {
      const s = sandbox();
      writeFiles(s.home, {
        ".pi/agent/extensions/proxy.ts": `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerProvider("my-proxy", {
    baseUrl: ${JSON.stringify(openai.url)},
    apiKey: "MY_PROXY_KEY",
    api: "openai-completions",
    models: [{ id: "proxy-large", name: "Proxy Large", reasoning: false, input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 64000, maxTokens: 4096 }],
  });
}
`,
      });
      openai.push(chat({ text: "hello through the proxy" }));
      const env = { ...s.env, MY_PROXY_KEY: "sk-proxy-test-0123456789" };
      const ran = await coil(s.project, ["--model", "my-proxy/proxy-large", "-p", "hi"], env);
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout.trim()).toBe("hello through the proxy");
      expect(openai.requests[0]!.body.model).toBe("proxy-large");
      expect(openai.requests[0]!.headers.authorization).toBe("Bearer sk-proxy-test-0123456789");
      expect(openai.rejected()).toEqual([]);
      const doctor = await coil(s.project, ["doctor"], env);
      expect(doctor.stdout).toMatch(/proxy \(user, .*\): providers my-proxy/);
    } finally {
      await openai.close();
    }
  });

  it("TUI (tmux): the extension's widget and status show from the start, and its tool draws its own call and result, its shortcut runs", async () => {
    const s = sandbox();
    writeFiles(s.home, { ".pi/agent/extensions/greeter.ts": GREETER });
    mkdirSync(join(s.base, "coil-home"), { recursive: true });
    mock.push(toolUse("greet", { name: "Cy" }), text("Greeted Cy."));
    const t = mockPane(tmux, s, MODEL.join(" "));
    const start = await t.waitFor((sc) => sc.includes("greeter widget: 0 so far") && sc.includes("greeted 0"));
    expect(start).toContain("greeter widget: 0 so far");
    t.type("greet Cy");
    t.keys("Enter");
    const done = await t.waitFor((sc) => sc.includes("Greeted Cy.") && sc.includes("greeted, #1"));
    expect(done).toContain("👋 greeting Cy");
    // pi.registerShortcut goes through coil's ctx.registerShortcut: Alt+M runs the handler with a ctx.ui.
    t.keys("M-m");
    await t.waitFor("shortcut says 1 greetings");
  });
});
