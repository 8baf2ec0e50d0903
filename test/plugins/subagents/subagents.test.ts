/**
 * subagents: the `task` tool with real plugins (tools, sessions, guards, plan mode, permission gate) on
 * the scripted provider, one script per conversation (a router picks the reply by the conversation's
 * first user message, so parallel children get their own replies whatever order they ask in).
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { createTestKit } from "../../../sdk/testing/index.js";
import { afterAll, describe, expect, it } from "vitest";
import {
  definePlugin,
  textOf,
  type AgentEvent,
  type AgentMessage,
  type Plugin,
  type ProviderRequest,
  type ToolResultMessage,
} from "../../../api/index.js";
import costAudit from "../../../plugins/cost-audit/index.js";
import guards from "../../../plugins/guards/index.js";
import hooksClaude from "../../../plugins/hooks-claude/index.js";
import { treeItems } from "../../../plugins/ui-tui/commands.js";
import { summarizeArgs, usageTotals } from "../../../plugins/ui-tui/render.js";
import permissionGate from "../../../plugins/permission-gate/index.js";
import planMode from "../../../plugins/plan-mode/index.js";
import type { ScriptedReply } from "../../../plugins/provider-scripted/script.js";
import sessionJsonl, { SessionStore } from "../../../plugins/session-jsonl/index.js";
import subagents, { discoverAgents, type SubagentUpdate, type TaskDetails } from "../../../plugins/subagents/index.js";
import toolsCoding from "../../../plugins/tools-coding/index.js";
import toolsSearch from "../../../plugins/tools-search/index.js";
import { historyProblems } from "../../support/validate-history.js";
import { startPlugins, stopPlugins } from "../../../boot/lifecycle.js";

const temps: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  temps.push(d);
  return d;
};
const home = temp("coil-subagents-home-");
process.env.COIL_HOME = home;
process.env.HOME = temp("coil-subagents-user-"); // ~/.claude/agents of the test, not the machine's
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

const MAIN = "MAIN:";
type Script = Record<string, ScriptedReply[]>;

/** One step that answers each conversation from its own list, keyed by the start of its first user message. */
function router(script: Script, seen: ProviderRequest[]) {
  return (request: ProviderRequest): ScriptedReply => {
    seen.push(request);
    const first = textOf(request.messages.find((m) => m.role === "user"));
    const key = Object.keys(script).find((k) => first.startsWith(k));
    const next = key ? script[key]!.shift() : undefined;
    if (!next) throw new Error(`no scripted reply left for the conversation starting '${first.slice(0, 40)}'`);
    return next;
  };
}

/** Cost $0.001 per input token: the scripted provider's replies, priced. */
const priced = definePlugin({
  id: "priced",
  setup(ctx) {
    ctx.providers.register({
      id: "priced",
      async *stream(request, signal) {
        for await (const e of ctx.providers.get("scripted")!.stream(request, signal)) {
          if (e.type !== "done") {
            yield e;
            continue;
          }
          const u = e.message.usage;
          yield {
            type: "done",
            message: {
              ...e.message,
              provider: "priced",
              usage: { ...u, cost: { ...u.cost, input: u.input / 1000, total: u.input / 1000 } },
            },
          };
        }
      },
    });
  },
});

interface RigOptions {
  options?: Record<string, unknown>;
  /** Plugins installed before subagents, with options. */
  plugins?: [Plugin<any>, unknown][];
  cwd?: string;
  flags?: Record<string, unknown>;
  provider?: string;
  requestOptions?: Record<string, unknown>;
}

async function rig(script: Script, o: RigOptions = {}) {
  const cwd = o.cwd ?? temp("coil-subagents-cwd-");
  const requests: ProviderRequest[] = [];
  const total = Object.values(script).reduce((s, l) => s + l.length, 0);
  const route = router(script, requests);
  const provider = o.provider ?? "scripted";
  const { host, agent, events, commandLine } = createTestKit({
    cwd,
    plugins: [
      toolsCoding,
      toolsSearch,
      ...(o.plugins ?? []).map(([p, opts]) => [p, opts ?? {}] as [Plugin<any>, unknown]),
      [subagents, o.options ?? {}],
    ],
    replies: Array.from({ length: total }, () => route),
    agent: {
      provider,
      model: { id: "main-model", provider, contextWindow: 200_000, maxOutput: 32_000 },
      requestOptions: o.requestOptions,
    },
  });
  commandLine.values = { ...o.flags };
  const stdin = new PassThrough();
  stdin.end();
  const sink = new PassThrough();
  sink.resume();
  await startPlugins(
    host,
    agent,
    { cwd, env: { ...process.env, COIL_HOME: home }, stdin, stdout: sink, stderr: sink },
    { mode: "sdk", modelFromCli: false },
  );
  const remaining = () =>
    Object.entries(script)
      .filter(([, l]) => l.length > 0)
      .map(([k]) => k);
  return { cwd, host, agent, events, requests, remaining };
}

