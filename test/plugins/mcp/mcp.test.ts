/**
 * mcp plugin in process, against real MCP servers: @modelcontextprotocol/server-everything (stdio,
 * Streamable HTTP, SSE), @modelcontextprotocol/server-filesystem, and a fixture server on the SDK
 * (test/fixtures/mcp). The model is the scripted provider; nothing is mocked.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Agent, type AgentEvent, type ProviderRequest, type ToolResultMessage } from "../../../api/index.js";
import { findCommand } from "../../../lib/front-end.js";
import type { PluginHost } from "../../../boot/host.js";
import { testHost } from "../../support/host.js";
import { packageRoot } from "../../../boot/paths.js";
import mcpPlugin, { type McpService } from "../../../plugins/mcp/index.js";
import planMode from "../../../plugins/plan-mode/index.js";
import permissionGate from "../../../plugins/permission-gate/index.js";
import costAudit, { type CostAuditService } from "../../../plugins/cost-audit/index.js";
import scriptedPlugin, { type ScriptedService } from "../../../plugins/provider-scripted/index.js";
import type { ScriptStep } from "../../../plugins/provider-scripted/script.js";
import { sleep, until } from "../../support/harness.js";
import { cleanTemps, tempDir } from "../../support/tools.js";
import { startPlugins, stopPlugins } from "../../../boot/lifecycle.js";

const ROOT = packageRoot();
const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const FILESYSTEM = join(ROOT, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");
const FIXTURES = join(ROOT, "test", "fixtures", "mcp");
const node = process.execPath;

const hosts: PluginHost[] = [];
const children: ChildProcess[] = [];
const savedHome = process.env.COIL_HOME;

afterEach(async () => {
  for (const host of hosts.splice(0)) await stopPlugins(host);
});
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  if (savedHome === undefined) delete process.env.COIL_HOME;
  else process.env.COIL_HOME = savedHome;
  cleanTemps();
});

const io = () => ({
  cwd: process.cwd(),
  env: process.env,
  stdin: new PassThrough(),
  stdout: new PassThrough(),
  stderr: new PassThrough(),
});

/** A started host with the mcp plugin (options given) on the scripted provider, in `cwd`. */
async function start(
  options: Record<string, unknown>,
  script: ScriptStep[] = [],
  more: {
    cwd?: string;
    trusted?: boolean;
    plan?: boolean;
    mode?: string;
    costAudit?: boolean;
    gate?: Record<string, unknown>;
  } = {},
) {
  const cwd = more.cwd ?? tempDir({}, "coil-mcp-");
  process.env.COIL_HOME = join(cwd, ".home");
  const host = testHost({ cwd, projectTrusted: more.trusted ?? false });
  hosts.push(host);
  const events: AgentEvent[] = [];
  host.subscribe("*", (e) => void events.push(e));
  host.install(scriptedPlugin, { chunkSize: 64 });
  host.install(mcpPlugin, options);
  if (more.plan) host.install(planMode, {});
  if (more.costAudit) host.install(costAudit, {});
  if (more.gate) host.install(permissionGate, more.gate);
  const scripted = host.services.get("scripted") as ScriptedService;
  scripted.push(...script);
  const agent = new Agent(host, {
    provider: "scripted",
    model: { id: "scripted", provider: "scripted", contextWindow: 200_000, maxOutput: 32_000 },
  });
  await startPlugins(host, agent, io(), { mode: more.mode ?? "text", modelFromCli: false });
  const diagnostics = () =>
    events.filter((e): e is Extract<AgentEvent, { type: "diagnostic" }> => e.type === "diagnostic");
  // In call order (as history holds them), not in the order they finished.
  const results = () => agent.state.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
  return { host, agent, scripted, events, diagnostics, results, cwd };
}

const mcpOf = (host: PluginHost) => host.services.get("mcp") as McpService;
const everything = { command: node, args: [EVERYTHING] };
const text = (r: ToolResultMessage) =>
  r.content
    .filter((c) => c.type === "text")
    .map((c) => (c as { text: string }).text)
    .join("\n");
