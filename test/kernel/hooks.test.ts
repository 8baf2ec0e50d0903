import { describe, expect, it } from "vitest";
import {
  CoilError,
  ERROR_CONTEXT_OVERFLOW,
  Type,
  definePlugin,
  textOf,
  type AgentMessage,
  type PluginContext,
  type ToolResultMessage,
} from "../../api/index.js";
import { createTestAgent } from "../support/harness.js";

const echoTool = definePlugin({
  id: "test-echo",
  setup(ctx) {
    ctx.tools.register({
      name: "echo",
      description: "echo",
      parameters: Type.Object({ text: Type.String() }),
      async execute(args) {
        return { content: [{ type: "text", text: args.text }] };
      },
    });
  },
});

const plugin = (id: string, setup: (ctx: PluginContext) => void) => definePlugin({ id, setup });
const results = (messages: readonly AgentMessage[]) =>
  messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
const echo = (text: string) => ({ toolCalls: [{ name: "echo", arguments: { text } }] });

describe("hook ordering", () => {
  it("runs taps by named stage, ties in install order", async () => {
    const order: string[] = [];
    const tapAt = (id: string, stage?: "GUARD" | "EARLY" | "LATE" | "FALLBACK") =>
      plugin(id, (ctx) => ctx.tap("turn_end", () => void order.push(id), stage ? { stage } : {}));
    const { agent } = createTestAgent({
      plugins: [
        [tapAt("late", "LATE")],
        [tapAt("default-1")],
        [tapAt("guard", "GUARD")],
        [tapAt("default-2")],
        [tapAt("fallback", "FALLBACK")],
        [tapAt("early", "EARLY")],
      ],
      script: [{ text: "ok" }],
    });
    await agent.prompt("go");
    expect(order).toEqual(["guard", "early", "default-1", "default-2", "late", "fallback"]);
  });

  it("lets a tap filter tool_call by tool name", async () => {
    const seen: string[] = [];
    const gate = plugin("test-gate", (ctx) =>
      ctx.tap("tool_call", (c) => void seen.push(c.call.name), { tools: ["echo"] }),
    );
    const { agent } = createTestAgent({
      plugins: [[echoTool], [gate]],
      script: [
        {
          toolCalls: [
            { name: "echo", arguments: { text: "a" } },
            { name: "missing", arguments: {} },
          ],
        },
        { text: "ok" },
      ],
    });
    await agent.prompt("go");
    expect(seen).toEqual(["echo"]);
  });
});

describe("before_request", () => {
  it("is a waterfall: each tap sees the previous tap's request", async () => {
    const a = plugin("sys-a", (ctx) =>
      ctx.tap("before_request", (req) => ({ ...req, system: [...req.system, { id: "a", text: "A" }] })),
    );
    const b = plugin("sys-b", (ctx) =>
      ctx.tap("before_request", (req) => ({
        ...req,
        system: [...req.system, { id: "b", text: `B after ${req.system.map((s) => s.id).join()}` }],
      })),
    );
    const { agent, scripted } = createTestAgent({ plugins: [[a], [b]], script: [{ text: "ok" }] });
    await agent.prompt("go");
    expect(scripted.requests[0]!.system.map((s) => s.text)).toEqual(["A", "B after a"]);
  });

  it("isolates a throwing tap: its change is dropped, later taps still run, the failure names the plugin", async () => {
    const bad = plugin("bad-sys", (ctx) =>
      ctx.tap("before_request", () => {
        throw new Error("template missing");
      }),
    );
    const good = plugin("good-sys", (ctx) =>
      ctx.tap("before_request", (req) => ({ ...req, system: [{ id: "x", text: "kept" }] })),
    );
    const { agent, scripted, diagnostics } = createTestAgent({ plugins: [[bad], [good]], script: [{ text: "ok" }] });
    const run = await agent.prompt("go");
    expect(run.stopReason).toBe("stop");
    expect(scripted.requests[0]!.system.map((s) => s.text)).toEqual(["kept"]);
    expect(diagnostics()[0]).toMatchObject({ plugin: "bad-sys", code: "PLUGIN_HOOK_FAILED", level: "error" });
    expect(diagnostics()[0]!.message).toContain("[plugin bad-sys] before_request: PLUGIN_HOOK_FAILED template missing");
  });
});