const task = (id: string, description: string, prompt: string, agent?: string) => ({
  id,
  name: "task",
  arguments: { description, prompt, ...(agent ? { agent } : {}) },
});
const results = (messages: readonly AgentMessage[]) =>
  messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
const details = (m: ToolResultMessage) => m.details as TaskDetails;
const requestsOf = (requests: ProviderRequest[], prefix: string) =>
  requests.filter((r) => textOf(r.messages.find((m) => m.role === "user")).startsWith(prefix));

describe("the task tool", () => {
  it("runs a child in its own context that uses a tool, and returns its text with a line naming its session and usage", async () => {
    const script: Script = {
      [MAIN]: [
        {
          text: "Delegating.",
          toolCalls: [task("t1", "list files", "CHILD: which files are here?")],
          usage: { input: 100, output: 10 },
        },
        { text: "The child found a.txt." },
      ],
      "CHILD:": [
        { toolCalls: [{ name: "ls", arguments: {} }], usage: { input: 50, output: 5 } },
        { text: "There is one file: a.txt", usage: { input: 70, output: 7 } },
      ],
    };
    const { cwd, host, agent, requests, remaining } = await rig(
      { ...script },
      { plugins: [[sessionJsonl, {}]], requestOptions: { thinking: "high" } },
    );
    writeFileSync(join(cwd, "a.txt"), "x");
    const run = await agent.prompt(`${MAIN} what is here?`);
    expect(run.stopReason).toBe("stop");
    expect(remaining()).toEqual([]);

    const [result] = results(run.messages);
    const text = textOf(result);
    expect(result!.isError).toBe(false);
    const sub = details(result!).subagent;
    expect(text.startsWith("There is one file: a.txt\n\n[sub-agent general · session ")).toBe(true);
    expect(text).toContain(`session ${sub.session!.id} (${sub.session!.file})`);
    expect(text).toContain("· main-model · 2 requests · 132 tokens · $0.0000]");
    expect(sub).toMatchObject({
      id: "t1",
      agent: "general",
      description: "list files",
      requests: 2,
      stopReason: "stop",
      depth: 1,
    });
    expect(sub.usage).toMatchObject({ input: 120, output: 12 });

    // It inherits the parent's request options (thinking level).
    expect(requestsOf(requests, "CHILD:")[0]!.options).toMatchObject({ thinking: "high" });
    // Its own context: the child's first request holds only its brief, and no `task` tool (maxDepth 1).
    const child = requestsOf(requests, "CHILD:");
    expect(child).toHaveLength(2);
    expect(child[0]!.messages).toHaveLength(1);
    expect(child[0]!.tools.map((t) => t.name).sort()).toEqual(["bash", "edit", "find", "grep", "ls", "read", "write"]);
    expect(child[0]!.system.find((b) => b.id === "subagent")?.text).toContain("You are a sub-agent (general, level 1)");
    expect(textOf(child[1]!.messages[2])).toContain("a.txt");

    // /tree shows the task result as a link to the child's session.
    const tree = treeItems(host.services.get("session") as never).map((i) => i.label.trim());
    expect(tree).toContain(`• ↳ sub-agent general: list files (session ${sub.session!.id.slice(0, 8)})`);

    // The child's conversation is its own session file, linked to the parent's by the call id.
    await stopPlugins(host);
    const file = sub.session!.file!;
    expect(file).toMatch(/[/\\]subagents[/\\][^/\\]+\.jsonl$/);
    const store = SessionStore.open(file);
    const parent = host.services.get("session") as { id: string; file?: string };
    expect(store.header.parentSession).toMatchObject({
      id: parent.id,
      path: parent.file,
      toolCallId: "t1",
      agent: "general",
    });
    expect(store.context().map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    // The parent's session holds the task result (with the link), not the child's messages.
    const parentStore = SessionStore.open(parent.file!);
    expect(parentStore.context().map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(((parentStore.context()[2] as ToolResultMessage).details as TaskDetails).subagent.session!.file).toBe(file);
  });

  it("runs three tasks of one reply in parallel: they finish out of order, results come in call order", async () => {
    const script: Script = {
      [MAIN]: [
        { toolCalls: [task("a", "slow", "A: slow"), task("b", "medium", "B: medium"), task("c", "fast", "C: fast")] },
        { text: "all done" },
      ],
      "A:": [{ text: "answer A", delayMs: 240 }],
      "B:": [{ text: "answer B", delayMs: 120 }],
      "C:": [{ text: "answer C" }],
    };
    const { agent, events } = await rig(script);
    const run = await agent.prompt(`${MAIN} go`);
    const ended = events
      .filter(
        (e): e is Extract<AgentEvent, { type: "tool_execution_end" }> =>
          e.type === "tool_execution_end" && e.toolName === "task",
      )
      .map((e) => e.toolCallId);
    expect(ended).toEqual(["c", "b", "a"]);
    expect(results(run.messages).map((r) => [r.toolCallId, textOf(r).split("\n")[0]])).toEqual([
      ["a", "answer A"],
      ["b", "answer B"],
      ["c", "answer C"],
    ]);
  });

  it("runs at most maxParallel children at a time", async () => {
    const script: Script = {
      [MAIN]: [
        { toolCalls: [task("a", "one", "A: x"), task("b", "two", "B: x"), task("c", "three", "C: x")] },
        { text: "done" },
      ],
      "A:": [{ text: "A", delayMs: 150 }],
      "B:": [{ text: "B", delayMs: 80 }],
      "C:": [{ text: "C" }],
    };
    const { agent, events } = await rig(script, { options: { maxParallel: 1 } });
    await agent.prompt(`${MAIN} go`);
    const ended = events
      .filter(
        (e): e is Extract<AgentEvent, { type: "tool_execution_end" }> =>
          e.type === "tool_execution_end" && e.toolName === "task",
      )
      .map((e) => e.toolCallId);
    expect(ended).toEqual(["a", "b", "c"]);
  });

  it("emits the child's events as updates of the task call, tagged with the child's id", async () => {
    const script: Script = {
      [MAIN]: [{ toolCalls: [task("t9", "look", "CHILD: look")] }, { text: "ok" }],
      "CHILD:": [{ toolCalls: [{ name: "ls", arguments: {} }] }, { text: "seen" }],
    };
    const { agent, events } = await rig(script);
    await agent.prompt(`${MAIN} go`);
    const updates = events.filter(
      (e): e is Extract<AgentEvent, { type: "tool_execution_update" }> =>
        e.type === "tool_execution_update" && e.toolCallId === "t9",
    );
    const inner = updates.map((u) => u.partial.details as SubagentUpdate);
    expect(
      inner.every((d) => d.subagent.id === "t9" && d.subagent.agent === "general" && d.subagent.description === "look"),
    ).toBe(true);
    expect(inner.map((d) => d.event.type)).toEqual(
      expect.arrayContaining([
        "agent_start",
        "turn_start",
        "message_end",
        "tool_execution_start",
        "tool_execution_end",
        "agent_end",
      ]),
    );
    const running = updates.find((u) => (u.partial.details as SubagentUpdate).event.type === "tool_execution_start");
    expect(textOf({ role: "toolResult", content: running!.partial.content } as ToolResultMessage)).toBe(
      "general: look · running ls · 0 tokens\n  → ls",
    );
    const last = updates.at(-1)!;
    expect(textOf({ role: "toolResult", content: last.partial.content } as ToolResultMessage)).toBe(
      "general: look · done · 0 tokens\n  ✓ ls",
    );
    // The TUI's tool block header for a task call names the agent type and the description.
    expect(summarizeArgs("task", { description: "look", prompt: "CHILD: look", agent: "explore" })).toBe(
      "explore: look",
    );
    // The parent's own message events are not mixed with the child's.
    expect(events.filter((e) => e.type === "agent_start")).toHaveLength(1);
  });
});

describe("agent types", () => {
  it("an explore child has only read-only tools: write does not exist for it and bash may only look", async () => {
    const script: Script = {
      [MAIN]: [{ toolCalls: [task("e1", "explore", "EXPLORE: find things", "explore")] }, { text: "ok" }],
      "EXPLORE:": [
        {
          toolCalls: [
            { id: "w", name: "write", arguments: { path: "x.txt", content: "no" } },
            { id: "b1", name: "bash", arguments: { command: "rm -f a.txt" } },
            { id: "b2", name: "bash", arguments: { command: "ls" } },
          ],
        },
        { text: "I could only look." },
      ],
    };
    const { cwd, agent, requests } = await rig(script);
    writeFileSync(join(cwd, "a.txt"), "x");
    const run = await agent.prompt(`${MAIN} go`);
    const child = requestsOf(requests, "EXPLORE:");
    expect(child[0]!.tools.map((t) => t.name).sort()).toEqual(["bash", "find", "grep", "ls", "read"]);
    expect(child[0]!.system.find((b) => b.id === "role")?.text).toContain("You are an exploration sub-agent");
    const [w, b1, b2] = child[1]!.messages.slice(2) as ToolResultMessage[];
    expect(textOf(w)).toContain("Tool 'write' does not exist");
    expect(b1!.isError).toBe(true);
    expect(textOf(b1)).toContain(
      "Blocked: the explore agent may run only read-only bash commands: `rm` is not on the read-only list",
    );
    expect(b2!.isError).toBe(false);
    expect(textOf(b2)).toContain("a.txt");
    expect(existsSync(join(cwd, "x.txt"))).toBe(false);
    expect(existsSync(join(cwd, "a.txt"))).toBe(true);
    expect(textOf(results(run.messages)[0])).toContain("I could only look.");
  });

  it("reads a Claude Code agent file: tools: Read, Grep and model: haiku, the body as the system prompt", async () => {
    const cwd = temp("coil-subagents-cwd-");
    mkdirSync(join(cwd, ".claude", "agents"), { recursive: true });
    cpSync(
      join(__dirname, "..", "..", "fixtures", "agents", "reviewer.md"),
      join(cwd, ".claude", "agents", "reviewer.md"),
    );
    const script: Script = {
      [MAIN]: [{ toolCalls: [task("r1", "review", "REVIEW: check src", "reviewer")] }, { text: "ok" }],
      "REVIEW:": [
        { toolCalls: [{ id: "w", name: "write", arguments: { path: "x", content: "y" } }] },
        { text: "LGTM" },
      ],
    };
    const { agent, requests, host } = await rig(script, { cwd });
    const description = host.tools.get("task")!.description;
    expect(description).toContain("- reviewer: Reviews a change for bugs and missing tests; read-only.");
    expect(description).toContain("- explore: ");
    const run = await agent.prompt(`${MAIN} go`);
    const child = requestsOf(requests, "REVIEW:");
    expect(child[0]!.model.id).toBe("haiku");
    expect(child[0]!.tools.map((t) => t.name).sort()).toEqual(["grep", "read"]);
    expect(child[0]!.system.find((b) => b.id === "role")?.text).toBe(
      "You review code changes. Report bugs with file:line, then missing tests.",
    );
    expect(textOf(child[1]!.messages[2])).toContain("Tool 'write' does not exist");
    const sub = details(results(run.messages)[0]!).subagent;
    expect(sub).toMatchObject({ agent: "reviewer", model: "haiku" });
    expect(textOf(results(run.messages)[0])).toContain("LGTM\n\n[sub-agent reviewer · no session · haiku · 2 requests");
  });

  it("an agent file naming a model no provider knows is an error result naming the file", async () => {
    const cwd = temp("coil-subagents-cwd-");
    mkdirSync(join(cwd, ".coil", "agents"), { recursive: true });
    writeFileSync(
      join(cwd, ".coil", "agents", "far.md"),
      "---\nname: far\ndescription: far away\nmodel: nowhere/big\n---\nhi\n",
    );
    const script: Script = { [MAIN]: [{ toolCalls: [task("f", "x", "X: x", "far")] }, { text: "ok" }] };
    const { agent } = await rig(script, { cwd });
    const run = await agent.prompt(`${MAIN} go`);
    const [r] = results(run.messages);
    expect(r!.isError).toBe(true);
    expect(textOf(r)).toBe(
      `Error: the far agent (${join(cwd, ".coil", "agents", "far.md")}) cannot start: model 'nowhere/big': provider 'nowhere' is not registered (known: scripted)`,
    );
  });

  it("an answer over the output budget is cut, with a note", async () => {
    const long = Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`).join("\n");
    const script: Script = {
      [MAIN]: [{ toolCalls: [task("l", "long", "LONG: x")] }, { text: "ok" }],
      "LONG:": [{ text: long }],
    };
    const { agent } = await rig(script, { plugins: [[sessionJsonl, {}]] });
    const run = await agent.prompt(`${MAIN} go`);
    const text = textOf(results(run.messages)[0]);
    expect(text).toContain(
      "line 2000\n\n[answer cut to 2000 lines / 50 KB of 2500 lines; the whole answer is in the sub-agent's session]",
    );
    expect(text).not.toContain("line 2001");
  });

  it("an unknown agent type is an error result that lists the types", async () => {
    const script: Script = { [MAIN]: [{ toolCalls: [task("u", "x", "X: x", "nope")] }, { text: "ok" }] };
    const { agent } = await rig(script);
    const run = await agent.prompt(`${MAIN} go`);
    const [r] = results(run.messages);
    expect(r!.isError).toBe(true);
    expect(textOf(r)).toBe("Error: unknown agent type 'nope'. Available: general, explore");
    expect(run.stopReason).toBe("stop");
  });
});

describe("limits and safety", () => {
  it("a failing child is an error result; the parent goes on", async () => {
    const script: Script = {
      [MAIN]: [{ toolCalls: [task("f", "fail", "FAIL: x")] }, { text: "I will do it myself." }],
      "FAIL:": [{ error: "529 overloaded_error" }],
    };
    const { agent } = await rig(script);
    const run = await agent.prompt(`${MAIN} go`);
    const [r] = results(run.messages);
    expect(r!.isError).toBe(true);
    expect(textOf(r)).toMatch(/^The sub-agent failed: 529 overloaded_error\./);
    expect(details(r!).subagent.stopReason).toBe("error");
    expect(run.stopReason).toBe("stop");
    expect(textOf(run.messages.at(-1))).toBe("I will do it myself.");
  });

  it("maxDepth 1: a child has no task tool; maxDepth 2: a grandchild runs and its usage rolls up", async () => {
    const one: Script = {
      [MAIN]: [{ toolCalls: [task("d1", "nest", "CHILD: delegate")] }, { text: "ok" }],
      "CHILD:": [{ toolCalls: [task("d2", "deeper", "GRAND: x")] }, { text: "could not" }],
    };
    const a = await rig(one);
    await a.agent.prompt(`${MAIN} go`);
    const child = requestsOf(a.requests, "CHILD:");
    expect(child[0]!.tools.some((t) => t.name === "task")).toBe(false);
    expect(textOf(child[1]!.messages[2])).toContain("Tool 'task' does not exist");

    const two: Script = {
      [MAIN]: [{ toolCalls: [task("d1", "nest", "CHILD: delegate")] }, { text: "ok" }],
      "CHILD:": [
        { toolCalls: [task("d2", "deeper", "GRAND: x")], usage: { input: 10 } },
        { text: "grandchild said hi", usage: { input: 10 } },
      ],
      "GRAND:": [{ text: "hi", usage: { input: 5 } }],
    };
    // maxParallel 1 holds per level: the child's slot does not starve its own child.
    const b = await rig(two, { options: { maxDepth: 2, maxParallel: 1 } });
    const run = await b.agent.prompt(`${MAIN} go`);
    expect(b.remaining()).toEqual([]);
    const grand = requestsOf(b.requests, "GRAND:");
    expect(grand[0]!.tools.some((t) => t.name === "task")).toBe(false);
    expect(grand[0]!.system.find((b) => b.id === "subagent")?.text).toContain("level 2");
    const sub = details(results(run.messages)[0]!).subagent;
    expect(sub.requests).toBe(3);
    expect(sub.usage.input).toBe(25);
    // The grandchild's updates reach the main agent nested in the child's.
    const nested = b.events.filter(
      (e) =>
        e.type === "tool_execution_update" &&
        (e.partial.details as SubagentUpdate).event.type === "tool_execution_update",
    );
    expect(nested.length).toBeGreaterThan(0);
  });

  it("a child of a plan-mode parent is read-only (the parent's gates apply to children)", async () => {
    const script: Script = {
      [MAIN]: [{ toolCalls: [task("p", "change", "CHILD: write a file")] }, { text: "ok" }],
      "CHILD:": [
        { toolCalls: [{ id: "w", name: "write", arguments: { path: "x.txt", content: "no" } }] },
        { text: "blocked" },
      ],
    };
    const { cwd, agent, requests } = await rig(script, { plugins: [[planMode, {}]], flags: { plan: true } });
    await agent.prompt(`${MAIN} go`);
    const child = requestsOf(requests, "CHILD:");
    expect(child[0]!.tools.map((t) => t.name)).not.toContain("write");
    expect(textOf(child[1]!.messages[2])).toContain("Blocked: plan mode is read-only: write is not available");
    expect(existsSync(join(cwd, "x.txt"))).toBe(false);
  });

  it("with the permission gate and no one to ask, task itself is allowed and the child's changes are denied", async () => {
    const script: Script = {
      [MAIN]: [{ toolCalls: [task("g", "change", "CHILD: write")] }, { text: "ok" }],
      "CHILD:": [
        {
          toolCalls: [
            { id: "w", name: "write", arguments: { path: "x.txt", content: "no" } },
            { id: "r", name: "ls", arguments: {} },
          ],
        },
        { text: "denied" },
      ],
    };
    const { cwd, agent, requests } = await rig(script, { plugins: [[permissionGate, { mode: "default" }]] });
    const run = await agent.prompt(`${MAIN} go`);
    expect(results(run.messages)[0]!.isError).toBe(false);
    const [w, r] = requestsOf(requests, "CHILD:")[1]!.messages.slice(2) as ToolResultMessage[];
    expect(w!.isError).toBe(true);
    expect(textOf(w)).toContain("Blocked:");
    expect(r!.isError).toBe(false);
    expect(existsSync(join(cwd, "x.txt"))).toBe(false);
  });

  it("abort while tasks wait for a slot: the waiting children never start", async () => {
    const script: Script = {
      [MAIN]: [{ toolCalls: [task("a", "one", "A: x"), task("b", "two", "B: x"), task("c", "three", "C: x")] }],
      "A:": [{ text: "slow", delayMs: 3000 }],
      "B:": [{ text: "never" }],
      "C:": [{ text: "never" }],
    };
    const { agent, requests, remaining } = await rig(script, { options: { maxParallel: 1 } });
    const running = agent.prompt(`${MAIN} go`);
    while (requestsOf(requests, "A:").length === 0) await new Promise((r) => setTimeout(r, 5));
    agent.abort();
    const run = await running;
    expect(run.stopReason).toBe("aborted");
    expect(results(run.messages).map((r) => textOf(r))).toEqual(
      Array(3).fill("Aborted by the user before the tool finished."),
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(remaining()).toEqual(["B:", "C:"]);
  });

  it("guards maxCost counts children: a child is stopped inside, then the parent", async () => {
    const noop = { toolCalls: [{ name: "ls", arguments: {} }], usage: { input: 20 } }; // $0.02 a request
    const script: Script = {
      [MAIN]: [{ toolCalls: [task("m", "spend", "SPEND: x")], usage: { input: 20 } }, { text: "never" }],
      "SPEND:": [noop, noop, noop, noop, { text: "never" }],
    };
    const { agent, remaining } = await rig(script, {
      plugins: [
        [priced, {}],
        [guards, { maxCost: 0.05 }],
      ],
      provider: "priced",
    });
    const run = await agent.prompt(`${MAIN} go`);
    const [r] = results(run.messages);
    // The main reply's $0.02 counts at its turn end, after the task: the child is over at its third request.
    expect(textOf(r)).toContain(
      "[the sub-agent was stopped: spent $0.0600, over the limit of $0.05 for one run (guards maxCost)]",
    );
    expect(details(r!).subagent.usage.cost.total).toBeCloseTo(0.06);
    expect(details(r!).subagent.requests).toBe(3);
    // Then the parent: its own $0.02 plus the children's $0.06.
    expect(run.reason).toBe("spent $0.0800, over the limit of $0.05 for one run (guards maxCost)");
    expect(remaining()).toEqual([MAIN, "SPEND:"]);
  });

  it("abort of the parent aborts the child, which writes aborted results to its own session", async () => {
    const script: Script = {
      [MAIN]: [{ toolCalls: [task("ab", "wait", "CHILD: wait")] }],
      "CHILD:": [{ toolCalls: [{ id: "sl", name: "bash", arguments: { command: "sleep 5" } }] }],
    };
    const { agent, host, events } = await rig(script, { plugins: [[sessionJsonl, {}]] });
    const running = agent.prompt(`${MAIN} go`);
    await new Promise<void>((done) => {
      const stop = agent.subscribe((e) => {
        if (
          e.type === "tool_execution_update" &&
          (e.partial.details as SubagentUpdate).event.type === "tool_execution_start"
        ) {
          stop();
          done();
        }
      });
    });
    agent.abort();
    const run = await running;
    expect(run.stopReason).toBe("aborted");
    await stopPlugins(host);
    const file = (
      events.find(
        (e) => e.type === "tool_execution_update" && (e.partial.details as SubagentUpdate).subagent.session,
      ) as Extract<AgentEvent, { type: "tool_execution_update" }>
    ).partial.details as SubagentUpdate;
    const child = SessionStore.open(file.subagent.session!.file!).context();
    expect(historyProblems(child)).toEqual([]);
    expect(child.map((m) => m.role)).toEqual(["user", "assistant", "toolResult"]);
    expect(textOf(child[2])).toBe("Aborted by the user before the tool finished.");
    const parent = SessionStore.open((host.services.get("session") as { file: string }).file).context();
    expect(historyProblems(parent)).toEqual([]);
    expect(textOf(parent.at(-1))).toBe("Aborted by the user before the tool finished.");
    expect(readdirSync(join(file.subagent.session!.file!, ".."))).toHaveLength(1);
    expect(readFileSync(file.subagent.session!.file!, "utf8")).toContain('"toolCallId":"ab"');
  });
});

describe("cost roll-up", () => {
  it("children's usage is in the parent's totals: the TUI footer's sums, /cost and sessions stats by agent type", async () => {
    const script: Script = {
      [MAIN]: [
        {
          toolCalls: [
            task("x1", "one", "E1: a", "explore"),
            task("x2", "two", "E2: b", "explore"),
            task("g1", "three", "G: c"),
          ],
          usage: { input: 100 },
        },
        { text: "done", usage: { input: 200 } },
      ],
      "E1:": [{ text: "e1", usage: { input: 10, output: 1 } }],
      "E2:": [
        { toolCalls: [{ name: "ls", arguments: {} }], usage: { input: 20 } },
        { text: "e2", usage: { input: 30 } },
      ],
      "G:": [{ text: "g", usage: { input: 40, cacheRead: 5 } }],
    };
    const { agent, host } = await rig(script, {
      plugins: [
        [priced, {}],
        [sessionJsonl, {}],
        [costAudit, {}],
      ],
      provider: "priced",
    });
    const run = await agent.prompt(`${MAIN} go`);
    expect(run.stopReason).toBe("stop");

    const totals = usageTotals(agent.state.messages);
    expect(totals.input).toBe(100 + 200 + 10 + 20 + 30 + 40);
    expect(totals.cost).toBeCloseTo(0.4);

    const report = String(await host.commands.get("cost")!.run("", agent));
    expect(report).toContain("sub-agents: 3 runs, 4 requests, 106 tokens (5 from the cache), 1 output, $0.10");
    expect(report).toContain("  explore: 2 runs, 3 requests, 61 tokens (0 from the cache), 1 output, $0.06");
    expect(report).toContain("  general: 1 run, 1 request, 45 tokens (5 from the cache), 0 output, $0.04");
    expect(report).toContain("total with sub-agents: $0.40");

    const session = host.services.get("session") as { path(): readonly { type: string }[] };
    const stats = JSON.parse(
      (host.services.get("session-stats") as { render(e: unknown, o: { json: boolean }): string }).render(
        session.path(),
        { json: true },
      ),
    );
    expect(stats.totals.cost).toBeCloseTo(0.3);
    expect(stats.totals.costWithSubagents).toBeCloseTo(0.4);
    expect(stats.subagents.explore).toMatchObject({ runs: 2, requests: 3 });
  });
});

describe("hooks", () => {
  it("Claude Code SubagentStart and SubagentStop hooks fire around each child, PreToolUse for the child's tool calls", async () => {
    const cwd = temp("coil-subagents-cwd-");
    const log = join(cwd, "hooks.log");
    const hook = (matcher?: string) => [
      { ...(matcher ? { matcher } : {}), hooks: [{ type: "command", command: `cat >> ${log}; echo >> ${log}` }] },
    ];
    const script: Script = {
      [MAIN]: [{ toolCalls: [task("h1", "look", "CHILD: x", "explore")] }, { text: "ok" }],
      "CHILD:": [{ toolCalls: [{ id: "c1", name: "ls", arguments: {} }] }, { text: "seen" }],
    };
    const { agent, host } = await rig(script, {
      cwd,
      plugins: [
        [sessionJsonl, {}],
        [
          hooksClaude,
          {
            user: false,
            project: false,
            hooks: { SubagentStart: hook("explore"), SubagentStop: hook(), PreToolUse: hook("LS") },
          },
        ],
      ],
    });
    const run = await agent.prompt(`${MAIN} go`);
    await stopPlugins(host);
    const sub = details(results(run.messages)[0]!).subagent;
    const lines = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.hook_event_name)).toEqual(["SubagentStart", "PreToolUse", "SubagentStop"]);
    expect(lines[0]).toMatchObject({ agent_id: "h1", agent_type: "explore" });
    expect(lines[1]).toMatchObject({ tool_name: "LS", tool_use_id: "c1" });
    expect(lines[2]).toMatchObject({
      agent_id: "h1",
      agent_type: "explore",
      agent_transcript_path: sub.session!.file,
      stop_hook_active: false,
    });
  });
});

describe("agent files", () => {
  const write = (dir: string, name: string, text: string) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, name), text);
  };
  const agentMd = (name: string, description: string, extra = "") =>
    `---\nname: ${name}\ndescription: ${description}\n${extra}---\nYou are ${name}.\n`;

  it("come from packages, ~/.claude/agents, $COIL_HOME/agents, .claude/agents and .coil/agents; later ones win; bad files are reported", () => {
    const cwd = temp("coil-agents-cwd-");
    const coilHomeDir = temp("coil-agents-home-");
    const userHome = temp("coil-agents-user-");
    const pkg = join(coilHomeDir, "packages", "node_modules", "@acme", "agents-pack");
    write(pkg, "package.json", JSON.stringify({ name: "@acme/agents-pack", coil: { agents: ["team"] } }));
    write(join(pkg, "team"), "tester.md", agentMd("tester", "from the package"));
    write(join(pkg, "team"), "shared.md", agentMd("shared", "from the package"));
    write(join(userHome, ".claude", "agents"), "shared.md", agentMd("shared", "from ~/.claude"));
    write(
      join(userHome, ".claude", "agents"),
      "mine.md",
      agentMd("mine", "from ~/.claude", "tools: Read, Glob, LS, MultiEdit\nmodel: sonnet\n"),
    );
    write(join(coilHomeDir, "agents"), "shared.md", agentMd("shared", "from $COIL_HOME"));
    write(join(cwd, ".claude", "agents"), "shared.md", agentMd("shared", "from .claude"));
    write(join(cwd, ".coil", "agents"), "shared.md", agentMd("shared", "from .coil"));
    write(join(cwd, ".coil", "agents"), "explore.md", agentMd("explore", "a project's own explore"));
    write(join(cwd, ".coil", "agents"), "broken.md", "---\nname: broken\n---\nno description\n");
    write(join(cwd, ".coil", "agents"), "empty.md", agentMd("empty", "no body").replace("You are empty.\n", ""));

    const { agents, problems } = discoverAgents({ cwd, home: coilHomeDir, userHome, packages: true });
    const by = Object.fromEntries(agents.map((a) => [a.name, a]));
    expect(Object.keys(by).sort()).toEqual(["explore", "general", "mine", "shared", "tester"]);
    expect(by.tester).toMatchObject({ description: "from the package", source: "package" });
    expect(by.shared).toMatchObject({ description: "from .coil", source: "project" });
    expect(by.explore).toMatchObject({
      description: "a project's own explore",
      source: "project",
      prompt: "You are explore.",
    });
    expect(by.mine).toMatchObject({ tools: ["read", "find", "ls", "edit"], model: "sonnet", source: "user" });
    expect(problems.map((p) => [p.file.split("/").pop(), p.reason])).toEqual([
      ["broken.md", "'description' is missing: the model picks agents by it"],
      ["empty.md", "the body (the agent's system prompt) is empty"],
    ]);
    expect(
      discoverAgents({ cwd, home: coilHomeDir, userHome, packages: false }).agents.some((a) => a.name === "tester"),
    ).toBe(false);
  });

  it("a skipped agent file is reported at start; an agent asking for a tool the parent lacks gets the rest, with a note", async () => {
    const cwd = temp("coil-subagents-cwd-");
    write(join(cwd, ".coil", "agents"), "web.md", agentMd("web", "fetches pages", "tools: Read, WebFetch\n"));
    write(join(cwd, ".coil", "agents"), "bad.md", "---\nname: [x\n  - y\n---\nbody\n");
    const script: Script = {
      [MAIN]: [{ toolCalls: [task("w", "fetch", "WEB: x", "web")] }, { text: "ok" }],
      "WEB:": [{ text: "done" }],
    };
    const { agent, events, requests, host } = await rig(script, { cwd });
    const warn = events.find((e) => e.type === "diagnostic" && e.plugin === "subagents");
    expect(warn).toMatchObject({ level: "warn" });
    expect((warn as { message: string }).message).toMatch(
      /^agent file .*bad\.md skipped: front matter is not valid YAML/,
    );
    const listing = String(await host.commands.get("agents")!.run("", agent));
    expect(listing).toContain(`web (${join(cwd, ".coil", "agents", "web.md")}): fetches pages [tools: read, webfetch]`);
    expect(listing).toContain("explore (builtin): Read-only explorer");
    expect(listing).toMatch(/skipped .*bad\.md: front matter is not valid YAML/);
    const run = await agent.prompt(`${MAIN} go`);
    expect(requestsOf(requests, "WEB:")[0]!.tools.map((t) => t.name)).toEqual(["read"]);
    expect(textOf(results(run.messages)[0])).toContain(
      "[the web agent asks for tools this agent does not have, left out: webfetch]",
    );
  });
});

describe("guards verify", () => {
  it("the done-check runs when the main agent would finish, not when a child does", async () => {
    const cwd = temp("coil-subagents-cwd-");
    const script: Script = {
      [MAIN]: [{ toolCalls: [task("v", "look", "CHILD: x")] }, { text: "main finished" }],
      "CHILD:": [{ text: "child finished" }],
    };
    const { agent } = await rig(script, {
      cwd,
      plugins: [[guards, { verify: { command: "echo checked >> verify.log", attempts: 1 } }]],
    });
    const run = await agent.prompt(`${MAIN} go`);
    expect(run.stopReason).toBe("stop");
    expect(textOf(results(run.messages)[0]).split("\n")[0]).toBe("child finished");
    expect(readFileSync(join(cwd, "verify.log"), "utf8")).toBe("checked\n");
  });
});
