/** mcp in the TUI (a real terminal through tmux): /mcp, a server tool, /reload and exit kill the servers, and no server stderr on screen. */
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { until } from "../../support/harness.js";
import { hasTmux, useTmux } from "../../support/tmux.js";

const FIXTURES = join(packageRoot(), "test", "fixtures", "mcp");
const tmux = useTmux();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\S+ \S+ Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8").replace(/\(.*\)/, "x"));
  } catch {
    return false;
  }
}

const READY = "Enter to send";

describe.skipIf(!hasTmux)("mcp in the TUI", () => {
  it("/mcp shows the server, its tool runs, /reload and quitting kill its process tree, and its stderr never reaches the screen", async () => {
    const dir = tmux.tempDir("coil-mcp-tui-");
    const markers = join(dir, "markers");
    mkdirSync(markers);
    mkdirSync(join(dir, "home"));
    writeFileSync(
      join(dir, "home", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          fx: { command: process.execPath, args: [join(FIXTURES, "server.mjs"), markers, "--grandchild"] },
        },
      }),
    );
    writeFileSync(
      join(dir, "preset.yaml"),
      `extends: default\nplugins:\n  - provider-scripted:\n      replies:\n        - toolCalls: [{ name: mcp__fx__sleep, arguments: { ms: 10 } }]\n        - text: "the sleep tool answered"\n`,
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
    t.type("/mcp");
    t.keys("Enter");
    const status = await t.waitFor(/fx {2}connected {2}stdio {2}6 tools, 0 prompts/);
    expect(status).not.toContain("fixture server: started");
    t.type("use the tool");
    t.keys("Enter");
    const done = await t.waitFor("the sleep tool answered");
    expect(done).toContain("slept 10");
    expect(done).not.toContain("fixture server: started");
    const first = readdirSync(markers)
      .filter((f) => f.startsWith("started-"))
      .map((f) => Number(f.slice(8)));
    const grandchild = Number(readFileSync(join(markers, "grandchild.pid"), "utf8"));
    expect(first).toHaveLength(1);
    expect(alive(first[0]!)).toBe(true);
    expect(alive(grandchild)).toBe(true);
    t.type("/reload");
    t.keys("Enter");
    // The reloaded process starts the server again; the old one and its child are gone.
    await until(() => readdirSync(markers).filter((f) => f.startsWith("started-")).length === 2, 15_000);
    await until(() => !alive(first[0]!) && !alive(grandchild), 5000);
    // The rebuilt instance has drawn once the /mcp listing (command output, not in the session) is gone:
    // the editor's hint alone was on screen before the reload began, and C-d could reach the old instance.
    await t.waitFor((s) => s.includes(READY) && !s.includes("Reloading plugins") && !/fx {2}connected/.test(s));
    const second = readdirSync(markers)
      .filter((f) => f.startsWith("started-"))
      .map((f) => Number(f.slice(8)))
      .find((p) => p !== first[0])!;
    const grandchild2 = Number(readFileSync(join(markers, "grandchild.pid"), "utf8"));
    t.keys("C-d");
    await t.waitFor("[exited 0]");
    await until(() => !alive(second) && !alive(grandchild2), 5000);
  }, 60_000);

  it("the slash completion lists the prompts of a server that connected after the editor opened", async () => {
    const dir = tmux.tempDir("coil-mcp-tui-");
    const markers = join(dir, "markers");
    mkdirSync(markers);
    mkdirSync(join(dir, "home"));
    // A server that takes a moment to start, so the editor is up before its prompts exist.
    const slow = join(dir, "slow.sh");
    writeFileSync(slow, `#!/bin/sh\nsleep 1\nexec ${process.execPath} ${join(FIXTURES, "faulty.mjs")} ${markers}\n`);
    chmodSync(slow, 0o755);
    writeFileSync(join(dir, "home", "mcp.json"), JSON.stringify({ mcpServers: { f: { command: slow } } }));
    writeFileSync(join(dir, "preset.yaml"), "extends: default\nplugins:\n  - provider-scripted:\n      replies: []\n");
    const t = tmux.start({
      dir,
      cwd: dir,
      cols: 100,
      rows: 30,
      env: { COIL_HOME: join(dir, "home") },
      command: tmux.coil("--plugin ui-tui --provider scripted --preset ./preset.yaml"),
    });
    await t.waitFor(READY);
    await until(() => readdirSync(markers).some((f) => f.startsWith("faulty-")), 10_000);
    // Ask for completions until the server has listed its prompt (it connects a moment after it starts).
    let screen = "";
    for (let tries = 0; !screen.includes("mcp__f__greet") && tries < 20; tries++) {
      t.type("/mcp__f");
      screen = await t.waitFor("mcp__f__greet", 500).catch(() => "");
      if (!screen) for (let i = 0; i < 7; i++) t.keys("BSpace");
    }
    expect(screen).toContain("Greets someone");
    t.keys("C-c");
  }, 40_000);
});
