/**
 * Pi extensions (#34), the rest of Pi's events and context, through the built CLI against the validating
 * Anthropic mock: `input` (handled, transform), `before_provider_request`, `model_select` with
 * `ctx.modelRegistry` and `pi.setModel`, `pi.setActiveTools` / `getActiveTools` / `getAllTools` and the
 * thinking level, `session_before_compact` (a supplied compaction, a cancel). The extensions are written here
 * to Pi's documented API; what they observe goes to a log file named by PI_EVENTS_LOG.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RpcClient } from "../../../sdk/rpc-client/index.js";
import { BIN, coil, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { apiError, reply, text } from "../../support/mock-anthropic.js";
import { useMockAnthropic } from "../../support/provider-mocks.js";

const KEY = "sk-ant-pi-events-test-0123456789";
const MODEL = ["--model", "anthropic/claude-sonnet-4-5"];
const mock = useMockAnthropic(KEY);

/** Pi's input, provider-request and model events, the model registry, active tools and the thinking level. */
const EVENTS = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { appendFileSync } from "node:fs";

const log = (line: string) => appendFileSync(process.env.PI_EVENTS_LOG!, line + "\\n");

export default function (pi: ExtensionAPI) {
  pi.registerFlag("narrow", { description: "offer the model only read", type: "boolean", default: false });
  pi.on("input", async (event, ctx) => {
    if (event.text === "ping") {
      ctx.ui.notify("pong (" + event.source + ")", "info");
      return { action: "handled" };
    }
    if (event.text.startsWith("?quick ")) return { action: "transform", text: "Respond briefly: " + event.text.slice(7) };
    return { action: "continue" };
  });
  pi.on("before_provider_request", (event) => {
    const payload = event.payload as { system: string; model: string };
    log("payload model " + payload.model);
    return { ...payload, temperature: 0.25, system: payload.system + "\\n\\nEXTRA-SYSTEM-LINE" };
  });
  pi.on("model_select", (event) => {
    log("model_select " + event.previousModel?.id + " -> " + event.model.id + " (" + event.source + ")");
  });
  pi.on("session_start", async () => {
    if (!pi.getFlag("narrow")) return;
    pi.setActiveTools(["read"]);
    pi.setThinkingLevel("high");
    const probe = pi.getAllTools().find((t) => t.name === "switch_model");
    log("active " + pi.getActiveTools().join(",") + "; thinking " + pi.getThinkingLevel() + "; switch_model from " + probe?.sourceInfo.source);
  });
  pi.registerTool({
    name: "switch_model",
    label: "Switch model",
    description: "Switch to Claude Haiku",
    parameters: Type.Object({}),
    async execute(_id, _params, _signal, _onUpdate, ctx) {
      const model = ctx.modelRegistry.find("anthropic", "claude-haiku-4-5");
      const ok = model ? await pi.setModel(model) : false;
      const key = model ? await ctx.modelRegistry.getApiKey(model) : undefined;
      const listed = ctx.modelRegistry.getAll().some((m) => m.provider === "anthropic" && m.id === "claude-haiku-4-5");
      return {
        content: [{ type: "text", text: "switched " + ok + "; key matches " + (key === process.env.ANTHROPIC_API_KEY) + "; listed " + listed }],
        details: {},
      };
    },
  });
}
`;

/** session_before_compact: supplies its own summary, or (PI_CANCEL_COMPACT) cancels; session_compact logs. */
const COMPACT = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { appendFileSync } from "node:fs";

const log = (line: string) => appendFileSync(process.env.PI_EVENTS_LOG!, line + "\\n");

export default function (pi: ExtensionAPI) {
  pi.on("session_before_compact", async (event) => {
    const { preparation, branchEntries } = event;
    log("before_compact entries " + branchEntries.length + " summarize " + preparation.messagesToSummarize.length + " tokens " + (preparation.tokensBefore > 0));
    if (process.env.PI_CANCEL_COMPACT) return { cancel: true };
    return {
      compaction: {
        summary: "EXT SUMMARY: the user said first",
        firstKeptEntryId: preparation.firstKeptEntryId,
        tokensBefore: preparation.tokensBefore,
      },
    };
  });
  pi.on("session_compact", async (event) => {
    log("session_compact fromExtension " + event.fromExtension + " summary " + event.compactionEntry?.summary);
  });
}
`;

/** The session_before_* events (PI_REFUSE cancels), session_tree, and a command that starts a new session. */
const SESSIONS = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { appendFileSync } from "node:fs";

