import { createHash } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { Type, definePlugin, emptyUsage, type AssistantMessage, type CliStreams } from "../../../api/index.js";
import compaction from "../../../plugins/compaction-summary/index.js";
import costAudit, {
  audit,
  formatReport,
  lastRecord,
  recordsFrom,
  snapshot,
  type TurnAudit,
} from "../../../plugins/cost-audit/index.js";
import { createTestAgent, sleep } from "../../support/harness.js";
import { startRig, tempDirs } from "../../support/session-jsonl.js";
import { runSubcommand } from "../../support/subcommand.js";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

const knobs = { extraBlock: false, hideTool: false };
const knobPlugin = definePlugin({
  id: "knobs",
  setup(ctx) {
    ctx.tools.register({
      name: "noop",
      description: "does nothing",
      parameters: Type.Object({}),
      execute: async () => ({ content: [{ type: "text", text: "" }] }),
    });
    ctx.tap("before_request", (r) => ({
      ...r,
      system: knobs.extraBlock ? [...r.system, { id: "extra", text: "changed" }] : r.system,
      tools: knobs.hideTool ? r.tools.filter((t) => t.name !== "noop") : r.tools,
    }));
  },
});

describe("cost-audit", () => {
  it("explains each cache miss: system prompt, tools, compaction, model, idle time", async () => {
    const { agent, scripted, host } = createTestAgent({
      plugins: [[knobPlugin], [compaction, { keepRecentTokens: 1 }], [costAudit, { cacheTtlSeconds: 1 }]],
    });
    const reply = (usage: { input: number; cacheRead?: number; cacheWrite?: number; output?: number }) => ({
      text: "ok",
      usage: { output: 10, ...usage },
    });
    scripted.push(reply({ input: 10, cacheWrite: 2_000 }));
    await agent.prompt(`one ${"word ".repeat(200)}`); // long enough that its summary is smaller (compaction must shrink)
    scripted.push(reply({ input: 30, cacheRead: 2_000 }));
    await agent.prompt("two");
    knobs.extraBlock = true;
    scripted.push(reply({ input: 30, cacheWrite: 2_040 }));
    await agent.prompt("three");
    knobs.hideTool = true;
    scripted.push(reply({ input: 20, cacheWrite: 2_060 }));
    await agent.prompt("four");
    scripted.push({ text: "## Goal\nsummary" });
    await agent.compact();
    scripted.push(reply({ input: 20, cacheWrite: 300 }));
    await agent.prompt("five");
    agent.setModel("scripted", { id: "bigger", provider: "scripted", contextWindow: 200_000, maxOutput: 8_000 });
    scripted.push(reply({ input: 350, cacheWrite: 0 }));
    await agent.prompt("six");
    scripted.push(reply({ input: 10, cacheRead: 340 }));
    await agent.prompt("seven");
    await sleep(1_100);
    scripted.push(reply({ input: 400, cacheRead: 0 }));
    await agent.prompt("eight");

    const records = (host.services.get("cost-audit") as { records(): TurnAudit[] }).records();
    expect(records.map((r) => [r.prompt, r.cacheRead, r.missed, r.reasons])).toEqual([
      [2_010, 0, 0, ["first request: nothing cached yet"]],
      [2_030, 2_000, 10, []],
      [2_070, 0, 2_030, ["system prompt changed"]],
      [2_080, 0, 2_070, ["tools changed"]],
      [320, 0, 320, ["compaction replaced the history"]],
      [350, 0, 320, ["model changed (scripted/scripted → scripted/bigger)"]],
      [350, 340, 10, []],
      [400, 0, 350, [expect.stringMatching(/^idle 1s, past the 1s cache lifetime$/)]],
    ]);
    const text = (await host.commands.get("cost")!.run("", agent)) as string;
    expect(text.split("\n")[0]).toBe("this run (no session)");
    expect(text).toMatch(/^turn\s+model\s+prompt\s+cache read\s+cache write\s+output\s+cost\s+missed\s+why$/m);
    // provider/id, so two providers' models of the same name stay apart (#22)
    expect(text).toMatch(
      /^3\s+scripted\/scripted\s+2,070\s+0\s+2,040\s+10\s+\$0\.00\s+2,030\s+system prompt changed$/m,
    );
    expect(text).toContain(
      "total: 8 requests, 9,610 prompt tokens (2,340 read from the cache, 24%; 6,400 written), 80 output tokens, $0.00",
    );
    expect(text).toContain(
      "cache misses: 5,110 prompt tokens in 7 requests; system prompt changed (1), tools changed (1), compaction replaced the history (1), model changed (1), idle past the cache lifetime (1)",
    );
    knobs.extraBlock = false;
    knobs.hideTool = false;
  });

  it("hashes the tools as it always did (records written before stay comparable), each schema stringified once", () => {
    const model = { id: "m", provider: "p", contextWindow: 1000, maxOutput: 100 };
    const parameters = Type.Object({ path: Type.String({ description: "a file" }), n: Type.Optional(Type.Number()) });
    const tools = [
      { name: "read", description: 'Reads "a" file', parameters },
      { name: "ls", description: "Lists", parameters: Type.Object({}) },
    ];
    const request = (list: typeof tools) => ({ model, system: [], messages: [], tools: list, options: {} });
    const before = createHash("sha256")
      .update(JSON.stringify(tools.map((t) => [t.name, t.description, t.parameters])))
      .digest("hex")
      .slice(0, 16);
    expect(snapshot(request(tools)).toolsHash).toBe(before);
    // a new array of the same tools (as every request builds) hashes the same; a changed description does not
    expect(snapshot(request([...tools])).toolsHash).toBe(before);
    expect(snapshot(request([{ ...tools[0]!, description: "Reads" }, tools[1]!])).toolsHash).not.toBe(before);
  });

  it("hashes what the provider receives and sums the cost the provider reported", () => {
    const model = { id: "m", provider: "p", contextWindow: 1000, maxOutput: 100 };
    const a = snapshot({ model, system: [{ id: "role", text: "x" }], messages: [], tools: [], options: {} }, 1_000);
    const b = snapshot(
      {
        model,
        system: [{ id: "role", text: "x" }],
        messages: [{ role: "user", content: "new", timestamp: 1 }],
        tools: [],
        options: {},
      },
      2_000,
    );
    expect(b.systemHash).toBe(a.systemHash);
    const msg = (cost: number, cacheRead: number): AssistantMessage => ({
      role: "assistant",
      content: [],
      provider: "p",
      model: "m",
      stopReason: "stop",
      timestamp: 1,
      usage: {
        ...emptyUsage(),
        input: 100,
        cacheRead,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: cost },
      },
    });
    const first = audit(a, msg(0.0123, 0), undefined, { compacted: false, cacheTtlMs: 300_000 });
    expect(audit(b, msg(0, 0), first, { compacted: false, cacheTtlMs: 300_000 })).toMatchObject({
      missed: 100,
      reasons: ["the provider reported no cache use"],
    });
    expect(
      audit(b, { ...msg(0, 0), usage: { ...emptyUsage(), input: 150, cacheRead: 50, cacheWrite: 10 } }, first, {
        compacted: false,
        cacheTtlMs: 300_000,
      }).reasons,
    ).toEqual([]);
    const second = audit(b, msg(0.002, 100), first, { compacted: false, cacheTtlMs: 300_000 });
    expect(second).toMatchObject({ prompt: 200, missed: 0, reasons: [], cost: 0.002 });
    expect(formatReport([first, second])).toContain(
      "total: 2 requests, 300 prompt tokens (100 read from the cache, 33%; 0 written), 0 output tokens, $0.01",
    );
    // Replies recorded without this plugin: rows from usage alone, compactions still explained.
    const rows = recordsFrom(
      [{ type: "message", message: msg(0.01, 0) }, { type: "compaction" }, { type: "message", message: msg(0.01, 0) }],
      300_000,
    );
    expect(rows.map((r) => r.reasons)).toEqual([
      ["first request: nothing cached yet"],
      ["compaction replaced the history"],
    ]);
  });

  it("stores the records in the session; /cost and `coil sessions stats <id>` print them", async () => {
    const dirs = tempDirs("coil-cost-");
    temps.push(dirs.root);
    const rig = await startRig({
      ...dirs,
      plugins: [[costAudit]],
      script: [
        { text: "a", usage: { input: 5, cacheWrite: 1_000, output: 7 } },
        { text: "b", usage: { input: 9, cacheRead: 1_000, output: 3 } },
      ],
    });
    await rig.agent.prompt("first");
    await rig.agent.prompt("second");
    const cost = (await rig.host.commands.get("cost")!.run("", rig.agent)) as string;
    expect(cost.split("\n")[0]).toBe(`session ${rig.session.id}`);
    expect(cost).toContain(
      "total: 2 requests, 2,014 prompt tokens (1,000 read from the cache, 50%; 1,000 written), 10 output tokens",
    );
    const file = rig.session.file!;
    const custom = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === "custom");
    expect(custom.map((e) => [e.customType, e.data.prompt, e.data.cacheRead])).toEqual([
      ["cost-audit", 1_005, 0],
      ["cost-audit", 1_009, 1_000],
    ]);
    await rig.stop();

    let out = "";
    const stdout = new PassThrough().on("data", (d: Buffer) => (out += d.toString()));
    const io: CliStreams = {
      cwd: dirs.cwd,
      env: { COIL_HOME: dirs.home },
      stdin: new PassThrough(),
      stdout,
      stderr: new PassThrough(),
    };
    const sessions = (argv: string[]) => runSubcommand(rig.commandLine, ["sessions", ...argv], io);
    expect(await sessions(["stats", rig.session.id.slice(0, 8)])).toBe(0);
    expect(out).toContain(`session ${rig.session.id} (${file})`);
    expect(out).toContain("total: 2 requests, 2,014 prompt tokens");
    out = "";
    expect(await sessions(["stats", file, "--json"])).toBe(0);
    expect(JSON.parse(out).totals).toEqual({
      requests: 2,
      prompt: 2_014,
      cacheRead: 1_000,
      cacheWrite: 1_000,
      output: 10,
      cost: 0,
      missed: 5,
    });
    expect(await sessions(["stats"])).toBe(2);
  });

  it("`coil sessions stats` without the cost-audit plugin prints the usage totals", async () => {
    const dirs = tempDirs("coil-cost-");
    temps.push(dirs.root);
    const rig = await startRig({ ...dirs, script: [{ text: "a", usage: { input: 5, cacheWrite: 100, output: 7 } }] });
    await rig.agent.prompt("first");
    await rig.stop();
    let out = "";
    const stdout = new PassThrough().on("data", (d: Buffer) => (out += d.toString()));
    const io: CliStreams = {
      cwd: dirs.cwd,
      env: { COIL_HOME: dirs.home },
      stdin: new PassThrough(),
      stdout,
      stderr: new PassThrough(),
    };
    expect(await runSubcommand(rig.commandLine, ["sessions", "stats", rig.session.id], io)).toBe(0);
    expect(out).toBe(
      `session ${rig.session.id}: 1 requests, 5 input, 0 cache read, 100 cache write, 7 output tokens, $0.0000\n`,
    );
  });
});

