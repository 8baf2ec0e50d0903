/**
 * ui-tui end to end in a real terminal: tmux runs the built `coil` against the scripted provider,
 * send-keys types, capture-pane reads the screen. Each test asserts what a user would see.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { childEnv } from "../../support/env.js";
import { BIN, editorText, hasTmux, type Tmux, useTmux } from "../../support/tmux.js";
import { startMockAnthropic, text as anthropicText } from "../../support/mock-anthropic.js";

const tmux = useTmux();

function project(files: Record<string, string>): string {
  const dir = tmux.tempDir("coil-tui-");
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function coil(dir: string, args: string, size: { cols?: number; rows?: number } = {}): Tmux {
  const pane = tmux.start({
    dir,
    cwd: dir,
    cols: size.cols ?? 80,
    rows: size.rows ?? 24,
    env: { COIL_HOME: join(dir, "home") },
    command: `${process.execPath} ${BIN} --plugin ui-tui --provider scripted ${args}`,
  });
  return pane;
}

function requests(dir: string): { messages: { role: string; content: unknown; toolCallId?: string }[] }[] {
  return readFileSync(join(dir, "requests.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

function preset(dir: string, replies: string): string {
  writeFileSync(
    join(dir, "preset.yaml"),
    `extends: default\nplugins:\n  - provider-scripted:\n      chunkSize: 4\n      recordTo: requests.jsonl\n      replies:\n${replies.replace(/^/gm, "        ")}\n`,
  );
  return `--preset ./preset.yaml`;
}

const READY = "Enter to send";

describe.skipIf(!hasTmux)("ui-tui in tmux", () => {
  it("shows the editor, streams markdown, runs a tool with its output, and fills the footer (80x24)", async () => {
    const dir = project({});
    const args = preset(
      dir,
      `- thinking: I will run echo.
  text: "alpha beta gamma delta **epsilon**"
  chunkDelayMs: 60
  toolCalls: [{ name: bash, arguments: { command: "echo hi-from-bash" } }]
  usage: { input: 1200, output: 340, cacheRead: 800 }
- text: "All done: it printed the greeting."
  usage: { input: 1600, output: 50, cacheRead: 1000 }`,
    );
    const t = coil(dir, args);
    await t.waitFor(READY);
    t.type("say hello");
    const typed = await t.waitFor((s) => editorText(s) === "say hello");
    expect(typed).toContain("scripted/scripted");
    t.keys("Enter");
    // mid-stream: the first words are on screen before the last one arrived
    const mid = await t.waitFor((s) => s.includes("alpha") && !s.includes("epsilon"));
    expect(mid).toContain("› say hello");
    expect(mid).toContain("Esc to abort");
    // the whole finished frame: the reply's text can be drawn before the footer takes the last usage
    const done = await t.waitFor((s) => s.includes("All done: it printed the greeting.") && s.includes(READY));
    expect(done).toMatch(/● bash \$ echo hi-from-bash/);
    expect(done).toMatch(/^\s+hi-from-bash\s*$/m);
    expect(done).toContain("thinking (4 words");
    expect(done).not.toContain("**epsilon**"); // markdown is rendered, not shown raw
    // footer: context from the last usage (1600+50+1000 of 200k), totals in/out, cache reads, cost
    expect(done).toContain("ctx 1.3%/200k");
    expect(done).toContain("↑2.8k ↓390");
    expect(done).toContain("cache 1.8k");
    expect(done).toContain("$0.000");
    expect(editorText(done)).toBe("");
  });

  it("queues a steering message while a tool runs and delivers it after the tool", async () => {
    const dir = project({});
    const args = preset(
      dir,
      `- toolCalls: [{ name: bash, arguments: { command: "sleep 1.5; echo slept" } }]
- text: steering received`,
    );
    const t = coil(dir, args);
    await t.waitFor(READY);
    t.type("start");
    t.keys("Enter");
    await t.waitFor("◌ bash $ sleep 1.5");
    t.type("also check the logs");
    t.keys("Enter");
    // a capture can land mid-redraw, the queued line drawn and the footer not yet: wait for the whole frame
    const queued = await t.waitFor((s) => s.includes("↳ steer: also check the logs") && s.includes("Enter to steer"));
    expect(queued).toContain("Enter to steer");
    const done = await t.waitFor("steering received");
    expect(done).toContain("› also check the logs");
    expect(done).not.toContain("↳ steer:");
    const [, second] = requests(dir);
    const roles = second!.messages.map((m) => m.role);
    expect(roles).toEqual(["user", "assistant", "toolResult", "user"]);
    expect(second!.messages[3]!.content).toBe("also check the logs");
  });

  it("Escape aborts the run and puts the queued steering and follow-up text back into the editor", async () => {
    const dir = project({});
    const args = preset(
      dir,
      `- text: "a very slow answer that keeps streaming for quite a while longer"\n  chunkDelayMs: 300`,
    );
    const t = coil(dir, args);
    await t.waitFor(READY);
    t.type("go");
    t.keys("Enter");
    await t.waitFor("a very");
    t.type("first steer");
    t.keys("Enter");
    await t.waitFor("↳ steer: first steer");
    t.type("then follow");
    t.keys("M-Enter");
    await t.waitFor("↳ follow-up: then follow");
    t.keys("Escape");
    const after = await t.waitFor((s) => s.includes("Aborted.") && s.includes(READY));
    expect(editorText(after)).toBe("first steer\nthen follow");
    expect(after).not.toContain("↳ steer:");
    expect(after).toContain("aborted");
  });

  it("completes slash commands in a picker and runs them at 60 columns; Ctrl+C clears, twice quits", async () => {
    const dir = project({});
    // 30 rows: /help lists every command and the keys, and /tree must still be on screen above the keys
    const t = coil(dir, `--script none.yaml`, { cols: 60, rows: 30 });
    writeFileSync(join(dir, "none.yaml"), "- text: unused\n");
    await t.waitFor(READY);
    t.type("/");
    const picker = await t.waitFor((s) => /→ model\s/.test(s) && /\(1\/\d+\)/.test(s));
    for (const line of picker.split("\n")) expect(line.length).toBeLessThanOrEqual(60);
    t.type("hel");
    await t.waitFor((s) => /help\s+list commands/.test(s) && !/→ model/.test(s));
    t.keys("Enter");
    const help = await t.waitFor("Ctrl+C clears the editor");
    expect(help).toContain("/tree [entry id]");
    t.type("some draft");
    await t.waitFor((s) => editorText(s) === "some draft");
    t.keys("C-c");
    const cleared = await t.waitFor("Press Ctrl+C again to quit");
    expect(editorText(cleared)).toBe("");
    t.keys("C-c");
    await t.waitFor("[exited 0]");
  });

  it("asks through the ui service in a dialog; !cmd adds output to the context, !!cmd does not; Ctrl+D quits", async () => {
    const dir = project({
      "ask.mjs": `export default { id: "ask-test", setup(ctx) {
  ctx.tools.register({ name: "ask", description: "ask the user", parameters: { type: "object", properties: {} },
    async execute() { const ui = ctx.services.get("ui"); const choice = await ui.select("Pick a colour", ["red", "green", "blue"]);
      return { content: [{ type: "text", text: "chosen: " + choice }] }; } });
} };\n`,
    });
    const args = preset(dir, `- toolCalls: [{ name: ask, arguments: {} }]\n- text: thanks\n- text: second answer`);
    const t = coil(dir, `${args} --plugin ./ask.mjs`);
    await t.waitFor(READY);
    t.type("ask me");
    t.keys("Enter");
    await t.waitFor("Pick a colour");
    t.keys("Down");
    t.keys("Enter");
    const answered = await t.waitFor("thanks");
    expect(answered).toContain("chosen: green");
    t.type("!!echo hidden-output");
    t.keys("Enter");
    await t.waitFor(/^\s+hidden-output/m);
    t.type("!echo shown-to-model");
    t.keys("Enter");
    await t.waitFor(/^\s+shown-to-model/m);
    t.type("next");
    t.keys("Enter");
    await t.waitFor("second answer");
    const last = requests(dir).at(-1)!;
    const text = JSON.stringify(last.messages);
    expect(text).toContain("shown-to-model");
    expect(text).not.toContain("hidden-output");
    t.keys("C-d");
    await t.waitFor("[exited 0]");
  });
});

describe.skipIf(!hasTmux)("ui-tui in tmux: the start line", () => {
  it("says which model a run that names none starts with, and why", async () => {
    const dir = project({ "p.yaml": "plugins: [provider-anthropic, provider-openai, models, ui-tui]\n" });
    const pane = tmux.start({
      dir,
      cwd: dir,
      cols: 200,
      rows: 12,
      env: { COIL_HOME: join(dir, "home"), HOME: dir, ANTHROPIC_API_KEY: "sk-ant-test-start-line" },
      command: `${process.execPath} ${BIN} --preset ./p.yaml`,
    });
    const screen = await pane.waitFor(READY);
    expect(screen).toContain(
      "coil · anthropic/claude-sonnet-5-5 (default: anthropic is the first provider with a key; --model to choose) · ",
    );
  });
});

describe.skipIf(!hasTmux)("ui-tui in tmux: output, sessions, resizing", () => {
  it("collapses long tool output (Ctrl+O expands), shows the session name in the footer, and redraws on resize", async () => {
    const dir = project({});
    const args = preset(dir, `- toolCalls: [{ name: bash, arguments: { command: "seq 1 40" } }]\n- text: listed`);
    // tall enough for the tail and the marker above it (and the no-sandbox warning)
    const t = coil(dir, args, { rows: 36 });
    await t.waitFor(READY);
    t.type("count");
    t.keys("Enter");
    const collapsed = await t.waitFor("listed");
    // bash output collapses to its tail, where errors are (issue 33)
    expect(collapsed).toContain("… 28 earlier lines (Ctrl+O to expand)");
    expect(collapsed).toMatch(/^\s+40$/m);
    expect(collapsed).toMatch(/^\s+29$/m);
    expect(collapsed).not.toMatch(/^\s+28$/m);
    t.keys("C-o");
    const expanded = await t.waitFor(/^\s+28$/m);
    expect(expanded).not.toContain("earlier lines (Ctrl+O");
    t.type("/name my-work");
    t.keys("Enter");
    await t.waitFor((s) => s.includes("Named 'my-work'") && /\$0\.000 · my-work/.test(s));
    t.resize(60, 20);
    const narrow = await t.waitFor(
      (s) => s.split("\n").length <= 21 && s.includes("scripted/scripted") && s.includes(READY),
    );
    for (const line of narrow.split("\n")) expect(line.length).toBeLessThanOrEqual(60);
    expect(narrow).toMatch(/^─{60}$/m);
  });
});

describe.skipIf(!hasTmux)("ui-tui in tmux: /reload", () => {
  it("restarts coil on the same session: a template added meanwhile is a command, the conversation stays", async () => {
    const dir = project({});
    // the reloaded process replays the script from its start, so every reply says which process answered
    const args = preset(dir, `- text: "answer from a coil process"`);
    const t = coil(dir, args);
    await t.waitFor(READY);
    t.type("remember the word pelican");
    t.keys("Enter");
    await t.waitFor("answer from a coil process");
    mkdirSync(join(dir, "home", "prompt-templates"), { recursive: true });
    writeFileSync(
      join(dir, "home", "prompt-templates", "greet.md"),
      "---\ndescription: greet someone warmly\n---\nPlease greet $ARGUMENTS warmly.\n",
    );
    t.type("/gre");
    await t.waitFor((s) => editorText(s) === "/gre");
    expect(t.screen()).not.toContain("greet someone warmly"); // not loaded yet
    t.keys("C-c");
    await t.waitFor((s) => editorText(s) === "");
    t.type("/reload");
    t.keys("Enter");
    // the notice, then the new process draws the same session again
    await t.waitFor("Reloading plugins, skills and templates");
    const reloaded = await t.waitFor(
      (s) => s.includes(READY) && !s.includes("Reloading plugins") && s.includes("› remember the word pelican"),
    );
    expect(reloaded).toContain("answer from a coil process");
    t.type("/gre");
    await t.waitFor(/greet\s+greet someone warmly/);
    // clear and type the whole command, then send it once the editor holds exactly that: typing the rest
    // while the completion list redraws raced on a loaded machine ("/greet the greet")
    t.keys("C-c");
    await t.waitFor((s) => editorText(s) === "");
    t.type("/greet the team");
    await t.waitFor((s) => editorText(s) === "/greet the team");
    t.keys("Enter");
    await t.waitFor("› Please greet the team warmly.");
    await t.waitFor((s) => (s.match(/answer from a coil process/g) ?? []).length === 2);
    // the model saw the earlier conversation: the reloaded process continued the session
    const last = requests(dir).at(-1)!;
    expect(last.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(last.messages[0]!.content).toBe("remember the word pelican");
    t.keys("C-d");
    await t.waitFor("[exited 0]");
    // one session file: the reload opened the same one instead of starting another
    const sessions = readdirSync(join(dir, "home", "sessions"), { recursive: true }).filter((f) =>
      String(f).endsWith(".jsonl"),
    );
    expect(sessions).toHaveLength(1);
  });
});

describe.skipIf(!hasTmux)("ui-tui thinking level and what /reload keeps", () => {
  it("Shift+Tab and /thinking change the level shown in the footer and sent; /reload keeps it and the editor history", async () => {
    const dir = project({});
    const t = coil(dir, `${preset(dir, `- text: "answer from a coil process"`)} --thinking low`, { cols: 100 });
    await t.waitFor(READY);
    expect(t.screen()).toContain("scripted/scripted · think low (unused)");
    t.keys("BTab");
    await t.waitFor("think medium (unused)");
    expect(t.screen()).toMatch(/thinking: medium \(scripted\/scripted does not reason/);
    t.type("/thinking high");
    await t.waitFor((s) => editorText(s) === "/thinking high");
    t.keys("Enter");
    await t.waitFor("think high (unused)");
    t.type("first prompt");
    await t.waitFor((s) => editorText(s) === "first prompt");
    t.keys("Enter");
    await t.waitFor("answer from a coil process");
    expect(requests(dir).map((r) => (r as { options?: { thinking?: string } }).options?.thinking)).toEqual(["high"]);
    t.type("/reload");
    await t.waitFor((s) => editorText(s) === "/reload");
    t.keys("Enter");
    await t.waitFor("Reloading plugins");
    // the new process was started with --thinking low on its command line, and still has high
    const reloaded = await t.waitFor(
      (s) => s.includes(READY) && !s.includes("Reloading plugins") && s.includes("› first prompt"),
    );
    expect(reloaded).toContain("think high (unused)");
    // the editor's history came along: Up gives the last prompts, newest first
    t.keys("Up");
    await t.waitFor((s) => editorText(s) === "/reload");
    t.keys("Up");
    await t.waitFor((s) => editorText(s) === "first prompt");
    t.keys("C-c");
    await t.waitFor((s) => editorText(s) === "");
    t.type("second prompt");
    await t.waitFor((s) => editorText(s) === "second prompt");
    t.keys("Enter");
    await t.waitFor((s) => (s.match(/answer from a coil process/g) ?? []).length === 2);
    expect(requests(dir).map((r) => (r as { options?: { thinking?: string } }).options?.thinking)).toEqual([
      "high",
      "high",
    ]);
    t.keys("C-d");
    await t.waitFor("[exited 0]");
    const sessions = join(dir, "home", "sessions");
    const file = readdirSync(sessions, { recursive: true })
      .map(String)
      .find((f) => f.endsWith(".jsonl"))!;
    const levels = readFileSync(join(sessions, file), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; thinkingLevel?: string })
      .filter((e) => e.type === "thinking_level_change");
    expect(levels.map((e) => e.thinkingLevel)).toEqual(["medium", "high"]);
  });
});

/** A second provider with three models, so there is something to pick and cycle. */
const ALT_PROVIDER = `import { definePlugin } from "coil";
const model = (id) => ({ id, provider: "alt", name: "Alt " + id, contextWindow: 100000, maxOutput: 1000 });
const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
export default definePlugin({
  id: "alt-provider",
  setup(ctx) {
    ctx.providers.register({
      id: "alt",
      models: [model("alpha"), model("beta"), model("gamma"), { ...model("reader"), input: ["text"] }],
      async *stream(request) {
        const message = { role: "assistant", content: [{ type: "text", text: "alt " + request.model.id + " answers" }], provider: "alt", model: request.model.id, usage: { ...zero, cost: { ...zero, total: 0 } }, stopReason: "stop", timestamp: Date.now() };
        yield { type: "done", message };
      },
    });
  },
});
`;

