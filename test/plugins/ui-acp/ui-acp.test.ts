/**
 * `coil --mode acp` as a child process, driven by the official ACP SDK's client side (and raw JSON-RPC
 * lines for the wire format), against the scripted provider.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  BIN,
  cleanTemps,
  requireBuild,
  ROOT as ROOT_DIR,
  sandboxEnv,
  tempDir,
  writeFiles,
} from "../../support/ecosystem.js";
import { loadedPackage } from "../../support/loads.js";

beforeAll(requireBuild);
afterAll(cleanTemps);

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
});

interface Project {
  dir: string;
  env: NodeJS.ProcessEnv;
  base: string;
}

/** A project with a preset (scripted replies), files, and its own COIL_HOME. */
function project(preset: string, replies: string, files: Record<string, string> = {}): Project {
  const base = tempDir("coil-acp-");
  const dir = writeFiles(join(base, "project"), { "replies.yaml": replies, "preset.yaml": preset, ...files });
  return { dir, base, env: sandboxEnv(base) };
}

const SCRIPTED = "  - provider-scripted: { script: ./replies.yaml, chunkSize: 4 }\n";

function start(p: Project, args: string[] = []): { child: ChildProcessWithoutNullStreams; stderr: () => string } {
  const child = spawn(process.execPath, [BIN, "--preset", "./preset.yaml", "--mode", "acp", ...args], {
    cwd: p.dir,
    env: p.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return { child, stderr: () => stderr };
}

interface Client {
  agent: acp.ClientContext;
  updates: acp.SessionNotification[];
  permissions: acp.RequestPermissionRequest[];
  stderr: () => string;
  child: ChildProcessWithoutNullStreams;
  close(): Promise<number | null>;
}

type Handlers = {
  permission?: (
    req: acp.RequestPermissionRequest,
    signal: AbortSignal,
  ) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;
  read?: (req: acp.ReadTextFileRequest) => acp.ReadTextFileResponse;
  write?: (req: acp.WriteTextFileRequest) => void;
  onUpdate?: (n: acp.SessionNotification) => void;
  /** Serve terminal/* by running the command here (as an editor would); requests are recorded. */
  terminals?: acp.CreateTerminalRequest[];
};

/** The client side of terminal/*: spawn the command, keep its output, answer output/wait/kill/release. */
function terminalHandlers(app: acp.ClientApp, log: acp.CreateTerminalRequest[]): void {
  const terms = new Map<
    string,
    { output: string; exit: Promise<acp.WaitForTerminalExitResponse>; kill(): void; released: boolean }
  >();
  app
    .onRequest(acp.methods.client.terminal.create, ({ params }) => {
      log.push(params);
      const proc = spawn(params.command, params.args ?? [], {
        cwd: params.cwd ?? undefined,
        env: { ...process.env, ...Object.fromEntries((params.env ?? []).map((e) => [e.name, e.value])) },
      });
      const t = {
        output: "",
        released: false,
        exit: new Promise<acp.WaitForTerminalExitResponse>((done) =>
          proc.on("exit", (exitCode, signal) => done({ exitCode, signal })),
        ),
        kill: () => proc.kill("SIGKILL"),
      };
      proc.stdout.on("data", (d: Buffer) => (t.output += d.toString()));
      proc.stderr.on("data", (d: Buffer) => (t.output += d.toString()));
      const terminalId = `term-${terms.size + 1}`;
      terms.set(terminalId, t);
      return { terminalId };
    })
    .onRequest(acp.methods.client.terminal.output, async ({ params }) => {
      const t = terms.get(params.terminalId)!;
      return { output: t.output, truncated: false };
    })
    .onRequest(acp.methods.client.terminal.waitForExit, ({ params }) => terms.get(params.terminalId)!.exit)
    .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
      terms.get(params.terminalId)!.kill();
      return {};
    })
    .onRequest(acp.methods.client.terminal.release, ({ params }) => {
      terms.get(params.terminalId)!.released = true;
      return {};
    });
}

/** Spawn coil and connect the SDK's client to it. */
function connect(p: Project, h: Handlers = {}, args: string[] = []): Client {
  const { child, stderr } = start(p, args);
  const updates: acp.SessionNotification[] = [];
  const permissions: acp.RequestPermissionRequest[] = [];
  const app = acp
    .client({ name: "coil-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
      h.onUpdate?.(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
      permissions.push(params);
      return h.permission ? h.permission(params, signal) : { outcome: { outcome: "cancelled" } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      if (!h.read) throw acp.RequestError.methodNotFound("fs/read_text_file");
      return h.read(params);
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      if (!h.write) throw acp.RequestError.methodNotFound("fs/write_text_file");
      h.write(params);
      return {};
    });
  if (h.terminals) terminalHandlers(app, h.terminals);
  const conn = app.connect(
    acp.ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>,
    ),
  );
  return {
    agent: conn.agent,
    updates,
    permissions,
    stderr,
    child,
    close: () =>
      new Promise((done) => {
        if (child.exitCode !== null) return done(child.exitCode);
        child.once("exit", (code) => done(code));
        child.stdin.end();
      }),
  };
}

async function init(c: Client, caps: acp.ClientCapabilities = {}): Promise<acp.InitializeResponse> {
  return c.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: caps,
  });
}

