/**
 * Issue 32, GitHub Copilot through the built CLI against local servers: `coil login github-copilot`
 * (device flow with authorization_pending and slow_down, expired_token), the Copilot token exchange,
 * the plan's models listed from /models, a tool loop with the required headers checked, refresh before
 * expiry, 401 → refresh → retry, a revoked grant, and an enterprise host.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startMockCopilot, type MockCopilot } from "../../support/mock-github-copilot.js";
import { chat, startMockOpenAI, type MockOpenAI } from "../../support/mock-openai.js";
import { CALC_TOOL, useCliProjects } from "../../support/provider-mocks.js";

let openai: MockOpenAI;
let gh: MockCopilot;
const cli = useCliProjects("subs-copilot", async () => {
  openai = await startMockOpenAI();
  gh = await startMockCopilot({ upstream: openai.url });
  return [openai, gh];
});

function project(): { dir: string; home: string } {
  const dir = cli.project({
    "calc.ts": CALC_TOOL,
    "copilot-preset.yaml": [
      "plugins:",
      "  - provider-openai",
      "  - models",
      "  - ui-print",
      `  - provider-github-copilot: { githubUrl: "${gh.url}", githubApiUrl: "${gh.url}", pollUnitMs: 20 }`,
      "",
    ].join("\n"),
  });
  return { dir, home: join(dir, ".home") };
}

const coil = (cwd: string, args: string[]) =>
  cli.coil(cwd, ["--preset", "./copilot-preset.yaml", ...args], { PI_CODING_AGENT_DIR: join(cwd, "no-pi") });

const auth = (home: string) => JSON.parse(readFileSync(join(home, "auth.json"), "utf8"));

async function login(dir: string, args: string[] = []) {
  gh.calls.length = 0;
  return coil(dir, ["login", "github-copilot", ...args]);
}

describe("provider-github-copilot", () => {
  it("logs in with the device flow (pending, slow_down), exchanges the token and lists the plan's models", async () => {
    const { dir, home } = project();
    gh.polls = ["authorization_pending", "slow_down", "authorization_pending"];
    const r = await login(dir);
    expect(r.stderr).toContain("enter the code WDJB-MJHT");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Logged in to GitHub Copilot (github.com)");
    const polls = gh.calls.filter((c) => c.path === "/login/oauth/access_token");
    expect(polls).toHaveLength(4);
    // interval 1 (×20 ms) at first; after slow_down the server's new interval (6) is used
    const gaps = polls.slice(1).map((p, i) => p.at - polls[i]!.at);
    expect(gaps[0]).toBeLessThan(100);
    expect(gaps[1]).toBeGreaterThanOrEqual(115);
    expect(gaps[2]).toBeGreaterThanOrEqual(115);
    const stored = auth(home)["github-copilot"];
    expect(stored).toMatchObject({ type: "oauth", refresh: gh.githubToken, access: gh.nextCopilotToken });
    expect(stored.expires).toBeGreaterThan(Date.now());
    expect(statSync(join(home, "auth.json")).mode & 0o777).toBe(0o600);
    expect(r.stdout + r.stderr).not.toContain(gh.githubToken);
    expect(r.stdout + r.stderr).not.toContain(gh.nextCopilotToken);

    const models = await coil(dir, ["models", "github-copilot"]);
    expect(models.stdout).toContain("github-copilot/gpt-4.1");
    expect(models.stdout).toContain("github-copilot/claude-sonnet-4.5");
    expect(models.stdout).not.toContain("github-copilot/hidden");
    const list = await coil(dir, ["auth", "list"]);
    expect(list.stdout).toMatch(/github-copilot: logged in \(github\.com\), access token valid until/);
  });

  it("runs a tool loop on the plan with Copilot's headers, refreshing an expired token first", async () => {
    const { dir, home } = project();
    expect((await login(dir)).code).toBe(0);
    const entry = auth(home)["github-copilot"];
    writeFileSync(
      join(home, "auth.json"),
      JSON.stringify({ "github-copilot": { ...entry, expires: Date.now() - 1000 } }),
    );
    gh.nextCopilotToken = "tid=fedcba9876543210;exp=1999999999;sku=mock;8kp=1:bbbb1111";
    gh.calls.length = 0;
    openai.requests.length = 0;
    openai.push(
      chat({ text: "Computing.", tools: [{ id: "call_1", name: "multiply", args: { a: 6, b: 7 } }] }),
      (body) => {
        expect(body.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "call_1", content: "42" });
        return chat({ text: "6 × 7 = 42" });
      },
    );
    const r = await coil(dir, ["--plugin", "./calc.ts", "--model", "github-copilot/gpt-4.1", "-p", "compute 6*7"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("6 × 7 = 42");
    expect(gh.count("/copilot_internal/v2/token")).toBe(1); // refreshed once, before the first request
    const chats = gh.calls.filter((c) => c.path === "/chat/completions");
    expect(chats.map((c) => c.status)).toEqual([200, 200]);
    expect(chats.map((c) => c.headers["x-initiator"])).toEqual(["user", "agent"]);
    expect(chats[0]!.headers["copilot-integration-id"]).toBe("vscode-chat");
    expect(chats[0]!.headers.authorization).toBe(`Bearer ${gh.nextCopilotToken}`);
    expect(openai.requests[0]!.body.model).toBe("gpt-4.1");
    expect(auth(home)["github-copilot"].access).toBe(gh.nextCopilotToken);
  });

  it("a 401 refreshes the Copilot token and sends again; a revoked grant stops with what to do", async () => {
    const { dir, home } = project();
    expect((await login(dir)).code).toBe(0);
    gh.nextCopilotToken = "tid=aaaa9876543210ff;exp=1999999999;sku=mock;8kp=1:cccc2222";
    gh.validCopilotToken = "tid=server-side-rotated-0000;exp=1"; // the stored token no longer works
    gh.calls.length = 0;
    openai.push(chat({ text: "after refresh" }));
    const r = await coil(dir, ["--model", "github-copilot/gpt-4.1", "-p", "hi"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("after refresh");
    expect(gh.calls.filter((c) => c.path === "/chat/completions").map((c) => c.status)).toEqual([401, 200]);
    expect(gh.count("/copilot_internal/v2/token")).toBe(1);
    expect(auth(home)["github-copilot"].access).toBe(gh.nextCopilotToken);

    gh.validCopilotToken = "tid=gone";
    gh.revoked = true;
    gh.calls.length = 0;
    const bad = await coil(dir, ["--model", "github-copilot/gpt-4.1", "-p", "hi"]);
    gh.revoked = false;
    expect(bad.code).not.toBe(0);
    expect(bad.stdout + bad.stderr).toContain("GitHub no longer accepts the login");
    expect(bad.stdout + bad.stderr).toContain("coil login github-copilot");
    expect(gh.count("/copilot_internal/v2/token")).toBe(1); // never retried
    expect(bad.stdout + bad.stderr).not.toContain(gh.githubToken);
  });

  it("an expired device code fails the login clearly; an enterprise host is recorded and shown", async () => {
    const { dir, home } = project();
    gh.polls = ["authorization_pending", "expired_token"];
    const r = await login(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the device code expired before the login was approved");
    expect(r.stderr).toContain("coil login github-copilot");
    expect(existsSync(join(home, "auth.json"))).toBe(false);

    gh.polls = [];
    // the enterprise's Copilot API is where its token exchange says (endpoints.api), not the public host
    gh.apiPrefix = "/ghe-copilot-api";
    try {
      const ent = await login(dir, ["https://ghe.example.com/"]);
      expect(ent.code, ent.stderr).toBe(0);
      expect(ent.stdout).toContain("(ghe.example.com)");
      const stored = auth(home)["github-copilot"];
      expect(stored.enterpriseUrl).toBe("ghe.example.com");
      expect(stored.baseUrl).toBe(`${gh.url}/ghe-copilot-api`);
      expect(gh.calls.filter((c) => c.path.endsWith("/models")).map((c) => [c.path, c.status])).toEqual([
        ["/ghe-copilot-api/models", 200],
      ]);
      const list = await coil(dir, ["auth", "list"]);
      expect(list.stdout).toMatch(/github-copilot: logged in \(ghe\.example\.com\), access token valid until/);
      gh.calls.length = 0;
      openai.push(chat({ text: "from the enterprise" }));
      const r = await coil(dir, ["--model", "github-copilot/gpt-4.1", "-p", "hi"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe("from the enterprise");
      expect(gh.calls.map((c) => [c.path, c.status])).toEqual([["/ghe-copilot-api/chat/completions", 200]]);
    } finally {
      gh.apiPrefix = "";
    }
  });
});
