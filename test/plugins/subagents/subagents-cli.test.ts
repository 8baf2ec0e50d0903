/** subagents through the shipped CLI (dist/bin/coil.js): JSON-mode child events and the child's session file opened with --session. */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { childEnv } from "../../support/env.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
const temps: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  temps.push(d);
  return d;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});
beforeAll(() => {
  if (!existsSync(join(packageRoot(), "dist", "plugins", "subagents", "index.js")))
    throw new Error("dist/ has no subagents plugin: run `npm run build`");
});

function coil(cwd: string, home: string, args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    env: childEnv({ COIL_HOME: home, HOME: home }),
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("subagents in the CLI", () => {
  it("JSON mode tags child events with the child's id; the child's session opens with --session", () => {
    const cwd = temp("coil-subagents-cli-");
    const home = temp("coil-subagents-cli-home-");
    writeFileSync(
      join(cwd, "run.yaml"),
      `- toolCalls: [{ id: t1, name: task, arguments: { description: "look around", prompt: "CHILD: list the files" } }]
- toolCalls: [{ id: c1, name: ls, arguments: {} }]
  usage: { input: 10 }
- text: "child saw run.yaml"
  usage: { input: 20, output: 3 }
- text: "main done"
`,
    );
    const first = coil(cwd, home, ["--provider", "scripted", "--script", "run.yaml", "--mode", "json", "go"]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const events = first.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const updates = events.filter((e) => e.type === "tool_execution_update" && e.toolCallId === "t1");
    expect(updates.every((u) => u.partial.details.subagent.id === "t1")).toBe(true);
    expect(updates.map((u) => u.partial.details.event.type)).toEqual(
      expect.arrayContaining(["agent_start", "tool_execution_start", "tool_execution_end", "agent_end"]),
    );
    expect(
      updates.find((u) => u.partial.details.event.type === "tool_execution_start").partial.details.event.toolName,
    ).toBe("ls");
    const end = events.find((e) => e.type === "tool_execution_end" && e.toolCallId === "t1");
    expect(end.result.content[0].text).toMatch(
      /^child saw run\.yaml\n\n\[sub-agent general · session \S+ \(.+\.jsonl\) · scripted · 2 requests/,
    );
    const file: string = end.result.details.subagent.session.file;

    // The main session folder lists only the main session; the child sits in subagents/.
    const mainDir = dirname(dirname(file));
    expect(readdirSync(mainDir).filter((n) => n.endsWith(".jsonl"))).toHaveLength(1);
    const header = JSON.parse(readFileSync(file, "utf8").split("\n")[0]!);
    expect(header.parentSession).toMatchObject({ toolCallId: "t1", agent: "general" });

    // Stats of the main session count the child: with cost-audit by agent type, without it in the totals.
    const mainFile = join(mainDir, readdirSync(mainDir).find((n) => n.endsWith(".jsonl"))!);
    const stats = coil(cwd, home, ["sessions", "stats", mainFile]);
    expect(stats.code).toBe(0);
    expect(stats.stdout).toContain("sub-agents: 1 run, 2 requests, 33 tokens (0 from the cache), 3 output, $0.00");
    writeFileSync(join(cwd, "bare.yaml"), "extends: default\nplugins:\n  - cost-audit: false\n");
    const bare = coil(cwd, home, ["--preset", "bare.yaml", "sessions", "stats", mainFile]);
    expect(bare.stdout).toMatch(/: 4 requests, 30 input, 0 cache read, 0 cache write, 3 output tokens, \$0\.0000\n$/);

    // Exports show the link both ways.
    const childExport = coil(cwd, home, ["sessions", "export", file]);
    expect(childExport.stdout).toContain("- sub-agent (general) run by the task call `t1` of session `");
    const childHtml = coil(cwd, home, ["sessions", "export", file, "--format", "html"]);
    expect(childHtml.stdout).toMatch(
      /<p>sub-agent \(general\) run by the task call t1 of session [0-9a-f-]+ \(.+\.jsonl\)<\/p><\/header>/,
    );
    const mainExport = coil(cwd, home, ["sessions", "export", mainFile]);
    expect(mainExport.stdout).toContain(`## Result: task (general sub-agent, session ${file})`);

    writeFileSync(join(cwd, "more.yaml"), `- text: "continuing the child"\n`);
    const second = coil(cwd, home, [
      "--provider",
      "scripted",
      "--script",
      "more.yaml",
      "--session",
      file,
      "-p",
      "and now?",
    ]);
    expect(second.stderr).toBe("");
    expect(second.code).toBe(0);
    expect(second.stdout).toBe("continuing the child\n");
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const roles = lines.filter((l) => l.type === "message").map((l) => l.message.role);
    expect(roles).toEqual(["user", "assistant", "toolResult", "assistant", "user", "assistant"]);
  });
});

describe("a script per conversation", () => {
  it("three parallel children answered from their own scripts finish out of order; results come in call order", () => {
    const cwd = temp("coil-subagents-cli-");
    const home = temp("coil-subagents-cli-home-");
    writeFileSync(
      join(cwd, "run.yaml"),
      `replies:
  - toolCalls:
      - { id: a, name: task, arguments: { description: one, prompt: "A: slow" } }
      - { id: b, name: task, arguments: { description: two, prompt: "B: medium" } }
      - { id: c, name: task, arguments: { description: three, prompt: "C: fast" } }
  - text: "all three answered"
conversations:
  "A:": [{ text: "answer A", delayMs: 300 }]
  "B:": [{ text: "answer B", delayMs: 150 }]
  "C:": [{ text: "answer C" }]
`,
    );
    const r = coil(cwd, home, ["--provider", "scripted", "--script", "run.yaml", "--mode", "json", "go"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const ends = events.filter((e) => e.type === "tool_execution_end" && e.toolName === "task");
    expect(ends.map((e) => e.toolCallId)).toEqual(["c", "b", "a"]);
    const final = events.find((e) => e.type === "agent_end");
    const results = final.messages.filter((m: { role: string }) => m.role === "toolResult");
    expect(
      results.map((m: { toolCallId: string; content: { text: string }[] }) => [
        m.toolCallId,
        m.content[0]!.text.split("\n")[0],
      ]),
    ).toEqual([
      ["a", "answer A"],
      ["b", "answer B"],
      ["c", "answer C"],
    ]);
    expect(final.messages.at(-1).content[0].text).toBe("all three answered");
  });

  it("a conversation that runs out of replies fails with a message naming it", () => {
    const cwd = temp("coil-subagents-cli-");
    const home = temp("coil-subagents-cli-home-");
    writeFileSync(
      join(cwd, "run.yaml"),
      `replies:\n  - toolCalls: [{ id: a, name: task, arguments: { description: one, prompt: "A: x" } }]\n  - text: done\nconversations:\n  "A:": []\n`,
    );
    const r = coil(cwd, home, ["--provider", "scripted", "--script", "run.yaml", "-p", "go"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("done\n");
    const sessions = readdirSync(join(home, "sessions"));
    const dir = join(home, "sessions", sessions[0]!);
    const child = readdirSync(join(dir, "subagents"))[0]!;
    expect(readFileSync(join(dir, "subagents", child), "utf8")).toContain(
      `script exhausted: conversation 'A:' asked for reply 1, but ${join(cwd, "run.yaml")} has 0 for it`,
    );
  });
});

describe("subagents in coil/sdk", () => {
  it("the default preset has the task tool, and subscribers see the child's events tagged with its id", async () => {
    // The built coil/sdk (dist/, what `import "coil/sdk"` gives a user): the default preset from source would
    // transpile every built-in plugin through jiti first (20–40 s), which is not what this test is about.
    const { createAgent } = (await import(
      pathToFileURL(join(packageRoot(), "dist", "sdk", "index.js")).href
    )) as typeof import("../../../sdk/index.js");
    const cwd = temp("coil-subagents-sdk-");
    const home = temp("coil-subagents-sdk-home-");
    writeFileSync(
      join(cwd, "run.yaml"),
      `- toolCalls: [{ id: s1, name: task, arguments: { description: "peek", prompt: "x", agent: explore } }]
- text: "child answer"
- text: "main answer"
`,
    );
    const coilAgent = await createAgent({
      cwd,
      home,
      env: childEnv({ COIL_HOME: home, HOME: home }),
      provider: "scripted",
      flags: { script: join(cwd, "run.yaml"), "no-session": true },
    });
    const tagged: string[] = [];
    coilAgent.subscribe((e) => {
      if (e.type === "tool_execution_update" && e.toolName === "task")
        tagged.push(
          `${(e.partial.details as { subagent: { id: string } }).subagent.id}:${(e.partial.details as { event: { type: string } }).event.type}`,
        );
    });
    const result = await coilAgent.prompt("go");
    await coilAgent.close();
    expect(coilAgent.lastText()).toBe("main answer");
    expect(result.stopReason).toBe("stop");
    expect(tagged[0]).toBe("s1:agent_start");
    expect(tagged.at(-1)).toBe("s1:agent_end");
  });
});

describe("subagents over RPC", () => {
  it("streams the child's events, tagged with its id, and abort reaches the child", async () => {
    const { RpcClient } = await import("../../../sdk/rpc-client/index.js");
    const cwd = temp("coil-subagents-rpc-");
    const home = temp("coil-subagents-rpc-home-");
    writeFileSync(
      join(cwd, "replies.yaml"),
      `- toolCalls: [{ id: r1, name: task, arguments: { description: "wait", prompt: "CHILD: wait" } }]
- toolCalls: [{ id: s1, name: bash, arguments: { command: "sleep 10" } }]
`,
    );
    const client = await RpcClient.start({
      bin: BIN,
      cwd,
      env: childEnv({ COIL_HOME: home, HOME: home }),
      args: ["--provider", "scripted", "--script", "replies.yaml"],
      timeoutMs: 15_000,
    });
    const updates: {
      subagent: { id: string };
      event: { type: string; toolName?: string; result?: { content: { text: string }[] } };
    }[] = [];
    client.on(
      "event",
      (e: { type: string; partial?: { details?: unknown } }) =>
        e.type === "tool_execution_update" && updates.push(e.partial!.details as never),
    );
    try {
      const ended = client.waitFor("agent_end");
      await client.prompt("go");
      const t0 = Date.now();
      while (!updates.some((u) => u.event.type === "tool_execution_start" && u.event.toolName === "bash")) {
        if (Date.now() - t0 > 10_000) throw new Error("the child's bash call never started");
        await new Promise((r) => setTimeout(r, 20));
      }
      await client.abort();
      await ended;
      const childEnd = updates.find((u) => u.event.type === "tool_execution_end");
      expect(updates.every((u) => u.subagent.id === "r1")).toBe(true);
      expect(childEnd?.event.result?.content[0]?.text).toBe("Aborted by the user before the tool finished.");
    } finally {
      expect(await client.close()).toBe(0);
    }
  });
});
