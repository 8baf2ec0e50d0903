/**
 * `/reload` rebuilds coil in the same process (issue #29): in a real terminal (tmux) three reloads leave
 * one coil process, each draws the same session again, and the conversation goes on afterwards: the model
 * sees the whole history and one session file holds it. (Before, each reload spawned a new coil and the
 * old one waited for it: three reloads left four processes.)
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { editorText, hasTmux, useTmux } from "../../support/tmux.js";

const READY = "Enter to send";
const tmux = useTmux();

describe.skipIf(!hasTmux)("ui-tui in tmux: /reload in process", () => {
  it("three /reloads leave one coil process, each redraws the session, and the conversation goes on", async () => {
    const dir = tmux.tempDir("coil-reload-");
    // Every rebuild replays the script from its start: each reply is the same line.
    writeFileSync(
      join(dir, "preset.yaml"),
      "extends: default\nplugins:\n  - provider-scripted:\n      chunkSize: 4\n      recordTo: requests.jsonl\n" +
        '      replies:\n        - text: "noted"\n',
    );
    const t = tmux.start({
      dir,
      cwd: dir,
      cols: 100,
      rows: 30,
      env: { COIL_HOME: join(dir, "home") },
      command: tmux.coil("--plugin ui-tui --provider scripted --preset ./preset.yaml"),
    });
    const coilProcesses = () => t.processes().filter((p) => p.args.includes("coil.js"));
    await t.waitFor(READY);
    t.type("remember the word pelican");
    t.keys("Enter");
    await t.waitFor("noted");
    const [first] = coilProcesses();
    expect(first).toBeDefined();

    for (let reload = 1; reload <= 3; reload++) {
      t.type("/reload");
      await t.waitFor((s) => editorText(s) === "/reload");
      t.keys("Enter");
      await t.waitFor("Reloading plugins, skills and templates");
      await t.waitFor(
        (s) => s.includes(READY) && !s.includes("Reloading plugins") && s.includes("› remember the word pelican"),
        30_000,
      );
      expect(coilProcesses().map((p) => p.pid)).toEqual([first!.pid]);
    }

    t.type("and what was the word?");
    await t.waitFor((s) => editorText(s) === "and what was the word?");
    t.keys("Enter");
    await t.waitFor((s) => (s.match(/noted/g) ?? []).length === 2);
    const requests = readFileSync(join(dir, "requests.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { messages: { role: string; content: unknown }[] });
    const last = requests.at(-1)!;
    expect(last.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(last.messages[0]!.content).toBe("remember the word pelican");
    t.keys("C-d");
    await t.waitFor("[exited 0]");
    const sessions = readdirSync(join(dir, "home", "sessions"), { recursive: true }).filter((f) =>
      String(f).endsWith(".jsonl"),
    );
    expect(sessions).toHaveLength(1);
  }, 120_000);

  it("a path plugin edited meanwhile is loaded again: .js (Node's module cache) and .ts (jiti) alike", async () => {
    const dir = tmux.tempDir("coil-reload-");
    const plugin = (name: string, version: string) =>
      `export default { id: "${name}", setup(ctx) { ctx.commands.register({ name: "${name}", description: "says its version", run: () => "${name} says ${version}" }); } };\n`;
    writeFileSync(join(dir, "js-ver.js"), plugin("js-ver", "one"));
    writeFileSync(join(dir, "ts-ver.ts"), plugin("ts-ver", "one"));
    writeFileSync(
      join(dir, "preset.yaml"),
      'extends: default\nplugins:\n  - provider-scripted: { replies: [{ text: "ok" }] }\n  - ./js-ver.js\n  - ./ts-ver.ts\n',
    );
    const t = tmux.start({
      dir,
      cwd: dir,
      cols: 100,
      rows: 30,
      env: { COIL_HOME: join(dir, "home") },
      command: tmux.coil("--plugin ui-tui --provider scripted --preset ./preset.yaml"),
    });
    await t.waitFor(READY);
    const say = async (command: string, expected: string) => {
      t.type(command);
      await t.waitFor((s) => editorText(s) === command);
      t.keys("Enter");
      await t.waitFor(expected);
    };
    await say("/js-ver", "js-ver says one");
    await say("/ts-ver", "ts-ver says one");
    writeFileSync(join(dir, "js-ver.js"), plugin("js-ver", "two"));
    writeFileSync(join(dir, "ts-ver.ts"), plugin("ts-ver", "two"));
    t.type("/reload");
    await t.waitFor((s) => editorText(s) === "/reload");
    t.keys("Enter");
    // The rebuild redraws the transcript from the session, which holds no command output: the old
    // replies vanish once the new instance has drawn. (Waiting only for the editor could pass before the
    // reload began, and the next keys would go to the instance being torn down.)
    await t.waitFor(
      (s) => s.includes(READY) && !s.includes("Reloading plugins") && !s.includes("ts-ver says one"),
      30_000,
    );
    await say("/js-ver", "js-ver says two");
    await say("/ts-ver", "ts-ver says two");
  }, 120_000);
});
