/**
 * Pi extensions (#34): what published Pi packages were seen to do, written here to Pi's documented API and
 * run through the built CLI against the validating Anthropic mock. A tool registered again under its name
 * replaces the earlier one (as Pi's registry does), in setup and after it; a late tool whose name another
 * owner holds is reported and left out without breaking the extension's later registrations. Pi's helpers
 * that packages import from `@mariozechner/pi-coding-agent` (truncation, `getAgentDir`, `defineTool`,
 * `parseFrontmatter`) work as Pi documents them.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RpcClient } from "../../../sdk/rpc-client/index.js";
import { BIN, coil, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { reply, text } from "../../support/mock-anthropic.js";
import { mockPane, useMockAnthropic } from "../../support/provider-mocks.js";
import { useTmux } from "../../support/tmux.js";

const KEY = "sk-ant-pi-packages-test-0123456789";
const MODEL = ["--model", "anthropic/claude-sonnet-4-5"];
const mock = useMockAnthropic(KEY);
const tmux = useTmux();

function sandbox(files: Record<string, string> = {}) {
  const base = tempDir("coil-pi-pkg-");
  const project = join(base, "project");
  writeFiles(project, { ".git/HEAD": "ref: refs/heads/main\n" });
  const home = join(base, "home");
  writeFiles(home, files);
  const env = sandboxEnv(base, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url });
  return { base, project, home, env };
}

const toolUse = (name: string, input: Record<string, unknown>, id = "toolu_1") =>
  reply([{ tool: { id, name, input } }], { stop: "tool_use" });

/**
 * Registers `proxy` in setup, then again (a new description and execute) when `connect` runs, as an MCP
 * adapter re-syncs its proxy tools once a server has answered; `connect` also registers a late tool
 * named like coil's `read`, and then `connected`, which must still arrive.
 */
const RESYNC = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";

export default function (pi: ExtensionAPI) {
  const proxy = (version: number) => ({
    name: "proxy",
    label: "Proxy",
    description: "proxy version " + version,
    parameters: Type.Object({}),
    async execute() {
      return { content: [{ type: "text" as const, text: "proxy v" + version + " ran" }], details: {} };
    },
  });
  pi.registerTool(proxy(1));
  pi.registerTool(proxy(2));
  pi.registerTool({
    name: "connect",
    label: "Connect",
    description: "connect and re-sync",
    parameters: Type.Object({}),
    async execute() {
      pi.registerTool(proxy(3));
      pi.registerTool({ ...proxy(9), name: "read" });
      pi.registerTool({ ...proxy(4), name: "connected", description: "registered after connecting" });
      return { content: [{ type: "text" as const, text: "connected" }], details: {} };
    },
  });
}
`;

/** A tool built with Pi's helpers, called as packages call them; `getAgentDir` is read in the factory. */
const HELPERS = `import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, defineTool, formatSize, getAgentDir, parseFrontmatter, truncateHead, truncateTail } from "@earendil-works/pi-coding-agent";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";

