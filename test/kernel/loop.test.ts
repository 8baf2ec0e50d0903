import { describe, expect, it } from "vitest";
import {
  Type,
  definePlugin,
  textOf,
  type AgentMessage,
  type ProviderRequest,
  type ToolResultMessage,
} from "../../api/index.js";
import { createTestAgent, sleep, until } from "../support/harness.js";

/** Tools whose timing the tests control. */
function timingTools(
  log: { name: string; id: string; start: number; end?: number }[],
  opts: { sequentialTool?: boolean } = {},
) {
  return definePlugin({
    id: "test-tools",
    setup(ctx) {
      ctx.tools.register({
        name: "wait",
        description: "wait ms milliseconds then echo",
        parameters: Type.Object({ ms: Type.Integer({ minimum: 0 }), say: Type.String() }),
        async execute(args, run) {
          const entry: { name: string; id: string; start: number; end?: number } = {
            name: "wait",
            id: run.toolCallId,
            start: performance.now(),
          };
          log.push(entry);
          await sleep(args.ms);
          entry.end = performance.now();
          return { content: [{ type: "text", text: args.say }] };
        },
      });
      ctx.tools.register({
        name: "lock",
        description: "a tool that must not run beside others",
        parameters: Type.Object({ ms: Type.Integer() }),
        executionMode: opts.sequentialTool === false ? "parallel" : "sequential",
        async execute(args, run) {
          const entry: { name: string; id: string; start: number; end?: number } = {
            name: "lock",
            id: run.toolCallId,
            start: performance.now(),
          };
          log.push(entry);
          await sleep(args.ms);
          entry.end = performance.now();
          return { content: [{ type: "text", text: "locked" }] };
        },
      });
      ctx.tools.register({
        name: "hang",
        description: "never finishes and ignores abort",
        parameters: Type.Object({}),
        execute: () => new Promise(() => undefined),
      });
      ctx.tools.register({
        name: "fail",
        description: "throws",
        parameters: Type.Object({ message: Type.String() }),
        async execute(args) {
          throw new Error(args.message);
        },
      });
      ctx.tools.register({
        name: "edit",
        description: "expects edits[]",
        parameters: Type.Object({
          path: Type.String(),
          edits: Type.Array(Type.Object({ oldText: Type.String(), newText: Type.String() })),
        }),
        prepareArguments(args) {
          if (args.oldText !== undefined && !args.edits) {
            const { oldText, newText, ...rest } = args;
            return { ...rest, edits: [{ oldText, newText }] };
          }
          return args;
        },
        async execute(args) {
          return { content: [{ type: "text", text: `${args.edits.length} edit(s) to ${args.path}` }] };
        },
      });
    },
  });
}

const results = (messages: readonly AgentMessage[]) =>
  messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
const resultText = (r: ToolResultMessage) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");

/** Every tool call is followed by exactly one result for it, in call order, before the next assistant message. */
function expectPaired(messages: readonly AgentMessage[]) {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== "assistant") continue;
    const ids = m.content.filter((c) => c.type === "toolCall").map((c) => (c as { id: string }).id);
    const following = [];
    for (let j = i + 1; j < messages.length && messages[j]!.role === "toolResult"; j++)
      following.push((messages[j] as ToolResultMessage).toolCallId);
    expect(following).toEqual(ids);
  }
}

