/**
 * ui-tui in tmux, issue 33's details: themes and colour depth (NO_COLOR, FORCE_COLOR), keybindings.json and
 * command shortcuts with their conflicts, bash aborted with Esc (output kept on screen and for the model,
 * "Took N s", collapsed to the tail), diffs with line numbers and word marks, highlighted reads and code
 * blocks, /tree, narrow widths, and the editor's keys (@, Tab, Ctrl+G, Ctrl+T, Alt+Up), /copy and /export.
 * Assertions are grouped per spawn: each coil process costs a second or more.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, editorText, hasTmux, type Tmux, useTmux } from "../../support/tmux.js";

const tmux = useTmux();
const READY = "Enter to send";
/** Any colour (not style) SGR: 16-colour, bright, 256 and 24-bit foreground or background. */
const COLOUR = /\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|4[0-7]|10[0-7]|38;|48;)/;

function project(files: Record<string, string> = {}): string {
  const dir = tmux.tempDir("coil-tui-details-");
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

function preset(dir: string, replies: string, extra = ""): string {
  writeFileSync(
    join(dir, "preset.yaml"),
    `extends: default\nplugins:\n  - provider-scripted:\n      chunkSize: 8\n      recordTo: requests.jsonl\n      replies:\n${replies.replace(/^/gm, "        ")}\n${extra}`,
  );
  return "--preset ./preset.yaml";
}

function coil(
  dir: string,
  args: string,
  o: { cols?: number; rows?: number; env?: Record<string, string>; cwd?: string } = {},
): Tmux {
  const pane = tmux.start({
    dir,
    cwd: o.cwd ?? dir,
    cols: o.cols ?? 80,
    rows: o.rows ?? 24,
    env: { COIL_HOME: join(dir, "home"), ...o.env },
    command: `${process.execPath} ${BIN} --plugin ui-tui --provider scripted ${args}`,
  });
  return pane;
}

function requests(dir: string): { messages: { role: string; content: unknown }[] }[] {
  return readFileSync(join(dir, "requests.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

async function send(t: Tmux, text: string): Promise<void> {
  t.type(text);
  await t.waitFor((s) => editorText(s) === text);
  t.keys("Enter");
}

describe.skipIf(!hasTmux)("ui-tui themes and colour depth", () => {
  it("NO_COLOR draws without colour; FORCE_COLOR wins over it; --theme light and /settings switch and keep the theme", async () => {
    const dir = project();
    const args = preset(dir, `- text: "**bold** and \`code\`"`);
    // NO_COLOR: not one colour code on the screen, the UI works
    const plain = coil(dir, args, { env: { NO_COLOR: "1" } });
    await plain.waitFor(READY);
    await send(plain, "hi");
    await plain.waitFor("bold and code");
    expect(plain.colors()).not.toMatch(COLOUR);
    plain.kill();
    // FORCE_COLOR=1 over NO_COLOR: sixteen colours (no 256-colour codes)
    const forced = coil(dir, args, { env: { NO_COLOR: "1", FORCE_COLOR: "1" } });
    await forced.waitFor(READY);
    const sixteen = forced.colors();
    expect(sixteen).toMatch(/\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7])m/);
    expect(sixteen).not.toMatch(/38;5;/);
    forced.kill();
    // a theme file missing roles is refused with the file and the roles; --theme light is used meanwhile
    mkdirSync(join(dir, "home", "themes"), { recursive: true });
    writeFileSync(join(dir, "home", "themes", "half.json"), JSON.stringify({ name: "half", colors: { accent: 1 } }));
    const light = coil(dir, `${args} --theme light`, { cols: 100 });
    await light.waitFor(READY);
    // light's border colour (247) draws the editor's rules; dark's (240) does not appear
    expect(light.colors()).toMatch(/38;5;247m─{10}/);
    expect(light.colors()).not.toMatch(/38;5;240m─{10}/);
    await send(light, "/settings theme half");
    await light.waitFor(/half\.json has no colour for\s+border/);
    await send(light, "/settings theme dark");
    await light.waitFor("Theme dark (saved in");
    await light.waitFor(() => /38;5;240m─{10}/.test(light.colors()));
    expect(JSON.parse(readFileSync(join(dir, "home", "settings.json"), "utf8"))).toEqual({ theme: "dark" });
  });
});

/** Commands with shortcuts: one taken by a built-in action, two claiming the same key. */
const SHORTCUTS = `import { definePlugin } from "coil";
export default definePlugin({
  id: "keys-test",
  setup(ctx) {
    ctx.commands.register({ name: "stamp", description: "stamp", shortcut: "alt+k", run: () => "stamped by alt+k" });
    ctx.commands.register({ name: "stamp2", description: "stamp again", shortcut: "alt+k", run: () => "never" });
    ctx.commands.register({ name: "think", description: "takes ctrl+t", shortcut: "ctrl+t", run: () => "never" });
    ctx.registerShortcut("alt+j", { description: "jot a note", handler: ({ ui }) => ui.notify("jotted by alt+j") });
    ctx.registerShortcut("alt+q", {
      description: "fails",
      handler: async () => {
        throw new Error("the handler broke");
      },
    });
  },
});
`;

/** A second plugin's shortcuts: one on a key a command holds, one on a key the first plugin registered. */
const OTHER_SHORTCUTS = `import { definePlugin } from "coil";
export default definePlugin({
  id: "keys-other",
  setup(ctx) {
    ctx.registerShortcut("alt+k", { description: "clash with /stamp", handler: () => {} });
    ctx.registerShortcut("alt+j", { handler: () => {} });
    ctx.registerShortcut("ctrl+x", { handler: () => {} });
  },
});
`;

describe.skipIf(!hasTmux)("ui-tui keybindings.json and shortcuts", () => {
  it("rebinds a built-in action, reports unknown ids and every conflict with both owners, runs commands' and registered shortcuts", async () => {
    const dir = project({ "keys.ts": SHORTCUTS, "other.ts": OTHER_SHORTCUTS });
    mkdirSync(join(dir, "home"), { recursive: true });
    writeFileSync(
      join(dir, "home", "keybindings.json"),
      JSON.stringify({ "app.tools.expand": "ctrl+x", "app.no.such": "ctrl+y", "keys-test:alt+q": "alt+w" }),
    );
    const args = preset(dir, `- toolCalls: [{ name: bash, arguments: { command: "seq 1 30" } }]\n- text: counted`);
    const t = coil(dir, `${args} --plugin ./keys.ts --plugin ./other.ts`, { cols: 120, rows: 40 });
    const start = await t.waitFor((s) => s.includes(READY) && /ctrl\+x of plugin keys-other[\s\S]*Rebind/.test(s));
    expect(start).toMatch(/keybindings\.json: no action 'app\.no\.such'/);
    expect(start).toMatch(
      /the shortcut alt\+k of \/stamp2 \(plugin keys-test\) is not bound: \/stamp \(plugin\s+keys-test\) already has it/,
    );
    expect(start).toMatch(
      /the shortcut ctrl\+t of \/think \(plugin keys-test\) is not bound:\s+app\.thinking\.toggle \(ui-tui\)/,
    );
    // registerShortcut goes the same way: a command's key, another plugin's key and a built-in's key are refused
    expect(start).toMatch(
      /the shortcut alt\+k of plugin keys-other is not bound: \/stamp \(plugin keys-test\) already\s+has it/,
    );
    expect(start).toMatch(/the shortcut alt\+j of plugin keys-other is not bound: plugin keys-test already has it/);
    // keybindings.json moved app.tools.expand to ctrl+x, so the action holds it now
    expect(start).toMatch(/the shortcut ctrl\+x of plugin keys-other is not bound: app\.tools\.expand \(ui-tui\)/);
    t.keys("M-k");
    await t.waitFor("stamped by alt+k");
    t.keys("M-j");
    await t.waitFor("jotted by alt+j");
    // keys-test:alt+q was moved to alt+w in keybindings.json; its handler's failure names the plugin
    t.keys("M-w");
    await t.waitFor(/The shortcut alt\+w of plugin keys-test failed: the handler broke/);
    await send(t, "/help");
    await t.waitFor(/Alt\+J — jot a note · plugin keys-test/);
    expect(t.screen()).toMatch(/Alt\+K — stamp · \/stamp \(plugin keys-test\)/);
    await send(t, "count");
    const done = await t.waitFor("counted");
    expect(done).toContain("… 18 earlier lines (Ctrl+X to expand)");
    t.keys("C-o"); // no longer bound
    await new Promise((r) => setTimeout(r, 300));
    expect(t.screen()).toContain("… 18 earlier lines (Ctrl+X to expand)");
    t.keys("C-x");
    await t.waitFor((s) => /^\s+2$/m.test(s) && !s.includes("earlier lines (Ctrl+X"));
  });
});

describe.skipIf(!hasTmux)("ui-tui bash: abort, tail, timing", () => {
  it("Esc during bash keeps the output on screen and for the model, says Took N s; a spinner runs meanwhile", async () => {
    const dir = project();
    const args = preset(
      dir,
      `- toolCalls: [{ name: bash, arguments: { command: "for i in $(seq 1 20); do echo out-$i; done; sleep 30" } }]\n- text: after the abort`,
    );
    const t = coil(dir, args, { cols: 90, rows: 30 });
    await t.waitFor(READY);
    await send(t, "run it");
    const running = await t.waitFor("out-20");
    expect(running).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] working \d+s · Esc to abort/);
    expect(running).toMatch(/◌ bash \$ for i .* · \d+\.\ds/);
    t.keys("Escape");
    const aborted = await t.waitFor((s) => s.includes("Aborted.") && /✗ bash .* · Took \d+\.\ds/.test(s));
    // the output stays, collapsed to its tail
    expect(aborted).toMatch(/^\s+out-20$/m);
    expect(aborted).toContain("Aborted by the user before the tool finished.");
    await send(t, "what happened?");
    await t.waitFor("after the abort");
    const second = requests(dir).at(-1)!;
    const result = second.messages.find((m) => m.role === "toolResult")!;
    const text = JSON.stringify(result.content);
    expect(text).toContain("out-1\\n");
    expect(text).toContain("out-20");
    expect(text).toContain("Aborted by the user before the tool finished.");
  });

  it("a resumed session shows the Took figures shown live, for a finished call and an aborted one", async () => {
    const dir = project();
    const args = preset(
      dir,
      `- toolCalls: [{ name: bash, arguments: { command: "sleep 1.2; echo slept" } }]
- text: slept well
- toolCalls: [{ name: bash, arguments: { command: "echo started; sleep 30" } }]`,
    );
    const took = (screen: string, command: string) =>
      new RegExp(`bash \\$ ${command}[^\\n]* · Took (\\d+\\.\\ds)`).exec(screen)?.[1];
    const t = coil(dir, args, { cols: 90, rows: 30 });
    await t.waitFor(READY);
    await send(t, "sleep a bit");
    const first = await t.waitFor((s) => s.includes("slept well") && took(s, "sleep 1\\.2") !== undefined);
    const liveFinished = took(first, "sleep 1\\.2")!;
    await send(t, "run the long one");
    await t.waitFor("started");
    t.keys("Escape");
    const stopped = await t.waitFor((s) => s.includes("Aborted.") && took(s, "echo started") !== undefined);
    const liveAborted = took(stopped, "echo started")!;
    // Ctrl+T redraws the transcript from history: the same figures
    t.keys("C-t");
    await t.waitFor((s) => took(s, "echo started") === liveAborted && took(s, "sleep 1\\.2") === liveFinished);
    t.keys("C-d");
    await t.waitFor("[exited 0]");
    const resumed = coil(dir, `${args} --continue`, { cols: 90, rows: 30 });
    const again = await resumed.waitFor((s) => s.includes(READY) && s.includes("echo started"));
    expect(took(again, "sleep 1\\.2")).toBe(liveFinished);
    expect(took(again, "echo started")).toBe(liveAborted);
  });
});