export default function (pi: ExtensionAPI) {
  const agentDir = getAgentDir();
  pi.registerTool(defineTool({
    name: "helpers",
    label: "Helpers",
    description: "exercise Pi's helpers",
    parameters: Type.Object({}),
    async execute() {
      const lines = Array.from({ length: 10 }, (_, i) => "line " + (i + 1)).join("\\n");
      const head = truncateHead(lines, { maxLines: 3 });
      const tail = truncateTail(lines, { maxBytes: 14 });
      const whole = truncateHead("short", {});
      const wide = truncateHead("x".repeat(40) + "\\nnext", { maxBytes: 10 });
      const long = truncateTail("ab\\n" + "é".repeat(10), { maxBytes: 5 });
      const fm = parseFrontmatter("---\\nname: demo\\ntags: [a, b]\\n---\\nBody text\\n");
      const none = parseFrontmatter("just text");
      const out = {
        agentDir,
        limits: [DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES],
        head: [head.content, head.truncated, head.truncatedBy, head.outputLines, head.totalLines],
        tail: [tail.content, tail.truncatedBy, tail.outputLines, tail.lastLinePartial],
        whole: [whole.content, whole.truncated, whole.truncatedBy],
        wide: [wide.content, wide.firstLineExceedsLimit, wide.outputLines],
        long: [long.content, long.lastLinePartial, long.outputBytes],
        sizes: [formatSize(512), formatSize(1536), formatSize(3 * 1024 * 1024)],
        fm: [fm.frontmatter, fm.body, none.frontmatter, none.body],
      };
      return { content: [{ type: "text" as const, text: JSON.stringify(out) }], details: {} };
    },
  }));
}
`;

const resultText = (body: Record<string, any>) => JSON.stringify(body.messages.at(-1).content);
const toolNamed = (body: Record<string, any>, name: string) =>
  body.tools.find((t: { name: string }) => t.name === name);

describe("Pi packages' patterns through the CLI", () => {
  it("a tool registered again replaces the earlier one, in setup and from a running tool; a late name another owner holds is reported, and later registrations still arrive", async () => {
    const s = sandbox({ ".pi/agent/extensions/resync.ts": RESYNC });
    mock.requests.length = 0;
    mock.push(
      toolUse("proxy", {}, "toolu_a"),
      toolUse("connect", {}, "toolu_b"),
      toolUse("proxy", {}, "toolu_c"),
      toolUse("connected", {}, "toolu_d"),
      text("all done"),
    );
    const ran = await coil(s.project, [...MODEL, "-p", "connect and call"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout.trim()).toBe("all done");
    expect(mock.rejected()).toEqual([]);
    const [first, second, third, fourth, fifth] = mock.requests.map((r) => r.body);
    // the second setup registration replaced the first, with no duplicate error
    expect(toolNamed(first!, "proxy").description).toBe("proxy version 2");
    expect(resultText(second!)).toContain("proxy v2 ran");
    expect(resultText(third!)).toContain("connected");
    // the registration from the running tool replaced it again: the model sees it, the call runs it
    expect(toolNamed(third!, "proxy").description).toBe("proxy version 3");
    expect(resultText(fourth!)).toContain("proxy v3 ran");
    expect(toolNamed(fourth!, "connected")?.description).toBe("registered after connecting");
    expect(resultText(fifth!)).toContain("proxy v4 ran");
    // coil's read stays coil's, and the clash is reported once
    expect(toolNamed(fifth!, "read").description).not.toBe("proxy version 9");
    expect(ran.stderr).toContain('Pi extension resync: pi.registerTool("read") is not supported in coil');
    expect(ran.stderr).not.toContain("REGISTRY_DUPLICATE");

    const doctor = await coil(s.project, ["doctor"], s.env);
    expect(doctor.stdout).toMatch(/resync \(user, .*resync\.ts\): tools proxy, connect\n/);
  });

  it("Pi's helpers from @earendil-works/pi-coding-agent: truncateHead/truncateTail/formatSize, getAgentDir ($PI_CODING_AGENT_DIR or ~/.pi/agent), defineTool, parseFrontmatter", async () => {
    const s = sandbox({ ".pi/agent/extensions/helpers.ts": HELPERS });
    for (const [extra, dir] of [
      [{}, join(s.home, ".pi", "agent")],
      [{ PI_CODING_AGENT_DIR: join(s.base, "pi-dir") }, join(s.base, "pi-dir")],
    ] as const) {
      if ("PI_CODING_AGENT_DIR" in extra) writeFiles(join(s.base, "pi-dir"), { "extensions/helpers.ts": HELPERS });
      mock.requests.length = 0;
      mock.push(toolUse("helpers", {}), text("ok"));
      const ran = await coil(s.project, [...MODEL, "-p", "helpers"], { ...s.env, ...extra });
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stderr).not.toContain("not supported");
      const content = mock.requests[1]!.body.messages.at(-1).content[0].content[0].text;
      expect(JSON.parse(content)).toEqual({
        agentDir: dir,
        limits: [2000, 51200],
        head: ["line 1\nline 2\nline 3", true, "lines", 3, 10],
        tail: ["line 9\nline 10", "bytes", 2, false],
        whole: ["short", false, null],
        wide: ["", true, 0],
        long: ["éé", true, 4],
        sizes: ["512B", "1.5KB", "3.0MB"],
        fm: [{ name: "demo", tags: ["a", "b"] }, "Body text\n", {}, "just text"],
      });
    }
  });

  it("coil disable of an installed Pi package stops its extensions, and coil enable (the command doctor names) turns them on again; its one listed module is named by the package", async () => {
    const s = sandbox();
    const pkg = join(s.base, "pi-toggle-pkg");
    writeFiles(pkg, {
      "package.json": JSON.stringify({
        name: "pi-toggle-pkg",
        version: "1.0.0",
        pi: { extensions: ["./src/index.ts"] },
      }),
      "src/index.ts": `export default function (pi) {
  pi.registerCommand("toggle-hello", { description: "hello", handler: async (_a, ctx) => ctx.ui.notify("hello from pi-toggle-pkg") });
}
`,
    });
    expect((await coil(s.project, ["install", pkg], s.env)).code).toBe(0);
    const disabled = await coil(s.project, ["disable", "pi-toggle-pkg"], s.env);
    expect(disabled.code, disabled.stderr).toBe(0);
    const off = await coil(s.project, ["doctor"], s.env);
    expect(off.stdout).toContain(
      "skipped: pi-toggle-pkg (coil install): disabled (coil enable pi-toggle-pkg turns it on)",
    );
    const enabled = await coil(s.project, ["enable", "pi-toggle-pkg"], s.env);
    expect(enabled.code, enabled.stderr).toBe(0);
    expect(enabled.stderr).not.toContain("offers coil nothing");
    expect(enabled.stdout).toContain("enabled pi-toggle-pkg");
    const on = await coil(s.project, ["doctor"], s.env);
    expect(on.stdout).not.toContain("skipped: pi-toggle-pkg");
    // named by its package, not by the folder of its one module ("src")
    expect(on.stdout).toMatch(/ pi-toggle-pkg \(package, .*pi-toggle-pkg\/src\/index\.ts\): commands \/toggle-hello/);
    const ran = await coil(s.project, [...MODEL, "-p", "/toggle-hello"], s.env);
    expect(ran.stdout.trim()).toBe("hello from pi-toggle-pkg");
  });

  it("an extension that uses pi-tui while it loads: coil doctor says it registers when a run starts, and its command works then; ctx.isProjectTrusted() tells the project's trust and ctx.scopedModels is an empty scope", async () => {
    const s = sandbox({
      ".pi/agent/extensions/late.ts": `import { Text } from "@mariozechner/pi-tui";
