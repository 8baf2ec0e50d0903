import { getEventListeners } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  Agent,
  Type,
  definePlugin,
  estimateMessageTokens,
  textOf,
  type AgentMessage,
  type AssistantMessage,
  type ProviderRequest,
  type ToolResultMessage,
} from "../../../api/index.js";
import { testHost } from "../../support/host.js";
import compaction, { parseSummary, planCut, summaryMessage } from "../../../plugins/compaction-summary/index.js";
import type { ScriptedService } from "../../../plugins/provider-scripted/index.js";
import type { ScriptedReply } from "../../../plugins/provider-scripted/script.js";
import openai from "../../../plugins/provider-openai/index.js";
import { SessionStore } from "../../../plugins/session-jsonl/index.js";
import { chat, startMockOpenAI } from "../../support/mock-openai.js";
import { createTestAgent } from "../../support/harness.js";
import { createTestKit } from "../../../sdk/testing/index.js";
import { startRig, tempDirs } from "../../support/session-jsonl.js";
import { historyProblems } from "../../support/validate-history.js";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** Seeded PRNG (mulberry32): the same seed gives the same shapes on every run. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const isSummariser = (r: ProviderRequest) => r.system[0]?.id === "compaction-summary";
const words = (rand: () => number, max: number) =>
  "lorem ipsum dolor sit amet ".repeat(1 + Math.floor(rand() * max)).trim();
let ts = 1;
const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: ts++ });
const assistant = (
  content: AssistantMessage["content"],
  stopReason: AssistantMessage["stopReason"] = "stop",
): AssistantMessage => ({
  role: "assistant",
  content,
  provider: "scripted",
  model: "scripted",
  usage: {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  },
  stopReason,
  timestamp: ts++,
});
const result = (id: string, name: string, text: string, isError = false): ToolResultMessage => ({
  role: "toolResult",
  toolCallId: id,
  toolName: name,
  content: [{ type: "text", text }],
  isError,
  timestamp: ts++,
});

/** A random but well-formed history: turns of user → (assistant with calls → results)* → answer, with steering, custom messages, errors. */
function randomHistory(rand: () => number): AgentMessage[] {
  const out: AgentMessage[] = [];
  let call = 0;
  if (rand() < 0.3)
    out.push(summaryMessage({ summary: "## Goal\nearlier work", readFiles: ["old.ts"], modifiedFiles: [] }));
  const turns = 1 + Math.floor(rand() * 6);
  for (let t = 0; t < turns; t++) {
    out.push(user(words(rand, 80)));
    const loops = Math.floor(rand() * 7);
    for (let l = 0; l < loops; l++) {
      const calls = 1 + Math.floor(rand() * 3);
      const content: AssistantMessage["content"] = [];
      if (rand() < 0.4) content.push({ type: "thinking", thinking: words(rand, 20), signature: "sig" });
      if (rand() < 0.5) content.push({ type: "text", text: words(rand, 10) });
      const ids: [string, string][] = [];
      for (let c = 0; c < calls; c++) {
        const name = ["read", "edit", "bash", "grep"][Math.floor(rand() * 4)]!;
        const id = `call_${++call}`;
        ids.push([id, name]);
        content.push({
          type: "toolCall",
          id,
          name,
          arguments: { path: `src/f${Math.floor(rand() * 20)}.ts`, command: "ls" },
        });
      }
      out.push(assistant(content, "toolUse"));
      for (const [id, name] of ids) out.push(result(id, name, words(rand, 200), rand() < 0.1));
      if (rand() < 0.15)
        out.push({ role: "custom", customType: "note", content: "a note", display: true, timestamp: ts++ });
      if (rand() < 0.15) out.push(user(`steer: ${words(rand, 5)}`));
    }
    if (t < turns - 1 || rand() < 0.7) out.push(assistant([{ type: "text", text: words(rand, 40) }]));
  }
  return out;
}

function summariserReply(text = "## Goal\nkeep going"): (r: ProviderRequest) => ScriptedReply {
  return (r) => {
    if (!isSummariser(r)) throw new Error("expected a summariser request");
    return { text };
  };
}