const SOURCE = `export function greet(name: string): string {
  const greeting = "hello";
  return greeting + " " + name;
}
`;

describe.skipIf(!hasTmux)("ui-tui diffs and highlighting", () => {
  it("an edit shows a numbered diff with the changed word marked; a read and a code block are highlighted", async () => {
    const dir = project({ "src/greet.ts": SOURCE });
    const args = preset(
      dir,
      `- toolCalls: [{ name: edit, arguments: { path: src/greet.ts, edits: [{ oldText: 'const greeting = "hello";', newText: 'const greeting = "howdy";' }] } }]
- toolCalls: [{ name: read, arguments: { path: src/greet.ts } }]
- text: "Done:\\n\\n\`\`\`ts\\nconst answer: number = 42;\\n\`\`\`"`,
    );
    const t = coil(dir, args, { cols: 100, rows: 40 });
    await t.waitFor(READY);
    await send(t, "change the greeting");
    const done = await t.waitFor("const answer: number = 42;");
    // numbered diff lines: old and new line 2, the hunk header kept
    expect(done).toMatch(/@@ -1,4 \+1,4 @@/);
    expect(done).toMatch(/^\s+2 - {2}const greeting = "hello";/m);
    expect(done).toMatch(/^\s+2 \+ {2}const greeting = "howdy";/m);
    expect(done).toMatch(/^\s+1 \s*export function greet/m);
    // the highlighter loads on first use: the screen is drawn again, coloured, once it has
    const colors = await t.waitFor(() => /38;5;176mexport/.test(t.colors())).then(() => t.colors());
    // word-level: the changed word has the word background (dark: 52 removed, 22 added), the rest of the line not
    expect(colors).toMatch(/48;5;52m[^\n]*hello/);
    expect(colors).toMatch(/48;5;22m[^\n]*howdy/);
    expect(colors).not.toMatch(/48;5;22m[^\n]*const greeting/);
    // the read: numbered and highlighted (keyword role 176, string role 150)
    expect(done).toMatch(/● read src\/greet\.ts/);
    expect(colors).toMatch(/38;5;176mexport/);
    expect(colors).toMatch(/38;5;150m"howdy"/);
    // the code block in the answer: highlighted too (number role 215)
    expect(colors).toMatch(/38;5;215m42/);
    // /export: the same session as static HTML, the code block highlighted and the edit's diff coloured
    await send(t, "/export out.html");
    await t.waitFor("Exported to");
    const html = readFileSync(join(dir, "out.html"), "utf8");
    expect(html).toContain(
      '<pre><code class="language-ts"><span class="syntaxKeyword">const</span> <span class="syntaxVariable">answer</span>: <span class="syntaxType">number</span>',
    );
    expect(html).toContain('<span class="syntaxNumber">42</span>');
    expect(html).toContain('<span class="toolDiffHunk">@@ -1,4 +1,4 @@</span>');
    expect(html).toContain(
      '<span class="lineNumber"> 2</span> <span class="toolDiffRemoved">-  const greeting = &quot;<mark class="toolDiffRemovedWord">hello</mark>&quot;;</span>',
    );
    expect(html).toContain(
      '<span class="lineNumber"> 2</span> <span class="toolDiffAdded">+  const greeting = &quot;<mark class="toolDiffAddedWord">howdy</mark>&quot;;</span>',
    );
    // the read's content is highlighted as TypeScript
    expect(html).toMatch(/<span class="syntaxKeyword">export<\/span> <span class="syntaxKeyword">function<\/span>/);
    // the colours are in the page (the light theme's), and nothing is fetched or run
    expect(html).toMatch(/\.syntaxKeyword\{color:#[0-9a-f]{6}\}/);
    expect(html).toMatch(/\.toolDiffAddedWord\{background:#[0-9a-f]{6}\}/);
    expect(html).not.toMatch(/<script|<link|https?:\/\//);
  });
});

/** A session file of `n` exchanges, each answer after a read of notes.txt, and a branch off the third question. */
function sessionFile(dir: string, n: number): string {
  const usage = {
    input: 1,
    output: 1,
    cacheRead: 0,
    cacheWrite: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
  const lines: object[] = [
    {
      type: "session",
      version: 2,
      id: "11111111-2222-3333-4444-555555555555",
      timestamp: new Date().toISOString(),
      cwd: dir,
    },
  ];
  let parent: string | null = null;
  let id = 0x10000000;
  const add = (message: object, under: string | null = parent) => {
    const entry = {
      type: "message",
      id: (id++).toString(16),
      parentId: under,
      timestamp: new Date().toISOString(),
      message,
    };
    lines.push(entry);
    parent = entry.id;
    return entry.id;
  };
  const assistant = (content: object[]) => ({
    role: "assistant",
    content,
    provider: "scripted",
    model: "scripted",
    usage,
    stopReason: "stop",
    timestamp: 1,
  });
  let third: string | null = null;
  for (let i = 1; i <= n; i++) {
    const q = add({ role: "user", content: `question ${i}`, timestamp: 1 });
    if (i === 3) third = q;
    add(assistant([{ type: "toolCall", id: `c${i}`, name: "read", arguments: { path: "notes.txt" } }]));
    add({
      role: "toolResult",
      toolCallId: `c${i}`,
      toolName: "read",
      content: [{ type: "text", text: "n" }],
      isError: false,
      timestamp: 1,
    });
    add(assistant([{ type: "text", text: `answer ${i}` }]));
  }
  // a second branch: another answer to question 3, written before the main line's end is re-appended
  const main = parent;
  add(assistant([{ type: "text", text: "another take on 3" }]), third);
  lines.push({
    type: "message",
    id: (id++).toString(16),
    parentId: main,
    timestamp: new Date().toISOString(),
    message: { role: "user", content: "question last", timestamp: 1 },
  });
  const file = join(dir, "session.jsonl");
  writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  return file;
}

describe.skipIf(!hasTmux)("ui-tui /tree", () => {
  it("opens at the current entry with the rows filling the terminal, tool calls with their arguments; search, fold, label", async () => {
    const dir = project({ "notes.txt": "n\n" });
    const file = sessionFile(dir, 16);
    const t = coil(dir, `${preset(dir, `- text: unused`)} --session ${file}`, { cols: 100, rows: 50 });
    await t.waitFor(READY);
    await send(t, "/tree");
    // the whole frame: the tree is drawn row by row, so wait for its last row, not only its heading
    const rowsOf = (s: string) => (s.match(/^(→ | {2})\s*[◆•]? ?[›·]/gm) ?? []).length;
    const tree = await t.waitFor((s) => s.includes("Session tree") && /question last/.test(s) && rowsOf(s) >= 30);
    // the selected row (→) is where you are (◆): the last message
    expect(tree).toMatch(/→ .*◆ › question last/);
    // rows fill a 50-row terminal: far more than the 10 rows of before
    expect(rowsOf(tree)).toBeGreaterThanOrEqual(30);
    expect(tree).toContain("[read notes.txt]");
    // the branch off question 3 is indented under it
    expect(tree).toMatch(/^ {2}\s{2,}· another take on 3/m);
    // search
    t.type("take on");
    await t.waitFor((s) => /→ .*another take on 3/.test(s) && !s.includes("question 12"));
    for (let i = 0; i < 7; i++) t.keys("BSpace");
    await t.waitFor((s) => s.includes("question 12") && /→ .*question last/.test(s));
    // fold what follows "answer 16": the rows under it go, a count says how many
    t.keys("Up");
    await t.waitFor(/→ .*answer 16/);
    t.keys("Left");
    await t.waitFor((s) => /answer 16 .*▸ \+1/.test(s) && !s.includes("question last"));
    t.keys("Right");
    await t.waitFor("question last");
    // label the selected row
    t.keys("M-l");
    await t.waitFor("Label for");
    t.type("milestone");
    t.keys("Enter");
    await t.waitFor((s) => s.includes("Session tree") && /answer 16.*\[milestone\]/.test(s));
    t.keys("Escape");
    await t.waitFor(READY);
  });
});

describe.skipIf(!hasTmux)("ui-tui at narrow widths", () => {
  it("/cost fits 100 columns, the footer keeps the cost at 60, the title keeps the cwd at 100 and 80", async () => {
    const root = project();
    const deep = join(root, "a-rather-long-project-folder-name", "with-a-subfolder", "and-another-one");
    mkdirSync(deep, { recursive: true });
    preset(
      root,
      `- text: "one"\n  usage: { input: 1200, output: 30, cacheRead: 0 }\n- text: "two"\n  usage: { input: 900, output: 40, cacheRead: 800 }`,
    );
    const args = `--preset ${join(root, "preset.yaml")}`;
    const t = coil(root, args, { cols: 100, rows: 40, cwd: deep });
    const first = await t.waitFor(READY);
    const title = first.split("\n").find((l) => l.startsWith("coil · "))!;
    expect(title).toContain("and-another-one");
    expect(title.length).toBeLessThanOrEqual(100);
    await send(t, "first");
    await t.waitFor("one");
    await send(t, "second");
    await t.waitFor("two");
    await send(t, "/cost");
    const cost = await t.waitFor("total: 2 requests");
    for (const line of cost.split("\n")) expect(line.length).toBeLessThanOrEqual(100);
    const rows = cost.split("\n").filter((l) => /^\s*[12]\s{2,}/.test(l));
    expect(rows).toHaveLength(2);
    // the columns line up: each row's cost ($) starts where the other's does
    expect(rows[0]!.indexOf("$")).toBe(rows[1]!.indexOf("$"));
    t.resize(80, 40);
    // the redraw after a resize comes in pieces: wait for the frame that has the title line again
    const titleOf = (s: string) => s.split("\n").find((l) => l.startsWith("coil · "));
    const after = await t.waitFor(
      (s) => s.split("\n").every((l) => l.length <= 80) && s.includes(READY) && titleOf(s) !== undefined,
    );
    expect(titleOf(after)).toContain("and-another-one");
    t.resize(60, 30);
    const at60 = await t.waitFor((s) => s.split("\n").every((l) => l.length <= 60) && s.includes("Enter to send"));
    expect(at60).toMatch(/\$0\.\d{3}/);
  });
});

const EDITOR_SCRIPT = `#!/bin/sh
printf '%s' "$(cat "$1") and more from the editor" > "$1"
`;
const XCLIP = (out: string) => `#!/bin/sh
case "$*" in *-o*) exit 1 ;; esac
cat > '${out}'
`;

describe.skipIf(!hasTmux)("ui-tui editor keys, /copy and /export", () => {
  it("@ finds files fuzzily, Tab completes paths, Ctrl+G edits in $EDITOR, Ctrl+T shows thinking, Alt+Up takes queued messages back, /copy, /export", async () => {
    const dir = project({ "src/main.ts": "x\n", "docs/README.md": "r\n" });
    mkdirSync(join(dir, "bin"));
    writeFileSync(join(dir, "bin", "ed.sh"), EDITOR_SCRIPT, { mode: 0o755 });
    writeFileSync(join(dir, "bin", "xclip"), XCLIP(join(dir, "clip.txt")), { mode: 0o755 });
    const args = preset(
      dir,
      `- thinking: "I weigh the options carefully."
  text: "# Result\\n\\nIt is **done** and \`fine\`."
- text: "a slow answer that streams for a good while so a message can be queued meanwhile"
  chunkDelayMs: 250
- text: "third"`,
    );
    const t = tmux.start({
      dir,
      cwd: dir,
      cols: 100,
      rows: 40,
      env: {
        COIL_HOME: join(dir, "home"),
        EDITOR: join(dir, "bin", "ed.sh"),
        VISUAL: "",
        DISPLAY: ":0",
        WAYLAND_DISPLAY: "",
      },
      command: `PATH='${join(dir, "bin")}':"$PATH" ${process.execPath} ${BIN} --plugin ui-tui --provider scripted ${args}`,
    });
    await t.waitFor(READY);
    // @: fuzzy file search
    t.type("see @rdme");
    await t.waitFor("docs/README.md");
    t.keys("Tab");
    await t.waitFor((s) => editorText(s).startsWith("see @docs/README.md"));
    t.keys("C-u"); // clear the line (Ctrl+C twice within 1.5 s would quit)
    await t.waitFor((s) => editorText(s) === "");
    // Tab: path completion
    t.type("open src/ma");
    await t.waitFor((s) => editorText(s) === "open src/ma");
    t.keys("Tab");
    await t.waitFor((s) => editorText(s).startsWith("open src/main.ts"));
    t.keys("C-u");
    await t.waitFor((s) => editorText(s) === "");
    // Ctrl+G: the text goes through $EDITOR and comes back
    t.type("draft");
    await t.waitFor((s) => editorText(s) === "draft");
    t.keys("C-g");
    await t.waitFor((s) => editorText(s) === "draft and more from the editor");
    t.keys("Enter");
    await t.waitFor("It is done and fine.");
    // Ctrl+T: thinking shown, and hidden again
    expect(t.screen()).toContain("∴ thinking (5 words, Ctrl+T to show)");
    t.keys("C-t");
    await t.waitFor("I weigh the options carefully.");
    t.keys("C-t");
    await t.waitFor("∴ thinking (5 words");
    // /copy: the last answer goes to the clipboard tool
    await send(t, "/copy");
    await t.waitFor("Copied the last answer");
    expect(readFileSync(join(dir, "clip.txt"), "utf8")).toBe("# Result\n\nIt is **done** and `fine`.");
    // Alt+Up: a queued steering message back in the editor, not delivered
    await send(t, "go slow");
    await t.waitFor("a slow");
    t.type("queued words");
    t.keys("Enter");
    await t.waitFor("↳ steer: queued words");
    expect(t.screen()).toContain("Alt+Up to edit the queued messages");
    t.keys("M-Up");
    await t.waitFor((s) => editorText(s) === "queued words" && !s.includes("↳ steer:"));
    await t.waitFor("queued meanwhile");
    await t.waitFor(READY);
    expect(JSON.stringify(requests(dir).map((r) => r.messages))).not.toContain("queued words");
    t.keys("C-u");
    await t.waitFor((s) => editorText(s) === "");
    // /export: HTML with the markdown rendered
    await send(t, "/export out.html");
    await t.waitFor("Exported to");
    const html = readFileSync(join(dir, "out.html"), "utf8");
    expect(html).toContain("<h1>Result</h1>");
    expect(html).toContain("<strong>done</strong>");
    expect(html).toContain("<code>fine</code>");
    expect(html).not.toContain("**done**");
  });
});