const banner = new Text("late banner", 0, 0);
export default function (pi) {
  pi.registerCommand("late-trust", {
    description: "say whether the project is trusted",
    handler: async (_args, ctx) => ctx.ui.notify((banner ? "late " : "") + "trusted=" + ctx.isProjectTrusted() + " scoped=" + (ctx.scopedModels?.map((m) => m.model.id).length ?? "none") + " mode=" + ctx.mode, "info"),
  });
}
`,
    });
    const doctor = await coil(s.project, ["doctor"], s.env);
    expect(doctor.stdout).toMatch(/late \(user, .*late\.ts\): loads when a run starts/);
    const untrusted = await coil(s.project, [...MODEL, "-p", "/late-trust"], s.env);
    expect(untrusted.stdout.trim()).toBe("late trusted=false scoped=0 mode=print");
    expect(untrusted.stderr).not.toContain("not supported");
    const trusted = await coil(s.project, [...MODEL, "--trust", "-p", "/late-trust"], s.env);
    expect(trusted.stdout.trim()).toBe("late trusted=true scoped=0 mode=print");
  });

  it("an export coil does not serve fails naming itself when its members are used too (a class's static method), and still works as a base class and with instanceof", async () => {
    const s = sandbox({
      ".pi/agent/extensions/sdk.ts": `import { SessionManager, ModelRuntime } from "@earendil-works/pi-coding-agent";