describe("compaction-summary: where it cuts", () => {
  it("never separates a tool call from its result, over 400 random session shapes", async () => {
    const rand = prng(20240611);
    let compacted = 0;
    let split = 0;
    for (let i = 0; i < 400; i++) {
      const history = randomHistory(rand);
      expect(historyProblems(history)).toEqual([]);
      const contextWindow = 2_000 + Math.floor(rand() * 40_000);
      const keepRecentTokens = Math.floor(rand() * 6_000);
      const { agent, scripted } = createTestAgent({
        plugins: [[compaction, { keepRecentTokens }]],
        agent: { model: { id: "scripted", provider: "scripted", contextWindow, maxOutput: 4_000 }, messages: history },
      });
      scripted.push(summariserReply(), summariserReply("## Current turn\nstill working"));
      const before = agent.state.messages;
      const done = await agent.compact().catch((e: Error) => e);
      const after = agent.state.messages;
      if (done instanceof Error) {
        expect(done.message).toContain("NO_COMPACTION");
        expect(after).toEqual(before);
        continue;
      }
      compacted++;
      expect(historyProblems(after), `shape ${i}`).toEqual([]);
      const parts = parseSummary(after[0]);
      expect(parts, `shape ${i}: the first message is the summary`).toBeDefined();
      // What is kept is an untouched suffix of the old context.
      const kept = after.slice(1);
      expect(kept.length).toBeGreaterThan(0);
      expect(before.slice(before.length - kept.length)).toEqual(kept);
      expect(kept.length).toBeLessThan(before.length - (parseSummary(before[0]) ? 1 : 0));
      // Every summariser request is a single, valid user message with no tools.
      for (const r of scripted.requests) {
        expect(r.tools).toEqual([]);
        expect(historyProblems(r.messages)).toEqual([]);
      }
      if ((done!.details as { splitTurn: boolean }).splitTurn) split++;
    }
    expect(compacted).toBeGreaterThan(250);
    expect(split).toBeGreaterThan(20);
  });

  it("splits an oversized turn: the early part of the turn gets its own summary", () => {
    const history: AgentMessage[] = [user("do the big task")];
    for (let i = 0; i < 30; i++) {
      history.push(
        assistant([{ type: "toolCall", id: `c${i}`, name: "read", arguments: { path: `f${i}.ts` } }], "toolUse"),
      );
      history.push(result(`c${i}`, "read", "x".repeat(400)));
    }
    const plan = planCut(history, 1_000)!;
    expect(plan.history).toEqual([]);
    expect(plan.turnPrefix[0]).toBe(history[0]);
    expect(plan.kept[0]!.role).toBe("assistant");
    expect(plan.kept.reduce((n, m) => n + estimateMessageTokens(m), 0)).toBeGreaterThanOrEqual(1_000);
    expect(plan.kept.reduce((n, m) => n + estimateMessageTokens(m), 0)).toBeLessThan(1_000 + 2 * 120);
  });
});