describe("cost-audit: the record a resumed session compares with", () => {
  it("is the newest one of the path, found from the end: the same as recordsFrom's last, without auditing the whole path", () => {
    const reply = (model: string, input: number, timestamp: number): AssistantMessage => ({
      role: "assistant",
      content: [{ type: "text", text: "x" }],
      provider: "p",
      model,
      usage: { ...emptyUsage(), input },
      stopReason: "stop",
      timestamp,
    });
    const a = reply("m1", 100, 1000);
    const b = reply("m2", 200, 2000);
    const live = reply("m3", 300, 3000);
    const recordA = audit({ at: 900, provider: "p", model: "m1", systemHash: "s", toolsHash: "t" }, a, undefined, {
      compacted: false,
      cacheTtlMs: 300_000,
    });
    const withRecord = [
      { type: "message", message: a },
      { type: "custom", customType: "cost-audit", data: recordA },
    ];
    expect(lastRecord(withRecord, 300_000)).toEqual(recordA);
    const bare = [
      ...withRecord,
      { type: "message", message: b },
      { type: "compaction" },
      { type: "message", message: live },
    ];
    // what the next request is compared on (the reasons of that older reply do not matter)
    const compared = (r: TurnAudit | undefined) =>
      r && {
        at: r.at,
        provider: r.provider,
        model: r.model,
        systemHash: r.systemHash,
        toolsHash: r.toolsHash,
        prompt: r.prompt,
      };
    expect(compared(lastRecord(bare, 300_000, live))).toEqual(compared(recordsFrom(bare.slice(0, -1), 300_000).at(-1)));
    expect(lastRecord(bare, 300_000, live)).toMatchObject({ model: "m2", prompt: 200, at: 2000 });
    expect(lastRecord([{ type: "message", message: live }], 300_000, live)).toBeUndefined();
  });
});