describe("agent loop", () => {
  it("streams a text reply and emits the lifecycle events in order", async () => {
    const { agent, events } = createTestAgent({ script: [{ text: "hello there" }] });
    const run = await agent.prompt("hi");
    expect(run.stopReason).toBe("stop");
    expect(textOf(run.messages.at(-1))).toBe("hello there");
    const types = events.map((e) => e.type).filter((t) => t !== "message_update");
    expect(types).toEqual([
      "agent_start",
      "message_start",
      "message_end",
      "turn_start",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
    ]);
    const updates = events.filter((e) => e.type === "message_update");
    expect(updates.length).toBe(3); // "hello there" in chunks of 4
    expect(agent.state.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("runs a tool loop and sends the results back to the model", async () => {
    const log: never[] = [];
    const { agent, scripted } = createTestAgent({
      plugins: [[timingTools(log)]],
      script: [{ toolCalls: [{ name: "wait", arguments: { ms: 1, say: "done waiting" } }] }, { text: "all done" }],
    });
    const run = await agent.prompt("go");
    expect(run.stopReason).toBe("stop");
    expect(scripted.requests).toHaveLength(2);
    const second = scripted.requests[1]!;
    expect(second.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult"]);
    expect(resultText(second.messages[2] as ToolResultMessage)).toBe("done waiting");
    expect(second.tools.map((t) => t.name)).toContain("wait");
  });

  it("runs a batch in parallel and writes results back in call order when the later call finishes first", async () => {
    const log: { name: string; id: string; start: number; end?: number }[] = [];
    const { agent, events } = createTestAgent({
      plugins: [[timingTools(log)]],
      script: [
        {
          toolCalls: [
            { name: "wait", arguments: { ms: 120, say: "slow" } },
            { name: "wait", arguments: { ms: 5, say: "fast" } },
          ],
        },
        { text: "ok" },
      ],
    });
    const run = await agent.prompt("go");
    const rs = results(run.messages);
    expect(rs.map(resultText)).toEqual(["slow", "fast"]);
    const ends = events
      .filter((e) => e.type === "tool_execution_end")
      .map((e) => (e as { result: ToolResultMessage }).result);
    expect(ends.map(resultText)).toEqual(["fast", "slow"]); // finished out of order …
    const [slow, fast] = log;
    expect(fast!.start).toBeLessThan(slow!.end!); // … because they overlapped
    expectPaired(agent.state.messages);
  });

  it("runs the whole batch sequentially when one tool declares executionMode sequential", async () => {
    const log: { name: string; id: string; start: number; end?: number }[] = [];
    const { agent } = createTestAgent({
      plugins: [[timingTools(log)]],
      script: [
        {
          toolCalls: [
            { name: "wait", arguments: { ms: 40, say: "a" } },
            { name: "lock", arguments: { ms: 5 } },
            { name: "wait", arguments: { ms: 5, say: "b" } },
          ],
        },
        { text: "ok" },
      ],
    });
    await agent.prompt("go");
    expect(log.map((l) => l.name)).toEqual(["wait", "lock", "wait"]);
    for (let i = 1; i < log.length; i++) expect(log[i]!.start).toBeGreaterThanOrEqual(log[i - 1]!.end!);
  });

  it("runs sequentially when the loop is configured so", async () => {
    const log: { name: string; id: string; start: number; end?: number }[] = [];
    const { agent } = createTestAgent({
      plugins: [[timingTools(log, { sequentialTool: false })]],
      agent: { toolExecution: "sequential" },
      script: [
        {
          toolCalls: [
            { name: "wait", arguments: { ms: 30, say: "a" } },
            { name: "wait", arguments: { ms: 1, say: "b" } },
          ],
        },
        { text: "ok" },
      ],
    });
    await agent.prompt("go");
    expect(log[1]!.start).toBeGreaterThanOrEqual(log[0]!.end!);
  });

  it("executes none of the calls of a reply truncated by the output limit, and asks for them again", async () => {
    const log: { name: string; id: string; start: number }[] = [];
    const { agent, scripted } = createTestAgent({
      plugins: [[timingTools(log)]],
      script: [
        {
          stopReason: "length",
          toolCalls: [
            { name: "wait", arguments: { ms: 1, say: "x" } },
            { name: "wait", rawArguments: '{"ms": 1, "sa' },
          ],
        },
        { text: "I will retry later" },
      ],
    });
    const run = await agent.prompt("go");
    expect(log).toHaveLength(0);
    const rs = results(run.messages);
    expect(rs).toHaveLength(2);
    for (const r of rs) {
      expect(r.isError).toBe(true);
      expect(resultText(r)).toMatch(/output token limit.*Re-issue the call with complete arguments/);
    }
    expect(scripted.requests[1]!.messages.filter((m) => m.role === "toolResult")).toHaveLength(2);
  });

  it("turns unknown tools, invalid arguments and thrown errors into error results the run survives", async () => {
    const { agent, scripted } = createTestAgent({
      plugins: [[timingTools([])]],
      script: [
        {
          toolCalls: [
            { name: "nope", arguments: {} },
            { name: "wait", arguments: { ms: "soon", say: 3 } },
            { name: "fail", arguments: { message: "disk on fire" } },
            { name: "wait", arguments: { ms: "2", say: "coerced" } },
          ],
        },
        { text: "recovered" },
      ],
    });
    const run = await agent.prompt("go");
    const [unknown, invalid, thrown, coerced] = results(run.messages);
    expect(unknown!.isError).toBe(true);
    expect(resultText(unknown!)).toMatch(/Tool 'nope' does not exist\. Available tools: .*wait/);
    expect(invalid!.isError).toBe(true);
    expect(resultText(invalid!)).toMatch(/Invalid arguments for tool 'wait'.*\/ms.*Received/);
    expect(thrown!.isError).toBe(true);
    expect(resultText(thrown!)).toContain("disk on fire");
    expect(coerced!.isError).toBe(false);
    expect(resultText(coerced!)).toBe("coerced");
    expect(run.stopReason).toBe("stop");
    expect(scripted.requests).toHaveLength(2);
  });

  it("never runs a call whose arguments did not parse, even when every parameter is optional", async () => {
    let ran = false;
    const lenient = definePlugin({
      id: "test-lenient",
      setup: (ctx) =>
        ctx.tools.register({
          name: "ls",
          description: "list",
          parameters: Type.Object({ path: Type.Optional(Type.String()) }),
          execute: async () => {
            ran = true;
            return { content: [] };
          },
        }),
    });
    const { agent } = createTestAgent({
      plugins: [[lenient]],
      script: [{ toolCalls: [{ name: "ls", rawArguments: '{"path": "src' }] }, { text: "ok" }],
    });
    const run = await agent.prompt("go");
    expect(ran).toBe(false);
    const [r] = results(run.messages);
    expect(r!.isError).toBe(true);
    expect(resultText(r!)).toMatch(/not valid JSON .*Re-issue the call/);
  });

  it("lets prepareArguments repair a known shape mistake before validation", async () => {
    const { agent } = createTestAgent({
      plugins: [[timingTools([])]],
      script: [
        { toolCalls: [{ name: "edit", arguments: { path: "a.txt", oldText: "x", newText: "y" } }] },
        { text: "ok" },
      ],
    });
    const run = await agent.prompt("go");
    const [r] = results(run.messages);
    expect(r!.isError).toBe(false);
    expect(resultText(r!)).toBe("1 edit(s) to a.txt");
  });

  it("abort during a tool leaves exactly one result per call and hands queued messages back", async () => {
    const { agent, events } = createTestAgent({
      plugins: [[timingTools([])]],
      script: [
        {
          toolCalls: [
            { name: "wait", arguments: { ms: 1, say: "quick" } },
            { name: "hang", arguments: {} },
          ],
        },
        { text: "never" },
      ],
    });
    const running = agent.prompt("go");
    await until(() => agent.state.pendingToolCalls.length > 0 && events.some((e) => e.type === "tool_execution_end"));
    agent.steer("steer me");
    agent.followUp("then this");
    const queued = agent.abort();
    expect(queued.map((m) => textOf(m))).toEqual(["steer me", "then this"]);
    const run = await running;
    expect(run.stopReason).toBe("aborted");
    const rs = results(agent.state.messages);
    expect(rs.map((r) => r.isError)).toEqual([false, true]);
    expect(resultText(rs[1]!)).toMatch(/Aborted/);
    expectPaired(agent.state.messages);
    expect(agent.state.isRunning).toBe(false);
    expect(agent.state.queued.steering).toHaveLength(0);
  });

  it("abort during streaming ends the reply as aborted, with no orphan tool calls", async () => {
    const { agent } = createTestAgent({ script: [{ text: "a long answer that streams slowly", chunkDelayMs: 30 }] });
    const running = agent.prompt("go");
    await until(() => (agent.state.streaming?.content.length ?? 0) > 0);
    agent.abort();
    const run = await running;
    expect(run.stopReason).toBe("aborted");
    const last = agent.state.messages.at(-1)!;
    expect(last.role).toBe("assistant");
    expect((last as { stopReason: string }).stopReason).toBe("aborted");
  });

  it("injects steering before the next model call, after the current batch's results", async () => {
    const { agent, scripted } = createTestAgent({
      plugins: [[timingTools([])]],
      script: [{ toolCalls: [{ name: "wait", arguments: { ms: 60, say: "slow" } }] }, { text: "ok, changing course" }],
    });
    const running = agent.prompt("go");
    await until(() => agent.state.pendingToolCalls.length > 0);
    agent.steer("actually do something else");
    await running;
    const second = scripted.requests[1]!.messages;
    expect(second.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "user"]);
    expect(textOf(second[3])).toBe("actually do something else");
  });

  it("skips the calls of a sequential batch not yet started once steering arrives (#12.7)", async () => {
    const log: { name: string; id: string; start: number; end?: number }[] = [];
    const { agent, scripted, events } = createTestAgent({
      plugins: [[timingTools(log)]],
      agent: { toolExecution: "sequential" },
      script: [
        {
          toolCalls: [
            { name: "wait", arguments: { ms: 80, say: "a" } },
            { name: "wait", arguments: { ms: 5, say: "b" } },
            { name: "lock", arguments: { ms: 5 } },
          ],
        },
        { text: "ok, stopping" },
      ],
    });
    const running = agent.prompt("go");
    await until(() => agent.state.pendingToolCalls.length > 0);
    agent.steer("stop, wrong file");
    const run = await running;
    expect(log.map((l) => l.name)).toEqual(["wait"]); // only the call that had started ran
    const got = results(run.messages);
    expect(got.map(resultText)).toEqual([
      "a",
      "Skipped: the user sent a new message.",
      "Skipped: the user sent a new message.",
    ]);
    expect(got.map((r) => r.isError)).toEqual([false, true, true]);
    expectPaired(agent.state.messages);
    const second = scripted.requests[1]!.messages;
    expect(second.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "toolResult", "toolResult", "user"]);
    expect(textOf(second.at(-1))).toBe("stop, wrong file");
    const ends = events
      .filter((e) => e.type === "tool_execution_end")
      .map((e) => (e as { toolCallId: string }).toolCallId);
    expect(ends).toEqual(got.map((r) => r.toolCallId));
  });

  it("skips a parallel batch when steering arrived before its calls started (#12.7)", async () => {
    const log: { name: string; id: string; start: number; end?: number }[] = [];
    const { agent, scripted } = createTestAgent({
      plugins: [[timingTools(log, { sequentialTool: false })]],
      script: [
        {
          chunkDelayMs: 20,
          text: "I will edit the file now",
          toolCalls: [
            { name: "wait", arguments: { ms: 5, say: "a" } },
            { name: "wait", arguments: { ms: 5, say: "b" } },
          ],
        },
        { text: "ok" },
      ],
    });
    const running = agent.prompt("go");
    await until(() => agent.state.streaming !== undefined);
    agent.steer("stop, wrong file");
    const run = await running;
    expect(log).toEqual([]);
    expect(results(run.messages).map(resultText)).toEqual([
      "Skipped: the user sent a new message.",
      "Skipped: the user sent a new message.",
    ]);
    expect(textOf(scripted.requests[1]!.messages.at(-1))).toBe("stop, wrong file");
  });

  it("keeps going when steering arrives while the model is answering without tools", async () => {
    const { agent, scripted } = createTestAgent({
      script: [{ text: "first answer", chunkDelayMs: 10 }, { text: "second answer" }],
    });
    const running = agent.prompt("go");
    await until(() => agent.state.streaming !== undefined);
    agent.steer("one more thing");
    const run = await running;
    expect(scripted.requests).toHaveLength(2);
    expect(textOf(scripted.requests[1]!.messages.at(-1) as AgentMessage)).toBe("one more thing");
    expect(textOf(run.messages.at(-1))).toBe("second answer");
  });

  it("delivers a follow-up only when the run would otherwise stop", async () => {
    const { agent, scripted } = createTestAgent({
      plugins: [[timingTools([])]],
      script: [
        { toolCalls: [{ name: "wait", arguments: { ms: 40, say: "x" } }] },
        { text: "done with the task" },
        { text: "and the follow-up" },
      ],
    });
    const running = agent.prompt("go");
    await until(() => agent.state.pendingToolCalls.length > 0);
    agent.followUp("afterwards, summarise");
    await running;
    expect(scripted.requests).toHaveLength(3);
    expect(scripted.requests[1]!.messages.some((m) => textOf(m as AgentMessage) === "afterwards, summarise")).toBe(
      false,
    );
    expect(textOf(scripted.requests[2]!.messages.at(-1) as AgentMessage)).toBe("afterwards, summarise");
  });

  it("ends the turn with stopReason error when the provider fails, and the run with it", async () => {
    const { agent } = createTestAgent({ script: [{ error: "529 overloaded" }] });
    const run = await agent.prompt("go");
    expect(run.stopReason).toBe("error");
    expect(run.error).toBe("529 overloaded");
  });

  it("reports a script that runs out as a clear error", async () => {
    const { agent } = createTestAgent({ script: [{ toolCalls: [{ name: "nope", arguments: {} }] }] });
    const run = await agent.prompt("go");
    expect(run.stopReason).toBe("error");
    expect(run.error).toMatch(/script exhausted: request 2 asked for a reply, but .* has 1 reply/);
    expectPaired(agent.state.messages);
  });

  it("rejects a second prompt while running, with a hint to steer", async () => {
    const { agent } = createTestAgent({ script: [{ text: "slow", delayMs: 50 }] });
    const first = agent.prompt("one");
    await expect(agent.prompt("two")).rejects.toMatchObject({ code: "AGENT_BUSY" });
    await first;
  });

  it("drops custom messages from the request unless a before_request tap converts them", async () => {
    const converter = definePlugin({
      id: "test-converter",
      setup(ctx) {
        ctx.tap("before_request", (req) => ({
          ...req,
          messages: req.messages.map((m) =>
            m.role === "custom" && m.customType === "note"
              ? { role: "user" as const, content: `[note] ${m.content}`, timestamp: m.timestamp }
              : m,
          ),
        }));
      },
    });
    const custom = (customType: string, content: string): AgentMessage => ({
      role: "custom",
      customType,
      content,
      display: true,
      timestamp: 1,
    });
    const { agent, scripted } = createTestAgent({ plugins: [[converter]], script: [{ text: "ok" }] });
    await agent.prompt([
      custom("secret", "never send"),
      custom("note", "send me"),
      { role: "user", content: "hi", timestamp: 2 },
    ]);
    const sent = scripted.requests[0]!.messages;
    expect(sent.map((m) => textOf(m as AgentMessage))).toEqual(["[note] send me", "hi"]);
    expect(agent.state.messages.filter((m) => m.role === "custom")).toHaveLength(2); // history keeps them
  });

  it("continues a 'pause' reply without new input", async () => {
    const { agent, scripted } = createTestAgent({
      script: [{ text: "working…", stopReason: "pause" }, { text: "finished" }],
    });
    const run = await agent.prompt("go");
    expect(scripted.requests).toHaveLength(2);
    expect(textOf(run.messages.at(-1))).toBe("finished");
  });

  it("freezes history so taps cannot mutate messages in place", async () => {
    let mutated: unknown;
    const mutator = definePlugin({
      id: "test-mutator",
      setup(ctx) {
        ctx.tap("before_request", (req) => {
          try {
            (req.messages as AgentMessage[]).push({ role: "user", content: "sneaky", timestamp: 0 });
          } catch (e) {
            mutated = e;
          }
          return undefined;
        });
      },
    });
    const { agent, scripted } = createTestAgent({ plugins: [[mutator]], script: [{ text: "ok" }] });
    await agent.prompt("go");
    expect(mutated).toBeInstanceOf(TypeError);
    expect(scripted.requests[0]!.messages).toHaveLength(1);
  });

  it("a run ending in error still answers every tool call", async () => {
    const { agent } = createTestAgent({ script: [{ toolCalls: [{ name: "a", arguments: {} }], error: "stream cut" }] });
    const run = await agent.prompt("go");
    expect(run.stopReason).toBe("error");
    expectPaired(agent.state.messages);
  });

  it("sends the request the provider sees without custom messages and with all registered tools", async () => {
    const { agent, scripted } = createTestAgent({
      plugins: [[timingTools([])]],
      script: [(req: ProviderRequest) => ({ text: `saw ${req.tools.length} tools` })],
    });
    const run = await agent.prompt([
      { role: "custom", customType: "marker", content: "for the UI only", display: true, timestamp: 1 },
      { role: "user", content: "go", timestamp: 2 },
    ]);
    expect(textOf(run.messages.at(-1))).toBe("saw 5 tools");
    const request = scripted.requests[0]!;
    expect(request.messages.map((m) => [m.role, textOf(m)])).toEqual([["user", "go"]]);
    expect(request.tools.map((t) => t.name).sort()).toEqual(["edit", "fail", "hang", "lock", "wait"]);
  });
});