describe("compaction-summary: summaries", () => {
  it("updates the earlier summary and carries the file lists across three compactions", async () => {
    const { agent, scripted, host, diagnostics } = createTestAgent({
      plugins: [[compaction, { keepRecentTokens: 5 }]],
      agent: { model: { id: "scripted", provider: "scripted", contextWindow: 100_000, maxOutput: 4_000 } },
    });
    const round = (n: number): AgentMessage[] => [
      user(`round ${n}`),
      assistant(
        [
          { type: "toolCall", id: `r${n}`, name: "read", arguments: { path: `src/read${n}.ts` } },
          { type: "toolCall", id: `e${n}`, name: "edit", arguments: { path: `src/edit${n}.ts`, edits: [] } },
          {
            type: "toolCall",
            id: `w${n}`,
            name: "write",
            arguments: { path: n === 3 ? "src/read1.ts" : `src/new${n}.ts`, content: "x" },
          },
        ],
        "toolUse",
      ),
      result(`r${n}`, "read", "content ".repeat(50)),
      result(`e${n}`, "edit", "edited"),
      result(`w${n}`, "write", "written"),
      assistant([{ type: "text", text: `round ${n} done` }]),
      user(`next after round ${n}`),
      assistant([{ type: "text", text: "ok" }]),
    ];
    agent.replaceMessages(round(1));
    for (let n = 1; n <= 3; n++) {
      if (n > 1) agent.replaceMessages([...agent.state.messages, ...round(n)]);
      scripted.push((r) => ({ text: `## Goal\nsummary number ${n} (${isSummariser(r)})` }));
      await agent.compact(n === 3 ? "focus on the edits" : undefined).catch((e) => {
        throw new Error(
          `${e.message}: ${diagnostics()
            .map((d) => d.message)
            .join("; ")}`,
        );
      });
    }
    const summariser = scripted.requests.filter(isSummariser);
    expect(summariser).toHaveLength(3);
    const prompt = (i: number) => textOf(summariser[i]!.messages[0]);
    expect(prompt(0)).not.toContain("<previous-summary>");
    expect(prompt(1)).toContain("<previous-summary>\n## Goal\nsummary number 1 (true)\n</previous-summary>");
    expect(prompt(2)).toContain("summary number 2 (true)");
    expect(prompt(2)).toContain("focus on the edits");
    const parts = parseSummary(agent.state.messages[0])!;
    expect(parts.summary).toBe("## Goal\nsummary number 3 (true)");
    expect(parts.modifiedFiles).toEqual([
      "src/edit1.ts",
      "src/new1.ts",
      "src/edit2.ts",
      "src/new2.ts",
      "src/edit3.ts",
      "src/read1.ts",
    ]);
    expect(parts.readFiles).toEqual(["src/read2.ts", "src/read3.ts"]); // read1 was later written: listed as modified
    const events = host.taps.filter((t) => t.hook === "compact").map((t) => t.plugin);
    expect(events).toEqual(["compaction-summary"]);
  });

  it("summarising failure changes nothing and says why; /compact reports it", async () => {
    const history = [
      user("a ".repeat(500)),
      assistant([{ type: "text", text: "b ".repeat(500) }]),
      user("c"),
      assistant([{ type: "text", text: "d" }]),
    ];
    const { agent, scripted, host, diagnostics } = createTestAgent({
      plugins: [[compaction, { keepRecentTokens: 10 }]],
      agent: { messages: history },
    });
    scripted.push({ error: "rate limited (429)" }, { error: "overloaded" });
    await expect(agent.compact()).rejects.toThrow(/NO_COMPACTION/);
    expect(agent.state.messages).toEqual(history);
    expect(
      diagnostics()
        .map((d) => d.message)
        .join("\n"),
    ).toContain("summarising with scripted/scripted failed: rate limited (429)");
    const out = await host.commands.get("compact")!.run("", agent);
    expect(out).toContain("overloaded");
    expect(agent.state.messages).toEqual(history);
  });

  it("summarises with the model named in the options", async () => {
    const { agent, scripted } = createTestAgent({
      plugins: [[compaction, { keepRecentTokens: 10, model: "scripted/cheap-one" }]],
      agent: { messages: [user("a ".repeat(300)), assistant([{ type: "text", text: "b" }]), user("c")] },
    });
    scripted.push(summariserReply());
    const out = await agent.compact();
    expect(scripted.requests[0]!.model.id).toBe("cheap-one");
    expect((out!.details as { model: string }).model).toBe("scripted/cheap-one");
  });

  it("compacts on a context-overflow error and retries the request once", async () => {
    const history = [user("a ".repeat(2000)), assistant([{ type: "text", text: "b ".repeat(2000) }])];
    const { agent, scripted, events } = createTestAgent({
      plugins: [[compaction, { keepRecentTokens: 100 }]],
      agent: { messages: history },
    });
    scripted.push({ error: "prompt is too long", errorCode: "context_overflow" }, summariserReply(), (r) => ({
      text: `retried with ${r.messages.length} messages`,
    }));
    const run = await agent.prompt("go on");
    expect(run.stopReason).toBe("stop");
    expect(textOf(run.messages.at(-1))).toBe("retried with 3 messages"); // the summary, the kept reply, "go on"
    expect(parseSummary(scripted.requests[2]!.messages[0])).toBeDefined();
    expect(events.find((e) => e.type === "compaction")).toMatchObject({ reason: "overflow", by: "compaction-summary" });
  });
});

