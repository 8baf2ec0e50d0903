/** guards: budgets, repeated failing calls and the verify done-gate, with the scripted provider and real processes. */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestKit } from "../../../sdk/testing/index.js";
import { afterAll, describe, expect, it } from "vitest";
import {
  definePlugin,
  emptyUsage,
  textOf,
  Type,
  type AgentMessage,
  type Plugin,
  type ProviderRequest,
  type ToolResultMessage,
} from "../../../api/index.js";
import guards from "../../../plugins/guards/index.js";
import type { ScriptedService } from "../../../plugins/provider-scripted/index.js";
import type { ScriptStep } from "../../../plugins/provider-scripted/script.js";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** Tools: `noop` succeeds, `flaky` always fails, `flip` fails and succeeds in turn, `touch` creates a file in the working directory. */
const tools = (cwd: string) =>
  definePlugin({
    id: "guard-test-tools",
    setup(ctx) {
      const P = Type.Object({}, { additionalProperties: true });
      let flips = 0;
      ctx.tools.register({
        name: "flip",
        description: "fails, then works",
        parameters: P,
        execute: async () =>
          ++flips % 2
            ? { content: [{ type: "text", text: "EAGAIN: try again" }], isError: true }
            : { content: [{ type: "text", text: "ok" }] },
      });
      ctx.tools.register({
        name: "noop",
        description: "ok",
        parameters: P,
        execute: async () => ({ content: [{ type: "text", text: "ok" }] }),
      });
      ctx.tools.register({
        name: "flaky",
        description: "fails",
        parameters: P,
        execute: async () => ({ content: [{ type: "text", text: "ENOENT: no such file" }], isError: true }),
      });
      ctx.tools.register({
        name: "touch",
        description: "create a file",
        parameters: Type.Object({ name: Type.String() }),
        execute: async (a) => {
          writeFileSync(join(cwd, a.name), "");
          return { content: [{ type: "text", text: "created" }] };
        },
      });
    },
  });

function rig(options: Record<string, unknown>, script: ScriptStep[], extra: Plugin[] = []) {
  const cwd = mkdtempSync(join(tmpdir(), "coil-guards-"));
  temps.push(cwd);
  const provider = extra.length ? "costly" : "scripted";
  const kit = createTestKit({
    cwd,
    plugins: [tools(cwd), ...extra, [guards as Plugin, options]],
    replies: script,
    agent: { provider, model: { id: "m", provider, contextWindow: 100_000, maxOutput: 1000 } },
  });
  return { cwd, host: kit.host, agent: kit.agent };
}

const call = (name: string, args: Record<string, unknown> = {}) => ({ toolCalls: [{ name, arguments: args }] });
const results = (messages: readonly AgentMessage[]) =>
  messages.filter((m): m is ToolResultMessage => m.role === "toolResult");

describe("budgets", () => {
  it("stops at maxTurns with a reason", async () => {
    const { agent } = rig({ maxTurns: 2 }, [call("noop"), call("noop"), call("noop"), { text: "never" }]);
    const run = await agent.prompt("go");
    expect(run.reason).toBe(
      "reached the limit of 2 turns for one run (guards maxTurns: raise it in your preset, `- guards: { maxTurns: N }`, 0 for no limit)",
    );
    expect(run.messages.filter((m) => m.role === "assistant")).toHaveLength(2);
  });

  it("lets a run that finishes on its last allowed turn end normally", async () => {
    const { agent } = rig({ maxTurns: 2 }, [call("noop"), { text: "done" }]);
    const run = await agent.prompt("go");
    expect(run.reason).toBeUndefined();
    expect(textOf(run.messages.at(-1))).toBe("done");
  });

  it("stops at maxTokens, counting every reply's billed tokens in this run only", async () => {
    const usage = { input: 600, output: 100 };
    const { agent, host } = rig({ maxTokens: 1000 }, [
      { ...call("noop"), usage },
      { ...call("noop"), usage },
    ]);
    const run = await agent.prompt("go");
    expect(run.reason).toBe("used 1400 tokens, over the limit of 1000 for one run (guards maxTokens)");
    // A new run starts from zero.
    (host.services.get("scripted") as ScriptedService).push(
      { ...call("noop"), usage },
      { text: "fine", usage: { input: 100, output: 0 } },
    );
    expect((await agent.prompt("again")).reason).toBeUndefined();
  });

  it("stops at maxCost using the provider's cost", async () => {
    let n = 0;
    const costly = definePlugin({
      id: "costly",
      setup(ctx) {
        ctx.providers.register({
          id: "costly",
          async *stream() {
            const usage = {
              ...emptyUsage(),
              input: 10,
              cost: { input: 0.02, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.02 },
            };
            const message = {
              role: "assistant" as const,
              content: [{ type: "toolCall" as const, id: `c${++n}`, name: "noop", arguments: {} }],
              provider: "costly",
              model: "m",
              usage,
              stopReason: "toolUse" as const,
              timestamp: Date.now(),
            };
            yield { type: "done" as const, message };
          },
        });
      },
    });
    const { agent } = rig({ maxCost: 0.05 }, [], [costly]);
    const run = await agent.prompt("go");
    expect(run.reason).toBe("spent $0.0600, over the limit of $0.05 for one run (guards maxCost)");
    expect(n).toBe(3);
  });
});