const log = (line: string) => appendFileSync(process.env.PI_EVENTS_LOG!, line + "\\n");

// Pi loads an extension again for a new session: each instance is a module evaluation of its own.
const me = Math.random().toString(36).slice(2, 8);

export default function (pi: ExtensionAPI) {
  pi.on("session_start", async (event) => log("start " + event.reason + (event.previousSessionFile ? " (previous given)" : "")));
  pi.on("session_start", async (event) => appendFileSync(process.env.PI_EVENTS_LOG! + ".instances", me + " " + event.reason + "\\n"));
  pi.on("session_shutdown", async (event) => log("shutdown " + event.reason));
  pi.on("session_before_switch", async (event) => {
    log("before_switch " + event.reason);
    if (process.env.PI_REFUSE) return { cancel: true };
  });
  pi.on("session_before_fork", async (event) => {
    log("before_fork " + event.position);
    if (process.env.PI_REFUSE) return { cancel: true };
  });
  pi.on("session_before_tree", async (event) => {
    log("before_tree leaving " + event.preparation.entriesToSummarize.length);
    return { summary: { summary: "EXT BRANCH SUMMARY", details: {} } };
  });
  pi.on("session_tree", async (event) => log("session_tree summary " + event.summaryEntry?.summary + " moved " + (event.oldLeafId !== event.newLeafId)));
  pi.registerCommand("handoff", {
    description: "continue in a new session",
    handler: async (_args, ctx) => {
      const before = ctx.sessionManager.getSessionId();
      const result = await ctx.newSession({
        withSession: async (next) => next.ui.notify("now in another session: " + (next.sessionManager.getSessionId() !== before)),
      });
      ctx.ui.notify("cancelled " + result.cancelled);
    },
  });
}
`;

/** A command that chains prompts: each sendUserMessage, then waitForIdle, as Pi's command context allows. */
const CHAIN = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
  pi.registerCommand("chain", {
    description: "send each word as a prompt, one after another",
    handler: async (args, ctx) => {
      for (const step of args.split(" ")) {
        pi.sendUserMessage("step " + step);
        await ctx.waitForIdle();
      }
      ctx.ui.notify("chain done after " + ctx.sessionManager.getBranch().filter((e) => e.type === "message").length + " messages");
    },
  });
  pi.registerCommand("pair", {
    description: "two prompts without waiting",
    handler: async () => {
      pi.sendUserMessage("first half");
      pi.sendUserMessage("second half");
    },
  });
}
`;

/** after_provider_response: the status and a header of each response, before the stream is read. */
const RESPONSES = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { appendFileSync } from "node:fs";

const log = (line: string) => appendFileSync(process.env.PI_EVENTS_LOG!, line + "\\n");

