/** `coil --mode rpc` driven end to end by the typed client (sdk/rpc-client) over a real child process. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../api/index.js";
import { RpcClient, RpcError, splitLines } from "../../../sdk/rpc-client/index.js";
import { BIN, cleanTemps, coil, requireBuild, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";

beforeAll(requireBuild);
afterAll(cleanTemps);

const PLUGIN = `import { definePlugin, Type } from "coil";
export default definePlugin({
  id: "deployer",
  setup(ctx) {
    ctx.tools.register({
      name: "deploy",
      description: "Deploy to a target",
      parameters: Type.Object({ target: Type.String() }),
      async execute(args, run) {
        const ui = ctx.services.get("ui");
        if (!ui) return { content: [{ type: "text", text: "no ui" }], isError: true };
        const ok = await ui.confirm("Deploy?", "deploy to " + args.target, run.signal);
        const region = ok ? await ui.select("Which region?", ["eu", "us"], run.signal) : undefined;
        ui.notify("deploy finished", "info");
        ui.setStatus?.("deploy", "deployed " + args.target);
        ui.setWidget?.("deploy", ["last deploy: " + args.target], { placement: "belowEditor" });
        ui.setWidget?.("live", () => ({ render: () => ["a component"] }));
        ui.setTitle?.("deploying");
        return { content: [{ type: "text", text: ok ? "deployed to " + args.target + " in " + region : "cancelled" }] };
      },
    });
    ctx.commands.register({ name: "hello", description: "Say hello", run: (args) => "hello " + args });
  },
});
`;

const REPLIES = `- toolCalls: [{ name: deploy, arguments: { target: staging } }]
- text: Deployed.
- text: "this answer streams slowly and will be aborted before it ends"
  chunkDelayMs: 100
- text: first answer
  delayMs: 400
- text: second answer
- text: from the other model
`;

describe("ui-rpc", () => {
  it("runs a whole session through the typed client: prompt, ui dialogs, events, state, abort, follow-up, model, sessions", async () => {
    const base = tempDir("coil-rpc-");
    const project = writeFiles(join(base, "project"), {
      "deployer.ts": PLUGIN,
      "replies.yaml": REPLIES,
      "preset.yaml":
        "extends: default\nprovider: scripted\nplugins:\n  - ui-rpc\n  - ./deployer.ts\n  - provider-scripted: { script: ./replies.yaml, chunkSize: 4 }\n",
    });
    const env = sandboxEnv(base);
    const client = await RpcClient.start({
      bin: BIN,
      cwd: project,
      env,
      args: ["--preset", "./preset.yaml"],
      timeoutMs: 15_000,
    });
    const events: AgentEvent[] = [];
    client.on("event", (e: AgentEvent) => events.push(e));
    const dialogs: { method: string; params: Record<string, unknown> }[] = [];
    const requested: string[] = [];
    const uiCalls: { method: string; params: Record<string, unknown> }[] = [];
    client.on("ui_request", (r: { method: string; params: Record<string, unknown> }) => {
      requested.push(r.method);
      uiCalls.push(r);
    });
    client.onUi((req) => {
      dialogs.push(req);
      return req.method === "confirm" ? true : req.method === "select" ? "eu" : undefined;
    });
    try {
      const state = await client.getState();
      expect(state).toMatchObject({
        provider: "scripted",
        isRunning: false,
        messageCount: 0,
        model: { id: "scripted" },
      });
      expect(state.session?.id).toMatch(/./);

      const commands = await client.listCommands();
      expect(commands.commands).toContainEqual({ name: "hello", description: "Say hello" });
      expect(await client.prompt("/hello there")).toEqual({ started: false, output: "hello there" });

      // A run whose tool asks the user twice through the ui service, answered by the client.
      const end = await client.run("deploy to staging");
      expect(end.stopReason).toBe("stop");
      const toolEnd = events.find((e) => e.type === "tool_execution_end");
      expect(toolEnd).toMatchObject({
        toolName: "deploy",
        result: { isError: false, content: [{ text: "deployed to staging in eu" }] },
      });
      expect(dialogs.map((d) => d.method)).toEqual(["confirm", "select"]);
      // the plugin UI calls arrive as fire-and-forget ui_requests; a component widget travels as no lines
      expect(requested).toEqual(["confirm", "select", "notify", "setStatus", "setWidget", "setWidget", "setTitle"]);
      expect(uiCalls.find((r) => r.method === "setStatus")!.params).toEqual({
        key: "deploy",
        text: "deployed staging",
      });
      expect(uiCalls.filter((r) => r.method === "setWidget").map((r) => r.params)).toEqual([
        { key: "deploy", lines: ["last deploy: staging"], placement: "belowEditor" },
        { key: "live", lines: [], placement: "aboveEditor" },
      ]);
      expect(dialogs[0]!.params).toEqual({ title: "Deploy?", message: "deploy to staging" });
      expect(events.map((e) => e.type)).toEqual(
        expect.arrayContaining([
          "agent_start",
          "turn_start",
          "message_update",
          "tool_execution_start",
          "turn_end",
          "agent_end",
        ]),
      );
      const { messages } = await client.getMessages();
      expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);

      // Busy: a second prompt is refused while a run goes; abort hands back what was queued.
      const aborted = client.waitFor("agent_end");
      expect((await client.prompt("talk slowly")).started).toBe(true);
      await client.waitFor("message_update");
      await expect(client.prompt("another")).rejects.toThrow(/a run is going/);
      expect(await client.steer("hurry up")).toEqual({ queued: 1 });
      const { unsent } = await client.abort();
      expect(unsent.map((m) => m.content)).toEqual(["hurry up"]);
      expect((await aborted).stopReason).toBe("aborted");

      // A follow-up queued during a run starts another pass.
      const followed = client.waitFor("agent_end");
      await client.prompt("answer twice");
      expect(await client.followUp("and then?")).toEqual({ queued: 1 });
      const done = await followed;
      expect(done.stopReason).toBe("stop");
      const texts = done.messages
        .filter((m) => m.role === "assistant")
        .map((m) => (m.content as { text: string }[])[0]?.text);
      expect(texts).toEqual(["first answer", "second answer"]);

      const switched = await client.setModel("scripted/other");
      expect(switched).toMatchObject({ provider: "scripted", model: { id: "other" } });
      await expect(client.setModel("nope/x")).rejects.toThrow(/no provider has model|unknown provider/);
      const last = await client.run("which model?");
      expect(last.messages.find((m) => m.role === "assistant")).toMatchObject({ model: "other" });

      await expect(client.request("bogus" as never)).rejects.toBeInstanceOf(RpcError);
      await expect(client.compact()).rejects.toThrow(/compact/i);

      // Sessions: fork from the first user message, start a new one, switch back.
      const first = (await client.getState()).session!;
      const entries = readFileSync(first.file!, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      const firstUser = entries.find((e) => e.type === "message" && e.message?.role === "user");
      const forked = (await client.fork(firstUser.id)).session;
      expect(forked.id).not.toBe(first.id);
      const fresh = (await client.newSession()).session;
      expect(fresh.id).not.toBe(forked.id);
      expect((await client.getMessages()).messages).toEqual([]);
      const back = (await client.switchSession(first.file!)).session;
      expect(back.id).toBe(first.id);
      expect((await client.getMessages()).messages.length).toBeGreaterThan(4);
    } finally {
      expect(await client.close()).toBe(0);
    }
    expect(client.stderr).not.toContain("Error");
  }, 40_000);

  it("answers bad lines with errors, frames on LF only, and refuses a prompt argument", async () => {
    const base = writeFiles(tempDir("coil-rpc-"), { "none.yaml": "- text: unused\n" });
    const env = sandboxEnv(base);
    const lines = [
      '{"id":"1","type":"get_state"}',
      "not json",
      '{"id":2,"type":"nope"}',
      '{"id":3,"type":"steer"}',
      '{"id":"4","type":"get_messages"}',
    ];
    const ran = await coil(
      base,
      ["--mode", "rpc", "--plugin", "ui-rpc", "--provider", "scripted", "--script", "none.yaml", "-"],
      env,
      lines.join("\r\n"),
    );
    const out = ran.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(out[0]).toEqual({ type: "ready", version: 1 });
    expect(out.slice(1).map((m) => [m.id, m.command, m.success])).toEqual([
      ["1", "get_state", true],
      [undefined, "parse", false],
      [2, "nope", false],
      [3, "steer", false],
      ["4", "get_messages", true],
    ]);
    expect(out[4].error).toContain('needs "message"');
    expect(ran.code).toBe(0);

    const withPrompt = await coil(
      base,
      ["--mode", "rpc", "--plugin", "ui-rpc", "--provider", "scripted", "--script", "none.yaml", "hello"],
      env,
    );
    expect(withPrompt.code).toBe(2);
    expect(withPrompt.stderr).toContain("rpc mode reads commands on stdin");
    expect(splitLines('{"a":1}\r\n\n{"b":')).toEqual({ lines: ['{"a":1}'], rest: '{"b":' });
  });

  it("a run halted by a guard ends with stopReason halted, and get_state reports the last run", async () => {
    const base = tempDir("coil-rpc-");
    const project = writeFiles(join(base, "project"), {
      "replies.yaml":
        "- toolCalls: [{ name: ls, arguments: {} }]\n- toolCalls: [{ name: ls, arguments: {} }]\n- text: fine\n",
      "preset.yaml":
        "extends: default\nprovider: scripted\nplugins:\n  - guards: { maxTurns: 1 }\n  - provider-scripted: { script: ./replies.yaml }\n",
    });
    const client = await RpcClient.start({
      bin: BIN,
      cwd: project,
      env: sandboxEnv(base),
      args: ["--preset", "./preset.yaml"],
      timeoutMs: 15_000,
    });
    try {
      expect((await client.getState()).lastRun).toBeUndefined();
      const end = await client.run("list the files");
      expect(end).toMatchObject({
        stopReason: "halted",
        reason:
          "reached the limit of 1 turns for one run (guards maxTurns: raise it in your preset, `- guards: { maxTurns: N }`, 0 for no limit)",
      });
      expect((await client.getState()).lastRun).toEqual({
        stopReason: "halted",
        reason:
          "reached the limit of 1 turns for one run (guards maxTurns: raise it in your preset, `- guards: { maxTurns: N }`, 0 for no limit)",
      });
      expect((await client.run("and now?")).stopReason).toBe("halted");
    } finally {
      expect(await client.close()).toBe(0);
    }
  }, 20_000);
});