describe("tool_call", () => {
  it("a block becomes an error result the model sees, naming the gate", async () => {
    const gate = plugin("gate-deny", (ctx) =>
      ctx.tap("tool_call", (c) => (c.args.text === "rm" ? { block: true, reason: "denied by rule" } : undefined)),
    );
    const { agent, scripted } = createTestAgent({
      plugins: [[echoTool], [gate]],
      script: [echo("rm"), { text: "understood" }],
    });
    const run = await agent.prompt("go");
    const [r] = results(run.messages);
    expect(r!.isError).toBe(true);
    expect(textOf(r)).toBe("Blocked: denied by rule (gate-deny)");
    expect(scripted.requests).toHaveLength(2);
  });

  it("fails closed: a throwing gate blocks the call, naming the plugin", async () => {
    let executed = false;
    const tool = plugin("t", (ctx) =>
      ctx.tools.register({
        name: "danger",
        description: "d",
        parameters: Type.Object({}),
        execute: async () => {
          executed = true;
          return { content: [] };
        },
      }),
    );
    const gate = plugin("gate-broken", (ctx) =>
      ctx.tap("tool_call", () => {
        throw new Error("rules file unreadable");
      }),
    );
    const { agent, diagnostics } = createTestAgent({
      plugins: [[tool], [gate]],
      script: [{ toolCalls: [{ name: "danger", arguments: {} }] }, { text: "ok" }],
    });
    const run = await agent.prompt("go");
    expect(executed).toBe(false);
    const [r] = results(run.messages);
    expect(r!.isError).toBe(true);
    expect(textOf(r)).toContain("[plugin gate-broken] tool_call");
    expect(textOf(r)).toContain("rules file unreadable");
    expect(diagnostics()[0]).toMatchObject({ plugin: "gate-broken" });
  });

  it("does not let { block: false } skip the later gates", async () => {
    const lax = plugin("gate-says-no-block", (ctx) =>
      ctx.tap("tool_call", () => ({ block: false }) as never, { stage: "EARLY" }),
    );
    const strict = plugin("gate-strict", (ctx) =>
      ctx.tap("tool_call", () => ({ block: true, reason: "strict says no" })),
    );
    const { agent } = createTestAgent({ plugins: [[echoTool], [lax], [strict]], script: [echo("hi"), { text: "ok" }] });
    const run = await agent.prompt("go");
    expect(textOf(results(run.messages)[0])).toBe("Blocked: strict says no (gate-strict)");
  });

  it("rejects a tools filter on a hook that has no tool call", () => {
    expect(() =>
      createTestAgent({
        plugins: [[plugin("bad-filter", (ctx) => ctx.tap("should_stop", () => undefined, { tools: ["echo"] }))]],
      }),
    ).toThrow(/the 'tools' filter only applies to tool_call and tool_result, not should_stop/);
  });

  it("runs the call when every gate returns undefined", async () => {
    const quiet = plugin("gate-quiet", (ctx) => ctx.tap("tool_call", () => undefined));
    const quietStop = plugin("guard-quiet", (ctx) => ctx.tap("should_stop", () => undefined));
    const { agent, diagnostics } = createTestAgent({
      plugins: [[echoTool], [quiet], [quietStop]],
      script: [echo("hi"), { text: "ok" }],
    });
    const run = await agent.prompt("go");
    expect(results(run.messages)[0]).toMatchObject({ isError: false, content: [{ type: "text", text: "hi" }] });
    expect(run.stopReason).toBe("stop");
    expect(run.reason).toBeUndefined();
    expect(diagnostics()).toHaveLength(0);
  });

  it("rewrites run first, every one of them, then the gates: a GUARD gate judges a LATE rewrite's arguments", async () => {
    const seen: string[] = [];
    const rewrite = plugin("late-rewrite", (ctx) =>
      ctx.tap("tool_call", (c) => (c.args.text === "draft" ? { args: { text: "final" } } : undefined), {
        stage: "LATE",
        step: "rewrite",
      }),
    );
    const guard = plugin("guard-gate", (ctx) =>
      ctx.tap("tool_call", (c) => void seen.push(`gate:${c.args.text} by ${c.rewrittenBy}`), { stage: "GUARD" }),
    );
    const post = plugin("post-seen", (ctx) =>
      ctx.tap("tool_result", (_r, c) => void seen.push(`result:${c.args.text}`)),
    );
    const { agent, events } = createTestAgent({
      plugins: [[echoTool], [guard], [rewrite], [post]],
      script: [echo("draft"), { text: "ok" }],
    });
    const run = await agent.prompt("go");
    const [result] = results(run.messages);
    expect(result).toMatchObject({ isError: false, content: [{ type: "text", text: "final" }] });
    expect(result!.rewritten).toEqual({ args: { text: "final" }, by: ["late-rewrite"] });
    expect(seen).toEqual(["gate:final by late-rewrite", "result:final"]);
    // the model's call stays as it was sent; the event says what ran and who changed it
    const call = run.messages.find((m) => m.role === "assistant")!.content.find((c) => c.type === "toolCall");
    expect(call).toMatchObject({ arguments: { text: "draft" } });
    expect(events.find((e) => e.type === "tool_execution_start")).toMatchObject({
      args: { text: "final" },
      rewrittenBy: ["late-rewrite"],
    });
  });

  it("each rewrite sees the one before (a waterfall); an unchanged answer is not counted as a rewrite", async () => {
    const step = (id: string, from: string, to: string) =>
      plugin(id, (ctx) =>
        ctx.tap("tool_call", (c) => (c.args.text === from ? { args: { text: to } } : undefined), { step: "rewrite" }),
      );
    const same = plugin("same-args", (ctx) =>
      ctx.tap("tool_call", (c) => ({ args: { ...c.args } }), { step: "rewrite" }),
    );
    const { agent } = createTestAgent({
      plugins: [[echoTool], [step("first", "a", "b")], [same], [step("second", "b", "c")]],
      script: [echo("a"), { text: "ok" }],
    });
    const [result] = results((await agent.prompt("go")).messages);
    expect(textOf(result)).toBe("c");
    expect(result!.rewritten).toEqual({ args: { text: "c" }, by: ["first", "second"] });
  });

  it("an invalid rewrite is an error result naming the plugin; the tool does not run", async () => {
    let ran = 0;
    const tool = plugin("t", (ctx) =>
      ctx.tools.register({
        name: "count",
        description: "c",
        parameters: Type.Object({ n: Type.Integer() }),
        execute: async () => {
          ran++;
          return { content: [] };
        },
      }),
    );
    const bad = plugin("bad-rewrite", (ctx) =>
      ctx.tap("tool_call", () => ({ args: { n: "many" } }), { step: "rewrite" }),
    );
    const { agent } = createTestAgent({
      plugins: [[tool], [bad]],
      script: [{ toolCalls: [{ name: "count", arguments: { n: 1 } }] }, { text: "ok" }],
    });
    const run = await agent.prompt("go");
    const [r] = results(run.messages);
    expect(ran).toBe(0);
    expect(r!.isError).toBe(true);
    expect(textOf(r)).toMatch(
      /^Blocked: bad-rewrite replaced the arguments with invalid ones: Invalid arguments for tool 'count': \/n /,
    );
  });

  it("a gate that returns new arguments blocks the call, naming the plugin: gates judge, they do not rewrite", async () => {
    const old = plugin("old-style", (ctx) => ctx.tap("tool_call", () => ({ args: { text: "other" } }) as never));
    const { agent } = createTestAgent({ plugins: [[echoTool], [old]], script: [echo("hi"), { text: "ok" }] });
    const [r] = results((await agent.prompt("go")).messages);
    expect(r!.isError).toBe(true);
    expect(textOf(r)).toMatch(/^Blocked: old-style returned new arguments from a tool_call gate/);
    expect(textOf(r)).toContain('step: "rewrite"');
  });

  it("a rewrite that throws fails closed: the call is blocked naming the plugin, later rewrites do not run", async () => {
    const later: string[] = [];
    const broken = plugin("broken-rewrite", (ctx) =>
      ctx.tap(
        "tool_call",
        () => {
          throw new Error("boom");
        },
        { step: "rewrite", stage: "EARLY" },
      ),
    );
    const after = plugin("after", (ctx) => ctx.tap("tool_call", () => void later.push("ran"), { step: "rewrite" }));
    const { agent, diagnostics } = createTestAgent({
      plugins: [[echoTool], [broken], [after]],
      script: [echo("hi"), { text: "ok" }],
    });
    const [r] = results((await agent.prompt("go")).messages);
    expect(textOf(r)).toMatch(/^Blocked: blocked because the gate failed: \[plugin broken-rewrite\] tool_call: .*boom/);
    expect(later).toEqual([]);
    expect(diagnostics().map((d) => d.plugin)).toContain("broken-rewrite");
  });

  it("rejects a step on any hook but tool_call, and an unknown step", () => {
    expect(() =>
      createTestAgent({
        plugins: [[plugin("bad-step", (ctx) => ctx.tap("turn_end", () => undefined, { step: "rewrite" }))]],
      }),
    ).toThrow(/the 'step' option is "rewrite" or "gate", for tool_call only/);
  });

  it("treats null and false from a gate as no objection", async () => {
    const lax = plugin("gate-lax", (ctx) => ctx.tap("tool_call", () => null as never));
    const lax2 = plugin("gate-lax2", (ctx) => ctx.tap("tool_call", () => false as never));
    const { agent } = createTestAgent({ plugins: [[echoTool], [lax], [lax2]], script: [echo("hi"), { text: "ok" }] });
    const run = await agent.prompt("go");
    expect(results(run.messages)[0]!.isError).toBe(false);
  });
});