export default function (pi: ExtensionAPI) {
  pi.on("after_provider_response", async (event) => {
    await new Promise((done) => setTimeout(done, 20));
    log("response " + event.status + " retry-after " + event.headers["retry-after"] + " type " + event.headers["content-type"]);
  });
  pi.on("message_update", async (event) => {
    if (event.message.role === "assistant") log("streaming");
  });
}
`;

function sandbox() {
  const base = tempDir("coil-pi-events-");
  const project = join(base, "project");
  writeFiles(project, { ".git/HEAD": "ref: refs/heads/main\n" });
  const logFile = join(base, "events.log");
  const env = sandboxEnv(base, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url, PI_EVENTS_LOG: logFile });
  return { base, project, env, logFile, log: () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : "") };
}

const toolUse = (name: string, input: Record<string, unknown>, id = "toolu_1") =>
  reply([{ tool: { id, name, input } }], { stop: "tool_use" });

const userTexts = (body: Record<string, unknown>) =>
  (body.messages as { role: string; content: unknown }[])
    .filter((m) => m.role === "user")
    .map((m) => JSON.stringify(m.content));

describe("Pi extensions: events and context through the CLI", () => {
  it("input: { action: 'handled' } consumes the prompt (no request, the handler's notice is the output); transform rewrites it; before_provider_request changes the request", async () => {
    const s = sandbox();
    writeFiles(s.base, { "events.ts": EVENTS });
    const ext = ["-e", join(s.base, "events.ts")];
    mock.requests.length = 0;
    const handled = await coil(s.project, [...MODEL, ...ext, "-p", "ping"], s.env);
    expect(handled.code, handled.stderr).toBe(0);
    expect(handled.stdout.trim()).toBe("pong (interactive)");
    expect(mock.requests).toHaveLength(0);

    mock.push(text("brief."));
    const transformed = await coil(s.project, [...MODEL, ...ext, "-p", "?quick what is 2+2"], s.env);
    expect(transformed.code, transformed.stderr).toBe(0);
    expect(transformed.stdout.trim()).toBe("brief.");
    const body = mock.requests[0]!.body;
    expect(userTexts(body).at(-1)).toContain("Respond briefly: what is 2+2");
    expect(JSON.stringify(body.messages)).not.toContain("?quick");
    // before_provider_request: coil's provider-neutral payload, its changes applied to the request
    expect(body.temperature).toBe(0.25);
    expect(JSON.stringify(body.system)).toContain("EXTRA-SYSTEM-LINE");
    expect(s.log()).toContain("payload model anthropic/claude-sonnet-4-5");
    expect(mock.rejected()).toEqual([]);
    // the mapped calls are no longer reported
    expect(transformed.stderr).not.toContain("not supported in coil");
  });

  it("RPC: a handled input starts no run", async () => {
    const s = sandbox();
    writeFiles(s.base, { "events.ts": EVENTS });
    const client = await RpcClient.start({
      bin: BIN,
      cwd: s.project,
      env: s.env,
      args: [...MODEL, "-e", join(s.base, "events.ts")],
      timeoutMs: 20_000,
    });
    try {
      const notes: string[] = [];
      client.onUi((req) => {
        if (req.method === "notify") notes.push(String(req.params.message));
        return undefined;
      });
      mock.requests.length = 0;
      const r = await client.prompt("ping");
      expect(r.started).toBe(false);
      expect(mock.requests).toHaveLength(0);
      mock.push(text("pong from the model"));
      const end = await client.run("not ping");
      expect(end.stopReason).toBe("stop");
      expect(mock.requests).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it("a tool switches the model with ctx.modelRegistry and pi.setModel: the next request uses it and model_select fires", async () => {
    const s = sandbox();
    writeFiles(s.base, { "events.ts": EVENTS });
    mock.requests.length = 0;
    mock.push(toolUse("switch_model", {}), text("on haiku now"));
    const ran = await coil(s.project, [...MODEL, "-e", join(s.base, "events.ts"), "--mode", "json", "switch"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    const end = ran.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l))
      .find((e) => e.type === "tool_execution_end");
    expect(end.result.content[0].text).toBe("switched true; key matches true; listed true");
    expect(mock.requests.map((r) => r.body.model)).toEqual(["claude-sonnet-4-5", "claude-haiku-4-5"]);
    expect(s.log()).toContain("model_select claude-sonnet-4-5 -> claude-haiku-4-5 (set)");
    expect(mock.rejected()).toEqual([]);
  });

  it("pi.setActiveTools narrows the tools the model is offered and blocks a call to another; the thinking level is set and read", async () => {
    const s = sandbox();
    writeFiles(s.base, { "events.ts": EVENTS });
    mock.requests.length = 0;
    mock.push(toolUse("bash", { command: "echo hi" }), text("could not"));
    const ran = await coil(
      s.project,
      [...MODEL, "-e", join(s.base, "events.ts"), "--narrow", "--mode", "json", "say hi"],
      s.env,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const first = mock.requests[0]!.body;
    expect(first.tools.map((t: { name: string }) => t.name)).toEqual(["read"]);
    expect(first.thinking).toMatchObject({ type: "enabled" });
    expect(JSON.stringify(mock.requests[1]!.body.messages.at(-1))).toContain("bash is not an active tool");
    expect(s.log()).toContain("active read; thinking high; switch_model from events");
    expect(mock.rejected()).toEqual([]);
  });

  it("session_before_compact supplies the compaction (/compact makes no summary request) and session_compact says so; a cancel keeps the context", async () => {
    const s = sandbox();
    writeFiles(s.base, { "compact.ts": COMPACT });
    const ext = ["-e", join(s.base, "compact.ts")];
    mock.requests.length = 0;
    mock.push(text("one"), text("two"));
    const long = `first ${"and more words ".repeat(300)}`;
    expect((await coil(s.project, [...MODEL, ...ext, "-p", long], s.env)).code).toBe(0);
    expect((await coil(s.project, [...MODEL, ...ext, "-c", "-p", "second"], s.env)).code).toBe(0);

    const cancelled = await coil(s.project, [...MODEL, ...ext, "-c", "-p", "/compact"], {
      ...s.env,
      PI_CANCEL_COMPACT: "1",
    });
    expect(cancelled.stderr).toContain("Pi extension compact cancelled the compaction (session_before_compact)");
    expect(cancelled.stdout).toContain("the context is unchanged");
    expect(mock.requests).toHaveLength(2);

    const compacted = await coil(s.project, [...MODEL, ...ext, "-c", "-p", "/compact"], s.env);
    expect(compacted.code, compacted.stderr).toBe(0);
    expect(compacted.stdout.trim()).toMatch(/^Compacted by pi-extensions: [\d,]+ → [\d,]+ tokens\.$/);
    expect(mock.requests).toHaveLength(2); // no summary was asked of the model
    expect(s.log()).toMatch(/before_compact entries \d+ summarize 2 tokens true/);
    expect(s.log()).toContain("session_compact fromExtension true summary EXT SUMMARY: the user said first");

    mock.push(text("three"));
    expect((await coil(s.project, [...MODEL, ...ext, "-c", "-p", "third"], s.env)).code).toBe(0);
    const seen = userTexts(mock.requests[2]!.body);
    expect(seen[0]).toContain("EXT SUMMARY: the user said first");
    expect(seen.join("\n")).not.toContain("and more words");
    expect(seen.join("\n")).toContain("second");
    expect(mock.rejected()).toEqual([]);
    // the compaction is in the session file
    const sessions = join(s.base, "coil-home", "sessions");
    const files = readdirSync(sessions, { recursive: true }).filter((f) => String(f).endsWith(".jsonl"));
    const lines = readFileSync(join(sessions, String(files[0])), "utf8");
    expect(lines).toContain('"type":"compaction"');
    expect(lines).toContain("EXT SUMMARY");
  });

  it("RPC: session_before_switch and session_before_fork cancel new_session and fork; a switch that goes on is session_shutdown then session_start", async () => {
    const s = sandbox();
    writeFiles(s.base, { "sessions.ts": SESSIONS });
    const start = (env: NodeJS.ProcessEnv) =>
      RpcClient.start({
        bin: BIN,
        cwd: s.project,
        env,
        args: [...MODEL, "-e", join(s.base, "sessions.ts")],
        timeoutMs: 20_000,
      });
    mock.push(text("hello"));
    const refusing = await start({ ...s.env, PI_REFUSE: "1" });
    try {
      await refusing.run("hi");
      const id = (await refusing.getState()).session?.id;
      await expect(refusing.newSession()).rejects.toThrow(
        "Cancelled by Pi extension sessions (session_before_switch).",
      );
      await expect(refusing.fork(null)).rejects.toThrow("Cancelled by Pi extension sessions (session_before_fork).");
      expect((await refusing.getState()).session?.id).toBe(id);
    } finally {
      await refusing.close();
    }
    expect(s.log()).toContain("before_switch new\nbefore_fork at\n");
    expect(s.log()).not.toContain("shutdown new");

    const willing = await start(s.env);
    try {
      const id = (await willing.getState()).session?.id;
      const next = await willing.newSession();
      expect(next.session.id).not.toBe(id);
    } finally {
      await willing.close();
    }
    expect(s.log()).toContain("before_switch new\nshutdown new\nstart new (previous given)\n");
    // the new session has a new instance of the extension; the old one's handlers no longer run
    const heard = readFileSync(`${s.logFile}.instances`, "utf8").trim().split("\n").slice(-2);
    expect(heard.map((l) => l.split(" ")[1])).toEqual(["startup", "new"]);
    expect(heard[0]!.split(" ")[0]).not.toBe(heard[1]!.split(" ")[0]);
  });

  it("a command's ctx.newSession switches and runs withSession in the new one; /tree asks session_before_tree, whose summary is the branch summary", async () => {
    const s = sandbox();
    writeFiles(s.base, { "sessions.ts": SESSIONS });
    const ext = ["-e", join(s.base, "sessions.ts")];
    const handoff = await coil(s.project, [...MODEL, ...ext, "-p", "/handoff"], s.env);
    expect(handoff.code, handoff.stderr).toBe(0);
    expect(handoff.stdout.trim()).toBe("now in another session: true\ncancelled false");
    expect(s.log()).toContain("before_switch new\nshutdown new\nstart new");

    mock.requests.length = 0;
    mock.push(text("one"), text("two"), text("three"));
    expect((await coil(s.project, [...MODEL, ...ext, "-p", "first"], s.env)).code).toBe(0);
    expect((await coil(s.project, [...MODEL, ...ext, "-c", "-p", "second"], s.env)).code).toBe(0);
    const sessions = join(s.base, "coil-home", "sessions");
    const newest = readdirSync(sessions, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => join(sessions, f))
      .find((f) => readFileSync(f, "utf8").includes('"second"'))!;
    const one = readFileSync(newest, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((e) => e.type === "message" && e.message.role === "assistant" && JSON.stringify(e.message).includes("one"));
    const moved = await coil(s.project, [...MODEL, ...ext, "-c", "-p", `/tree ${one.id}`], s.env);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toContain(`Moved to ${one.id}`);
    expect(s.log()).toMatch(/before_tree leaving [1-9]\d*\nsession_tree summary EXT BRANCH SUMMARY moved true\n/);
    expect((await coil(s.project, [...MODEL, ...ext, "-c", "-p", "third"], s.env)).code).toBe(0);
    const seen = userTexts(mock.requests.at(-1)!.body).join("\n");
    expect(seen).toContain("EXT BRANCH SUMMARY");
    expect(seen).not.toContain("second");
    expect(mock.rejected()).toEqual([]);
  });

  it("coil install --project of a Pi package: its extensions load while the project is trusted, not otherwise", async () => {
    const s = sandbox();
    const pkg = join(s.base, "pi-project-pkg");
    writeFiles(pkg, {
      "package.json": JSON.stringify({
        name: "pi-project-pkg",
        version: "1.0.0",
        keywords: ["pi-package"],
        pi: { extensions: ["./extensions"] },
      }),
      "extensions/hello.ts": `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerCommand("project-hello", { description: "hello", handler: async (_a, ctx) => ctx.ui.notify("hello from the project's package") });
}
`,
    });
    const installed = await coil(s.project, ["--trust", "install", "--project", pkg], s.env);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain(
      "pi-project-pkg is a Pi package: its extensions load on every run in this project",
    );
    expect(existsSync(join(s.project, ".coil", "packages", "node_modules", "pi-project-pkg"))).toBe(true);
    const trusted = await coil(s.project, [...MODEL, "--trust", "-p", "/project-hello"], s.env);
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stdout.trim()).toBe("hello from the project's package");
    const doctor = await coil(s.project, ["doctor"], s.env);
    expect(doctor.stdout).toMatch(/skipped: .*\.coil\/packages: the project is not trusted/);
    expect(doctor.stdout).not.toContain("commands /project-hello");
  });
  it("after_provider_response hears each attempt's status and headers (a 429, then the retry's 200) before the reply is read", async () => {
    const s = sandbox();
    writeFiles(s.base, { "responses.ts": RESPONSES });
    mock.push(apiError(429, "rate_limit_error", "slow down", { "retry-after": "0" }), text("after the retry"));
    const run = await coil(s.project, [...MODEL, "-e", join(s.base, "responses.ts"), "-p", "hi"], s.env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe("after the retry");
    const lines = [...new Set(s.log().trim().split("\n"))];
    expect(lines).toEqual([
      expect.stringMatching(/^response 429 retry-after 0 type application\/json/),
      expect.stringMatching(/^response 200 retry-after undefined type text\/event-stream/),
      "streaming", // the handler (which waits 20 ms) ran before the reply was read
    ]);
    expect(run.stderr).not.toContain("not supported in coil");
  });
  it("a command's sendUserMessage then ctx.waitForIdle runs that prompt before the handler goes on (a chain); in print mode each reply is part of the output", async () => {
    const s = sandbox();
    writeFiles(s.base, { "chain.ts": CHAIN });
    mock.requests.length = 0;
    mock.push(text("reply to a"), text("reply to b"));
    const run = await coil(s.project, [...MODEL, "-e", join(s.base, "chain.ts"), "-p", "/chain a b"], s.env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe("reply to a\nreply to b\nchain done after 4 messages");
    expect(mock.requests).toHaveLength(2);
    expect(userTexts(mock.requests[1]!.body)).toEqual([
      expect.stringContaining("step a"),
      expect.stringContaining("step b"),
    ]);
    // two without waiting: both go, in order, when the handler returns (the second does not replace the first)
    mock.push(text("both seen"));
    const pair = await coil(s.project, [...MODEL, "-e", join(s.base, "chain.ts"), "-p", "/pair"], s.env);
    expect(pair.stdout.trim()).toBe("both seen");
    const sent = JSON.stringify(mock.requests[2]!.body.messages);
    expect(sent.indexOf("first half")).toBeGreaterThan(-1);
    expect(sent.indexOf("second half")).toBeGreaterThan(sent.indexOf("first half"));
    expect(mock.rejected()).toEqual([]);
  });
});