describe("compaction-summary: long runs", () => {
  it("compacts in the middle of a 200-turn tool loop and the loop finishes", async () => {
    const step = definePlugin({
      id: "step-tool",
      setup(ctx) {
        ctx.tools.register({
          name: "step",
          description: "one step",
          parameters: Type.Object({ n: Type.Integer() }),
          execute: async (args) => ({ content: [{ type: "text", text: `step ${args.n} output ${"z".repeat(600)}` }] }),
        });
      },
    });
    const { host, agent } = createTestKit({
      cwd: process.cwd(),
      scripted: { chunkSize: 4096 },
      plugins: [step, [compaction, { keepRecentTokens: 2_000 }]],
      agent: {
        model: { id: "scripted", provider: "scripted", contextWindow: 12_000, maxOutput: 2_000 },
        reserveTokens: 2_000,
      },
    });
    const scripted = host.services.get("scripted") as ScriptedService;
    let main = 0;
    const invalid: string[] = [];
    const responder = (r: ProviderRequest): ScriptedReply => {
      if (isSummariser(r))
        return { text: `## Goal\nrun 200 steps\n## Progress\nat step ${main}`, usage: { input: 3_000, output: 100 } };
      invalid.push(...historyProblems(r.messages));
      const input = r.messages.reduce((n, m) => n + estimateMessageTokens(m), 0) + 300;
      main++;
      if (main <= 200)
        return { toolCalls: [{ name: "step", arguments: { n: main } }], usage: { input, output: 20, cacheRead: 0 } };
      return { text: "all 200 steps done", usage: { input, output: 10 } };
    };
    for (let i = 0; i < 260; i++) scripted.push(responder);
    const compactions: number[] = [];
    host.subscribe("compaction", (e) => void (e.type === "compaction" && compactions.push(e.tokensBefore)));
    const run = await agent.prompt("run the step tool 200 times");
    expect(run.stopReason).toBe("stop");
    expect(textOf(run.messages.at(-1))).toBe("all 200 steps done");
    expect(run.messages.filter((m) => m.role === "toolResult" && !m.isError)).toHaveLength(200);
    expect(invalid).toEqual([]);
    expect(compactions.length).toBeGreaterThanOrEqual(3);
    expect(historyProblems(agent.state.messages)).toEqual([]);
    // The user's request survives in the summary of the split turn.
    const summariser = scripted.requests.filter(isSummariser);
    expect(textOf(summariser[0]!.messages[0])).toContain("early part of the current turn");
    expect(textOf(summariser[0]!.messages[0])).toContain("[user]\nrun the step tool 200 times");
    expect(textOf(summariser[1]!.messages[0])).toContain(
      "<previous-summary>\n## Current turn (its early part, summarised)",
    );
    expect(parseSummary(agent.state.messages[0])!.summary).toContain("## Goal\nrun 200 steps");
  });
});