class Mine extends SessionManager {}
export default function (pi) {
  pi.registerCommand("sdk-try", {
    description: "use Pi's SDK",
    handler: async (_args, ctx) => {
      const out = [String(({}) instanceof ModelRuntime)];
      for (const attempt of [() => SessionManager.inMemory(), () => ModelRuntime.create({}), () => new Mine()]) {
        try {
          attempt();
          out.push("worked");
        } catch (error) {
          out.push(error.message);
        }
      }
      ctx.ui.notify(out.join("\\n"), "info");
    },
  });
}
`,
    });
    const ran = await coil(s.project, [...MODEL, "-p", "/sdk-try"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout.trim().split("\n")).toEqual([
      "false",
      "SessionManager from @earendil-works/pi-coding-agent is not available in coil (docs/pi-extensions.md)",
      "ModelRuntime from @earendil-works/pi-coding-agent is not available in coil (docs/pi-extensions.md)",
      "SessionManager from @earendil-works/pi-coding-agent is not available in coil (docs/pi-extensions.md)",
    ]);
  });

  it("commands registered in session_start: one named like coil's is reported without failing the handler, the rest arrive; one registered again replaces the earlier", async () => {
    const s = sandbox({
      ".pi/agent/extensions/templates.ts": `export default function (pi) {
  const command = (text) => ({ description: "says " + text, handler: async (_a, ctx) => ctx.ui.notify(text, "info") });
  pi.registerCommand("tpl-again", command("from setup"));
  pi.on("session_start", async () => {
    pi.registerCommand("model", command("mine"));
    pi.registerCommand("tpl-late", command("late command works"));
    pi.registerCommand("tpl-late", command("late command replaced"));
    pi.registerCommand("tpl-again", command("replaced in session_start"));
  });
}
`,
    });
    const late = await coil(s.project, [...MODEL, "-p", "/tpl-late"], s.env);
    expect(late.code, late.stderr).toBe(0);
    expect(late.stdout.trim()).toBe("late command replaced");
    expect(late.stderr).toContain(
      'Pi extension templates: pi.registerCommand("model") is not supported in coil (coil or one of its plugins already has a command /model)',
    );
    expect(late.stderr).not.toContain("session_start handler failed");
    const again = await coil(s.project, [...MODEL, "-p", "/tpl-again"], s.env);
    expect(again.stdout.trim()).toBe("replaced in session_start");
  });

  it("RPC (a mode with a UI): ctx.ui's theme calls answer with Pi's shapes (no themes, a failed switch) instead of throwing in the handler", async () => {
    const s = sandbox({
      ".pi/agent/extensions/themes.ts": `export default function (pi) {
  pi.registerCommand("theme-probe", {
    description: "probe themes",
    handler: async (_a, ctx) => {
      const all = ctx.ui.getAllThemes();
      const set = ctx.ui.setTheme("light");
      ctx.ui.notify("themes " + all.length + " found " + String(ctx.ui.getTheme("dark")) + " switched " + set.success + " mode " + ctx.mode, "info");
    },
  });
}
`,
    });
    const client = await RpcClient.start({ bin: BIN, cwd: s.project, env: s.env, args: MODEL, timeoutMs: 20_000 });
    try {
      const notices: string[] = [];
      client.on("ui_request", (m: { method: string; params: { message?: string } }) => {
        if (m.method === "notify") notices.push(String(m.params.message));
      });
      await client.prompt("/theme-probe");
      for (let i = 0; i < 50 && !notices.length; i++) await new Promise((r) => setTimeout(r, 100));
      expect(notices).toEqual(["themes 0 found undefined switched false mode rpc"]);
    } finally {
      await client.close();
    }
  });

  it("TUI (tmux): a ctx.ui.custom overlay framed with Pi's DynamicBorder draws; one whose render throws is closed and said, and coil goes on; ctx.mode is Pi's name for the mode; an overlay with the focus gets Escape", async () => {
    const s = sandbox({
      ".pi/agent/extensions/panel.ts": `import { DynamicBorder } from "@earendil-works/pi-coding-agent";
