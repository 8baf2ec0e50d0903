/**
 * subagents with a real provider SDK: the main agent and its child talk to the local Anthropic mock
 * (which rejects a history with a tool call left unanswered, as the API does). Abort mid-child, then
 * continue both conversations from their session files: the mock accepts both.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent, textOf, type AgentEvent } from "../../../api/index.js";
import { testHost } from "../../support/host.js";
import anthropic from "../../../plugins/provider-anthropic/index.js";
import sessionJsonl, { SessionStore } from "../../../plugins/session-jsonl/index.js";
import subagents, { type SubagentUpdate } from "../../../plugins/subagents/index.js";
import toolsCoding from "../../../plugins/tools-coding/index.js";
import { reply, startMockAnthropic, text, type MockAnthropic } from "../../support/mock-anthropic.js";
import { startPlugins, stopPlugins } from "../../../boot/lifecycle.js";

const temps: string[] = [];
const temp = (p: string) => {
  temps.push(mkdtempSync(join(tmpdir(), p)));
  return temps.at(-1)!;
};
const home = temp("coil-subagents-anthropic-");
process.env.COIL_HOME = home;
process.env.HOME = home;
const KEY = "sk-ant-test-0123456789abcdef";
process.env.ANTHROPIC_API_KEY = KEY;

let mock: MockAnthropic;
beforeAll(async () => {
  mock = await startMockAnthropic({ key: KEY });
});
afterAll(async () => {
  await mock.close();
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

async function start() {
  const cwd = temp("coil-subagents-anthropic-cwd-");
  const host = testHost({ cwd });
  host.install(anthropic, { baseUrl: mock.url, baseDelayMs: 5 });
  host.install(toolsCoding);
  host.install(sessionJsonl);
  host.install(subagents);
  const model = host.providers.get("anthropic")!.resolveModel!("claude-sonnet-4-5")!;
  const agent = new Agent(host, { provider: "anthropic", model });
  const io = new PassThrough();
  io.end();
  await startPlugins(
    host,
    agent,
    {
      cwd,
      env: { ...process.env, COIL_HOME: home },
      stdin: io,
      stdout: new PassThrough().resume(),
      stderr: new PassThrough().resume(),
    },
    { mode: "sdk", modelFromCli: false },
  );
  return { host, agent, cwd };
}

describe("subagents over the Anthropic SDK", () => {
  it("abort mid-child leaves no unanswered tool call in either session: both continue against the validating mock", async () => {
    mock.push(
      reply(
        [
          { text: "Delegating." },
          { tool: { id: "toolu_task", name: "task", input: { description: "wait", prompt: "sleep for a while" } } },
        ],
        { stop: "tool_use" },
      ),
      reply([{ tool: { id: "toolu_sleep", name: "bash", input: { command: "sleep 5" } } }], { stop: "tool_use" }),
    );
    const { host, agent } = await start();
    const events: AgentEvent[] = [];
    agent.subscribe((e) => void events.push(e));
    const running = agent.prompt("do it with a helper");
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
    expect((await running).stopReason).toBe("aborted");
    const tag = (
      events.find((e) => e.type === "tool_execution_update") as Extract<AgentEvent, { type: "tool_execution_update" }>
    ).partial.details as SubagentUpdate;
    const parentFile = (host.services.get("session") as { file: string }).file;
    await stopPlugins(host);
    expect(mock.rejected()).toEqual([]);

    // The parent goes on from its session: the mock validates the task call's pairing.
    mock.push(text("parent continues"));
    const parent = SessionStore.open(parentFile).context();
    const again = await start();
    again.agent.replaceMessages(parent);
    const r1 = await again.agent.prompt("go on");
    expect(r1.stopReason).toBe("stop");
    expect(textOf(r1.messages.at(-1))).toBe("parent continues");
    await stopPlugins(again.host);

    // The child's session goes on too: its bash call has its aborted result.
    mock.push(text("child continues"));
    const child = SessionStore.open(tag.subagent.session!.file!).context();
    expect(textOf(child.at(-1))).toBe("Aborted by the user before the tool finished.");
    const third = await start();
    third.agent.replaceMessages(child);
    const r2 = await third.agent.prompt("go on");
    expect(textOf(r2.messages.at(-1))).toBe("child continues");
    await stopPlugins(third.host);
    expect(mock.rejected()).toEqual([]);
    expect(mock.remaining()).toBe(0);
  });
});