describe("tool_result", () => {
  it("is a waterfall that may replace content and flip isError", async () => {
    const flip = plugin("post", (ctx) =>
      ctx.tap("tool_result", (r) => ({
        ...r,
        isError: true,
        content: [{ type: "text", text: `checked: ${textOf(r)}` }],
      })),
    );
    const { agent } = createTestAgent({ plugins: [[echoTool], [flip]], script: [echo("out"), { text: "ok" }] });
    const run = await agent.prompt("go");
    expect(results(run.messages)[0]).toMatchObject({
      isError: true,
      content: [{ type: "text", text: "checked: out" }],
    });
  });

  it("isolates a throwing tap: the result stays as it was", async () => {
    const bad = plugin("post-bad", (ctx) =>
      ctx.tap("tool_result", () => {
        throw new Error("oops");
      }),
    );
    const { agent, diagnostics } = createTestAgent({
      plugins: [[echoTool], [bad]],
      script: [echo("out"), { text: "ok" }],
    });
    const run = await agent.prompt("go");
    expect(results(run.messages)[0]).toMatchObject({ isError: false, content: [{ type: "text", text: "out" }] });
    expect(diagnostics()[0]).toMatchObject({ plugin: "post-bad" });
  });
});

describe("turn_end", () => {
  it("sees the written-back turn; a throwing tap is isolated", async () => {
    const seen: number[] = [];
    const bad = plugin("turn-bad", (ctx) =>
      ctx.tap("turn_end", () => {
        throw new Error("x");
      }),
    );
    const good = plugin("turn-good", (ctx) => ctx.tap("turn_end", (t) => void seen.push(t.toolResults.length)));
    const { agent } = createTestAgent({ plugins: [[echoTool], [bad], [good]], script: [echo("a"), { text: "ok" }] });
    const run = await agent.prompt("go");
    expect(run.stopReason).toBe("stop");
    expect(seen).toEqual([1, 0]);
  });

  it("a fatal plugin error ends the run loudly, and history stays paired", async () => {
    const store = plugin("session-broken", (ctx) =>
      ctx.tap("turn_end", () => {
        throw ctx.error("SESSION_WRITE_FAILED", "cannot append to /x/s.jsonl: ENOSPC", { fatal: true });
      }),
    );
    const { agent, diagnostics } = createTestAgent({
      plugins: [[echoTool], [store]],
      script: [echo("a"), { text: "never" }],
    });
    const run = await agent.prompt("go");
    expect(run.stopReason).toBe("error");
    expect(run.error).toContain("[plugin session-broken] turn_end: SESSION_WRITE_FAILED cannot append");
    expect(diagnostics().filter((d) => d.code === "SESSION_WRITE_FAILED")).toHaveLength(1); // reported once
  });
});