describe("compaction-summary: context windows", () => {
  const system = [{ id: "role", text: "You are a coding agent. ".repeat(170) }]; // ~1,000 tokens, sent with every request
  for (const [window, maxOutput] of [
    [8_192, 2_048],
    [16_384, 2_048],
    [32_768, 4_096],
    [200_000, 32_000],
  ] as const) {
    it(`a ${window.toLocaleString("en-US")}-token window with the default reserve compacts only when the context is near full`, async () => {
      const stepTokens = Math.floor(window / 16);
      const steps = 48;
      const step = definePlugin({
        id: "step-tool",
        setup(ctx) {
          ctx.tools.register({
            name: "step",
            description: "one step",
            parameters: Type.Object({ n: Type.Integer() }),
            execute: async (a) => ({ content: [{ type: "text", text: `step ${a.n}: ${"y".repeat(stepTokens * 4)}` }] }),
          });
        },
      });
      const { agent, scripted, events, diagnostics } = createTestAgent({
        plugins: [[step], [compaction, {}]],
        agent: { model: { id: "small", provider: "scripted", contextWindow: window, maxOutput }, system },
      });
      let main = 0;
      const sizes: number[] = [];
      const responder = (r: ProviderRequest): ScriptedReply => {
        const input =
          r.messages.reduce((n, m) => n + estimateMessageTokens(m), 0) +
          r.system.reduce((n, b) => n + Math.ceil(b.text.length / 4), 0);
        if (isSummariser(r))
          return { text: `## Goal\nrun ${steps} steps\n## Progress\nat step ${main}`, usage: { input, output: 50 } };
        sizes.push(input);
        main++;
        return main <= steps
          ? { toolCalls: [{ name: "step", arguments: { n: main } }], usage: { input, output: 20 } }
          : { text: "all steps done", usage: { input, output: 10 } };
      };
      for (let i = 0; i < 3 * steps; i++) scripted.push(responder);
      const run = await agent.prompt(`run the step tool ${steps} times`);
      expect(diagnostics().filter((d) => d.level !== "info")).toEqual([]);
      expect(run.stopReason).toBe("stop");
      expect(textOf(run.messages.at(-1))).toBe("all steps done");
      const compactions = events.filter((e): e is Extract<typeof e, { type: "compaction" }> => e.type === "compaction");
      // 48 steps of 1/16 window each fill the window three times: a few compactions, each freeing room for many steps.
      expect(compactions.length).toBeGreaterThanOrEqual(2);
      expect(compactions.length).toBeLessThanOrEqual(steps / 4);
      for (const c of compactions) {
        expect(c.tokensBefore).toBeGreaterThan(window * 0.6);
        expect(c.tokensAfter!).toBeLessThan(c.tokensBefore * 0.7);
      }
      // No request goes out over the compaction limit: the reserve (at most a quarter of the window) stays free.
      expect(Math.max(...sizes)).toBeLessThanOrEqual(window - Math.min(16_384, window / 4));
    });
  }
});

