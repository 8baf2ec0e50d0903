/** subagents in the TUI, in a real terminal (tmux): a running child is a block with its description, current state, tokens and tool calls. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, hasTmux, useTmux } from "../../support/tmux.js";

const tmux = useTmux();
describe.skipIf(!hasTmux)("subagents in the TUI", () => {
  it("shows a running child as a task block with description, status, tokens and its tool calls, then its answer", async () => {
    const dir = tmux.tempDir("coil-subagents-tui-");
    writeFileSync(
      join(dir, "preset.yaml"),
      `extends: default
plugins:
  - provider-scripted:
      chunkSize: 8
      replies:
        - toolCalls: [{ id: t1, name: task, arguments: { description: "survey the files", prompt: "CHILD: what is here?", agent: explore } }]
        - toolCalls: [{ name: ls, arguments: {} }]
          usage: { input: 1500, output: 20 }
        - text: "The child found preset.yaml only."
          delayMs: 2500
        - text: "Main agent: the survey is done."
`,
    );
    const pane = tmux.start({
      dir,
      cwd: dir,
      cols: 100,
      rows: 30,
      env: { COIL_HOME: join(dir, "home"), HOME: dir },
      command: `${process.execPath} ${BIN} --provider scripted --preset ./preset.yaml`,
    });
    await pane.waitFor("Enter to send");
    pane.type("survey please");
    pane.keys("Enter");
    const running = await pane.waitFor((s) => s.includes("explore: survey the files · thinking · 1,520 tokens"));
    expect(running).toContain("task explore: survey the files");
    expect(running).toContain("✓ ls");
    const done = await pane.waitFor("Main agent: the survey is done.");
    expect(done).toContain("The child found preset.yaml only.");
    expect(done).toMatch(/\[sub-agent explore · session \S+/);
  }, 30_000);
});
