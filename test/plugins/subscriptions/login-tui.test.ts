/**
 * Issue 32, `/login github-copilot` and `/login openai-codex` in the TUI (inside tmux, its own socket): the
 * device code (Copilot) or the login address (ChatGPT, with the browser in $BROWSER reaching coil's callback
 * server while the paste question waits) appears, the login completes against the local servers, and the
 * next prompt runs on the plan.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { startMockCopilot, type MockCopilot } from "../../support/mock-github-copilot.js";
import { startMockCodex, type MockCodex } from "../../support/mock-openai-codex.js";
import { chat, responses, startMockOpenAI, type MockOpenAI } from "../../support/mock-openai.js";
import { editorText, hasTmux, Tmux } from "../../support/tmux.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
const dir = mkdtempSync(join(tmpdir(), "coil-subs-tui-"));
let openai: MockOpenAI;
let gh: MockCopilot;
let codex: MockCodex;
let port: number;
let pane: Tmux | undefined;
let codexPane: Tmux | undefined;

beforeAll(async () => {
  openai = await startMockOpenAI();
  gh = await startMockCopilot({ upstream: openai.url });
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
  port = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
  codex = await startMockCodex({ upstream: openai.url, redirectUri: `http://localhost:${port}/auth/callback` });
});
afterAll(async () => {
  pane?.kill();
  codexPane?.kill();
  await codex.close();
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

describe.skipIf(!hasTmux)("/login openai-codex in the TUI", () => {
  it("prints the login address, the browser hands the code to the callback server, and the next prompt runs on the plan", async () => {
    const root = join(dir, "codex");
    const home = join(root, "home");
    mkdirSync(home, { recursive: true });
    const browser = join(root, "browser.cjs");
    writeFileSync(
      browser,
      `#!${process.execPath}
(async () => {
  const first = await fetch(process.argv[2], { redirect: "manual" });
  const back = new URL(first.headers.get("location"));
  back.hostname = "127.0.0.1";
  await fetch(back);
})();
`,
    );
    chmodSync(browser, 0o755);
    writeFileSync(
      join(root, "preset.yaml"),
      [
        "plugins:",
        "  - provider-openai",
        "  - models",
        "  - ui-tui",
        `  - provider-openai-codex: { authUrl: "${codex.url}", baseUrl: "${codex.url}/backend-api/codex", callbackPort: ${port} }`,
        "",
      ].join("\n"),
    );
    codexPane = new Tmux({
      dir: root,
      cwd: root,
      cols: 120,
      rows: 40,
      env: {
        COIL_HOME: home,
        PI_CODING_AGENT_DIR: join(root, "no-pi"),
        OPENAI_API_KEY: "",
        OPENAI_BASE_URL: "",
        DISPLAY: "",
        WAYLAND_DISPLAY: "",
        BROWSER: browser,
      },
      command: `${process.execPath} ${BIN} --preset ./preset.yaml --model openai-codex/gpt-5.4`,
    }).start();
    await codexPane.waitFor("Enter to send");
    codexPane.type("/login openai-codex");
    await codexPane.waitFor((s) => editorText(s) === "/login openai-codex");
    codexPane.keys("Enter");
    const done = await codexPane.waitFor(/Logged in to ChatGPT \(Codex\) \(ChatGPT Plus\)/);
    expect(done).toContain("to log in with your ChatGPT account");
    expect(done).toContain("/oauth/authorize?");
    expect(done).not.toContain(codex.access!);
    expect(codex.calls.filter((c) => c.path === "/oauth/authorize").map((c) => c.status)).toEqual([302]);
    const stored = JSON.parse(readFileSync(join(home, "auth.json"), "utf8"))["openai-codex"];
    expect(stored).toMatchObject({
      type: "oauth",
      access: codex.access,
      refresh: codex.refresh,
      accountId: codex.accountId,
    });
    expect(statSync(join(home, "auth.json")).mode & 0o777).toBe(0o600);

    openai.push(responses([{ text: "hello from the ChatGPT plan" }]));
    await codexPane.waitFor("Enter to send");
    codexPane.type("hi");
    await codexPane.waitFor((s) => editorText(s) === "hi");
    codexPane.keys("Enter");
    await codexPane.waitFor("hello from the ChatGPT plan");
    const calls = codex.calls.filter((c) => c.path === "/backend-api/codex/responses");
    expect(calls.map((c) => c.status)).toEqual([200]);
    expect(calls[0]!.body).toMatchObject({ model: "gpt-5.4", store: false });
  });
});