const toolNames = (req: ProviderRequest) => req.tools.map((t) => t.name);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\S+ \S+ Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8").replace(/\(.*\)/, "x"));
  } catch {
    return false;
  }
}

function freePort(): Promise<number> {
  return new Promise((done) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => done(port));
    });
  });
}

async function serveEverything(mode: "streamableHttp" | "sse"): Promise<string> {
  const port = await freePort();
  const child = spawn(node, [EVERYTHING, mode], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(child);
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  await until(() => /listening|running/i.test(err), 15_000);
  return `http://127.0.0.1:${port}/${mode === "sse" ? "sse" : "mcp"}`;
}

describe("mcp: tools from a stdio server (server-everything)", () => {
  it("lists the server's tools as mcp__<server>__<tool> with their JSON Schema, and calls them with text and image results", async () => {
    const t = await start({ servers: { everything } }, [
      {
        toolCalls: [
          { name: "mcp__everything__echo", arguments: { message: "hello mcp" } },
          { name: "mcp__everything__get-tiny-image", arguments: {} },
        ],
      },
      { text: "done" },
    ]);
    const run = await t.agent.prompt("go");
    expect(run.stopReason).toBe("stop");
    const first = t.scripted.requests[0]!;
    expect(toolNames(first)).toEqual(
      expect.arrayContaining([
        "mcp__everything__echo",
        "mcp__everything__get-sum",
        "mcp__everything__trigger-long-running-operation",
        "mcp_read_resource",
      ]),
    );
    const echo = first.tools.find((t) => t.name === "mcp__everything__echo")!;
    expect(echo.parameters).toMatchObject({
      type: "object",
      properties: { message: { type: "string" } },
      required: ["message"],
    });
    const [echoed, image] = t.results();
    expect(echoed!.isError).toBe(false);
    expect(text(echoed!)).toBe("Echo: hello mcp");
    expect(image!.content.some((c) => c.type === "image" && c.mimeType === "image/png" && c.data.length > 100)).toBe(
      true,
    );
  });

  it("validates arguments against the server's schema before calling", async () => {
    const t = await start({ servers: { everything } }, [
      { toolCalls: [{ name: "mcp__everything__get-sum", arguments: { a: "x" } }] },
      { text: "ok" },
    ]);
    await t.agent.prompt("go");
    const [r] = t.results();
    expect(r!.isError).toBe(true);
    expect(text(r!)).toMatch(/Invalid arguments for tool 'mcp__everything__get-sum'/);
  });

  it("passes hand-written schemas ($defs/$ref, anyOf null) through and validates against them; a tool whose schema cannot be compiled is left out, once reported", async () => {
    const raw = { command: node, args: [join(FIXTURES, "raw.mjs")] };
    const t = await start({ servers: { raw } }, [
      {
        toolCalls: [
          { name: "mcp__raw__create_item", arguments: { item: { name: "box", size: 3 } } },
          { name: "mcp__raw__create_item", arguments: { item: { size: 3 } } },
        ],
      },
      { text: "ok" },
    ]);
    await t.agent.prompt("go");
    const spec = t.scripted.requests[0]!.tools.find((x) => x.name === "mcp__raw__create_item")!;
    expect(spec.parameters).toMatchObject({
      $defs: { Item: { required: ["name"] } },
      properties: { item: { $ref: "#/$defs/Item" } },
    });
    expect(toolNames(t.scripted.requests[0]!)).not.toContain("mcp__raw__broken_schema");
    const [ok, invalid] = t.results();
    expect(JSON.parse(text(ok!))).toEqual({ item: { name: "box", size: 3 } });
    expect(invalid!.isError).toBe(true);
    expect(text(invalid!)).toMatch(/Invalid arguments for tool 'mcp__raw__create_item': \/item/);
    expect(
      t
        .diagnostics()
        .filter((d) => d.message.includes("broken_schema"))
        .map((d) => d.message),
    ).toEqual([
      expect.stringMatching(
        /^server 'raw': tool 'broken_schema' is left out: its input schema cannot be used \(Invalid regular expression/,
      ),
    ]);
  });

  it("maps resource links and embedded resources to text with their URI", async () => {
    const t = await start({ servers: { everything } }, [
      {
        toolCalls: [
          { name: "mcp__everything__get-resource-links", arguments: { count: 2 } },
          { name: "mcp__everything__get-resource-reference", arguments: {} },
        ],
      },
      { text: "ok" },
    ]);
    await t.agent.prompt("go");
    const [links, ref] = t.results();
    expect(text(links!)).toMatch(/\[resource link\] .*demo:\/\/resource\//);
    expect(text(ref!)).toMatch(/\[resource demo:\/\/resource\/[^\]]*\]/);
  });

  it("mcp_read_resource lists and reads a server's resources", async () => {
    const t = await start({ servers: { everything } }, [
      { toolCalls: [{ name: "mcp_read_resource", arguments: { server: "everything" } }] },
      {
        toolCalls: [
          {
            name: "mcp_read_resource",
            arguments: { server: "everything", uri: "demo://resource/static/document/architecture.md" },
          },
        ],
      },
      { text: "ok" },
    ]);
    await t.agent.prompt("go");
    const [list, read] = t.results();
    expect(text(list!)).toContain("demo://resource/static/document/architecture.md");
    expect(read!.isError).toBe(false);
    expect(text(read!)).toMatch(
      /^\[resource demo:\/\/resource\/static\/document\/architecture\.md \(text\/markdown\)\]\n#/,
    );
  });

  it("@server:uri in a user message attaches the resource to the request, once, the same bytes every request", async () => {
    const uri = "demo://resource/static/document/architecture.md";
    const t = await start({ servers: { everything } }, [
      { toolCalls: [{ name: "mcp__everything__echo", arguments: { message: "x" } }] },
      { text: "ok" },
    ]);
    await t.agent.prompt(`summarise @everything:${uri}, and @nobody:demo://x too`);
    const [a, b] = t.scripted.requests;
    const sent = a!.messages[0]! as { content: { type: string; text?: string }[] };
    expect(sent.content[0]).toEqual({ type: "text", text: `summarise @everything:${uri}, and @nobody:demo://x too` });
    expect(sent.content[1]!.text).toMatch(
      new RegExp(`^\\[resource ${uri.replace(/[./]/g, "\\$&")} \\(text/markdown\\)\\]\n#`),
    );
    expect(sent.content).toHaveLength(2); // 'nobody' is not a server: left as text
    expect(JSON.stringify(b!.messages[0])).toBe(JSON.stringify(a!.messages[0]));
    // history keeps what the user typed
    expect(t.agent.state.messages[0]).toMatchObject({
      role: "user",
      content: `summarise @everything:${uri}, and @nobody:demo://x too`,
    });
  });

  it("an unreadable @server:uri says so in the message instead of failing the request", async () => {
    const t = await start({ servers: { everything } }, [{ text: "ok" }]);
    await t.agent.prompt("look at @everything:demo://resource/missing/thing");
    const sent = t.scripted.requests[0]!.messages[0]! as { content: { text?: string }[] };
    expect(sent.content[1]!.text).toMatch(/^\[could not read @everything:demo:\/\/resource\/missing\/thing: /);
  });

  it("server prompts are slash commands /mcp__<server>__<prompt> whose text becomes the user's turn", async () => {
    const t = await start({ servers: { everything } });
    const found = findCommand(t.host, "/mcp__everything__args-prompt city=Paris state=Texas");
    expect(found?.command.argumentHint).toBe("<city> [state]");
    const out = (await found!.command.run(found!.args, t.agent)) as { prompt: string };
    expect(out.prompt).toMatch(/Paris/);
    expect(out.prompt).toMatch(/Texas/);
    const positional = findCommand(t.host, "/mcp__everything__args-prompt Lyon")!;
    expect(((await positional.command.run(positional.args, t.agent)) as { prompt: string }).prompt).toMatch(/Lyon/);
    const missing = findCommand(t.host, "/mcp__everything__args-prompt")!;
    // A usage error (print mode exits 2 on it; mcp-faults.test.ts checks that through the CLI).
    await expect(async () => missing.command.run(missing.args, t.agent)).rejects.toMatchObject({
      code: "MCP_PROMPT_USAGE",
      message: expect.stringMatching(/needs city/),
    });
  });

  it("/mcp shows servers, status and tool counts", async () => {
    const t = await start({ servers: { everything, broken: { command: node, args: [join(FIXTURES, "exits.mjs")] } } });
    const out = (await findCommand(t.host, "/mcp")!.command.run("", t.agent)) as string;
    expect(out).toMatch(/everything {2}connected {2}stdio {2}1[0-9] tools, 4 prompts/);
    expect(out).toMatch(/broken {2}failed/);
    expect(out).toMatch(/last error: /);
  });
});

describe("mcp: results, errors and the output budget", () => {
  it("isError becomes an error result; structuredContent alone becomes JSON text", async () => {
    const markers = tempDir();
    const fixture = { command: node, args: [join(FIXTURES, "server.mjs"), markers] };
    const t = await start({ servers: { fx: fixture } }, [
      {
        toolCalls: [
          { name: "mcp__fx__fail", arguments: { why: "the disk is full" } },
          { name: "mcp__fx__structured", arguments: {} },
        ],
      },
      { text: "ok" },
    ]);
    await t.agent.prompt("go");
    const [failed, structured] = t.results();
    expect(failed!.isError).toBe(true);
    expect(text(failed!)).toBe("failed because the disk is full");
    expect(structured!.isError).toBe(false);
    expect(JSON.parse(text(structured!))).toEqual({ total: 42 });
    expect(structured!.details).toMatchObject({ structuredContent: { total: 42 } });
  });

  it("a 3 MB file read through server-filesystem is cut to the shared budget", async () => {
    const dir = tempDir({ "big.txt": `${"x".repeat(99)}\n`.repeat(30_000) });
    const t = await start({ servers: { fs: { command: node, args: [FILESYSTEM, dir] } } }, [
      { toolCalls: [{ name: "mcp__fs__read_text_file", arguments: { path: join(dir, "big.txt") } }] },
      { text: "ok" },
    ]);
    await t.agent.prompt("go");
    const [r] = t.results();
    const body = text(r!);
    expect(r!.isError).toBe(false);
    expect(Buffer.byteLength(body)).toBeLessThan(52 * 1024);
    expect(body).toMatch(/\[output truncated: the result had 2\.9 MB in 30001 lines; showing the first/);
  });
});

describe("mcp: calls, progress, abort and concurrency", () => {
  it("progress becomes tool updates; abort sends notifications/cancelled and returns an aborted result", async () => {
    const markers = tempDir();
    const t = await start({ servers: { fx: { command: node, args: [join(FIXTURES, "server.mjs"), markers] } } }, [
      { toolCalls: [{ name: "mcp__fx__wait_for_cancel", arguments: {} }] },
    ]);
    const running = t.agent.prompt("go");
    await until(() => t.events.filter((e) => e.type === "tool_execution_update").length >= 3, 10_000);
    const started = Date.now();
    t.agent.abort();
    const run = await running;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(run.stopReason).toBe("aborted");
    const update = t.events.find((e) => e.type === "tool_execution_update") as Extract<
      AgentEvent,
      { type: "tool_execution_update" }
    >;
    expect(update.partial.content[0]).toMatchObject({
      type: "text",
      text: expect.stringMatching(/^progress \d+\/600: step \d+$/),
    });
    const result = run.messages.find((m) => m.role === "toolResult") as ToolResultMessage;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/Aborted/);
    // The server saw the cancellation (its handler's signal fired and it wrote the marker).
    await until(() => existsSync(join(markers, "cancelled")), 5000);
  });

  it("a call past toolTimeout is an error result naming the timeout", async () => {
    const markers = tempDir();
    const t = await start(
      { toolTimeout: 300, servers: { fx: { command: node, args: [join(FIXTURES, "server.mjs"), markers] } } },
      [{ toolCalls: [{ name: "mcp__fx__sleep", arguments: { ms: 5000 } }] }, { text: "ok" }],
    );
    await t.agent.prompt("go");
    const [r] = t.results();
    expect(r!.isError).toBe(true);
    expect(text(r!)).toMatch(/mcp__fx__sleep timed out after 0\.3 s \(MCP server 'fx'\)/);
  });

  it("parallel calls to MCP tools run concurrently", async () => {
    const markers = tempDir();
    const t = await start({ servers: { fx: { command: node, args: [join(FIXTURES, "server.mjs"), markers] } } }, [
      { toolCalls: [1, 2, 3].map(() => ({ name: "mcp__fx__sleep", arguments: { ms: 700 } })) },
      { text: "ok" },
    ]);
    const t0 = Date.now();
    await t.agent.prompt("go");
    expect(t.results().map(text)).toEqual(["slept 700", "slept 700", "slept 700"]);
    expect(Date.now() - t0).toBeLessThan(1800);
  });
});

describe("mcp: a server that stops during the session", () => {
  it("is reported once; its tools fail with a message naming /mcp reconnect, which brings it back", async () => {
    const markers = tempDir();
    const t = await start({ servers: { fx: { command: node, args: [join(FIXTURES, "server.mjs"), markers] } } }, [
      { toolCalls: [{ name: "mcp__fx__crash", arguments: {} }] },
      async () => {
        await until(() => t.diagnostics().some((d) => d.message.includes("stopped")), 5000);
        return { toolCalls: [{ name: "mcp__fx__sleep", arguments: { ms: 1 } }] };
      },
      { text: "ok" },
      { toolCalls: [{ name: "mcp__fx__sleep", arguments: { ms: 2 } }] },
      { text: "ok again" },
    ]);
    await t.agent.prompt("go");
    const stopped = t.diagnostics().filter((d) => d.message.includes("stopped"));
    expect(stopped).toHaveLength(1);
    expect(stopped[0]!.message).toMatch(
      /^MCP server 'fx' stopped: the server exited with code 7 during the session; its last stderr line: fixture server: crashing now \(log: .*fx\.log\)\. Its tools fail until \/mcp reconnect fx\.$/,
    );
    const failed = t.results()[1]!;
    expect(failed.isError).toBe(true);
    expect(text(failed)).toMatch(
      /the MCP server 'fx' is not connected \(the server exited with code 7 during the session.*\); the user can try \/mcp reconnect fx/,
    );
    expect(await findCommand(t.host, "/mcp reconnect fx")!.command.run("reconnect fx", t.agent)).toBe(
      "fx: reconnected, 6 tools, 0 prompts",
    );
    await t.agent.prompt("again");
    expect(text(t.results()[2]!)).toBe("slept 2");
  });
});

describe("mcp: list_changed", () => {
  it("a changed tool list is taken in at the next request, not mid-turn, and is reported", async () => {
    const markers = tempDir();
    const t = await start(
      { servers: { fx: { command: node, args: [join(FIXTURES, "server.mjs"), markers] } } },
      [
        { toolCalls: [{ name: "mcp__fx__add_tool", arguments: { name: "fresh" } }] },
        async () => {
          await sleep(0);
          return { toolCalls: [{ name: "mcp__fx__fresh", arguments: {} }] };
        },
        { text: "ok" },
      ],
      { costAudit: true },
    );
    await t.agent.prompt("go");
    const [first, second] = t.scripted.requests;
    expect(toolNames(first!)).not.toContain("mcp__fx__fresh");
    expect(toolNames(second!)).toContain("mcp__fx__fresh");
    expect(text(t.results()[1]!)).toBe("fresh ran");
    // The cost audit names list_changed as why the tools (and so the prompt cache) changed.
    const audits = (t.host.services.get("cost-audit") as CostAuditService).records();
    expect(audits[1]!.reasons).toContain("tools changed (MCP notifications/tools/list_changed from fx)");
    expect(audits[2]!.reasons).not.toContain(expect.stringMatching(/tools changed/));
    expect(
      t
        .diagnostics()
        .some((d) =>
          /^MCP tools changed \(notifications\/tools\/list_changed from fx\): \+mcp__fx__fresh$/.test(d.message),
        ),
    ).toBe(true);
  });

  it("with nothing changed, the tools of consecutive requests are identical (prompt prefix stable)", async () => {
    const t = await start({ servers: { everything } }, [
      { toolCalls: [{ name: "mcp__everything__echo", arguments: { message: "a" } }] },
      { text: "ok" },
    ]);
    await t.agent.prompt("go");
    const [a, b] = t.scripted.requests;
    expect(JSON.stringify(b!.tools)).toBe(JSON.stringify(a!.tools));
  });
});

describe("mcp: transports", () => {
  it("Streamable HTTP (server-everything streamableHttp)", async () => {
    const url = await serveEverything("streamableHttp");
    const t = await start({ servers: { remote: { type: "http", url } } }, [
      { toolCalls: [{ name: "mcp__remote__echo", arguments: { message: "over http" } }] },
      { text: "ok" },
    ]);
    await t.agent.prompt("go");
    expect(text(t.results()[0]!)).toBe("Echo: over http");
    expect((await mcpOf(t.host).status())[0]).toMatchObject({ transport: "http", status: "connected" });
  }, 30_000);

  it("an http server that only speaks the legacy SSE transport is reached through the SSE fallback", async () => {
    const url = await serveEverything("sse");
    const t = await start({ servers: { old: { type: "http", url } } }, [
      { toolCalls: [{ name: "mcp__old__echo", arguments: { message: "over sse" } }] },
      { text: "ok" },
    ]);
    await t.agent.prompt("go");
    expect(text(t.results()[0]!)).toBe("Echo: over sse");
    expect((await mcpOf(t.host).status())[0]).toMatchObject({ transport: "sse", status: "connected" });
  }, 30_000);
});

describe("mcp: start-up failures", () => {
  it("a server that exits at once is reported once with its stderr tail; the others work", async () => {
    const t = await start({ servers: { broken: { command: node, args: [join(FIXTURES, "exits.mjs")] }, everything } }, [
      { toolCalls: [{ name: "mcp__everything__echo", arguments: { message: "still here" } }] },
      { text: "ok" },
    ]);
    await t.agent.prompt("go");
    const reports = t.diagnostics().filter((d) => d.message.includes("'broken'"));
    expect(reports).toHaveLength(1);
    expect(reports[0]!.level).toBe("error");
    expect(reports[0]!.message).toMatch(
      /^MCP server 'broken' \(preset\) is not available: the server exited with code 3 during start-up; see its stderr\n/,
    );
    expect(reports[0]!.message).toContain("fatal: GITHUB_TOKEN is not set");
    expect(text(t.results()[0]!)).toBe("Echo: still here");
    // stderr went to the log file under $COIL_HOME
    expect(readFileSync(join(process.env.COIL_HOME!, "logs", "mcp", "broken.log"), "utf8")).toContain(
      "fatal: GITHUB_TOKEN is not set",
    );
  });

  it("servers that never answer initialize time out after startupTimeout, in parallel, and their process trees are killed", async () => {
    const pidFiles = [join(tempDir(), "child.pid"), join(tempDir(), "child.pid")];
    const t0 = Date.now();
    const t = await start({
      startupTimeout: 1000,
      servers: {
        mute: { command: node, args: [join(FIXTURES, "silent.mjs"), pidFiles[0]!] },
        mute2: { command: node, args: [join(FIXTURES, "silent.mjs"), pidFiles[1]!] },
      },
    });
    // One after the other would take at least 2 s.
    expect(Date.now() - t0).toBeLessThan(1900);
    for (const name of ["mute", "mute2"]) {
      expect(
        t
          .diagnostics()
          .filter((d) => d.message.includes(`'${name}'`))
          .map((d) => d.message),
      ).toEqual([expect.stringMatching(/did not finish start-up within 1 s/)]);
    }
    for (const file of pidFiles) {
      const child = Number(readFileSync(file, "utf8"));
      expect(child).toBeGreaterThan(0);
      await until(() => !alive(child), 3000);
    }
  });

  it("an unreachable http server is reported with both transports' errors", async () => {
    const port = await freePort();
    const t = await start({ servers: { gone: { type: "http", url: `http://127.0.0.1:${port}/mcp` } } });
    expect(t.diagnostics().find((d) => d.message.includes("'gone'"))?.message).toBe(
      `MCP server 'gone' (preset) is not available: Streamable HTTP failed (fetch failed: connect ECONNREFUSED 127.0.0.1:${port}), and so did the legacy SSE transport (SSE error: TypeError: fetch failed: connect ECONNREFUSED 127.0.0.1:${port})`,
    );
  });

  it("a wrong command is reported with the command's name", async () => {
    const t = await start({ servers: { nope: { command: "/nonexistent/mcp-server" } } });
    expect(t.diagnostics().find((d) => d.message.includes("'nope'"))?.message).toMatch(
      /cannot start '\/nonexistent\/mcp-server': .*ENOENT/,
    );
  });
});

describe("mcp: configuration files", () => {
  it("a trusted project's .mcp.json starts its servers; ${VAR} and ${VAR:-default} expand", async () => {
    const dir = tempDir({}, "coil-mcp-project-");
    const marker = join(dir, "started.txt");
    writeFileSync(
      join(dir, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          m: { command: "${MCP_TEST_NODE}", args: ["${MCP_FIXTURES:-" + FIXTURES + "}/marker.mjs", marker] },
        },
      }),
    );
    process.env.MCP_TEST_NODE = node;
    try {
      const t = await start({}, [], { cwd: dir, trusted: true });
      await until(() => existsSync(marker), 5000);
      expect((await mcpOf(t.host).status())[0]).toMatchObject({ name: "m", source: join(dir, ".mcp.json") });
    } finally {
      delete process.env.MCP_TEST_NODE;
    }
  });

  it("expands ${VAR} in url and headers; an unset variable without a default keeps that server from starting", async () => {
    const dir = tempDir({}, "coil-mcp-project-");
    writeFileSync(
      join(dir, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          api: {
            type: "http",
            url: "https://${MCP_TEST_HOST:-mcp.example.com}/mcp",
            headers: { Authorization: "Bearer ${MCP_TEST_TOKEN}" },
          },
          bad: { command: "${MCP_TEST_UNSET}" },
        },
      }),
    );
    const { loadServers } = await import("../../../plugins/mcp/config.js");
    const loaded = loadServers({
      preset: {},
      home: join(dir, "home"),
      cwd: dir,
      trusted: true,
      env: { MCP_TEST_TOKEN: "s3cret" },
    });
    expect(loaded.servers).toEqual([
      {
        name: "api",
        source: join(dir, ".mcp.json"),
        transport: { type: "http", url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer s3cret" } },
      },
    ]);
    expect(loaded.problems).toEqual([
      {
        file: join(dir, ".mcp.json"),
        key: "mcpServers.bad",
        message:
          "environment variable ${MCP_TEST_UNSET} not set (use ${NAME:-default} for a default); server 'bad' is not started",
      },
    ]);
  });

  it("an untrusted project's .mcp.json starts nothing and says why", async () => {
    const dir = tempDir({}, "coil-mcp-project-");
    const marker = join(dir, "started.txt");
    writeFileSync(
      join(dir, ".mcp.json"),
      JSON.stringify({ mcpServers: { m: { command: node, args: [join(FIXTURES, "marker.mjs"), marker] } } }),
    );
    const t = await start({}, [], { cwd: dir, trusted: false });
    await sleep(500);
    expect(existsSync(marker)).toBe(false);
    expect(
      t
        .diagnostics()
        .some(
          (d) =>
            d.level === "warn" &&
            d.message.includes(`${join(dir, ".mcp.json")} were not started: this project is not trusted`),
        ),
    ).toBe(true);
  });

  it("a malformed file is reported with file, line and key, and the run goes on without its servers", async () => {
    const dir = tempDir({}, "coil-mcp-project-");
    const marker = join(dir, "started.txt");
    writeFileSync(
      join(dir, ".mcp.json"),
      `{\n  "mcpServers": {\n    "ok": { "command": "${node}", "args": ["${join(FIXTURES, "marker.mjs")}", "${marker}"] },\n    "bad": { "command": 42 }\n  }\n}\n`,
    );
    const t = await start({ servers: { everything } }, [{ text: "fine" }], { cwd: dir, trusted: true });
    const run = await t.agent.prompt("go");
    expect(run.stopReason).toBe("stop");
    const problem = t.diagnostics().find((d) => d.message.includes(".mcp.json"));
    expect(problem?.message).toBe(
      `${join(dir, ".mcp.json")}:4 (mcpServers.bad.command): must be a non-empty string (the program to start); none of this file's servers are started`,
    );
    expect(existsSync(marker)).toBe(false);
    expect(toolNames(t.scripted.requests[0]!)).toContain("mcp__everything__echo");
  });

  it("invalid JSON is reported with its line", async () => {
    const dir = tempDir(
      { ".mcp.json": '{\n  "mcpServers": {\n    "a": { "command": "x", }\n  }\n}\n' },
      "coil-mcp-project-",
    );
    const t = await start({}, [], { cwd: dir, trusted: true });
    expect(t.diagnostics().find((d) => d.message.includes(".mcp.json"))?.message).toMatch(
      new RegExp(`^${join(dir, ".mcp.json").replace(/[.]/g, "\\.")}:3: not valid JSON`),
    );
  });
});