const text = (
  updates: acp.SessionNotification[],
  kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk",
) =>
  updates
    .map((u) => u.update)
    .filter((u) => u.sessionUpdate === kind)
    .map((u) => ((u as { content: acp.ContentBlock }).content as { text?: string }).text ?? "")
    .join("");
const ofKind = <K extends acp.SessionUpdate["sessionUpdate"]>(updates: acp.SessionNotification[], kind: K) =>
  updates
    .map((u) => u.update)
    .filter((u): u is Extract<acp.SessionUpdate, { sessionUpdate: K }> => u.sessionUpdate === kind);

async function waitFor<T>(fn: () => T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("ui-acp: the wire format", () => {
  it("answers initialize as JSON-RPC 2.0 lines on stdout, and a malformed line with a parse error without ending", async () => {
    const p = project(`extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}`, "- text: hi\n");
    const { child, stderr } = start(p);
    const lines: string[] = [];
    let buf = "";
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split("\n");
      buf = parts.pop()!;
      lines.push(...parts);
    });
    const send = (line: string) => child.stdin.write(line + "\n");
    send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: 1,
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        },
      }),
    );
    const first = JSON.parse(await waitFor(() => lines[0]));
    expect(first).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        protocolVersion: 1,
        agentCapabilities: {
          loadSession: true,
          sessionCapabilities: { list: {} },
          promptCapabilities: { image: true, audio: false, embeddedContext: true },
          mcpCapabilities: { http: true, sse: true },
        },
        agentInfo: { name: "coil", title: "coil", version: expect.any(String) },
        authMethods: [],
      },
    });
    send("{ this is not json");
    expect(JSON.parse(await waitFor(() => lines[1]))).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: "Parse error" },
    });
    send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/no_such_method", params: {} }));
    expect(JSON.parse(await waitFor(() => lines[2]))).toMatchObject({ jsonrpc: "2.0", id: 2, error: { code: -32601 } });
    // Still serving: a new session works after the bad lines.
    send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "session/new", params: { cwd: p.dir, mcpServers: [] } }));
    const created = JSON.parse(await waitFor(() => lines.find((l) => l.includes('"id":3'))));
    expect(created.result.sessionId).toMatch(/./);
    // A session for another directory is refused, naming both.
    send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 4,
        method: "session/new",
        params: { cwd: "/somewhere/else", mcpServers: [] },
      }),
    );
    const refused = JSON.parse(await waitFor(() => lines.find((l) => l.includes('"id":4'))));
    expect(refused.error.code).toBe(-32602);
    expect(refused.error.message).toContain("/somewhere/else");
    child.stdin.end();
    const code = await new Promise((done) => child.once("exit", done));
    expect(code).toBe(0);
    // Every stdout line is a JSON-RPC message; nothing else is written there.
    for (const line of lines) expect(JSON.parse(line).jsonrpc).toBe("2.0");
    expect(stderr()).not.toContain("Error:");
  });
});