describe("repeated failing calls", () => {
  it("guides the model at the second failure, then stops at the fourth", async () => {
    const { agent } = rig({}, [
      call("flaky", { path: "a" }),
      call("flaky", { path: "b" }),
      call("flaky", { path: "a" }),
      call("flaky", { path: "a" }),
      call("flaky", { path: "a" }),
      { text: "never" },
    ]);
    const run = await agent.prompt("go");
    const texts = results(run.messages).map((r) => textOf(r));
    expect(texts[0]).toBe("ENOENT: no such file");
    expect(texts[1]).toBe("ENOENT: no such file"); // other arguments: another call
    expect(texts[2]).toContain(
      "[guards] This exact flaky call has now failed 2 times with the same arguments. Do not repeat it",
    );
    expect(texts[3]).toContain("failed 3 times");
    expect(run.reason).toBe('the same failing call was repeated 4 times: flaky {"path":"a"} (guards repeatedFailures)');
    expect(results(run.messages)).toHaveLength(5);
  });

  it("a success clears the count", async () => {
    // The same call fails, succeeds, fails again: two failures in all, but never two in a row.
    const { agent } = rig({ repeatedFailures: { warnAfter: 2, stopAfter: 2 } }, [
      call("flip", { path: "a" }),
      call("flip", { path: "a" }),
      call("flip", { path: "a" }),
      { text: "done" },
    ]);
    const run = await agent.prompt("go");
    expect(run.reason).toBeUndefined();
    expect(textOf(run.messages.at(-1))).toBe("done");
    expect(results(run.messages).map((r) => [r.isError, textOf(r)])).toEqual([
      [true, "EAGAIN: try again"],
      [false, "ok"],
      [true, "EAGAIN: try again"],
    ]);
  });
});

describe("verify done-gate", () => {
  it("feeds a failing check back with its output, and lets the run end once it passes", async () => {
    const seen: string[] = [];
    const { agent, cwd } = rig({ verify: { command: "echo checking for done.txt; test -f done.txt" } }, [
      { text: "finished" },
      (request: ProviderRequest) => {
        seen.push(textOf(request.messages.at(-1) as AgentMessage));
        return call("touch", { name: "done.txt" });
      },
      { text: "finished for real" },
    ]);
    const run = await agent.prompt("go");
    expect(seen[0]).toBe(
      "[guards] You are not done: the check `echo checking for done.txt; test -f done.txt` exited with code 1 (attempt 1 of 3). Fix the cause, then finish again. Its output:\n```\nchecking for done.txt\n```",
    );
    expect(existsSync(join(cwd, "done.txt"))).toBe(true);
    expect(run.reason).toBeUndefined();
    expect(textOf(run.messages.at(-1))).toBe("finished for real");
  });

  it("stops with the failure after the last attempt", async () => {
    const { agent } = rig({ verify: { command: "echo broken >&2; exit 3", attempts: 2 } }, [
      { text: "done" },
      { text: "done, really" },
      { text: "never" },
    ]);
    const run = await agent.prompt("go");
    expect(run.reason).toBe(
      "the done check `echo broken >&2; exit 3` still fails after 2 attempt(s) (exited with code 3) (guards verify)",
    );
    expect(run.messages.filter((m) => m.role === "assistant")).toHaveLength(2);
  });

  it("kills a check that runs past its timeout", async () => {
    const { agent } = rig({ verify: { command: "sleep 30", attempts: 1, timeout: 0.3 } }, [{ text: "done" }]);
    const started = Date.now();
    const run = await agent.prompt("go");
    expect(run.reason).toMatch(/still fails after 1 attempt\(s\) \(timed out after 0.3 s\)/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("does not run while the model is still calling tools", async () => {
    const { agent, cwd } = rig({ verify: { command: "echo ran >> verify.log" } }, [
      call("noop"),
      call("noop"),
      { text: "done" },
    ]);
    await agent.prompt("go");
    expect(existsSync(join(cwd, "verify.log"))).toBe(true);
    const { readFileSync } = await import("node:fs");
    expect(readFileSync(join(cwd, "verify.log"), "utf8")).toBe("ran\n");
  });
});