describe("mcp: permission rules", () => {
  it("rules like mcp__everything__* match MCP tool names through tool_call", async () => {
    const t = await start(
      { servers: { everything } },
      [
        {
          toolCalls: [
            { name: "mcp__everything__get-env", arguments: {} },
            { name: "mcp__everything__echo", arguments: { message: "allowed" } },
          ],
        },
        { text: "ok" },
      ],
      { gate: { mode: "yolo", deny: ["mcp__everything__get-*"] } },
    );
    await t.agent.prompt("go");
    const [denied, allowed] = t.results();
    expect(denied!.isError).toBe(true);
    expect(text(denied!)).toMatch(/^Blocked: .*mcp__everything__get-\*/);
    expect(text(allowed!)).toBe("Echo: allowed");
  });
});

describe("mcp: plan mode", () => {
  it("keeps MCP tools marked readOnlyHint and removes the others", async () => {
    const markers = tempDir();
    const t = await start(
      { servers: { fx: { command: node, args: [join(FIXTURES, "server.mjs"), markers] } } },
      [
        {
          toolCalls: [
            { name: "mcp__fx__fail", arguments: { why: "x" } },
            { name: "mcp__fx__sleep", arguments: { ms: 1 } },
          ],
        },
        { text: "ok" },
      ],
      { plan: true },
    );
    await findCommand(t.host, "/plan")!.command.run("", t.agent);
    await t.agent.prompt("go");
    const tools = toolNames(t.scripted.requests[0]!);
    expect(tools).toContain("mcp__fx__sleep");
    expect(tools).not.toContain("mcp__fx__fail");
    const [blocked, allowed] = t.results();
    expect(text(blocked!)).toMatch(/^Blocked: plan mode is read-only/);
    expect(text(allowed!)).toBe("slept 1");
  });
});