describe("compaction-summary: it must shrink the context", () => {
  it("/compact whose summary would be larger than what it replaces says so and changes nothing", async () => {
    const dirs = tempDirs("coil-compaction-");
    temps.push(dirs.root);
    const rig = await startRig({
      ...dirs,
      plugins: [[compaction, { keepRecentTokens: 5 }]],
      script: [{ text: "short answer" }, { text: "ok" }, summariserReply(`## Goal\n${"a long summary ".repeat(400)}`)],
    });
    await rig.agent.prompt("short question");
    await rig.agent.prompt("another");
    const before = rig.agent.state.messages;
    const out = await rig.host.commands.get("compact")!.run("", rig.agent);
    expect(out).toMatch(
      /^coil: compaction would not shrink the context \([\d,]+ → [\d,]+ tokens\), the context is unchanged/,
    );
    expect(rig.agent.state.messages).toEqual(before);
    const file = rig.session.file!;
    await rig.stop();
    expect(readFileSync(file, "utf8")).not.toContain('"type":"compaction"');
  });

  it("a strategy whose result is not smaller is refused by the loop", async () => {
    const grow = definePlugin({
      id: "grow",
      setup: (ctx) => ctx.tap("compact", (req) => ({ messages: [...req.messages, user("more")] })),
    });
    const history = [user("a ".repeat(400)), assistant([{ type: "text", text: "b" }])];
    const { agent, diagnostics } = createTestAgent({ plugins: [[grow]], agent: { messages: history } });
    await expect(agent.compact()).rejects.toThrow(/NO_COMPACTION.*grow.*did not shrink the context/);
    expect(agent.state.messages).toEqual(history);
    expect(
      diagnostics()
        .map((d) => d.message)
        .join("\n"),
    ).toContain("did not shrink");
  });

  it("on a context overflow, the request is retried only when compaction made it smaller", async () => {
    const history = [user("a ".repeat(2000)), assistant([{ type: "text", text: "b ".repeat(2000) }])];
    const { agent, scripted, diagnostics } = createTestAgent({
      plugins: [[compaction, { keepRecentTokens: 100 }]],
      agent: { messages: history },
    });
    scripted.push(
      { error: "prompt is too long", errorCode: "context_overflow" },
      summariserReply(`## Goal\n${"an enormous summary ".repeat(1500)}`),
      { text: "must not be asked" },
    );
    const run = await agent.prompt("go on");
    expect(run.stopReason).toBe("error");
    expect(run.error).toContain("prompt is too long");
    expect(scripted.requests.filter((r) => !isSummariser(r))).toHaveLength(1);
    expect(
      diagnostics()
        .map((d) => d.message)
        .join("\n"),
    ).toMatch(/would not shrink the context/);
    expect(agent.state.messages.slice(0, 2)).toEqual(history);
  });

  it("the retried request after an overflow is smaller than the one that failed", async () => {
    const history = [
      user("a ".repeat(2000)),
      assistant([{ type: "text", text: "b ".repeat(2000) }]),
      user("c ".repeat(2000)),
      assistant([{ type: "text", text: "d" }]),
    ];
    const { agent, scripted } = createTestAgent({
      plugins: [[compaction, { keepRecentTokens: 100 }]],
      agent: { messages: history },
    });
    scripted.push({ error: "prompt is too long", errorCode: "context_overflow" }, summariserReply(), {
      text: "fits now",
    });
    const run = await agent.prompt("go on");
    expect(run.stopReason).toBe("stop");
    const [failed, retried] = scripted.requests
      .filter((r) => !isSummariser(r))
      .map((r) => r.messages.reduce((n, m) => n + estimateMessageTokens(m), 0));
    expect(retried).toBeLessThan(failed! * 0.75);
  });

  it("a threshold compaction that cannot get under the limit says so, and is not retried before the context grows", async () => {
    // The newest message alone is over the limit: it is kept, so compaction cannot get under it.
    const history = [
      user("old ".repeat(500)),
      assistant([{ type: "text", text: "old answer ".repeat(200) }]),
      user("x ".repeat(28_000)),
    ];
    const { agent, scripted, events, diagnostics } = createTestAgent({
      plugins: [[compaction, { keepRecentTokens: 100 }]],
      agent: {
        model: { id: "small", provider: "scripted", contextWindow: 16_384, maxOutput: 2_048 },
        messages: history.slice(0, 2),
      },
    });
    scripted.push(summariserReply(), { text: "answer one" }, { text: "answer two" });
    await agent.prompt(history[2]!);
    await agent.prompt("short");
    expect(events.filter((e) => e.type === "compaction")).toHaveLength(1);
    expect(scripted.requests.filter(isSummariser)).toHaveLength(1);
    expect(
      diagnostics()
        .map((d) => d.message)
        .join("\n"),
    ).toMatch(/still over the compaction limit/);
  });
});