describe("ui-acp: every request gets exactly one response", () => {
  it("16 requests, valid, refused, malformed and cancelled, from the SDK's client and as raw lines: one answer each, with its id", async () => {
    const replies = `- toolCalls: [{ name: bash, arguments: { command: "sleep 20" } }]
- toolCalls: [{ name: bash, arguments: { command: "sleep 20" } }]
- text: spare
`;
    const p = project(`extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}`, replies);
    const { child, stderr } = start(p);
    // The client reads a copy of stdout; the test counts every response on the wire by its id.
    const responses = new Map<string, number>();
    const toClient = new PassThrough();
    let buf = "";
    child.stdout.on("data", (d: Buffer) => {
      toClient.write(d);
      buf += d.toString();
      const lines = buf.split("\n");
      buf = lines.pop()!;
      for (const line of lines) {
        const m = JSON.parse(line) as { id?: unknown; method?: string };
        if (m.method === undefined && "id" in m) {
          const key = JSON.stringify(m.id);
          responses.set(key, (responses.get(key) ?? 0) + 1);
        }
      }
    });
    const complaints: string[] = [];
    const consoleError = console.error;
    console.error = (...args: unknown[]) => void complaints.push(args.map(String).join(" "));
    try {
      const updates: acp.SessionNotification[] = [];
      const conn = acp
        .client({ name: "coil-test" })
        .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params))
        .connect(
          acp.ndJsonStream(
            Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
            Readable.toWeb(toClient) as unknown as ReadableStream<Uint8Array>,
          ),
        );
      const raw = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
      const settle = (promise: Promise<unknown>) =>
        promise.then(
          (r) => ({ ok: r }),
          (e: acp.RequestError) => ({ code: e.code }),
        );
      const a = conn.agent;
      // The SDK's client numbers its requests 0, 1, 2 ...
      await a.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} }); // 0
      const { sessionId } = await a.request(acp.methods.agent.session.new, { cwd: p.dir, mcpServers: [] }); // 1
      const running = settle(
        a.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "one" }] }),
      ); // 2
      await waitFor(() => ofKind(updates, "tool_call")[0]);
      const busy = await settle(
        a.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "two" }] }),
      ); // 3
      const badModel = await settle(
        a.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "no/such" }),
      ); // 4
      const listed = await settle(a.request(acp.methods.agent.session.list, {})); // 5
      await a.notify(acp.methods.agent.session.cancel, { sessionId });
      const first = (await running) as { ok?: acp.PromptResponse };
      // $/cancel_request of a prompt cancels its run, answered once, as cancelled.
      const cancel = new AbortController();
      const second = settle(
        a.request(
          acp.methods.agent.session.prompt,
          { sessionId, prompt: [{ type: "text", text: "three" }] },
          { cancellationSignal: cancel.signal },
        ),
      ); // 6
      await waitFor(() => ofKind(updates, "tool_call")[1]);
      cancel.abort();
      const secondResult = (await second) as { ok?: acp.PromptResponse };
      const missing = await settle(
        a.request(acp.methods.agent.session.load, { sessionId: "no-such-session", cwd: p.dir, mcpServers: [] }),
      ); // 7
      const auth = await settle(a.request(acp.methods.agent.authenticate, { methodId: "none" })); // 8
      // Raw lines, the ones no SDK client sends: an unknown method, and invalid requests that carry an id.
      raw({ jsonrpc: "2.0", id: 901, method: "coil/no_such_method", params: {} });
      raw({ id: 902, method: "session/list", params: {} }); // no "jsonrpc"
      raw({ jsonrpc: "2.0", id: 903, method: 42, params: {} }); // method not a string
      raw({ jsonrpc: "2.0", id: 904, params: { cwd: p.dir } }); // no method
      raw({ jsonrpc: "2.0", id: 905, method: "session/new", params: "not an object" });
      raw({ jsonrpc: "2.0", id: "s-906", method: "session/list", params: {} }); // a string id is fine
      child.stdin.write("{ not json\n"); // no id to answer with: one error with id null
      const ids = [0, 1, 2, 3, 4, 5, 6, 7, 8, 901, 902, 903, 904, 905, "s-906"].map((i) => JSON.stringify(i));
      await waitFor(() => ids.every((k) => responses.has(k)) && responses.has("null"));
      // A moment for a second answer to any of them to show up.
      await new Promise((r) => setTimeout(r, 300));
      expect(first.ok?.stopReason).toBe("cancelled");
      expect(secondResult.ok?.stopReason).toBe("cancelled");
      expect(busy).toEqual({ code: -32600 });
      expect(badModel).toEqual({ code: -32602 });
      expect(listed).toHaveProperty("ok");
      expect(missing).toEqual({ code: -32002 });
      expect(auth).toHaveProperty("ok");
      expect(Object.fromEntries(responses)).toEqual({ ...Object.fromEntries(ids.map((k) => [k, 1])), null: 1 });
      // The SDK's client hears answers to the raw lines it did not send, and only those.
      expect(
        complaints
          .filter((c) => /unknown request/.test(c))
          .map((c) => c.replace("Got response to unknown request ", ""))
          .sort(),
      ).toEqual(["901", "902", "903", "904", "905", "null", "s-906"]);
      expect(stderr()).not.toMatch(/unknown request/);
      child.stdin.end();
      await new Promise((r) => child.once("exit", r));
    } finally {
      console.error = consoleError;
    }
  }, 60_000);

  it("an invalid request that carries an id is answered -32600 with that id", async () => {
    const p = project(`extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}`, "- text: hi\n");
    const { child } = start(p);
    const lines: string[] = [];
    let buf = "";
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split("\n");
      buf = parts.pop()!;
      lines.push(...parts);
    });
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
    await waitFor(() => lines.find((l) => l.includes('"id":1')));
    send({ jsonrpc: "1.0", id: 7, method: "session/list", params: {} });
    const answer = JSON.parse(await waitFor(() => lines.find((l) => l.includes('"id":7'))));
    expect(answer).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32600 } });
    expect(answer.error.message).toMatch(/"jsonrpc" must be "2.0"/);
    child.stdin.end();
    await new Promise((r) => child.once("exit", r));
  });
});

describe("ui-acp: stdout is the protocol's", () => {
  it("a plugin's console.log while serving goes to stderr, never between the JSON-RPC lines", async () => {
    const plugin = `import { definePlugin, Type } from "coil";
export default definePlugin({
  id: "shouter",
  setup(ctx) {
    ctx.tools.register({
      name: "shout",
      description: "Logs to the console",
      parameters: Type.Object({}),
      async execute() {
        console.log("SHOUT from a tool");
        console.info("INFO from a tool");
        return { content: [{ type: "text", text: "shouted" }] };
      },
    });
  },
});
`;
    const replies = "- toolCalls: [{ name: shout, arguments: {} }]\n- text: done\n";
    const p = project(`extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}  - ./shouter.ts\n`, replies, {
      "shouter.ts": plugin,
    });
    const c = connect(p);
    await init(c);
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: p.dir, mcpServers: [] });
    // A non-JSON line on stdout would be reported by the SDK client as a parse failure and lose the response.
    const r = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "shout" }],
    });
    expect(r.stopReason).toBe("end_turn");
    expect(text(c.updates, "agent_message_chunk")).toBe("done");
    expect(await c.close()).toBe(0);
    expect(c.stderr()).toContain("SHOUT from a tool");
    expect(c.stderr()).toContain("INFO from a tool");
  });
});