describe.skipIf(!hasTmux)("ui-tui model picker and quick switch", () => {
  it("/model filters as you type and lists recent models first; Ctrl+P cycles the recent ones, or the preset's favourites", async () => {
    const dir = project({ "alt.ts": ALT_PROVIDER });
    const args = `${preset(dir, `- text: "scripted answers"`)} --plugin ./alt.ts --thinking high`;
    const t = coil(dir, args, { cols: 100 });
    await t.waitFor(READY);
    t.type("/model");
    await t.waitFor((s) => editorText(s) === "/model");
    t.keys("Enter");
    const picker = await t.waitFor("type to filter");
    expect(picker).toContain("alt/alpha");
    expect(picker).toContain("scripted/scripted");
    t.type("gam");
    await t.waitFor((s) => s.includes("alt/gamma") && !s.includes("alt/alpha"));
    t.keys("Enter");
    // the notice and the footer are drawn apart: wait for the frame that has both
    const switched = await t.waitFor((s) => s.includes("switched to alt/gamma") && /alt\/gamma · think/.test(s));
    // the level stays, and the switch says that this model does not use it
    expect(switched).toMatch(/thinking high: alt\/gamma does not reason/);
    expect(switched).toMatch(/alt\/gamma · think high \(unused\) · ctx/);
    expect(JSON.parse(readFileSync(join(dir, "home", "recent-models.json"), "utf8"))).toEqual(["alt/gamma"]);
    // /model with an argument is remembered too; the picker then lists both recent ones first, newest first
    t.type("/model scripted/scripted");
    await t.waitFor((s) => editorText(s) === "/model scripted/scripted");
    t.keys("Enter");
    await t.waitFor("switched to scripted/scripted");
    t.type("/model");
    await t.waitFor((s) => editorText(s) === "/model");
    t.keys("Enter");
    const listed = await t.waitFor("type to filter");
    const order = ["scripted/scripted", "alt/gamma", "alt/alpha"].map((m) => listed.indexOf(m));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(listed).toMatch(/alt\/gamma\s+recent · Alt gamma/);
    t.keys("Escape");
    await t.waitFor((s) => !s.includes("type to filter") && s.includes(READY));
    t.keys("C-p");
    await t.waitFor((s) => /alt\/gamma · think high/.test(s));
    t.keys("C-p");
    await t.waitFor((s) => /scripted\/scripted · think high/.test(s));
    t.type("hello");
    await t.waitFor((s) => editorText(s) === "hello");
    t.keys("Enter");
    await t.waitFor("scripted answers");
    t.keys("C-d");
    await t.waitFor("[exited 0]");

    // favourites from the preset: Ctrl+P goes through them in order
    writeFileSync(
      join(dir, "fav.yaml"),
      "extends: ./preset.yaml\nplugins:\n  - ui-tui: { favoriteModels: [alt/beta, alt/alpha] }\n",
    );
    const f = coil(dir, "--preset ./fav.yaml --plugin ./alt.ts --no-session", { cols: 100 });
    await f.waitFor(READY);
    f.keys("C-p");
    await f.waitFor((s) => /alt\/beta · ctx/.test(s));
    f.keys("C-p");
    await f.waitFor((s) => /alt\/alpha · ctx/.test(s));
    f.keys("C-p");
    await f.waitFor((s) => /alt\/beta · ctx/.test(s));
  });
});