describe("compaction-summary: abort listeners", () => {
  it("many compactions in one run through a real SDK client add no listener to the run's abort signal", async () => {
    const home = mkdtempSync(join(tmpdir(), "coil-compaction-sdk-"));
    temps.push(home);
    const KEY = "sk-local-0123456789";
    process.env.COMPACTION_TEST_KEY = KEY;
    const mock = await startMockOpenAI({ key: KEY });
    const models = join(home, "models.yaml");
    writeFileSync(
      models,
      `providers:\n  local:\n    api: openai-completions\n    baseUrl: ${mock.url}\n    apiKeyEnv: COMPACTION_TEST_KEY\n    models:\n      - id: small\n        contextWindow: 8192\n        maxOutput: 1024\n`,
    );
    const warnings: string[] = [];
    const onWarning = (w: Error) => void warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    try {
      const listeners: number[] = [];
      const probe = definePlugin({
        id: "probe",
        setup(ctx) {
          ctx.tools.register({
            name: "step",
            description: "one step",
            parameters: Type.Object({}),
            execute: async () => ({ content: [{ type: "text", text: "z".repeat(12_000) }] }),
          });
          ctx.tap(
            "before_request",
            (_request, turn) => void listeners.push(getEventListeners(turn.signal, "abort").length),
          );
        },
      });
      const host = testHost({ cwd: home });
      host.install(openai, { baseDelayMs: 5, modelsFile: models });
      host.install(probe);
      host.install(compaction, {});
      let main = 0;
      for (let i = 0; i < 80; i++) {
        mock.push((body) =>
          JSON.stringify(body.messages?.[0] ?? "").includes("working memory of a coding agent")
            ? chat({ text: "## Goal\nrun the steps", usage: { prompt: 500, completion: 10 } })
            : ++main <= 30
              ? chat({
                  tools: [{ id: `call_${main}`, name: "step", args: {} }],
                  finish: "tool_calls",
                  usage: { prompt: Math.ceil(JSON.stringify(body).length / 4), completion: 10 },
                })
              : chat({ text: "done" }),
        );
      }
      const compactions: number[] = [];
      host.subscribe("compaction", (e) => void (e.type === "compaction" && compactions.push(e.tokensBefore)));
      const agent = new Agent(host, {
        provider: "local",
        model: host.providers.get("local")!.models!.find((m) => m.id === "small")!,
      });
      const run = await agent.prompt("run the step tool 30 times");
      expect(run.error).toBeUndefined();
      expect(textOf(run.messages.at(-1))).toBe("done");
      expect(compactions.length).toBeGreaterThan(11);
      // Each provider call gets its own signal: the SDK's listeners go away with the call.
      expect(Math.max(...listeners)).toBeLessThanOrEqual(1);
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.includes("MaxListeners"))).toEqual([]);
    } finally {
      process.off("warning", onWarning);
      await mock.close();
    }
  });
});

describe("compaction-summary: the session", () => {
  it("records the compaction (summary, first kept entry, tokens, files) and a resumed session sees the same context", async () => {
    const dirs = tempDirs("coil-compaction-");
    temps.push(dirs.root);
    const reader = definePlugin({
      id: "fake-read",
      setup(ctx) {
        ctx.tools.register({
          name: "read",
          description: "read",
          parameters: Type.Object({ path: Type.String() }),
          execute: async (a) => ({ content: [{ type: "text", text: `${a.path}: ${"text ".repeat(200)}` }] }),
        });
      },
    });
    const rig = await startRig({
      ...dirs,
      plugins: [[reader], [compaction, { keepRecentTokens: 5 }]],
      script: [
        { toolCalls: [{ name: "read", arguments: { path: "a.ts" } }] },
        { toolCalls: [{ name: "read", arguments: { path: "b.ts" } }] },
        { text: "read both" },
        { text: "second answer" },
        summariserReply("## Goal\nread files"),
        { text: "after compaction" },
      ],
    });
    await rig.agent.prompt("read a and b");
    await rig.agent.prompt("and now?");
    const out = await rig.host.commands.get("compact")!.run("", rig.agent);
    expect(out).toMatch(
      /^Compacted: [\d,]+ → [\d,]+ tokens\. \d+ messages summarised by scripted\/scripted, \d+ kept verbatim\.$/,
    );
    await rig.agent.prompt("continue");
    const file = rig.session.file!;
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const entries = lines.filter((e) => e.type === "compaction");
    expect(entries).toHaveLength(1); // recorded once, by the strategy
    expect(entries[0]).toMatchObject({
      by: "compaction-summary",
      summary: "## Goal\nread files",
      details: { readFiles: ["a.ts", "b.ts"], modifiedFiles: [] },
    });
    expect(entries[0].firstKeptEntryId).toEqual(expect.any(String));
    expect(entries[0].tokensBefore).toBeGreaterThan(entries[0].tokensAfter);
    const live = rig.agent.state.messages;
    await rig.stop();
    const resumed = SessionStore.open(file).context();
    expect(JSON.parse(JSON.stringify(resumed))).toEqual(JSON.parse(JSON.stringify(live)));
    expect(historyProblems(resumed)).toEqual([]);
  });
});