describe("ui-acp: sessions through the SDK client", () => {
  it("streams text and thoughts, maps an edit to tool_call + tool_call_update with a diff, asks permission (allow, reject), and lists commands and modes", async () => {
    const replies = `- thinking: "Looking at the file."
  text: "I will edit it."
  toolCalls: [{ name: edit, arguments: { path: notes.txt, oldText: "beta", newText: "BETA" } }]
- text: Edited.
- toolCalls: [{ name: bash, arguments: { command: "echo should-not-run > ran.txt" } }]
- text: Not run then.
`;
    const p = project(
      `extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}  - permission-gate: { mode: default }\n`,
      replies,
      { "notes.txt": "alpha\nbeta\ngamma\n" },
    );
    const c = connect(p, {
      permission: (req) => ({
        outcome: { outcome: "selected", optionId: req.toolCall.title?.startsWith("Edit") ? "Allow once" : "Deny" },
      }),
    });
    const init0 = await init(c);
    expect(init0.protocolVersion).toBe(1);
    const session = await c.agent.request(acp.methods.agent.session.new, { cwd: p.dir, mcpServers: [] });
    expect(session.modes).toMatchObject({ currentModeId: "default" });
    expect(session.modes!.availableModes.map((m) => m.id)).toEqual([
      "default",
      "project",
      "accept-edits",
      "plan",
      "yolo",
    ]);
    expect(session.configOptions?.[0]).toMatchObject({
      id: "model",
      category: "model",
      currentValue: "scripted/scripted",
    });

    const commands = await waitFor(() => ofKind(c.updates, "available_commands_update")[0]);
    expect(commands.availableCommands.map((x) => x.name)).toEqual(
      expect.arrayContaining(["permissions", "review", "compact"]),
    );

    const r1 = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "uppercase beta" }],
    });
    expect(r1.stopReason).toBe("end_turn");
    expect(text(c.updates, "agent_thought_chunk")).toBe("Looking at the file.");
    expect(text(c.updates, "agent_message_chunk")).toBe("I will edit it.Edited.");
    // Several chunks: the text streamed.
    expect(ofKind(c.updates, "agent_message_chunk").length).toBeGreaterThan(2);

    const call = ofKind(c.updates, "tool_call")[0]!;
    expect(call).toMatchObject({
      title: "Edit notes.txt",
      kind: "edit",
      status: "pending",
      // What ran: the edit tool folds the legacy oldText/newText form into `edits` before the call starts.
      rawInput: { path: "notes.txt", edits: [{ oldText: "beta", newText: "BETA" }] },
      locations: [{ path: join(p.dir, "notes.txt") }],
    });
    expect(c.permissions[0]).toMatchObject({
      sessionId: session.sessionId,
      toolCall: { toolCallId: call.toolCallId, title: "Edit notes.txt" },
    });
    expect(JSON.stringify(c.permissions[0]!.toolCall.content)).toContain("Allow edit notes.txt?");
    expect(c.permissions[0]!.options).toEqual([
      { optionId: "Allow once", name: "Allow once", kind: "allow_once" },
      { optionId: "Allow for this session", name: "Allow for this session", kind: "allow_always" },
      { optionId: "Deny", name: "Deny", kind: "reject_once" },
    ]);
    const done = ofKind(c.updates, "tool_call_update").find(
      (u) => u.toolCallId === call.toolCallId && u.status === "completed",
    )!;
    expect(done.content?.[0]).toEqual({
      type: "diff",
      path: join(p.dir, "notes.txt"),
      oldText: "alpha\nbeta\ngamma\n",
      newText: "alpha\nBETA\ngamma\n",
    });
    expect(done.locations).toEqual([{ path: join(p.dir, "notes.txt"), line: 2 }]);
    expect(readFileSync(join(p.dir, "notes.txt"), "utf8")).toBe("alpha\nBETA\ngamma\n");

    // The bash call is rejected by the user: failed, and the command did not run.
    const r2 = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "run it" }],
    });
    expect(r2.stopReason).toBe("end_turn");
    const bash = ofKind(c.updates, "tool_call").find((u) => u.kind === "execute")!;
    expect(bash.title).toBe("Run echo should-not-run > ran.txt");
    expect(
      ofKind(c.updates, "tool_call_update").find((u) => u.toolCallId === bash.toolCallId && u.status)?.status,
    ).toBe("failed");
    expect(readdirSync(p.dir)).not.toContain("ran.txt");
    expect(c.permissions).toHaveLength(2);

    // A slash command answers as agent text.
    c.updates.length = 0;
    const r3 = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "/permissions" }],
    });
    expect(r3.stopReason).toBe("end_turn");
    expect(text(c.updates, "agent_message_chunk")).toContain("permission mode: default");
    expect(await c.close()).toBe(0);
  });

  it("remembers 'allow always' per session: a new session asks again, loading the first one does not", async () => {
    const call = `- toolCalls: [{ name: bash, arguments: { command: "touch made.txt" } }]
- text: ok
`;
    const p = project(
      `extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}  - permission-gate: { mode: default }\n`,
      call.repeat(4),
    );
    const c = connect(p, {
      permission: () => ({ outcome: { outcome: "selected", optionId: "Allow for this session" } }),
    });
    await init(c);
    const run = (sessionId: string) =>
      c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "say hi" }] });
    const first = await c.agent.request(acp.methods.agent.session.new, { cwd: p.dir, mcpServers: [] });
    await run(first.sessionId);
    await run(first.sessionId);
    expect(c.permissions).toHaveLength(1);
    const second = await c.agent.request(acp.methods.agent.session.new, { cwd: p.dir, mcpServers: [] });
    await run(second.sessionId);
    expect(c.permissions).toHaveLength(2);
    expect(c.permissions[1]!.sessionId).toBe(second.sessionId);
    await c.agent.request(acp.methods.agent.session.load, { sessionId: first.sessionId, cwd: p.dir, mcpServers: [] });
    await run(first.sessionId);
    expect(c.permissions).toHaveLength(2);
    expect(await c.close()).toBe(0);
  });

  it("cancel while a permission request is open: the request is withdrawn, the call is not run, the prompt ends cancelled", async () => {
    const replies = `- toolCalls: [{ name: bash, arguments: { command: "touch cancelled.txt" } }]
- text: never
`;
    const p = project(
      `extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}  - permission-gate: { mode: default }\n`,
      replies,
    );
    let answer!: (r: acp.RequestPermissionResponse) => void;
    let withdrawn: AbortSignal | undefined;
    const c = connect(p, {
      permission: (_req, signal) => {
        withdrawn = signal;
        return new Promise((done) => {
          answer = done;
        });
      },
    });
    await init(c);
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: p.dir, mcpServers: [] });
    const prompt = c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "touch it" }],
    });
    await waitFor(() => c.permissions[0]);
    await c.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await prompt).stopReason).toBe("cancelled");
    // coil sent $/cancel_request for the open permission request.
    await waitFor(() => withdrawn?.aborted);
    answer({ outcome: { outcome: "cancelled" } });
    const call = ofKind(c.updates, "tool_call")[0]!;
    expect(
      ofKind(c.updates, "tool_call_update")
        .filter((u) => u.toolCallId === call.toolCallId)
        .map((u) => u.status),
    ).toEqual(["failed"]);
    expect(readdirSync(p.dir)).not.toContain("cancelled.txt");
    expect(await c.close()).toBe(0);
  });

  it("a failed model request answers the prompt with a JSON-RPC error naming the cause, and the agent goes on", async () => {
    const replies = `- stopReason: error
  error: "upstream said 529 overloaded"
- text: fine now
`;
    const p = project(`extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}`, replies);
    const c = connect(p);
    await init(c);
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: p.dir, mcpServers: [] });
    const ask = () =>
      c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] });
    await expect(ask()).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining("upstream said 529 overloaded"),
    });
    expect((await ask()).stopReason).toBe("end_turn");
    expect(text(c.updates, "agent_message_chunk")).toBe("fine now");
    expect(await c.close()).toBe(0);
  });

  it("offers the configured providers' models as the model config option; choosing one switches and is recorded in the session", async () => {
    const p = project(`extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}`, "- text: hi\n");
    p.env = { ...p.env, ANTHROPIC_API_KEY: "sk-ant-test-not-used" };
    const c = connect(p);
    await init(c);
    const session = await c.agent.request(acp.methods.agent.session.new, { cwd: p.dir, mcpServers: [] });
    const option = session.configOptions![0]! as Extract<acp.SessionConfigOption, { type: "select" }>;
    const values = (option.options as acp.SessionConfigSelectOption[]).map((o) => o.value);
    expect(values).toContain("scripted/scripted");
    expect(option.currentValue).toBe("scripted/scripted");
    const claude = values.find((v) => v.startsWith("anthropic/"))!;
    expect(claude).toBeDefined();
    const changed = await c.agent.request(acp.methods.agent.session.setConfigOption, {
      sessionId: session.sessionId,
      configId: "model",
      value: claude,
    });
    expect(changed.configOptions[0]).toMatchObject({ id: "model", currentValue: claude });
    await expect(
      c.agent.request(acp.methods.agent.session.setConfigOption, {
        sessionId: session.sessionId,
        configId: "model",
        value: "nope/none",
      }),
    ).rejects.toMatchObject({ code: -32602 });
    expect(await c.close()).toBe(0);
    const file = findFile(join(p.base, "coil-home", "sessions"), session.sessionId);
    expect(readFileSync(file, "utf8")).toContain(`"modelId":"${claude.slice("anthropic/".length)}"`);
  });

  it("switches modes with session/set_mode: accept-edits edits without asking; the mode is announced", async () => {
    const replies = `- toolCalls: [{ name: write, arguments: { path: new.txt, content: "hello\\n" } }]
- text: Written.
`;
    const p = project(
      `extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}  - permission-gate: { mode: default }\n`,
      replies,
    );
    const c = connect(p);
    await init(c);
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: p.dir, mcpServers: [] });
    await c.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "accept-edits" });
    expect(ofKind(c.updates, "current_mode_update").at(-1)?.currentModeId).toBe("accept-edits");
    await expect(
      c.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "chaos" }),
    ).rejects.toMatchObject({ code: -32602 });
    const r = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "write it" }],
    });
    expect(r.stopReason).toBe("end_turn");
    expect(c.permissions).toHaveLength(0);
    expect(readFileSync(join(p.dir, "new.txt"), "utf8")).toBe("hello\n");
    const update = ofKind(c.updates, "tool_call_update").find((u) => u.status === "completed")!;
    expect(update.content?.[0]).toEqual({
      type: "diff",
      path: join(p.dir, "new.txt"),
      oldText: null,
      newText: "hello\n",
    });
    expect(await c.close()).toBe(0);
  });

  it("cancels mid-tool: stop reason cancelled, no tool call left open, the session pairs every call; session/load replays it", async () => {
    const replies = `- text: "Sleeping."
  toolCalls: [{ name: bash, arguments: { command: "sleep 30" } }]
- text: never reached
`;
    const p = project(`extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}`, replies);
    const c = connect(p);
    await init(c);
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: p.dir, mcpServers: [] });
    const prompt = c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "sleep a while" }],
    });
    const call = await waitFor(() => ofKind(c.updates, "tool_call")[0]);
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    await c.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await prompt).stopReason).toBe("cancelled");
    expect(Date.now() - t0).toBeLessThan(10_000);
    const finals = ofKind(c.updates, "tool_call_update").filter(
      (u) => u.toolCallId === call.toolCallId && (u.status === "failed" || u.status === "completed"),
    );
    expect(finals.map((f) => f.status)).toEqual(["failed"]);
    expect(await c.close()).toBe(0);

    // The session file has a result for the call.
    const sessionsRoot = join(p.base, "coil-home", "sessions");
    const file = findFile(sessionsRoot, sessionId);
    const entries = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const calls = entries.flatMap((e) =>
      e.message?.role === "assistant"
        ? e.message.content.filter((x: { type: string }) => x.type === "toolCall").map((x: { id: string }) => x.id)
        : [],
    );
    const results = entries.flatMap((e) => (e.message?.role === "toolResult" ? [e.message.toolCallId] : []));
    expect(calls).toEqual([call.toolCallId]);
    expect(results).toEqual(calls);

    // Load it in a new process: the history comes back as updates before the response.
    const c2 = connect(p);
    const caps = await init(c2);
    expect(caps.agentCapabilities?.loadSession).toBe(true);
    const listed = await c2.agent.request(acp.methods.agent.session.list, {});
    expect(listed.sessions).toEqual([
      expect.objectContaining({
        sessionId,
        cwd: p.dir,
        title: "sleep a while",
        updatedAt: expect.stringMatching(/^\d{4}-/),
      }),
    ]);
    const loaded = await c2.agent.request(acp.methods.agent.session.load, { sessionId, cwd: p.dir, mcpServers: [] });
    expect(loaded).toBeDefined();
    expect(text(c2.updates, "user_message_chunk")).toBe("sleep a while");
    expect(text(c2.updates, "agent_message_chunk")).toBe("Sleeping.");
    expect(ofKind(c2.updates, "tool_call")).toEqual([
      expect.objectContaining({
        toolCallId: call.toolCallId,
        kind: "execute",
        status: "failed",
        title: "Run sleep 30",
      }),
    ]);
    await expect(
      c2.agent.request(acp.methods.agent.session.load, { sessionId: "no-such-session", cwd: p.dir, mcpServers: [] }),
    ).rejects.toMatchObject({ code: -32002 });
    expect(await c2.close()).toBe(0);
  });

  it("uses the client's fs/read_text_file and fs/write_text_file when offered: reads see the unsaved buffer, edits land in it", async () => {
    const replies = `- toolCalls: [{ name: read, arguments: { path: src.txt } }]
- toolCalls: [{ name: edit, arguments: { path: src.txt, oldText: "unsaved", newText: "edited" } }]
- text: Done.
`;
    const p = project(`extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}`, replies, {
      "src.txt": "on disk\n",
    });
    const buffers = new Map<string, string>([[join(p.dir, "src.txt"), "unsaved buffer\n"]]);
    const reads: string[] = [];
    const writes: acp.WriteTextFileRequest[] = [];
    const c = connect(p, {
      read: (req) => {
        reads.push(req.path);
        return { content: buffers.get(req.path) ?? readFileSync(req.path, "utf8") };
      },
      write: (req) => {
        writes.push(req);
        buffers.set(req.path, req.content);
      },
    });
    await init(c, { fs: { readTextFile: true, writeTextFile: true } });
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: p.dir, mcpServers: [] });
    const r = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "edit src" }],
    });
    expect(r.stopReason).toBe("end_turn");
    const updates = ofKind(c.updates, "tool_call_update").filter((u) => u.status === "completed");
    // The read tool returned the editor's buffer, not the file on disk.
    expect(JSON.stringify(updates[0]!.content)).toContain("unsaved buffer");
    expect(reads).toContain(join(p.dir, "src.txt"));
    expect(writes).toEqual([{ sessionId, path: join(p.dir, "src.txt"), content: "edited buffer\n" }]);
    // The edit landed in the buffer; the disk is untouched (the editor saves it).
    expect(readFileSync(join(p.dir, "src.txt"), "utf8")).toBe("on disk\n");
    expect(updates[1]!.content?.[0]).toEqual({
      type: "diff",
      path: join(p.dir, "src.txt"),
      oldText: "unsaved buffer\n",
      newText: "edited buffer\n",
    });
    expect(await c.close()).toBe(0);
  });

  it("ends with refusal, max_tokens and max_turn_requests (a guard's budget), and takes images and embedded resources", async () => {
    const replies = `- text: "I can't help with that."
  stopReason: refusal
- text: "cut off"
  stopReason: length
- toolCalls: [{ name: ls, arguments: {} }]
- toolCalls: [{ name: ls, arguments: {} }]
- text: late
`;
    const p = project(
      `extends: default\nprovider: scripted\nplugins:\n  - provider-scripted: { script: ./replies.yaml, recordTo: ./requests.jsonl }\n  - guards: { maxTurns: 1 }\n`,
      replies,
    );
    const c = connect(p);
    await init(c);
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: p.dir, mcpServers: [] });
    const ask = (prompt: acp.ContentBlock[]) =>
      c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt });
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    expect(
      (
        await ask([
          { type: "text", text: "look at this" },
          { type: "image", data: png, mimeType: "image/png" },
          {
            type: "resource",
            resource: { uri: `file://${p.dir}/a.ts`, text: "export const a = 1;", mimeType: "text/typescript" },
          },
          { type: "resource_link", uri: `file://${p.dir}/b.ts`, name: "b.ts" },
        ])
      ).stopReason,
    ).toBe("refusal");
    expect((await ask([{ type: "text", text: "go" }])).stopReason).toBe("max_tokens");
    expect((await ask([{ type: "text", text: "loop" }])).stopReason).toBe("max_turn_requests");
    const first = JSON.parse(readFileSync(join(p.dir, "requests.jsonl"), "utf8").split("\n")[0]!);
    const user = first.messages.at(-1);
    expect(user.content).toEqual([
      { type: "text", text: "look at this" },
      { type: "image", data: png, mimeType: "image/png" },
      { type: "text", text: `<context uri="file://${p.dir}/a.ts">\nexport const a = 1;\n</context>` },
      { type: "text", text: `[b.ts](file://${p.dir}/b.ts) (file b.ts)` },
    ]);
    expect(await c.close()).toBe(0);
  });
});

