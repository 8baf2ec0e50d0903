/**
 * Pi extensions (#34): `user_bash`, the user's `!cmd` / `!!cmd` in the TUI (tmux), against the validating
 * Anthropic mock. A handler that returns `{ operations }` runs the command itself (output streamed to the
 * screen, kept in the context for `!`); `{ result }` is the output, nothing runs; `createLocalBashOperations`
 * wraps coil's local runner; `undefined` leaves the command to coil (the bash tool). Every answer runs only
 * once the gates let the bash call through (a deny rule holds); a handler that throws runs nothing. The extension is written here to Pi's documented API.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { text } from "../../support/mock-anthropic.js";
import { mockPane, useMockAnthropic } from "../../support/provider-mocks.js";
import { useTmux } from "../../support/tmux.js";

const KEY = "sk-ant-pi-shell-test-0123456789";
const MODEL = ["--model", "anthropic/claude-sonnet-4-5"];
const mock = useMockAnthropic(KEY);
const tmux = useTmux();

const SHELL = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { createLocalBashOperations } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
  pi.on("user_bash", async (event) => {
    if (event.command.startsWith("remote ")) {
      return {
        operations: {
          async exec(command, cwd, options) {
            options.onData(Buffer.from("REMOTE-HOST ran [" + command + "] in " + (cwd === event.cwd ? "the cwd" : cwd) + "\\n"));
            await new Promise((done) => setTimeout(done, 50));
            options.onData(Buffer.from("REMOTE-DONE excluded=" + event.excludeFromContext + "\\n"));
            return { exitCode: 3 };
          },
        },
      };
    }
    if (event.command === "canned") {
      return { result: { output: "CANNED-OUTPUT", exitCode: 0, cancelled: false, truncated: false } };
    }
    if (event.command.startsWith("wrapped ")) {
      const local = createLocalBashOperations();
      return {
        operations: {
          exec: (command, cwd, options) => local.exec("echo WRAPPED-BY-EXT; " + command.slice(8), cwd, options),
        },
      };
    }
    if (event.command === "broken") throw new Error("no route to the remote host");
    return undefined;
  });
}
`;

describe("Pi extensions: user_bash", () => {
  it("TUI (tmux): operations, result, createLocalBashOperations, and undefined (coil's own bash call); ! output reaches the model, !! does not; a throw runs nothing", async () => {
    const base = tempDir("coil-pi-shell-");
    const project = join(base, "project");
    writeFiles(project, { ".git/HEAD": "ref: refs/heads/main\n" });
    writeFiles(join(base, "home"), {
      ".pi/agent/extensions/shell.ts": SHELL,
      // a deny rule still holds for a command the extension would run: the gates judge it first
      ".claude/settings.json": JSON.stringify({ permissions: { deny: ["Bash(remote rm:*)"] } }),
    });
    const s = sandboxEnv(base, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url });
    const t = mockPane(tmux, { base, project, env: s }, MODEL.join(" "), { cols: 110, rows: 40 });
    await t.waitFor((sc) => sc.includes("claude-sonnet-4-5"));

    t.type("!remote uptime");
    t.keys("Enter");
    const remote = await t.waitFor((sc) => sc.includes("REMOTE-DONE") && sc.includes("run by Pi extension shell"));
    expect(remote).toContain("REMOTE-HOST ran [remote uptime] in the cwd");
    expect(remote).toContain("REMOTE-DONE excluded=false");
    expect(remote).toContain("exit code 3");

    t.type("!remote rm -rf /srv");
    t.keys("Enter");
    const denied = await t.waitFor((sc) => sc.includes("Blocked"));
    expect(denied).not.toContain("REMOTE-HOST ran [remote rm");

    t.type("!!canned");
    t.keys("Enter");
    await t.waitFor("CANNED-OUTPUT");

    t.type("!wrapped touch made-by-wrapped");
    t.keys("Enter");
    await t.waitFor("WRAPPED-BY-EXT");
    expect(existsSync(join(project, "made-by-wrapped"))).toBe(true);

    t.type("!broken");
    t.keys("Enter");
    const broken = await t.waitFor("no route to the remote host");
    expect(broken.replace(/\s+/g, " ")).toContain("the command was not run");

    t.type("!echo plain-$((40+2))");
    t.keys("Enter");
    await t.waitFor("plain-42");

    mock.requests.length = 0;
    mock.push(text("Noted."));
    t.type("what did the commands say?");
    t.keys("Enter");
    await t.waitFor("Noted.");
    const sent = JSON.stringify(mock.requests[0]!.body.messages);
    expect(sent).toContain("REMOTE-HOST ran [remote uptime]");
    expect(sent).toContain("WRAPPED-BY-EXT");
    expect(sent).toContain("plain-42");
    expect(sent).not.toContain("CANNED-OUTPUT"); // !! is shown only
    expect(sent).not.toContain("no route to the remote host"); // a refusal is not added
    expect(sent).not.toContain("remote rm -rf"); // nor a blocked command
    expect(mock.rejected()).toEqual([]);
  });
});