export default function (pi) {
  const open = (broken) => async (_args, ctx) => {
    const keys = [];
    const result = await ctx.ui.custom((_tui, theme, _keys, done) => {
      const border = new DynamicBorder((line) => theme.fg("accent", line));
      return {
        render(width) {
          if (broken) throw new Error("the panel broke");
          return [...border.render(width), "panel body: press q", ...border.render(width)];
        },
        invalidate() {},
        handleInput(data) {
          if (data === "q") done("closed by q after " + keys.length + " other keys");
          else keys.push(data);
        },
      };
    }, { overlay: true, overlayOptions: { width: 40 } });
    ctx.ui.notify("panel result: " + String(result) + " in " + ctx.mode, "info");
  };
  pi.registerCommand("panel", { description: "open a panel", handler: open(false) });
  pi.registerCommand("broken-panel", { description: "open a broken panel", handler: open(true) });
}
`,
    });
    const t = mockPane(tmux, s, MODEL.join(" "));
    await t.waitFor("Enter to send");
    t.type("/panel");
    t.keys("Enter");
    const shown = await t.waitFor("panel body: press q");
    const row = shown.split("\n").findIndex((l) => l.includes("panel body"));
    expect(shown.split("\n")[row - 1]).toContain("─".repeat(40));
    // Escape goes to the overlay that has the focus, not to coil's editor (double Escape: rewind)
    for (const key of ["Escape", "Escape"]) {
      t.keys(key);
      await new Promise((r) => setTimeout(r, 300)); // two keys, not one chunk
    }
    t.type("q");
    const closed = await t.waitFor("panel result: closed by q after 2 other keys in tui");
    expect(closed).not.toContain("nothing to rewind");

    t.type("/broken-panel");
    t.keys("Enter");
    const said = await t.waitFor((sc) => sc.includes("panel result: undefined in tui"));
    expect(said.replace(/\s+/g, " ")).toContain(
      "Pi extension panel: its ctx.ui.custom() component failed (the panel broke); it was closed",
    );
    // coil is still there and answers
    mock.push(text("still alive"));
    t.type("hello");
    t.keys("Enter");
    await t.waitFor("still alive");
  });

  it("print mode: what a command shows with pi.sendMessage (display: true) is its output; a hidden one is not", async () => {
    const s = sandbox({
      ".pi/agent/extensions/report.ts": `export default function (pi) {
  pi.registerCommand("report", {
    description: "a report as a custom message",
    handler: async () => {
      pi.sendMessage({ customType: "report", content: "## Report\\nall good", display: true });
      pi.sendMessage({ customType: "report-state", content: "internal", display: false });
    },
  });
}
`,
    });
    const ran = await coil(s.project, [...MODEL, "-p", "/report"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout.trim()).toBe("## Report\nall good");
  });

  it("TUI (tmux): pi.sendMessage from an agent_end handler and from an idle command is drawn by its renderer, not left queued as a steer", async () => {
    const s = sandbox({
      ".pi/agent/extensions/notes.ts": `import { Text } from "@mariozechner/pi-tui";
export default function (pi) {
  pi.registerMessageRenderer("note", (message) => new Text("NOTE> " + message.content, 0, 0));
  pi.on("agent_end", async () => {
    pi.sendMessage({ customType: "note", content: "after the answer", display: true });
  });
  pi.registerCommand("note", {
    description: "send a note",
    handler: async () => pi.sendMessage({ customType: "note", content: "from the command", display: true }),
  });
}
`,
    });
    const t = mockPane(tmux, s, MODEL.join(" "));
    await t.waitFor("Enter to send");
    mock.requests.length = 0;
    mock.push(text("the answer"), text("second answer"));
    t.type("hello");
    t.keys("Enter");
    const after = await t.waitFor("NOTE> after the answer");
    expect(after).not.toContain("steer:");
    t.type("/note");
    t.keys("Enter");
    const both = await t.waitFor("NOTE> from the command");
    expect(both.indexOf("NOTE> after the answer")).toBeLessThan(both.indexOf("NOTE> from the command"));
    // the agent_end note reached the session, so the next request carries it (as Pi's custom messages do)
    t.type("again");
    t.keys("Enter");
    await t.waitFor("second answer");
    expect(JSON.stringify(mock.requests.at(-1)!.body.messages)).toContain("after the answer");
  });
});