describe("ui-acp: client terminals, MCP servers, plan mode, lazy loading", () => {
  it("runs bash in a terminal the client creates when it offers terminals", async () => {
    const replies = `- toolCalls: [{ name: bash, arguments: { command: "echo from-terminal; exit 3" } }]
- text: Ran.
`;
    const p = project(`extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}`, replies);
    const terminals: acp.CreateTerminalRequest[] = [];
    const c = connect(p, { terminals });
    await init(c, { terminal: true });
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: p.dir, mcpServers: [] });
    const r = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "run" }],
    });
    expect(r.stopReason).toBe("end_turn");
    expect(terminals).toHaveLength(1);
    expect(terminals[0]).toMatchObject({ sessionId, args: ["-c", "echo from-terminal; exit 3"], cwd: p.dir });
    const call = ofKind(c.updates, "tool_call")[0]!;
    // The card shows the editor's terminal while it runs, and keeps it with the result.
    expect(ofKind(c.updates, "tool_call_update").filter((u) => u.toolCallId === call.toolCallId)[0]).toMatchObject({
      status: "in_progress",
      content: [{ type: "terminal", terminalId: "term-1" }],
    });
    const end = ofKind(c.updates, "tool_call_update").find((u) => u.status === "failed")!;
    expect(end.content?.[0]).toEqual({ type: "terminal", terminalId: "term-1" });
    expect(JSON.stringify(end.content)).toContain("from-terminal");
    expect(JSON.stringify(end.content)).toContain("exited with code 3");
    expect(await c.close()).toBe(0);
  });

  it("a sandbox that owns the operations service keeps files and commands: the client's are not used, and coil says so", async () => {
    const replies = `- toolCalls: [{ name: write, arguments: { path: out.txt, content: "on disk\\n" } }]
- text: Written.
`;
    const p = project(
      `extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}  - sandbox-bwrap: { allowUnsandboxed: true }\n`,
      replies,
    );
    const writes: acp.WriteTextFileRequest[] = [];
    const terminals: acp.CreateTerminalRequest[] = [];
    const c = connect(p, {
      write: (req) => void writes.push(req),
      read: (req) => ({ content: readFileSync(req.path, "utf8") }),
      terminals,
    });
    await init(c, { fs: { readTextFile: true, writeTextFile: true }, terminal: true });
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: p.dir, mcpServers: [] });
    const r = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "write" }],
    });
    expect(r.stopReason).toBe("end_turn");
    expect(writes).toEqual([]);
    expect(terminals).toEqual([]);
    expect(readFileSync(join(p.dir, "out.txt"), "utf8")).toBe("on disk\n");
    expect(await c.close()).toBe(0);
    expect(c.stderr()).toContain(
      "plugin sandbox-bwrap provides the operations service, so the client's files and terminals are not used",
    );
  });

  it("connects the MCP servers the client passes in session/new; their tools are called as tool calls", async () => {
    const replies = `- toolCalls: [{ name: mcp__fx__sleep, arguments: { ms: 5 } }]
- text: Slept.
`;
    const p = project(`extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}`, replies);
    const c = connect(p);
    const caps = await init(c);
    expect(caps.agentCapabilities?.mcpCapabilities).toEqual({ http: true, sse: true });
    const server = join(ROOT_DIR, "test", "fixtures", "mcp", "server.mjs");
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, {
      cwd: p.dir,
      mcpServers: [{ name: "fx", command: process.execPath, args: [server, p.base], env: [] }],
    });
    const r = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "sleep" }],
    });
    expect(r.stopReason).toBe("end_turn");
    const call = ofKind(c.updates, "tool_call")[0]!;
    expect(call).toMatchObject({ title: "mcp__fx__sleep", kind: "other", rawInput: { ms: 5 } });
    const done = ofKind(c.updates, "tool_call_update").find(
      (u) => u.toolCallId === call.toolCallId && u.status === "completed",
    )!;
    expect(JSON.stringify(done.content)).toContain("slept 5");
    expect(await c.close()).toBe(0);
  });

  it("plan mode: set_mode plan, the plan arrives as plan entries, and its approval is a permission request", async () => {
    const plan = "# Goal\\n- [x] read the code\\n- [ ] change it\\n- [ ] test it\\n";
    const replies = `- toolCalls: [{ name: write_plan, arguments: { plan: "${plan}" } }]
- text: Planned.
`;
    // without the default preset's permission gate: plan mode's modes alone
    const p = project(
      `extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}  - plan-mode\n  - permission-gate: false\n`,
      replies,
    );
    const c = connect(p, {
      permission: (req) => ({
        outcome: { outcome: "selected", optionId: req.options.find((o) => o.kind === "allow_once")!.optionId },
      }),
    });
    await init(c);
    const session = await c.agent.request(acp.methods.agent.session.new, { cwd: p.dir, mcpServers: [] });
    expect(session.modes?.availableModes.map((m) => m.id)).toEqual(["default", "plan"]);
    await c.agent.request(acp.methods.agent.session.setMode, { sessionId: session.sessionId, modeId: "plan" });
    const r = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "plan it" }],
    });
    expect(r.stopReason).toBe("end_turn");
    expect(ofKind(c.updates, "plan")[0]!.entries).toEqual([
      { content: "read the code", priority: "medium", status: "completed" },
      { content: "change it", priority: "medium", status: "in_progress" },
      { content: "test it", priority: "medium", status: "pending" },
    ]);
    expect(c.permissions[0]!.options.map((o) => o.name)).toEqual(["Yes", "No"]);
    expect(c.permissions[0]!.toolCall.toolCallId).toBe(ofKind(c.updates, "tool_call")[0]!.toolCallId);
    const done = ofKind(c.updates, "tool_call_update").find((u) => u.status === "completed")!;
    expect(JSON.stringify(done.content)).toMatch(/approved/i);
    expect(await c.close()).toBe(0);
  });

  it("loads the ACP SDK only in acp mode", async () => {
    const p = project(`extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}`, "- text: hi\n- text: hi\n");
    const loads = join(p.base, "loads.txt");
    const record = ["--import", join(ROOT_DIR, "bench", "record-loads.mjs")];
    const runOnce = (args: string[], input: string) =>
      new Promise<string>((done) => {
        writeFileSync(loads, "");
        const child = spawn(process.execPath, [...record, BIN, "--preset", "./preset.yaml", ...args], {
          cwd: p.dir,
          env: { ...p.env, COIL_BENCH_LOADS: loads },
          stdio: ["pipe", "pipe", "pipe"],
        });
        child.stdin.end(input);
        child.on("exit", () => done(readFileSync(loads, "utf8")));
      });
    const printed = await runOnce(["-p", "hi"], "");
    expect(printed).toContain("/dist/plugins/ui-print/index.js");
    expect(printed).not.toContain("/dist/plugins/ui-acp/index.js"); // -p does not import a plugin that serves acp only (its manifest.json)
    expect(loadedPackage(printed, "@agentclientprotocol/sdk")).toBe(false);
    const served = await runOnce(
      ["--mode", "acp"],
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } }) + "\n",
    );
    expect(served).toContain("/dist/plugins/ui-acp/index.js");
    // The SDK is bundled into a chunk (scripts/build.mjs): that chunk is what loads.
    expect(loadedPackage(served, "@agentclientprotocol/sdk")).toBe(true);
  });

  it("works without a session plugin: sessions live in memory and loadSession is not offered", async () => {
    const p = project(
      `extends: default\nprovider: scripted\nplugins:\n${SCRIPTED}  - session-jsonl: false\n`,
      "- text: in memory\n",
    );
    const c = connect(p);
    const caps = await init(c);
    expect(caps.agentCapabilities?.loadSession).toBe(false);
    const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: p.dir, mcpServers: [] });
    const r = await c.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "hi" }],
    });
    expect(r.stopReason).toBe("end_turn");
    expect(text(c.updates, "agent_message_chunk")).toBe("in memory");
    await expect(
      c.agent.request(acp.methods.agent.session.prompt, { sessionId: "other", prompt: [{ type: "text", text: "hi" }] }),
    ).rejects.toMatchObject({ code: -32002 });
    expect(await c.close()).toBe(0);
  });
});

function findFile(dir: string, id: string): string {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      try {
        return findFile(path, id);
      } catch {
        continue;
      }
    }
    if (entry.name.includes(id) && entry.name.endsWith(".jsonl")) return path;
  }
  throw new Error(`no session file for ${id} under ${dir}`);
}