describe.skipIf(!hasTmux)("ui-tui first run without a key", () => {
  it("opens anyway and says how to add a key; /login stores one and the next prompt reaches the provider; /demo plays offline", async () => {
    const KEY = "sk-ant-first-run-0123456789";
    const mock = await startMockAnthropic({ key: KEY });
    try {
      const dir = project({ "notes.txt": "hello\n" });
      const home = join(dir, "home");
      const pane = tmux.start({
        dir,
        cwd: dir,
        cols: 110,
        rows: 40,
        // no key anywhere: every provider variable empty, an empty COIL_HOME
        env: {
          COIL_HOME: home,
          ANTHROPIC_BASE_URL: mock.url,
          ANTHROPIC_API_KEY: "",
          ANTHROPIC_AUTH_TOKEN: "",
          OPENAI_API_KEY: "",
          OPENROUTER_API_KEY: "",
        },
        command: `${process.execPath} ${BIN}`,
      });
      const first = await pane.waitFor((s) => s.includes(READY) && s.includes("No model provider is set up yet"));
      expect(first).toContain("/login <provider>");
      // the subscription logins of the default preset (ChatGPT, GitHub Copilot) are offered too (issue 32)
      expect(first).toContain("or use a subscription you already pay for, no key needed");
      expect(first).toContain("/demo plays a short scripted demo");
      expect(first).toMatch(/anthropic: set ANTHROPIC_API_KEY/);
      // a prompt now would only fail: it is held back with a one-line reminder (the help is not repeated),
      // the typed text stays in the editor, and nothing is sent (issue 27 item 10)
      pane.type("hello there");
      await pane.waitFor((s) => editorText(s) === "hello there");
      pane.keys("Enter");
      // the notice is drawn before the text is put back in the editor: wait for the frame with both
      const held = await pane.waitFor(
        (s) => s.includes("Not sent: no provider is set up") && editorText(s) === "hello there",
      );
      expect(editorText(held)).toBe("hello there");
      pane.keys("Enter");
      const again = await pane.waitFor(
        (s) => (s.match(/Not sent: no provider is set up/g) ?? []).length === 2 && editorText(s) === "hello there",
      );
      expect(again.match(/No model provider is set up yet/g)).toHaveLength(1);
      expect(editorText(again)).toBe("hello there");
      expect(mock.requests).toHaveLength(0);
      pane.keys("C-c");
      await pane.waitFor((s) => editorText(s) === "");

      pane.type("/login anthropic");
      await pane.waitFor((s) => editorText(s) === "/login anthropic");
      pane.keys("Enter");
      await pane.waitFor("API key for anthropic");
      pane.type(KEY);
      const masked = await pane.waitFor("•".repeat(KEY.length));
      expect(masked).not.toContain(KEY);
      pane.keys("Enter");
      const stored = await pane.waitFor(/Ready:\s+anthropic\//);
      expect(stored).toContain("Stored the key for anthropic in");
      const auth = join(home, "auth.json");
      expect(JSON.parse(readFileSync(auth, "utf8")).anthropic.key).toBe(KEY);
      expect(statSync(auth).mode & 0o777).toBe(0o600);

      mock.push(anthropicText("hello from the mock Claude"));
      pane.type("hi");
      await pane.waitFor((s) => editorText(s) === "hi");
      pane.keys("Enter");
      await pane.waitFor("hello from the mock Claude");
      const sent = mock.requests[0]!.headers;
      expect(sent["x-api-key"] ?? sent.authorization).toContain(KEY);
      expect(mock.rejected()).toEqual([]);

      pane.type("/demo");
      await pane.waitFor((s) => editorText(s) === "/demo");
      pane.keys("Enter");
      const demo = await pane.waitFor("That was the ls tool");
      expect(demo).toContain("offline demo");
      expect(demo).toMatch(/● ls \./);
      expect(demo).toContain("notes.txt");
      expect(mock.requests).toHaveLength(1);
      pane.keys("C-d");
      await pane.waitFor("[exited 0]");
    } finally {
      await mock.close();
    }
  });
});

describe.skipIf(!hasTmux)("ui-tui @file attachments", () => {
  // A real 1x1 PNG, and a binary file that is not an image.
  const PNG = Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "base64",
  );
  const BINARY = Buffer.from([0x00, 0x01, 0x02, 0xff, 0xfe, 0x00, 0x10, 0x80, 0x81, 0x00, 0x7f, 0x00]);

  it("@pic.png goes to the model as an image block, @data.bin is refused with a notice, @notes.txt is inlined as text", async () => {
    const dir = project({ "notes.txt": "line one\n" });
    writeFileSync(join(dir, "pic.png"), PNG);
    writeFileSync(join(dir, "data.bin"), BINARY);
    const t = coil(dir, preset(dir, `- text: "I see a tiny picture."`));
    await t.waitFor(READY);
    // The last word is not an @path, so no completion list is open when Enter is pressed.
    t.type("look at @pic.png and @data.bin and @notes.txt please");
    await t.waitFor((s) => editorText(s).endsWith("please"));
    t.keys("Enter");
    const done = await t.waitFor("I see a tiny picture.");
    expect(done).toMatch(/@data\.bin is a binary file.*not attached/s);
    // The transcript names the image instead of drawing its bytes.
    expect(done).toContain("[image @pic.png (image/png, 1x1,");
    expect(done).not.toMatch(/IEND|IDAT|\uFFFD/);
    const [request] = requests(dir);
    const user = request!.messages.at(-1)! as {
      role: string;
      content: { type: string; text?: string; data?: string; mimeType?: string }[];
    };
    expect(user.role).toBe("user");
    expect(Array.isArray(user.content)).toBe(true);
    const images = user.content.filter((p) => p.type === "image");
    expect(images).toEqual([{ type: "image", mimeType: "image/png", data: PNG.toString("base64") }]);
    const text = user.content
      .filter((p) => p.type === "text")
      .map((p) => p.text)
      .join("\n");
    expect(text).toContain('<file path="notes.txt">\nline one\n</file>');
    expect(text).toContain("pic.png");
    // No raw bytes of either file in the text.
    expect(text).not.toContain("IHDR");
    expect(text).not.toContain("\uFFFD");
    expect(text).not.toContain('<file path="data.bin">');
    expect(text).not.toContain('<file path="pic.png">');
  });
});

