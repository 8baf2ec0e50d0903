/**
 * ui-tui's glue, without a terminal: the renderers (tool summaries, result bodies, diffs, markdown
 * through the library), the footer figures, the `ui` service before the TUI runs, the `!cmd`
 * conversion, and the session commands against a real session-jsonl store.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Markdown } from "@mariozechner/pi-tui";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentMessage, Plugin, AssistantMessage, ToolResultMessage } from "../../../api/index.js";
import type { PluginHost } from "../../../boot/host.js";
import sessionJsonl from "../../../plugins/session-jsonl/index.js";
import uiTui from "../../../plugins/ui-tui/index.js";
import { reloadArgs } from "../../../plugins/ui-tui/reload.js";
import { runShellCommand } from "../../../plugins/ui-tui/shell.js";
import toolsCoding from "../../../plugins/tools-coding/index.js";
import gate from "../../../plugins/permission-gate/index.js";
import planMode from "../../../plugins/plan-mode/index.js";
import { createTestKit, createTestUi } from "../../../sdk/testing/index.js";
import { toMarkdown, treeItems } from "../../../plugins/ui-tui/commands.js";
import {
  colorDiff,
  contextPercent,
  footerLine,
  formatTokens,
  markdownTheme,
  messagesToEditorText,
  plain,
  shellMessageText,
  summarizeArgs,
  toolBody,
  usageTotals,
  setTheme,
} from "../../../plugins/ui-tui/render.js";
import { BUILTIN_THEMES, loadTheme } from "../../../plugins/ui-tui/theme.js";
import { createTestAgent } from "../../support/harness.js";
import { startPlugins, stopPlugins } from "../../../boot/lifecycle.js";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function assistant(usage: Partial<AssistantMessage["usage"]>, extra: Partial<AssistantMessage> = {}): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text: "ok" }],
    provider: "p",
    model: "m",
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      ...usage,
    },
    stopReason: "stop",
    timestamp: 1,
    ...extra,
  };
}

function result(text: string, extra: Partial<ToolResultMessage> = {}): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: "c1",
    toolName: "bash",
    content: [{ type: "text", text }],
    isError: false,
    timestamp: 1,
    ...extra,
  };
}

describe("tool renderers", () => {
  it("summarizes each tool's arguments on one line", () => {
    expect(summarizeArgs("bash", { command: "npm test\nnpm run lint" })).toBe("$ npm test …");
    expect(summarizeArgs("read", { path: "src/a.ts", offset: 10, limit: 31 })).toBe("src/a.ts:10-40");
    expect(summarizeArgs("read", { path: "src/a.ts" })).toBe("src/a.ts");
    expect(summarizeArgs("edit", { path: "a.ts", edits: [{}, {}] })).toBe("a.ts (2 edits)");
    expect(summarizeArgs("write", { path: "b.txt", content: "x\ny\n" })).toBe("b.txt (3 lines)");
    expect(summarizeArgs("grep", { pattern: "TODO", path: "src" })).toBe("/TODO/ in src");
    expect(summarizeArgs("count_words", { text: "one\ntwo", n: 2 })).toBe('text="one …" n=2');
  });

  it("shows a live tail while running and collapses a long result until expanded", () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n");
    const live = toolBody({ running: true, partial: lines }, false).map(plain);
    expect(live[0]).toBe("… 22 earlier lines");
    expect(live.slice(1)).toEqual(Array.from({ length: 8 }, (_, i) => `line ${i + 23}`));
    // bash output collapses to its last lines (where errors are), other tools' to their first
    const done = toolBody({ running: false, result: result(lines) }, false).map(plain);
    expect(done).toHaveLength(13);
    expect(done[0]).toBe("… 18 earlier lines (Ctrl+O to expand)");
    expect(done.at(-1)).toBe("line 30");
    const grep = toolBody({ running: false, result: result(lines, { toolName: "grep" }) }, false).map(plain);
    expect(grep.at(-1)).toBe("… 18 more lines (Ctrl+O to expand)");
    expect(grep[0]).toBe("line 1");
    expect(toolBody({ running: false, result: result(lines) }, true).map(plain)).toHaveLength(30);
  });

  it("renders an edit's diff with line numbers, the diff roles and word-level marks; errors in the error role", () => {
    setTheme(loadTheme("dark", "/nonexistent", "/", 2));
    const diff = "--- a.ts\n+++ a.ts\n@@ -9,3 +9,3 @@\n ctx\n-const old = 1;\n+const new = 1;\n same\n";
    const body = toolBody({ running: false, result: result("Edited a.ts", { details: { diff } }) }, false);
    expect(body.map(plain)).toEqual([
      "@@ -9,3 +9,3 @@",
      " 9  ctx",
      "10 -const old = 1;",
      "10 +const new = 1;",
      "11  same",
    ]);
    const red = `\x1b[38;5;${BUILTIN_THEMES.dark!.toolDiffRemoved}m`;
    const green = `\x1b[38;5;${BUILTIN_THEMES.dark!.toolDiffAdded}m`;
    expect(body[2]).toContain(red);
    expect(body[3]).toContain(green);
    // only the changed word has the word background
    expect(body[2]).toContain(`\x1b[48;5;${BUILTIN_THEMES.dark!.toolDiffRemovedWord}m${red}old`);
    expect(body[3]).toContain(`\x1b[48;5;${BUILTIN_THEMES.dark!.toolDiffAddedWord}m${green}new`);
    expect(body[3]).not.toMatch(/48;5;\d+m[^ ]*const/);
    expect(colorDiff("@@ -1 +1 @@")[0]).toContain(`\x1b[38;5;${BUILTIN_THEMES.dark!.toolDiffHunk}m`);
    // an edit's new errors and warnings from the lsp plugin go under the diff, in the error role
    const diagnostics = {
      items: [
        {
          file: "a.ts",
          line: 2,
          column: 7,
          severity: "error",
          message: "Type 'number' is not assignable to type 'string'.",
          rule: "TS2322",
          server: "typescript",
        },
      ],
      omitted: 0,
      resolved: 0,
      waitedMs: 40,
    };
    const checked = toolBody(
      { running: false, result: result("Edited a.ts", { details: { diff, diagnostics } }) },
      false,
    );
    expect(checked.map(plain).slice(5)).toEqual([
      "a.ts:2:7 error Type 'number' is not assignable to type 'string'. [TS2322]",
    ]);
    expect(checked[5]).toContain(`\x1b[38;5;${BUILTIN_THEMES.dark!.error}m`);
    const failed = toolBody({ running: false, result: result("boom", { isError: true }) }, false);
    expect(failed[0]).toBe(`\x1b[38;5;${BUILTIN_THEMES.dark!.error}mboom\x1b[39m`);
    // without colour (NO_COLOR): no colour codes, the changed words in inverse
    setTheme(loadTheme("dark", "/nonexistent", "/", 0));
    const plainBody = toolBody({ running: false, result: result("Edited a.ts", { details: { diff } }) }, false);
    expect(plainBody.join("\n")).not.toMatch(/\x1b\[(3|4|9)\d|\x1b\[(38|48);/);
    expect(plainBody[2]).toContain("\x1b[7mold");
    setTheme(loadTheme("dark", "/nonexistent", "/", 2));
  });

  it("renders assistant markdown through the library with the plugin's theme: fenced code, no raw markers", () => {
    const md = new Markdown("# Title\n\nSome **bold** text.\n\n```js\nconst a = 1;\n```", 0, 0, markdownTheme());
    const out = md.render(40).map((l) => plain(l).trimEnd());
    expect(out).toContain("Title");
    expect(out.join("\n")).toContain("Some bold text.");
    expect(out).toContain("```js");
    expect(out.some((l) => l.includes("const a = 1;"))).toBe(true);
    for (const line of md.render(20)) expect(plain(line).length).toBeLessThanOrEqual(20);
  });
});

describe("footer figures", () => {
  const messages: AgentMessage[] = [
    assistant({
      input: 1200,
      output: 340,
      cacheRead: 800,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.0123 },
    }),
    assistant({
      input: 1600,
      output: 50,
      cacheRead: 1000,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.002 },
    }),
    assistant({ input: 99_999, output: 0 }, { stopReason: "error" }),
  ];

  it("formats token counts", () => {
    expect([formatTokens(999), formatTokens(1234), formatTokens(12_345), formatTokens(2_500_000)]).toEqual([
      "999",
      "1.2k",
      "12k",
      "2.5M",
    ]);
  });

  it("sums usage and takes context % from the last successful reply", () => {
    expect(usageTotals(messages)).toMatchObject({ input: 102_799, output: 390, cacheRead: 1800 });
    expect(contextPercent(messages, 200_000)).toBeCloseTo(1.325);
    expect(contextPercent([], 200_000)).toBeUndefined();
    expect(
      footerLine({
        model: "anthropic/claude",
        contextWindow: 200_000,
        messages: messages.slice(0, 2),
        sessionName: "work",
      }),
    ).toBe("anthropic/claude · ctx 1.3%/200k · ↑2.8k ↓390 · cache 1.8k · $0.014 · work");
  });
});

describe("editor text helpers", () => {
  it("turns aborted queued messages back into editor text, in order", () => {
    const queued: AgentMessage[] = [
      { role: "user", content: "first", timestamp: 1 },
      { role: "user", content: [{ type: "text", text: "second" }], timestamp: 2 },
    ];
    expect(messagesToEditorText(queued)).toBe("first\nsecond");
  });

  it("writes shell output as a message with the exit code when it failed", () => {
    expect(shellMessageText("ls", "a\nb\n", 0)).toBe("I ran `ls` in the shell. Output:\n```\na\nb\n```");
    expect(shellMessageText("false", "", 1)).toContain("(exit code 1)");
  });
});

describe("!cmd", () => {
  // A real agent from the shipped kit: the bash tool, the permission gate and plan mode, as in a preset.
  const kitWith = (plugins: (Plugin<any> | [Plugin<any>, unknown])[]) => {
    const kit = createTestKit({ plugins: [toolsCoding as Plugin, ...plugins] });
    kits.push(kit);
    return kit;
  };
  const kits: ReturnType<typeof createTestKit>[] = [];
  afterAll(() => {
    for (const k of kits) k.dispose();
  });

  it("is refused by a permission-gate deny rule with the gate's reason, and is not run", async () => {
    const kit = kitWith([[gate as Plugin, { mode: "yolo", deny: ["bash(touch *)"] }]]);
    const run = await runShellCommand(kit.agent, "touch made.txt", "shell-1");
    expect(run.ran).toBe(false);
    expect(run.result.isError).toBe(true);
    expect(run.output).toMatch(
      /^Blocked: `touch made\.txt` is not allowed: denied by the rule bash\(touch \*\)\..*\(permission-gate\)$/,
    );
    expect(kit.workspace.exists("made.txt")).toBe(false);
    expect(kit.agent.state.messages).toEqual([]); // the result is returned, not added to history
  });

  it("in plan mode, a mutating command is refused with plan mode's reason; a read-only one runs", async () => {
    const kit = kitWith([planMode as Plugin]);
    expect(await kit.host.commands.get("plan")!.run("", kit.agent)).toMatch(/^plan mode: on/);
    const refused = await runShellCommand(kit.agent, "touch made.txt", "shell-2");
    expect(refused.ran).toBe(false);
    expect(refused.output).toMatch(/^Blocked: plan mode allows only read-only bash commands/);
    expect(kit.workspace.exists("made.txt")).toBe(false);
    const allowed = await runShellCommand(kit.agent, "echo hi", "shell-3");
    expect(allowed).toMatchObject({ ran: true, exitCode: 0, output: "hi" });
  });

  it("an allowed command runs through the bash tool: output, exit code and the tool events under the given id", async () => {
    const kit = kitWith([[gate as Plugin, { mode: "yolo", deny: ["bash(rm *)"] }]]);
    const run = await runShellCommand(kit.agent, "echo out; touch made.txt; exit 3", "shell-4");
    expect(run.ran).toBe(true);
    expect(run.exitCode).toBe(3);
    expect(run.output).toMatch(/^out\n\nCommand exited with code 3\.$/);
    expect(kit.workspace.exists("made.txt")).toBe(true);
    const ids = kit.events
      .filter((e) => e.type.startsWith("tool_execution"))
      .map((e) => [e.type, (e as { toolCallId: string }).toolCallId]);
    expect(ids[0]).toEqual(["tool_execution_start", "shell-4"]);
    expect(ids.at(-1)).toEqual(["tool_execution_end", "shell-4"]);
    expect(new Set(ids.map(([, id]) => id))).toEqual(new Set(["shell-4"]));
    expect(kit.agent.state.messages).toEqual([]);
  });

  it("says so when the preset has no bash tool", async () => {
    const kit = createTestKit();
    kits.push(kit);
    const run = await runShellCommand(kit.agent, "echo hi", "shell-5");
    expect(run).toMatchObject({ ran: false, exitCode: null });
    expect(run.output).toMatch(/^Tool 'bash' does not exist/);
  });
});

describe("the plugin without a running TUI", () => {
  it("registers the interactive front end and its commands, and offers no ui service outside its run", async () => {
    const { host } = createTestAgent({ plugins: [[uiTui]] });
    expect(host.frontEnds.get("tui")?.modes).toEqual(["interactive"]);
    for (const name of [
      "tree",
      "fork",
      "clone",
      "new",
      "resume",
      "session",
      "name",
      "label",
      "export",
      "reload",
      "help",
      "quit",
    ])
      expect(host.commands.has(name)).toBe(true);
    expect(host.services.get("ui")).toBeUndefined();
    expect(host.ui).toBeUndefined();
  });

  it("converts !cmd messages left in history into user messages at request time", async () => {
    const { agent, scripted } = createTestAgent({ plugins: [[uiTui]], script: [{ text: "seen" }] });
    agent.replaceMessages([
      { role: "custom", customType: "ui-tui.shell", content: "I ran `ls`", display: false, timestamp: 1 },
    ]);
    await agent.prompt("and now?");
    expect(scripted.requests[0]!.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "I ran `ls`"],
      ["user", "and now?"],
    ]);
  });
});

describe("ctx.registerShortcut", () => {
  const clock: Plugin = {
    id: "clock",
    setup(ctx) {
      ctx.registerShortcut("Alt+K", {
        description: "Insert the time",
        handler: ({ ui, agent }) => ui.setEditorText?.(`12:00 on ${agent.state.model.id}`),
      });
    },
  };

  it("records the key in lower case with its owner; the test kit presses it with the kit's ui", async () => {
    const ui = createTestUi();
    const kit = createTestKit({ plugins: [clock], ui });
    try {
      expect(kit.commandLine.shortcuts.list()).toEqual([
        { key: "alt+k", description: "Insert the time", handler: expect.any(Function), owner: "clock" },
      ]);
      await kit.pressShortcut("alt+k");
      expect(ui.editorText).toBe("12:00 on scripted");
      await expect(kit.pressShortcut("alt+j")).rejects.toThrow(/no plugin registered that key \(registered: alt\+k\)/);
    } finally {
      kit.dispose();
    }
  });

  it("refuses a key that is not one, or a missing handler, naming the plugin; without a ui it is only recorded", () => {
    const bad = (key: string, options: unknown): Plugin => ({
      id: "bad-keys",
      setup: (ctx) => ctx.registerShortcut(key, options as never),
    });
    expect(() => createTestKit({ plugins: [bad("ctrl shift p", { handler: () => {} })] })).toThrow(
      /bad-keys[\s\S]*'ctrl shift p' is not a key/,
    );
    expect(() => createTestKit({ plugins: [bad("alt+k", { description: "no handler" })] })).toThrow(
      /bad-keys[\s\S]*registerShortcut\('alt\+k'\): the options need a handler function/,
    );
    const printMode = createTestKit({ plugins: [clock] });
    printMode.dispose();
    expect(printMode.commandLine.shortcuts.list().map((s) => s.owner)).toEqual(["clock"]);
  });
});

describe("/reload and start-up", () => {
  it("restarts on the current session file: -c, -r and --session are replaced, everything else is kept", () => {
    expect(reloadArgs(["--plugin", "ui-tui", "-c", "--model", "x/y"], "/s/a.jsonl")).toEqual([
      "--plugin",
      "ui-tui",
      "--model",
      "x/y",
      "--session",
      "/s/a.jsonl",
    ]);
    expect(
      reloadArgs(["--session", "abc", "--resume", "-r", "--continue", "--session=def", "--trust"], "/s/b.jsonl"),
    ).toEqual(["--trust", "--session", "/s/b.jsonl"]);
    expect(reloadArgs(["--no-session"], undefined)).toEqual(["--no-session"]);
    expect(reloadArgs(["-c", "--", "-c"], "/s/c.jsonl")).toEqual(["--session", "/s/c.jsonl", "--", "-c"]);
    // The session holds plan mode's state: --plan would start planning again and drop an approval.
    expect(reloadArgs(["--plan", "-c"], "/s/d.jsonl")).toEqual(["--session", "/s/d.jsonl"]);
    expect(reloadArgs(["--plan"], undefined)).toEqual(["--plan"]);
    // /model and /thinking outlive the restart: the flags typed at start give way to what is in effect now
    const now = { model: "openai/gpt-5.4", thinking: "high" };
    expect(
      reloadArgs(
        ["--provider", "anthropic", "--model=sonnet", "--thinking", "low", "-c", "--", "x"],
        "/s/e.jsonl",
        now,
      ),
    ).toEqual(["--model", "openai/gpt-5.4", "--thinking", "high", "--session", "/s/e.jsonl", "--", "x"]);
    expect(reloadArgs(["--thinking=low", "--trust"], undefined, { model: "scripted/scripted" })).toEqual([
      "--trust",
      "--model",
      "scripted/scripted",
    ]);
  });

  it("says outside the interactive UI that reloading means running coil again", async () => {
    const { agent, host } = createTestAgent({ plugins: [[uiTui]] });
    const out = await host.commands.get("reload")!.run("", agent);
    expect(out).toContain("coil -c");
  });
});

describe("session commands (through session-jsonl's service)", () => {
  async function withSession() {
    const dir = mkdtempSync(join(tmpdir(), "coil-tui-sess-"));
    temps.push(dir);
    const t = createTestAgent({
      plugins: [[sessionJsonl, { dir: join(dir, "sessions") }], [uiTui]],
      script: [{ text: "first answer" }, { text: "second answer" }],
    });
    const host: PluginHost = t.host;
    const io = { cwd: dir, env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
    await startPlugins(host, t.agent, io, { mode: "interactive", modelFromCli: false });
    const run = async (line: string) => {
      const [name, ...rest] = line.slice(1).split(" ");
      return host.commands.get(name!)!.run(rest.join(" "), t.agent);
    };
    return { ...t, dir, run };
  }

  it("names, labels, exports and lists the tree; /new and /clone switch sessions", async () => {
    const { agent, dir, run, host } = await withSession();
    await agent.prompt("hello one");
    await agent.prompt("hello two");
    expect(await run("/name my work")).toBe("Named 'my work'.");
    expect(await run("/session")).toMatch(/name {5}my work/);
    expect(await run("/label checkpoint")).toMatch(/^Labelled \w+ 'checkpoint'\.$/);
    const tree = String(await run("/tree"));
    expect(tree).toContain("› hello one");
    expect(tree).toContain("◆ · second answer");
    expect(tree).toContain("[checkpoint]");
    expect(await run(`/export ${join(dir, "out.md")}`)).toBe(`Exported to ${join(dir, "out.md")}.`);
    expect(readFileSync(join(dir, "out.md"), "utf8")).toContain("## User\n\nhello two");
    const cloned = String(await run("/clone"));
    expect(cloned).toMatch(/^Cloned into .*\.jsonl\.$/);
    expect(agent.state.messages).toHaveLength(4);
    expect(String(await run("/new"))).toMatch(/^New session /);
    expect(agent.state.messages).toHaveLength(0);
    expect(String(await run("/reload"))).toContain("run coil again");
    expect(String(await run("/help"))).toContain("/tree [entry id]");
    await stopPlugins(host);
  });

  it("/tree <id> of a user message moves before it; treeItems indents a second branch", async () => {
    const { agent, run, host } = await withSession();
    await agent.prompt("hello one");
    const session = host.services.get("session") as never as {
      path(): { id: string; type: string; message?: AgentMessage }[];
    };
    const firstUser = session.path().find((e) => e.message?.role === "user")!;
    expect(String(await run(`/tree ${firstUser.id}`))).toMatch(/^Moved to /);
    expect(agent.state.messages).toHaveLength(0);
    await agent.prompt("another start");
    const items = treeItems(host.services.get("session") as never);
    const labels = items.map((i) => i.label);
    expect(labels.find((l) => l.includes("hello one"))).toMatch(/^ {0,2}\S/);
    expect(labels.find((l) => l.includes("another start"))).toMatch(/^ {2}/);
    await stopPlugins(host);
  });

  it("renders a session as markdown", () => {
    const md = toMarkdown([{ role: "user", content: "hi", timestamp: 1 }, assistant({})]);
    expect(md).toBe("# coil session\n\n## User\n\nhi\n\n## Assistant\n\nok\n");
  });
});
