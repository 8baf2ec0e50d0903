/** session-jsonl in process: the file format, reading damaged files, the context, the tree operations, locks and write failures. */
import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { Type, definePlugin, textOf, type AgentMessage } from "../../../api/index.js";
import {
  FORMAT_VERSION,
  SessionLockedError,
  SessionStore,
  acquireLock,
  exportSession,
  nodeOps,
  readSession,
  type SessionOps,
} from "../../../plugins/session-jsonl/index.js";
import compactionSummary from "../../../plugins/compaction-summary/index.js";
import { pairingProblems, startRig, tempDirs } from "../../support/session-jsonl.js";

const FIXTURES = join(import.meta.dirname, "..", "..", "fixtures", "sessions");
const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

function dirs() {
  const d = tempDirs();
  cleanup.push(d.root);
  mkdirSync(d.cwd, { recursive: true });
  return d;
}

const lines = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);
const texts = (messages: readonly AgentMessage[]) =>
  messages.map(
    (m) => `${m.role}:${textOf(m) || (m.role === "assistant" ? m.content.map((c) => c.type).join("+") : "")}`,
  );

/** A tool the scripted model can call. */
const echoTool = definePlugin({
  id: "test-echo",
  setup(ctx) {
    ctx.tools.register({
      name: "echo",
      description: "echo the text",
      parameters: Type.Object({ text: Type.String() }),
      async execute(args) {
        return { content: [{ type: "text", text: `echo: ${args.text}` }] };
      },
    });
  },
});