describe("should_stop", () => {
  it("runs after the write-back and can force a stop with a reason", async () => {
    let sawResults = -1;
    const guard = plugin("guard-one-turn", (ctx) =>
      ctx.tap(
        "should_stop",
        (q) => {
          sawResults = q.turn.messages.filter((m) => m.role === "toolResult").length;
          return { stop: true, reason: "one turn is enough" };
        },
        { stage: "GUARD" },
      ),
    );
    const { agent, scripted } = createTestAgent({
      plugins: [[echoTool], [guard]],
      script: [echo("a"), { text: "never" }],
    });
    const run = await agent.prompt("go");
    expect(sawResults).toBe(1);
    expect(run.reason).toBe("one turn is enough");
    expect(scripted.requests).toHaveLength(1);
    expect(agent.state.messages.at(-1)!.role).toBe("toolResult");
  });

  it("can continue a run that would stop, with follow-up messages", async () => {
    let nudged = false;
    const more = plugin("keep-going", (ctx) =>
      ctx.tap("should_stop", () => {
        if (nudged) return undefined;
        nudged = true;
        return { stop: false, followUp: [{ role: "user", content: "check your work", timestamp: 0 }] };
      }),
    );
    const { agent, scripted } = createTestAgent({ plugins: [[more]], script: [{ text: "done" }, { text: "checked" }] });
    const run = await agent.prompt("go");
    expect(scripted.requests).toHaveLength(2);
    expect(textOf(scripted.requests[1]!.messages.at(-1) as AgentMessage)).toBe("check your work");
    expect(textOf(run.messages.at(-1))).toBe("checked");
  });

  it("treats { stop: false } without follow-up messages as no opinion, so the run can end", async () => {
    const pushy = plugin("keep-going-empty", (ctx) => ctx.tap("should_stop", () => ({ stop: false, followUp: [] })));
    const { agent, scripted } = createTestAgent({ plugins: [[pushy]], script: [{ text: "done" }] });
    const run = await agent.prompt("go");
    expect(run.stopReason).toBe("stop");
    expect(scripted.requests).toHaveLength(1);
  });

  it("fails closed: a throwing stop rule stops the run, naming the plugin", async () => {
    const bad = plugin("guard-bad", (ctx) =>
      ctx.tap("should_stop", () => {
        throw new Error("budget file corrupt");
      }),
    );
    const { agent, scripted } = createTestAgent({
      plugins: [[echoTool], [bad]],
      script: [echo("a"), { text: "never" }],
    });
    const run = await agent.prompt("go");
    expect(scripted.requests).toHaveLength(1);
    expect(run.reason).toContain("[plugin guard-bad] should_stop");
  });
});

