/**
 * Issue 32, `/login github-copilot` in the TUI (inside tmux, its own socket): the device code appears as a
 * notice, the login completes against the local GitHub/Copilot server, and the next prompt runs on the plan.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { startMockCopilot, type MockCopilot } from "../../support/mock-github-copilot.js";
import { chat, startMockOpenAI, type MockOpenAI } from "../../support/mock-openai.js";
import { editorText, hasTmux, Tmux } from "../../support/tmux.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
const dir = mkdtempSync(join(tmpdir(), "coil-subs-tui-"));
let openai: MockOpenAI;
let gh: MockCopilot;
let pane: Tmux | undefined;

beforeAll(async () => {
  openai = await startMockOpenAI();
  gh = await startMockCopilot({ upstream: openai.url });
});
afterAll(async () => {
  pane?.kill();
  await gh.close();
  await openai.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!hasTmux)("/login github-copilot in the TUI", () => {
  it("shows the device code, stores the login and the next prompt runs on the plan", async () => {
    const home = join(dir, "home");
    mkdirSync(home);
    writeFileSync(
      join(dir, "preset.yaml"),
      [
        "plugins:",
        "  - provider-openai",
        "  - models",
        "  - ui-tui",
        `  - provider-github-copilot: { githubUrl: "${gh.url}", githubApiUrl: "${gh.url}", pollUnitMs: 20 }`,
        "",
      ].join("\n"),
    );
    gh.polls = ["authorization_pending", "slow_down"];
    pane = new Tmux({
      dir,
      cwd: dir,
      cols: 120,
      rows: 40,
      env: { COIL_HOME: home, PI_CODING_AGENT_DIR: join(dir, "no-pi"), OPENAI_API_KEY: "", OPENAI_BASE_URL: "" },
      command: `${process.execPath} ${BIN} --preset ./preset.yaml --model github-copilot/gpt-4.1`,
    }).start();
    await pane.waitFor("Enter to send");
    pane.type("/login github-copilot");
    await pane.waitFor((s) => editorText(s) === "/login github-copilot");
    pane.keys("Enter");
    const code = await pane.waitFor("enter the code WDJB-MJHT");
    expect(code).toContain("login/device");
    const done = await pane.waitFor(/Logged in to GitHub Copilot \(github\.com\)/);
    expect(done).not.toContain(gh.githubToken);
    const stored = JSON.parse(readFileSync(join(home, "auth.json"), "utf8"))["github-copilot"];
    expect(stored).toMatchObject({ type: "oauth", refresh: gh.githubToken, access: gh.validCopilotToken });
    expect(statSync(join(home, "auth.json")).mode & 0o777).toBe(0o600);

    openai.push(chat({ text: "hello from the Copilot plan" }));
    pane.type("hi");
    await pane.waitFor((s) => editorText(s) === "hi");
    pane.keys("Enter");
    await pane.waitFor("hello from the Copilot plan");
    const chats = gh.calls.filter((c) => c.path === "/chat/completions");
    expect(chats.map((c) => c.status)).toEqual([200]);
    expect(chats[0]!.headers["x-initiator"]).toBe("user");
  });
});