describe("session-jsonl: writing", () => {
  it("writes a header and one line per entry as the run goes, with ids, parents and timestamps", async () => {
    const d = dirs();
    const rig = await startRig({
      ...d,
      plugins: [[echoTool]],
      script: [{ text: "calling", toolCalls: [{ name: "echo", arguments: { text: "x" } }] }, { text: "done" }],
    });
    expect(rig.session.persistent).toBe(true);
    const file = rig.session.file!;
    expect(existsSync(file)).toBe(false); // a new session's file appears with its first entry
    expect(existsSync(`${file}.lock`)).toBe(true);
    const result = await rig.agent.prompt("go");
    expect(result.stopReason).toBe("stop");
    const [header, ...entries] = lines(file);
    expect(header).toMatchObject({ type: "session", version: FORMAT_VERSION, id: rig.session.id, cwd: d.cwd });
    expect(entries.map((e) => e.type)).toEqual(["model_change", "message", "message", "message", "message"]);
    expect(entries.map((e) => e.message?.role ?? e.modelId)).toEqual([
      "scripted",
      "user",
      "assistant",
      "toolResult",
      "assistant",
    ]);
    entries.forEach((e, i) => {
      expect(e.id).toMatch(/^[0-9a-f]{8}$/);
      expect(e.parentId).toBe(i === 0 ? null : entries[i - 1]!.id);
      expect(Date.parse(e.timestamp)).toBeGreaterThan(0);
    });
    expect(file.startsWith(join(d.home, "sessions"))).toBe(true);
    expect(rig.session.leafId).toBe(entries.at(-1)!.id);
    await rig.stop();
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it("appends without rewriting: earlier bytes never change and each entry costs one write", async () => {
    const d = dirs();
    let writes = 0;
    const ops: SessionOps = {
      ...nodeOps,
      writeSync: (fd, data) => {
        writes++;
        return nodeOps.writeSync(fd, data);
      },
    };
    const rig = await startRig({ ...d, ops, script: [{ text: "one" }, { text: "two" }] });
    await rig.agent.prompt("first");
    const before = readFileSync(rig.session.file!);
    const writesBefore = writes;
    await rig.agent.prompt("second");
    const after = readFileSync(rig.session.file!);
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    expect(writes - writesBefore).toBe(2); // user + assistant: one write each
    await rig.stop();
  });

  it("--no-session keeps everything in memory and writes nothing", async () => {
    const d = dirs();
    const rig = await startRig({ ...d, flags: { "no-session": true }, script: [{ text: "ok" }] });
    await rig.agent.prompt("hi");
    expect(rig.session.persistent).toBe(false);
    expect(rig.session.file).toBeUndefined();
    expect(texts(rig.session.context())).toEqual(["user:hi", "assistant:ok"]);
    expect(existsSync(d.home)).toBe(false);
    await rig.stop();
  });
});

describe("session-jsonl: reading damaged files", () => {
  async function sessionWithTurns(d: ReturnType<typeof dirs>) {
    const rig = await startRig({
      ...d,
      plugins: [[echoTool]],
      script: [{ text: "a", toolCalls: [{ name: "echo", arguments: { text: "1" } }] }, { text: "b" }, { text: "c" }],
    });
    await rig.agent.prompt("one");
    await rig.agent.prompt("two");
    await rig.stop();
    return rig.session.file!;
  }

  it("skips a corrupt line in the middle and a torn last line, naming their line numbers, and keeps every valid entry", async () => {
    const d = dirs();
    const file = await sessionWithTurns(d);
    const original = readFileSync(file, "utf8").split("\n").filter(Boolean);
    // a garbage line at line 4, and a torn line at the end
    const damaged = [
      ...original.slice(0, 3),
      '{"type":"message","id":"zz',
      ...original.slice(3),
      '{"type":"message","id":"torn","parentId":',
    ];
    writeFileSync(file, damaged.join("\n"));
    const read = readSession(nodeOps, file);
    expect(read.entries).toHaveLength(original.length - 1);
    expect(read.warnings).toEqual([
      expect.stringMatching(/:4: not valid JSON; line skipped$/),
      expect.stringMatching(new RegExp(`:${damaged.length}: the last line is incomplete`)),
    ]);
    expect(read.endsTorn).toBe(true);

    const rig = await startRig({ ...d, flags: { continue: true }, script: [{ text: "d" }] });
    expect(rig.stderr()).toMatch(/line 4|:4: not valid JSON/);
    expect(rig.stderr()).toContain("the last line is incomplete");
    await rig.agent.prompt("three");
    await rig.stop();
    // The first append after a torn line starts on a new line, so nothing valid is glued to it.
    const again = readSession(nodeOps, file);
    expect(again.entries).toHaveLength(original.length - 1 + 2);
    expect(again.warnings).toHaveLength(2);
    expect(texts(rig.session.context())).toEqual([
      "user:one",
      "assistant:a",
      "toolResult:echo: 1",
      "assistant:b",
      "user:two",
      "assistant:c",
      "user:three",
      "assistant:d",
    ]);
  });

  it("repairs the context when a damaged line held a tool result or the call itself", async () => {
    const d = dirs();
    const file = await sessionWithTurns(d);
    const original = readFileSync(file, "utf8").split("\n").filter(Boolean);
    const resultLine = original.findIndex((l) => l.includes('"role":"toolResult"'));
    const callLine = original.findIndex((l) => l.includes('"type":"toolCall"'));

    writeFileSync(file, original.filter((_, i) => i !== resultLine).join("\n") + "\n");
    const lostResult = SessionStore.open(file).context();
    expect(pairingProblems(lostResult)).toEqual([]);
    expect(textOf(lostResult[2])).toContain("lost from the session file");

    writeFileSync(file, original.filter((_, i) => i !== callLine).join("\n") + "\n");
    const store = SessionStore.open(file);
    const lostCall = store.context();
    expect(pairingProblems(lostCall)).toEqual([]);
    expect(texts(lostCall)).toEqual(["user:one", "assistant:b", "user:two", "assistant:c"]);
    expect(store.warnings.join("\n")).toMatch(/missing from the file; it is attached to/);
  });

  it("keeps entries of unknown types in the tree and ignores them in the context", async () => {
    const d = dirs();
    const file = await sessionWithTurns(d);
    const entries = lines(file);
    const leaf = entries.at(-1)!;
    appendFileSync(
      file,
      JSON.stringify({
        type: "future_feature",
        id: "f00d",
        parentId: leaf.id,
        timestamp: new Date().toISOString(),
        payload: { x: 1 },
      }) + "\n",
    );
    appendFileSync(
      file,
      JSON.stringify({
        type: "message",
        id: "beef",
        parentId: "f00d",
        timestamp: new Date().toISOString(),
        message: { role: "user", content: "after it", timestamp: 1 },
      }) + "\n",
    );
    const store = SessionStore.open(file);
    expect(store.warnings).toEqual([]);
    expect(store.entry("f00d")).toMatchObject({ type: "future_feature", payload: { x: 1 } });
    expect(
      store
        .path()
        .map((e) => e.id)
        .slice(-2),
    ).toEqual(["f00d", "beef"]);
    expect(texts(store.context()).at(-1)).toBe("user:after it");
  });
});

describe("session-jsonl: context", () => {
  it("after a crash between a tool call and its results, resuming appends synthetic results first", async () => {
    const d = dirs();
    const rig = await startRig({ ...d, script: [{ text: "a" }] });
    await rig.agent.prompt("one");
    // the state a SIGKILL during a tool leaves: the assistant's calls are on disk, their results are not
    rig.session.appendMessage({
      role: "assistant",
      content: [
        { type: "text", text: "running two" },
        { type: "toolCall", id: "t1", name: "echo", arguments: { text: "1" } },
        { type: "toolCall", id: "t2", name: "echo", arguments: { text: "2" } },
      ],
      provider: "scripted",
      model: "scripted",
      usage: {
        input: 0,
        output: 0,
        cacheRead: 0,
        cacheWrite: 0,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: "toolUse",
      timestamp: Date.now(),
    });
    const file = rig.session.file!;
    await rig.stop();

    const resumed = await startRig({ ...d, flags: { continue: true }, script: [{ text: "b" }] });
    expect(resumed.session.file).toBe(file);
    expect(resumed.stderr()).toContain("closed 2 tool call(s)");
    const tail = lines(file).slice(-2);
    expect(tail.map((e) => [e.message.role, e.message.toolCallId, e.message.isError])).toEqual([
      ["toolResult", "t1", true],
      ["toolResult", "t2", true],
    ]);
    expect(tail[0]!.message.content[0].text).toContain("coil stopped before this tool finished");
    await resumed.agent.prompt("go on");
    const request = resumed.scripted.requests[0]!;
    expect(pairingProblems(request.messages)).toEqual([]);
    expect(texts(request.messages).at(-1)).toBe("user:go on");
    await resumed.stop();
  });

  it("the newest compaction on the path replaces what it summarised; the strategy's own entry is not recorded twice", async () => {
    const d = dirs();
    let service: import("../../../plugins/session-jsonl/index.js").SessionService | undefined;
    const strategy = definePlugin({
      id: "test-compact",
      setup(ctx) {
        ctx.tap("compact", async (req) => {
          const kept = req.messages.slice(-2);
          // A summary must be smaller than what it replaces (the loop refuses one that is not): "S3" for three messages.
          const summary: AgentMessage = { role: "user", content: `S${req.messages.length - 2}`, timestamp: Date.now() };
          service = ctx.services.get("session");
          if (req.instructions === "record") {
            service!.appendCompaction({
              summary: textOf(summary),
              messages: [summary],
              firstKeptEntryId: service!.entryIdOf(kept[0]!),
              tokensBefore: req.tokens,
            });
          }
          return { messages: [summary, ...kept] };
        });
      },
    });
    const rig = await startRig({
      ...d,
      plugins: [[strategy]],
      script: [{ text: "a" }, { text: "b" }, { text: "c" }, { text: "d" }, { text: "e" }],
    });
    await rig.agent.prompt("one");
    await rig.agent.prompt("two");
    await rig.agent.compact(); // the strategy does not record it: the plugin records the compaction from the event
    await rig.agent.prompt("three");
    await rig.agent.compact("record"); // this time the strategy records it itself
    await rig.agent.prompt("four");
    const live = texts(rig.agent.state.messages);
    expect(live).toEqual(["user:S3", "user:three", "assistant:c", "user:four", "assistant:d"]);
    const file = rig.session.file!;
    await rig.stop();
    expect(lines(file).filter((e) => e.type === "compaction")).toHaveLength(2);
    const reopened = SessionStore.open(file);
    expect(texts(reopened.context())).toEqual(live);
    // the path still holds every entry: nothing was removed from the file
    expect(reopened.path().filter((e) => e.type === "message")).toHaveLength(8);
  });

  it("a custom message from appendCustomMessage reaches the model as a user message; plugin state never does", async () => {
    const d = dirs();
    const rig = await startRig({ ...d, script: [{ text: "ok" }] });
    rig.session.appendCustom("test-state", { counter: 3 });
    const message = rig.session.appendCustomMessage({
      customType: "test-note",
      content: "the build is green",
      display: true,
    });
    expect(rig.session.isForModel(message)).toBe(true);
    await rig.agent.prompt("status?");
    const request = rig.scripted.requests[0]!;
    expect(request.messages.map((m) => [m.role, textOf(m)])).toEqual([
      ["user", "the build is green"],
      ["user", "status?"],
    ]);
    const file = rig.session.file!;
    await rig.stop();
    const store = SessionStore.open(file);
    expect(store.entries.map((e) => e.type)).toEqual([
      "custom",
      "custom_message",
      "model_change",
      "message",
      "message",
    ]);
    const ctx = store.context();
    expect(ctx[0]).toMatchObject({ role: "custom", customType: "test-note" });
    expect(store.forModel.has(ctx[0]!)).toBe(true);
  });

  it("restores the model the session last used when resuming", async () => {
    const d = dirs();
    const rig = await startRig({ ...d, model: "scripted-large", script: [{ text: "ok" }] });
    await rig.agent.prompt("hi");
    await rig.stop();
    const resumed = await startRig({ ...d, flags: { continue: true }, script: [{ text: "again" }] });
    expect(resumed.agent.state.model.id).toBe("scripted-large");
    expect(resumed.session.state()).toMatchObject({ model: { provider: "scripted", modelId: "scripted-large" } });
    await resumed.stop();
  });
});

describe("session-jsonl: branches, fork and clone", () => {
  async function twoTurns(d: ReturnType<typeof dirs>, extra: Parameters<typeof startRig>[0]["script"] = []) {
    const rig = await startRig({ ...d, script: [{ text: "A" }, { text: "B" }, ...extra] });
    await rig.agent.prompt("one");
    await rig.agent.prompt("two");
    const byText = (t: string) =>
      rig.session.entries().find((e) => e.type === "message" && textOf(e.message as AgentMessage) === t)!.id;
    return { rig, byText };
  }

  it("branch moves the leaf in place: the next messages are a second child, and the active path follows them", async () => {
    const d = dirs();
    const { rig, byText } = await twoTurns(d, [{ text: "C" }]);
    const file = rig.session.file!;
    const before = readFileSync(file);
    const a = byText("A");
    await rig.session.branch(a);
    expect(texts(rig.agent.state.messages)).toEqual(["user:one", "assistant:A"]);
    expect(readFileSync(file).equals(before)).toBe(true); // moving the leaf writes nothing
    await rig.agent.prompt("three");
    expect(rig.session.children(a).map((e) => textOf((e as { message: AgentMessage }).message))).toEqual([
      "two",
      "three",
    ]);
    expect(texts(rig.session.context())).toEqual(["user:one", "assistant:A", "user:three", "assistant:C"]);
    expect(readFileSync(file).subarray(0, before.length).equals(before)).toBe(true);
    await rig.stop();
    expect(texts(SessionStore.open(file).context())).toEqual(["user:one", "assistant:A", "user:three", "assistant:C"]);
  });

  it("branch with a summary leaves a branch_summary entry the model sees; summarize uses the registered summariser", async () => {
    const d = dirs();
    const { rig, byText } = await twoTurns(d, [{ text: "C" }]);
    const seen: string[][] = [];
    rig.session.setSummarizer(async (messages) => {
      seen.push(texts(messages));
      return "they asked for two and got B";
    });
    const summary = await rig.session.branch(byText("A"), { summarize: true });
    expect(seen).toEqual([["user:two", "assistant:B"]]);
    expect(summary).toMatchObject({
      type: "branch_summary",
      summary: "they asked for two and got B",
      parentId: byText("A"),
    });
    await rig.agent.prompt("three");
    const request = rig.scripted.requests.at(-1)!;
    expect(textOf(request.messages[2])).toContain("they asked for two and got B");
    expect(pairingProblems(request.messages)).toEqual([]);
    await rig.stop();
  });

  it("summarize without a summariser uses the preset's branch-summary service (compaction-summary), not the compact hook", async () => {
    const d = dirs();
    const compacts: string[] = [];
    const watch = definePlugin({
      id: "test-compact-watch",
      setup: (ctx) => ctx.tap("compact", () => void compacts.push("compact"), { stage: "GUARD" }),
    });
    const rig = await startRig({
      ...d,
      plugins: [[compactionSummary], [watch]],
      script: [{ text: "A" }, { text: "B" }, { text: "## Goal\nthey asked for two and got B" }, { text: "C" }],
    });
    await rig.agent.prompt("one");
    await rig.agent.prompt("two");
    const a = rig.session.entries().find((e) => e.type === "message" && textOf(e.message as AgentMessage) === "A")!;
    const summary = await rig.session.branch(a.id, { summarize: true, instructions: "focus on what was asked" });
    expect(summary).toMatchObject({ type: "branch_summary", summary: "## Goal\nthey asked for two and got B" });
    // the summariser's request: compaction-summary's own system prompt, the branch left and the instructions
    const request = rig.scripted.requests.at(-1)!;
    expect(request.system.map((b) => b.id)).toEqual(["compaction-summary"]);
    expect(textOf(request.messages[0])).toContain("two");
    expect(textOf(request.messages[0])).toContain("focus on what was asked");
    expect(compacts).toEqual([]);
    const [one, answer, left] = texts(rig.agent.state.messages);
    expect([one, answer]).toEqual(["user:one", "assistant:A"]);
    expect(left).toMatch(/^user:The user explored another branch.*they asked for two and got B/s);
    await rig.stop();
  });

  it("summarize with neither a summariser nor a branch-summary service is NO_SUMMARIZER, and the leaf stays", async () => {
    const d = dirs();
    const { rig, byText } = await twoTurns(d);
    await expect(rig.session.branch(byText("A"), { summarize: true })).rejects.toMatchObject({
      code: "NO_SUMMARIZER",
      hint: expect.stringContaining("compaction-summary"),
    });
    expect(texts(rig.agent.state.messages)).toEqual(["user:one", "assistant:A", "user:two", "assistant:B"]);
    await rig.stop();
  });

  it("branching at an assistant message with tool calls closes them, so no request holds an orphan call", async () => {
    const d = dirs();
    const rig = await startRig({
      ...d,
      plugins: [[echoTool]],
      script: [
        { text: "t", toolCalls: [{ name: "echo", arguments: { text: "1" } }] },
        { text: "done" },
        { text: "again" },
      ],
    });
    await rig.agent.prompt("go");
    const call = rig.session
      .entries()
      .find((e) => e.type === "message" && (e.message as AgentMessage).role === "assistant")!;
    await rig.session.branch(call.id);
    await rig.agent.prompt("retry differently");
    expect(pairingProblems(rig.scripted.requests.at(-1)!.messages)).toEqual([]);
    expect(textOf(rig.scripted.requests.at(-1)!.messages[2])).toContain("branched at this call");
    await rig.stop();
  });

  it("fork writes a new file with the path up to an entry and records its parent; clone copies the active branch", async () => {
    const d = dirs();
    const { rig, byText } = await twoTurns(d, [{ text: "C" }]);
    const original = rig.session.file!;
    const originalBytes = readFileSync(original);
    const originalId = rig.session.id;

    const forked = rig.session.fork(byText("A"));
    expect(forked.file).not.toBe(original);
    expect(rig.session.file).toBe(forked.file);
    expect(existsSync(`${original}.lock`)).toBe(false);
    expect(existsSync(`${forked.file}.lock`)).toBe(true);
    const [header, ...entries] = lines(forked.file!);
    expect(header.parentSession).toEqual({ path: original, id: originalId, entryId: byText("A") });
    expect(entries.map((e) => e.type)).toEqual(["model_change", "message", "message"]);
    expect(texts(rig.agent.state.messages)).toEqual(["user:one", "assistant:A"]);
    await rig.agent.prompt("three");
    expect(texts(SessionStore.open(forked.file!).context())).toEqual([
      "user:one",
      "assistant:A",
      "user:three",
      "assistant:C",
    ]);
    expect(readFileSync(original).equals(originalBytes)).toBe(true);

    const cloned = rig.session.clone();
    expect(lines(cloned.file!)[0]!.parentSession).toMatchObject({ path: forked.file, entryId: rig.session.leafId });
    expect(texts(SessionStore.open(cloned.file!).context())).toEqual([
      "user:one",
      "assistant:A",
      "user:three",
      "assistant:C",
    ]);
    expect(
      rig.session
        .list()
        .map((s) => s.file)
        .sort(),
    ).toEqual([original, forked.file, cloned.file].sort());
    await rig.stop();
  });

  it("labels and the session name are entries; they survive a reload and show in the list", async () => {
    const d = dirs();
    const { rig, byText } = await twoTurns(d);
    rig.session.setLabel(byText("A"), "good answer");
    rig.session.setName("refactor the parser");
    rig.session.setLabel(byText("B"), "temp");
    rig.session.setLabel(byText("B"));
    expect(() => rig.session.setLabel("nope")).toThrow(/SESSION_ENTRY_NOT_FOUND/);
    rig.session.appendThinkingLevelChange("high");
    rig.session.appendActiveToolsChange(["read", "grep"]);
    const file = rig.session.file!;
    await rig.stop();
    const store = SessionStore.open(file);
    expect([...store.labels]).toEqual([[byText("A"), "good answer"]]);
    expect(store.name).toBe("refactor the parser");
    expect(store.state()).toEqual({
      model: { provider: "scripted", modelId: "scripted" },
      thinkingLevel: "high",
      activeTools: ["read", "grep"],
    });
    expect(texts(store.context())).toEqual(["user:one", "assistant:A", "user:two", "assistant:B"]);
    const md = exportSession(store, "md");
    expect(md).toContain("# refactor the parser");
    expect(md).toContain("## Assistant (scripted/scripted) — good answer"); // provider/id, as everywhere (#22)
  });
});

describe("session-jsonl: migration", () => {
  it("reads the version-1 linear fixture through the migration and continues it in a new file", async () => {
    const d = dirs();
    const fixture = join(FIXTURES, "v1-linear.jsonl");
    const store = SessionStore.open(fixture);
    expect(store.header.version).toBe(1);
    expect(store.warnings).toEqual([]);
    expect(store.entries.map((e) => [e.id, e.parentId])).toEqual([
      ["l2", null],
      ["l3", "l2"],
      ["l4", "l3"],
      ["l5", "l4"],
      ["l6", "l5"],
      ["l7", "l6"],
      ["l8", "l7"],
      ["l9", "l8"],
      ["l10", "l9"],
    ]);
    expect(store.entry("l2")).toMatchObject({ type: "model_change", provider: "scripted", modelId: "scripted-old" });
    expect(store.entry("l9")).toMatchObject({ type: "compaction", firstKeptEntryId: "l7", tokensBefore: 64 });
    const ctx = store.context();
    expect(texts(ctx).slice(1)).toEqual([
      "user:Which one is bigger?",
      "assistant:b.txt is bigger.",
      "user:Thanks. Now delete a.txt.",
    ]);
    expect(textOf(ctx[0])).toContain("The user asked for the files");

    const copy = join(d.root, "old.jsonl");
    copyFileSync(fixture, copy);
    const rig = await startRig({ ...d, flags: { session: copy }, script: [{ text: "Deleted." }] });
    expect(rig.stderr()).toContain("older session format 1");
    expect(rig.session.file).not.toBe(copy);
    expect(rig.agent.state.model.id).toBe("scripted-old");
    await rig.agent.prompt("go");
    await rig.stop();
    expect(readFileSync(copy, "utf8")).toBe(readFileSync(fixture, "utf8"));
    const [header, ...entries] = lines(rig.session.file!);
    expect(header).toMatchObject({
      version: FORMAT_VERSION,
      migratedFrom: 1,
      parentSession: { path: copy, id: "0b7f3c1e-9d2a-4c57-8e11-5a0c3f6d2b90" },
    });
    expect(entries.slice(0, 9).map((e) => e.id)).toEqual(["l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10"]);
    expect(texts(rig.scripted.requests[0]!.messages).slice(1)).toEqual([
      "user:Which one is bigger?",
      "assistant:b.txt is bigger.",
      "user:Thanks. Now delete a.txt.",
      "user:go",
    ]);
  });

  it("refuses to write a file from a newer format version", async () => {
    const d = dirs();
    const file = join(d.root, "future.jsonl");
    writeFileSync(
      file,
      JSON.stringify({
        type: "session",
        version: FORMAT_VERSION + 1,
        id: "f",
        timestamp: new Date().toISOString(),
        cwd: d.cwd,
      }) + "\n",
    );
    await expect(startRig({ ...d, flags: { session: file } })).rejects.toThrow(/SESSION_TOO_NEW .*newer coil/);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});

describe("session-jsonl: locks", () => {
  it("a second writer is refused with a message naming the process that holds the session", async () => {
    const d = dirs();
    const first = await startRig({ ...d, script: [{ text: "a" }] });
    await first.agent.prompt("one");
    const error = await startRig({ ...d, flags: { continue: true } }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toContain("SESSION_LOCKED");
    expect(error?.message).toContain(`in use by coil process ${process.pid} on ${hostname()}`);
    await first.stop();
    const second = await startRig({ ...d, flags: { continue: true } });
    expect(second.session.file).toBe(first.session.file);
    await second.stop();
  });

  it("takes over a lock whose process is gone, or whose pid now belongs to another process", () => {
    const d = dirs();
    const file = join(d.root, "s.jsonl");
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid!;
    writeFileSync(
      `${file}.lock`,
      JSON.stringify({ pid: dead, hostname: hostname(), startedAt: "2026-01-01T00:00:00.000Z" }),
    );
    const stale: string[] = [];
    const lock = acquireLock(nodeOps, file, (m) => stale.push(m));
    expect(stale).toEqual([
      `took over the lock of ${file}: coil process ${dead} that held it since 2026-01-01T00:00:00.000Z is gone`,
    ]);
    expect(() => acquireLock(nodeOps, file, () => undefined)).toThrow(SessionLockedError);
    lock.release();
    expect(existsSync(`${file}.lock`)).toBe(false);

    writeFileSync(
      `${file}.lock`,
      JSON.stringify({ pid: process.pid, hostname: hostname(), startedAt: "2026-01-01T00:00:00.000Z", pidStart: "1" }),
    );
    const reused = acquireLock(nodeOps, file, (m) => stale.push(m));
    expect(stale).toHaveLength(2);
    reused.release();
  });
});

describe("session-jsonl: write failures stop the run loudly", () => {
  const enospc = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });

  /** node:fs, except that writes to session files fail while `full` is set. */
  function fullDisk() {
    const state = { full: false, sessionFds: new Set<number>() };
    const ops: SessionOps = {
      ...nodeOps,
      openSync: (path, flags, mode) => {
        const fd = nodeOps.openSync(path, flags, mode);
        if (path.endsWith(".jsonl")) state.sessionFds.add(fd);
        return fd;
      },
      writeSync: (fd, data) => {
        if (state.full && state.sessionFds.has(fd)) throw enospc();
        return nodeOps.writeSync(fd, data);
      },
    };
    return { state, ops };
  }

  it("a full disk when the prompt is written ends the run with SESSION_WRITE_FAILED before any model call", async () => {
    const d = dirs();
    const { state, ops } = fullDisk();
    const rig = await startRig({ ...d, ops, script: [{ text: "never" }] });
    state.full = true;
    const result = await rig.agent.prompt("hi");
    expect(result.stopReason).toBe("error");
    expect(result.error).toMatch(
      /\[plugin session-jsonl\] before_request: SESSION_WRITE_FAILED cannot append to .*\.jsonl \(the disk is full\)/,
    );
    expect(rig.scripted.requests).toHaveLength(0);
    expect(rig.diagnostics().some((e) => e.level === "error" && e.code === "SESSION_WRITE_FAILED")).toBe(true);
    await rig.stop();
  });

  it("a full disk in the middle of a tool loop ends the run at the end of that turn", async () => {
    const d = dirs();
    const { state, ops } = fullDisk();
    const fill = definePlugin({
      id: "test-fill",
      setup(ctx) {
        ctx.tools.register({
          name: "fill_disk",
          description: "fills the disk",
          parameters: Type.Object({}),
          async execute() {
            state.full = true;
            return { content: [{ type: "text", text: "filled" }] };
          },
        });
      },
    });
    const rig = await startRig({
      ...d,
      ops,
      plugins: [[fill]],
      script: [{ toolCalls: [{ name: "fill_disk" }] }, { text: "should not be asked" }],
    });
    const result = await rig.agent.prompt("go");
    expect(result.stopReason).toBe("error");
    expect(result.error).toContain("turn_end: SESSION_WRITE_FAILED");
    expect(rig.scripted.requests).toHaveLength(1);
    // the disk has room again: the next run goes on, starting its line on a fresh line
    state.full = false;
    rig.scripted.push({ text: "recovered" });
    expect((await rig.agent.prompt("again")).stopReason).toBe("stop");
    const file = rig.session.file!;
    await rig.stop();
    const read = readSession(nodeOps, file);
    expect(read.warnings).toEqual([]);
    expect(pairingProblems(SessionStore.open(file).context())).toEqual([]);
  });

  it("one fsync of the file per turn, after every turn_end tap wrote its entries; none after the last turn", async () => {
    const d = dirs();
    const fds = new Map<number, string>();
    const syncs: { path: string; size: number }[] = [];
    const ops: SessionOps = {
      ...nodeOps,
      openSync: (path, flags, mode) => {
        const fd = nodeOps.openSync(path, flags, mode);
        fds.set(fd, path);
        return fd;
      },
      fsyncSync: (fd) => {
        nodeOps.fsyncSync(fd);
        const path = fds.get(fd)!;
        syncs.push({ path, size: path.endsWith(".jsonl") ? readFileSync(path).length : 0 });
      },
      fsync: (fd, done) => {
        const path = fds.get(fd)!;
        syncs.push({ path, size: path.endsWith(".jsonl") ? readFileSync(path).length : 0 });
        nodeOps.fsync!(fd, done);
      },
    };
    // like cost-audit: a turn_end tap (default stage) that records something per turn
    const recorder = definePlugin({
      id: "test-recorder",
      setup(ctx) {
        ctx.tap(
          "turn_end",
          () =>
            void (ctx.services.get("session") as { appendCustom(t: string, d: unknown): unknown }).appendCustom(
              "test-record",
              { ok: true },
            ),
        );
      },
    });
    const rig = await startRig({
      ...d,
      ops,
      plugins: [[echoTool], [recorder]],
      script: [
        { toolCalls: [{ name: "echo", arguments: { text: "a" } }] },
        { toolCalls: [{ name: "echo", arguments: { text: "b" } }] },
        { text: "done" },
      ],
    });
    expect((await rig.agent.prompt("go")).stopReason).toBe("stop");
    const file = rig.session.file!;
    await rig.stop();
    const fileSyncs = syncs.filter((s) => s.path === file);
    expect(fileSyncs).toHaveLength(3); // three turns
    expect(syncs.filter((s) => s.path !== file)).toHaveLength(1); // the folder, once, when the file was created
    expect(fileSyncs.at(-1)!.size).toBe(readFileSync(file).length); // the last turn's record was on disk before its fsync
    expect(lines(file).filter((e) => e.customType === "test-record")).toHaveLength(3);
  });

  it("in a tool loop the turn's fsync runs in the background: the next request does not wait for the disk", async () => {
    const d = dirs();
    const events: string[] = [];
    const ops: SessionOps = {
      ...nodeOps,
      fsync: (fd, done) => {
        events.push("fsync started");
        // a slow disk
        setTimeout(
          () =>
            nodeOps.fsync!(fd, (e) => {
              events.push("fsync done");
              done(e);
            }),
          150,
        );
      },
    };
    const asked = definePlugin({
      id: "test-asked",
      setup: (ctx) => void ctx.tap("before_request", () => void events.push("request"), { stage: "LATE" }),
    });
    const rig = await startRig({
      ...d,
      ops,
      plugins: [[echoTool], [asked]],
      script: [
        { toolCalls: [{ name: "echo", arguments: { text: "a" } }] },
        { toolCalls: [{ name: "echo", arguments: { text: "b" } }] },
        { text: "done" },
      ],
    });
    expect((await rig.agent.prompt("go")).stopReason).toBe("stop");
    // the first turn creates the file (synced in line; its folder in the background); the second turn's fsync overlaps the third request
    expect(events.slice(0, 5)).toEqual(["request", "fsync started", "request", "fsync started", "request"]);
    await rig.stop();
    await new Promise((r) => setTimeout(r, 300));
    expect(events.filter((e) => e === "fsync done")).toHaveLength(events.filter((e) => e === "fsync started").length);
  });

  it("a background fsync that fails stops the run at the next turn, naming the file and the cause", async () => {
    const d = dirs();
    const ops: SessionOps = {
      ...nodeOps,
      fsync: (_fd, done) =>
        setImmediate(() => done(Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" }))),
    };
    // a tool that waits on I/O, as real ones do (the fsync's callback comes in the meantime)
    const slowEcho = definePlugin({
      id: "test-slow",
      setup: (ctx) =>
        ctx.tools.register({
          name: "echo",
          description: "echo",
          parameters: Type.Object({ text: Type.String() }),
          execute: async (a) => {
            await new Promise((r) => setTimeout(r, 20));
            return { content: [{ type: "text", text: a.text }] };
          },
        }),
    });
    const rig = await startRig({
      ...d,
      ops,
      plugins: [[slowEcho]],
      script: [
        { toolCalls: [{ name: "echo", arguments: { text: "a" } }] },
        { toolCalls: [{ name: "echo", arguments: { text: "b" } }] },
        { toolCalls: [{ name: "echo", arguments: { text: "c" } }] },
        { text: "never asked" },
      ],
    });
    const result = await rig.agent.prompt("go");
    expect(result.stopReason).toBe("error");
    expect(result.error).toContain("SESSION_WRITE_FAILED");
    expect(result.error).toContain("EIO");
    expect(rig.scripted.requests.length).toBeLessThan(4);
    await rig.stop().catch(() => undefined);
  });

  it("a failed fsync at the end of a turn is a write failure too", async () => {
    const d = dirs();
    const ops: SessionOps = {
      ...nodeOps,
      fsyncSync: () => {
        throw Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });
      },
    };
    const rig = await startRig({ ...d, ops, script: [{ text: "ok" }] });
    const result = await rig.agent.prompt("hi");
    expect(result.stopReason).toBe("error");
    expect(result.error).toContain("SESSION_WRITE_FAILED");
    expect(result.error).toContain("EIO");
    await rig.stop().catch(() => undefined);
  });
});

describe("session-jsonl: choosing a session", () => {
  it("--session takes an id prefix or a path; --resume asks on a terminal", async () => {
    const d = dirs();
    const a = await startRig({ ...d, script: [{ text: "first answer" }] });
    await a.agent.prompt("first");
    await a.stop();
    const b = await startRig({ ...d, script: [{ text: "second answer" }] });
    await b.agent.prompt("second");
    await b.stop();

    const byId = await startRig({ ...d, flags: { session: a.session.id.slice(0, 8) } });
    expect(byId.session.file).toBe(a.session.file);
    await byId.stop();
    const byPath = await startRig({ ...d, flags: { session: b.session.file } });
    expect(texts(byPath.agent.state.messages)).toEqual(["user:second", "assistant:second answer"]);
    await byPath.stop();
    await expect(startRig({ ...d, flags: { session: "zzzz" } })).rejects.toThrow(
      /SESSION_NOT_FOUND no session matches 'zzzz'/,
    );

    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    const picking = startRig({ ...d, flags: { resume: true }, stdin });
    setTimeout(() => stdin.write("2\n"), 50); // the list is newest first: 2 is the first session
    const picked = await picking;
    expect(picked.stderr()).toMatch(/1 +[0-9a-f]{8} .* second\n +2 +[0-9a-f]{8} .* first/);
    expect(picked.session.file).toBe(a.session.file);
    await picked.stop();
  });

  it("sessions are filed per working directory; --session-dir puts them elsewhere", async () => {
    const d = dirs();
    const other = join(d.root, "other-project");
    mkdirSync(other);
    const here = await startRig({ ...d, script: [{ text: "x" }] });
    await here.agent.prompt("here");
    await here.stop();
    const there = await startRig({ ...d, cwd: other, flags: { continue: true }, script: [{ text: "y" }] });
    expect(there.agent.state.messages).toEqual([]);
    await there.agent.prompt("there");
    await there.stop();
    expect(readdirSync(join(d.home, "sessions"))).toHaveLength(2);
    const custom = join(d.root, "custom-sessions");
    const inDir = await startRig({ ...d, flags: { "session-dir": custom }, script: [{ text: "z" }] });
    await inDir.agent.prompt("custom");
    await inDir.stop();
    expect(readdirSync(custom).filter((f) => f.endsWith(".jsonl"))).toHaveLength(1);
    expect(
      here.session
        .list({ all: true })
        .map((s) => s.firstMessage)
        .sort(),
    ).toEqual(["here", "there"]);
  });
});

describe("session-jsonl: export", () => {
  it("exports the active branch as Markdown and escaped HTML, and the whole tree as JSONL that opens again", async () => {
    const d = dirs();
    const rig = await startRig({
      ...d,
      plugins: [[echoTool]],
      script: [
        { text: "I will <b>echo</b>", toolCalls: [{ name: "echo", arguments: { text: "hi" } }] },
        { text: "done" },
      ],
    });
    await rig.agent.prompt("echo hi");
    await rig.stop();
    const store = SessionStore.open(rig.session.file!);
    const md = exportSession(store, "md");
    expect(md).toContain("## User\n\necho hi");
    expect(md).toContain('## Tool call: echo\n\n```\n{\n  "text": "hi"\n}\n```');
    expect(md).toContain("## Result: echo\n\n```\necho: hi\n```");
    const html = exportSession(store, "html");
    expect(html).toContain("I will &lt;b&gt;echo&lt;/b&gt;");
    expect(html).not.toContain("<b>echo</b>");
    const copy = join(d.root, "copy.jsonl");
    writeFileSync(copy, exportSession(store, "jsonl"));
    expect(texts(SessionStore.open(copy).context())).toEqual(texts(store.context()));
  });
});
