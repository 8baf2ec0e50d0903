/** The rewind picker in the real TUI (tmux): Esc Esc, choose the prompt and what to restore, see the diff, confirm. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, editorText, hasTmux, type Tmux, useTmux } from "../../support/tmux.js";

const tmux = useTmux();
function setup(replies: string) {
  const root = tmux.tempDir("coil-checkpoints-tui-");
  const dir = join(root, "project");
  mkdirSync(dir);
  writeFileSync(join(dir, "a.txt"), "alpha\n");
  writeFileSync(
    join(root, "preset.yaml"),
    `extends: default\nplugins:\n  - provider-scripted:\n      recordTo: requests.jsonl\n      replies:\n${replies.replace(/^/gm, "        ")}\n`,
  );
  const pane = tmux.start({
    dir: root,
    cwd: dir,
    cols: 100,
    rows: 40,
    env: { COIL_HOME: join(root, "home") },
    command: `${process.execPath} ${BIN} --plugin ui-tui --provider scripted --preset ../preset.yaml`,
  });
  return { root, dir, pane };
}

const READY = "Enter to send";

/** Two presses, as a person makes them (a terminal may deliver two quick ones as one chunk, which counts too). */
async function escEsc(t: Tmux) {
  t.keys("Escape");
  await new Promise((r) => setTimeout(r, 150));
  t.keys("Escape");
}

describe.skipIf(!hasTmux)("checkpoints: Esc Esc in the TUI", () => {
  it("opens the picker with a diff preview; confirming restores the files and the conversation, the prompt back in the editor", async () => {
    const {
      root,
      dir,
      pane: t,
    } = setup(
      `- toolCalls: [{ name: bash, arguments: { command: "echo changed > a.txt && echo new > n.txt" } }]\n- text: first done\n- text: fresh reply`,
    );
    await t.waitFor(READY);
    t.type("change the files");
    t.keys("Enter");
    await t.waitFor("first done");
    await t.waitFor(READY);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("changed\n");
    await escEsc(t);
    await t.waitFor("Rewind to just before which prompt?");
    await t.waitFor('1. "change the files"');
    t.keys("Enter");
    await t.waitFor("restore what?");
    t.keys("Enter");
    const preview = await t.waitFor("Rewind to before prompt 1 (files and conversation)?");
    expect(preview).toMatch(/^-changed$/m);
    expect(preview).toMatch(/^\+alpha$/m);
    // the preview's diff is coloured with the theme's diff roles (dark: 203 removed, 114 added)
    const colors = t.colors();
    expect(colors).toMatch(/38;5;203m-changed/);
    expect(colors).toMatch(/38;5;114m\+alpha/);
    expect(preview).toContain("n.txt");
    t.keys("Enter"); // Yes
    await t.waitFor("Conversation: back to just before prompt 1");
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("alpha\n");
    expect(existsSync(join(dir, "n.txt"))).toBe(false);
    // the rewound prompt is back in the editor, to edit and send again
    await t.waitFor((screen) => editorText(screen) === "change the files");
    t.keys("C-c");
    await t.waitFor((screen) => editorText(screen) === "");
    t.type("again");
    t.keys("Enter");
    await t.waitFor("fresh reply");
    const last = JSON.parse(readFileSync(join(root, "requests.jsonl"), "utf8").trim().split("\n").at(-1)!);
    expect(JSON.stringify(last.messages)).not.toContain("change the files");
    expect(last.messages).toHaveLength(1);
  });

  it("asks before overwriting a file the user changed after the agent; No leaves everything", async () => {
    const { dir, pane: t } = setup(
      `- toolCalls: [{ name: write, arguments: { path: a.txt, content: "by agent\\n" } }]\n- text: first done`,
    );
    await t.waitFor(READY);
    t.type("write it");
    t.keys("Enter");
    await t.waitFor("first done");
    await t.waitFor(READY);
    writeFileSync(join(dir, "a.txt"), "by user\n");
    await escEsc(t);
    await t.waitFor("Rewind to just before which prompt?");
    t.keys("Enter");
    await t.waitFor("restore what?");
    t.keys("Down");
    t.keys("Enter"); // Files only
    const ask = await t.waitFor("You changed this file after the agent did");
    expect(ask).toContain("a.txt");
    t.keys("Down");
    t.keys("Enter"); // No
    await t.waitFor("Rewind cancelled: nothing was changed.");
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("by user\n");
  });
});