describe("compact", () => {
  const summarise = (id: string, calls: string[]) =>
    plugin(id, (ctx) =>
      ctx.tap("compact", (req) => {
        calls.push(`${id}:${req.reason}`);
        return { messages: [{ role: "user", content: `summary of ${req.messages.length} messages`, timestamp: 0 }] };
      }),
    );

  it("runs when the context estimate passes window − reserve after a turn, and the loop goes on", async () => {
    const calls: string[] = [];
    const { agent, scripted, events } = createTestAgent({
      plugins: [[echoTool], [summarise("compact-test", calls)]],
      agent: {
        model: { id: "tiny", provider: "scripted", contextWindow: 10_000, maxOutput: 1000 },
        reserveTokens: 2000,
      },
      script: [{ ...echo("a"), usage: { input: 8500, output: 100 } }, { text: "after compaction" }],
    });
    const run = await agent.prompt("go ".repeat(40)); // longer than the summary that replaces it
    expect(calls).toEqual(["compact-test:threshold"]);
    expect(scripted.requests[1]!.messages.map((m) => textOf(m as AgentMessage))).toEqual(["summary of 3 messages"]);
    expect(events.find((e) => e.type === "compaction")).toMatchObject({
      reason: "threshold",
      by: "compact-test",
      tokensBefore: 8600 + 1,
    });
    expect(run.stopReason).toBe("stop");
    // the usage that triggered it predates the compaction and does not trigger it again
    expect(calls).toHaveLength(1);
  });

  it("compacts and retries once on a context-overflow error", async () => {
    const calls: string[] = [];
    const { agent, scripted } = createTestAgent({
      plugins: [[summarise("compact-test", calls)]],
      script: [{ error: "prompt is too long", errorCode: ERROR_CONTEXT_OVERFLOW }, { text: "fits now" }],
    });
    const run = await agent.prompt("go ".repeat(40));
    expect(calls).toEqual(["compact-test:overflow"]);
    expect(scripted.requests).toHaveLength(2);
    expect(textOf(run.messages.at(-1))).toBe("fits now");
    expect(agent.state.messages.some((m) => m.role === "assistant" && m.stopReason === "error")).toBe(false);
  });

  it("gives up after one retry: a second overflow ends the run with the error", async () => {
    const calls: string[] = [];
    const { agent } = createTestAgent({
      plugins: [[summarise("compact-test", calls)]],
      script: [
        { error: "too long", errorCode: ERROR_CONTEXT_OVERFLOW },
        { error: "still too long", errorCode: ERROR_CONTEXT_OVERFLOW },
      ],
    });
    const run = await agent.prompt("go ".repeat(40));
    expect(calls).toHaveLength(1);
    expect(run).toMatchObject({ stopReason: "error", error: "still too long" });
  });

  it("isolates a throwing strategy: the next one tries", async () => {
    const calls: string[] = [];
    const broken = plugin("compact-broken", (ctx) =>
      ctx.tap("compact", () => {
        throw new Error("summariser down");
      }),
    );
    const fallback = plugin("compact-fallback", (ctx) => {
      ctx.tap(
        "compact",
        (req) => {
          calls.push(req.reason);
          return { messages: req.messages.slice(-1) };
        },
        { stage: "FALLBACK" },
      );
    });
    const { agent, diagnostics } = createTestAgent({ plugins: [[fallback], [broken]], script: [{ text: "hello" }] });
    await agent.prompt("go");
    await agent.compact("keep it short");
    expect(calls).toEqual(["manual"]);
    expect(agent.state.messages).toHaveLength(1);
    expect(diagnostics()[0]).toMatchObject({ plugin: "compact-broken" });
  });

  it("a manual compaction that no strategy handles throws NO_COMPACTION listing the taps", async () => {
    const never = plugin("compact-never", (ctx) => ctx.tap("compact", () => undefined));
    const { agent } = createTestAgent({ plugins: [[never]], script: [{ text: "x" }] });
    await agent.prompt("go");
    await expect(agent.compact()).rejects.toMatchObject({
      code: "NO_COMPACTION",
      message: expect.stringContaining("compact-never"),
    });
  });
});

describe("failure policy table", () => {
  it("fails closed on tool_call and should_stop, and isolates every other hook", async () => {
    const { FAIL_CLOSED, HOOK_NAMES } = await import("../../kernel/hooks.js");
    expect([...HOOK_NAMES].sort()).toEqual([
      "before_request",
      "compact",
      "should_stop",
      "tool_call",
      "tool_result",
      "turn_end",
    ]);
    expect(Object.keys(FAIL_CLOSED).sort()).toEqual(["should_stop", "tool_call"]);
    expect(new CoilError("X", "y", { plugin: "p", hook: "tool_call" }).message).toBe("[plugin p] tool_call: X y");
  });
});