describe.skipIf(!hasTmux)("ui-tui images from the editor", () => {
  const PNG = Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "base64",
  );

  it("a pasted image path and Ctrl+V's clipboard image are attached as image blocks; a model without images says so", async () => {
    const dir = project({ "alt.ts": ALT_PROVIDER, "notes.txt": "text\n" });
    mkdirSync(join(dir, "shots"));
    writeFileSync(join(dir, "shots", "my pic.png"), PNG);
    const clip = join(dir, "clip.png");
    writeFileSync(clip, Buffer.concat([PNG, Buffer.from("clipboard")]));
    // the X11 clipboard tool, as xclip answers: the list of types, then the PNG bytes
    mkdirSync(join(dir, "bin"));
    writeFileSync(
      join(dir, "bin", "xclip"),
      `#!/bin/sh\ncase "$*" in *TARGETS*) printf 'TARGETS\\nimage/png\\n' ;; *image/png*) cat '${clip}' ;; *) exit 1 ;; esac\n`,
      { mode: 0o755 },
    );
    const args = `${preset(dir, `- text: "I see the first picture."\n- text: "I see the clipboard."`)} --plugin ./alt.ts`;
    const t = tmux.start({
      dir,
      cwd: dir,
      cols: 110,
      rows: 30,
      env: { COIL_HOME: join(dir, "home"), DISPLAY: ":0", WAYLAND_DISPLAY: "" },
      command: `PATH='${join(dir, "bin")}':"$PATH" ${process.execPath} ${BIN} --plugin ui-tui --provider scripted ${args}`,
    });
    await t.waitFor(READY);
    // a file dropped on the terminal: a quoted absolute path with a space
    t.paste(`'${join(dir, "shots", "my pic.png")}'`);
    await t.waitFor((s) => editorText(s) === '@"shots/my pic.png"');
    t.type("what is this");
    await t.waitFor((s) => editorText(s).endsWith("what is this"));
    t.keys("Enter");
    const first = await t.waitFor("I see the first picture.");
    expect(first).toContain("[image @shots/my pic.png (image/png, 1x1,");
    const sent = (n: number) => requests(dir)[n]!.messages.at(-1)!.content as { type: string; data?: string }[];
    expect(sent(0).filter((p) => p.type === "image")).toEqual([
      { type: "image", mimeType: "image/png", data: PNG.toString("base64") },
    ]);
    // a paste that is not an image path stays text
    t.paste("notes.txt");
    await t.waitFor((s) => editorText(s) === "notes.txt");
    t.keys("C-c");
    await t.waitFor((s) => editorText(s) === "");
    // Ctrl+V: the clipboard's image, saved to a private file
    t.keys("C-v");
    const ref = await t.waitFor((s) => /^@\S+clipboard\.png$/.test(editorText(s)));
    const file = editorText(ref).slice(1);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    t.type("and this");
    await t.waitFor((s) => editorText(s).endsWith("and this"));
    t.keys("Enter");
    await t.waitFor("I see the clipboard.");
    expect(
      sent(1)
        .filter((p) => p.type === "image")
        .map((p) => p.data),
    ).toEqual([readFileSync(clip).toString("base64")]);
    // a model that takes no images: said at once, and the image is not attached
    t.type("/model alt/reader");
    await t.waitFor((s) => editorText(s) === "/model alt/reader");
    t.keys("Enter");
    await t.waitFor("switched to alt/reader");
    t.paste(join(dir, "shots", "my pic.png"));
    await t.waitFor(/alt\/reader does not take images: @"shots\/my pic\.png" will not be attached/);
  });
});

describe.skipIf(!hasTmux)("ui-tui /skill:<name>", () => {
  it("for a skill that failed to load shows why, for an unknown one says so; neither reaches the model", async () => {
    const dir = project({});
    mkdirSync(join(dir, ".agents", "skills", "half-done"), { recursive: true });
    writeFileSync(join(dir, ".agents", "skills", "half-done", "SKILL.md"), "---\nname: half-done\n---\nSteps.\n");
    const t = coil(dir, preset(dir, `- text: "THE MODEL WAS CALLED"`), { cols: 120 });
    await t.waitFor(READY);
    t.type("/skill:half-done fix the bug");
    await t.waitFor((s) => editorText(s).endsWith("fix the bug"));
    t.keys("Enter");
    await t.waitFor(/skill 'half-done' was not loaded: .*front matter has no\s+'description'/s);
    t.type("/skill:nosuch fix the bug");
    await t.waitFor((s) => editorText(s).endsWith("fix the bug"));
    t.keys("Enter");
    const screen = await t.waitFor("Unknown command /skill:nosuch.");
    expect(screen).not.toContain("THE MODEL WAS CALLED");
    expect(existsSync(join(dir, "requests.jsonl"))).toBe(false);
  });
});

describe("ui-tui without a terminal", () => {
  it("falls back to print mode with a message when stdin/stdout are not TTYs", async () => {
    const dir = project({ "r.yaml": "- text: printed answer\n" });
    const child = spawn(process.execPath, [BIN, "--plugin", "ui-tui", "--provider", "scripted", "--script", "r.yaml"], {
      cwd: dir,
      env: childEnv({ COIL_HOME: join(dir, "home") }),
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.stdin.end("hello from a pipe\n");
    const code = await new Promise((r) => child.on("close", r));
    expect(err).toContain("the interactive UI needs a terminal");
    expect(err).toContain("coil -p");
    expect(out).toBe("printed answer\n");
    expect(code).toBe(0);
  });
});
