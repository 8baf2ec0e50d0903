/**
 * Issue 32, ChatGPT plans (provider `openai-codex`) through the built CLI against a local server that speaks
 * OpenAI's login (authorization code + PKCE) and the Codex backend: `coil login openai-codex` through a
 * browser (a script in $BROWSER that loads the page and follows the redirect to coil's callback server) and
 * through the paste fallback (the callback port taken), state checked; a tool loop on the plan with the
 * backend's headers and body rules; refresh before expiry with the rotated refresh token stored; 401 →
 * refresh → one retry; the plan's usage limit, a model the plan lacks and a revoked login, each said clearly
 * and never retried.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN } from "../../support/ecosystem.js";
import { CODEX_CLIENT_ID, startMockCodex, type MockCodex } from "../../support/mock-openai-codex.js";
import { responses, startMockOpenAI, type MockOpenAI } from "../../support/mock-openai.js";
import { CALC_TOOL, useCliProjects } from "../../support/provider-mocks.js";

let openai: MockOpenAI;
let codex: MockCodex;
let port: number;

/** A free port for the callback server (the mock registers its redirect_uri with it, as OpenAI does 1455). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const p = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return p;
}

const cli = useCliProjects("subs-codex", async () => {
  openai = await startMockOpenAI();
  port = await freePort();
  codex = await startMockCodex({ upstream: openai.url, redirectUri: `http://localhost:${port}/auth/callback` });
  return [openai, codex];
});

/** The browser: loads the login page and follows its redirect to coil's callback (what a logged-in user's browser does). */
const BROWSER = (log: string) => `#!${process.execPath}
const { appendFileSync } = require("node:fs");
(async () => {
  const first = await fetch(process.argv[2], { redirect: "manual" });
  const location = first.headers.get("location");
  if (!location) return appendFileSync(${JSON.stringify(log)}, "authorize " + first.status + " " + (await first.text()) + "\\n");
  const back = new URL(location);
  if (back.hostname === "localhost") back.hostname = "127.0.0.1";
  const page = await fetch(back);
  appendFileSync(${JSON.stringify(log)}, "callback " + page.status + " " + (await page.text()) + "\\n");
})();
`;

function project(): { dir: string; home: string; browser: string; browserLog: string } {
  const dir = cli.project({ "calc.ts": CALC_TOOL });
  const home = join(dir, ".home");
  const browserLog = join(dir, "browser.log");
  const browser = join(dir, "browser.cjs");
  writeFileSync(browser, BROWSER(browserLog));
  chmodSync(browser, 0o755);
  writeFileSync(
    join(dir, "codex-preset.yaml"),
    [
      "plugins:",
      "  - provider-openai",
      "  - models",
      "  - ui-print",
      `  - provider-openai-codex: { authUrl: "${codex.url}", baseUrl: "${codex.url}/backend-api/codex", callbackPort: ${port}, loginTimeoutSec: 20 }`,
      "",
    ].join("\n"),
  );
  return { dir, home, browser, browserLog };
}

function start(cwd: string, args: string[], env: Record<string, string> = {}, preset = true) {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(OPENAI_|ANTHROPIC_|BROWSER$|DISPLAY$|WAYLAND_DISPLAY$)/.test(k)),
  );
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    [BIN, ...(preset ? ["--preset", "./codex-preset.yaml"] : []), ...args],
    {
      cwd,
      env: { ...base, COIL_HOME: join(cwd, ".home"), PI_CODING_AGENT_DIR: join(cwd, "no-pi"), ...env },
      stdio: "pipe",
    },
  );
  let stdout = "";
  let stderr = "";
  const waiters: { re: RegExp; resolve(m: RegExpMatchArray): void }[] = [];
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
    for (const w of [...waiters]) {
      const m = stderr.match(w.re);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on("close", (code) => resolve({ code, stdout, stderr })),
  );
  return {
    child,
    done,
    /** Resolves when stderr matches (or rejects when the process ends first). */
    stderrMatch: (re: RegExp) =>
      Promise.race([
        new Promise<RegExpMatchArray>((resolve) => {
          const m = stderr.match(re);
          if (m) resolve(m);
          else waiters.push({ re, resolve });
        }),
        done.then((r) => {
          throw new Error(`coil ended (${r.code}) before stderr matched ${re}:\n${r.stderr}`);
        }),
      ]),
  };
}

function coil(cwd: string, args: string[], env: Record<string, string> = {}, preset = true) {
  const run = start(cwd, args, env, preset);
  run.child.stdin.end();
  return run.done;
}

const auth = (home: string) => JSON.parse(readFileSync(join(home, "auth.json"), "utf8"));
const tokenCalls = (grant: string) =>
  codex.calls.filter((c) => c.path === "/oauth/token" && c.form?.grant_type === grant);
const backend = () => codex.calls.filter((c) => c.path === "/backend-api/codex/responses");

async function browserLogin(p: ReturnType<typeof project>) {
  codex.calls.length = 0;
  const r = await coil(p.dir, ["login", "openai-codex"], { BROWSER: p.browser });
  expect(r.code, r.stderr).toBe(0);
  return r;
}

describe("the local OpenAI login and Codex server rejects what the real ones reject", () => {
  it("a wrong client id, redirect, verifier or state; a request without the headers or with store", async () => {
    const VERIFIER = "verifier-of-this-test-0123456789-abcdefghijklmnop";
    const authorize = (q: Record<string, string>) =>
      fetch(`${codex.url}/oauth/authorize?${new URLSearchParams(q)}`, { redirect: "manual" });
    const good = {
      response_type: "code",
      client_id: CODEX_CLIENT_ID,
      redirect_uri: codex.redirectUri,
      scope: "openid profile email offline_access",
      code_challenge: createHash("sha256").update(VERIFIER).digest("base64url"),
      code_challenge_method: "S256",
      state: "s1",
    };
    expect((await authorize({ ...good, client_id: "app_other" })).status).toBe(400);
    expect((await authorize({ ...good, redirect_uri: "http://localhost:9/auth/callback" })).status).toBe(400);
    expect((await authorize({ ...good, code_challenge_method: "plain" })).status).toBe(400);
    const ok = await authorize(good);
    expect(ok.status).toBe(302);
    const code = new URL(ok.headers.get("location")!).searchParams.get("code")!;
    const token = (form: Record<string, string>) =>
      fetch(`${codex.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(form),
      });
    const exchange = {
      grant_type: "authorization_code",
      client_id: CODEX_CLIENT_ID,
      code,
      redirect_uri: codex.redirectUri,
    };
    const wrong = await token({ ...exchange, code_verifier: "not-the-verifier-not-the-verifier-not-the-ver" });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain("code_verifier does not match");
    const again = await authorize(good);
    const code2 = new URL(again.headers.get("location")!).searchParams.get("code")!;
    const right = await token({
      ...exchange,
      code: code2,
      code_verifier: VERIFIER,
    });
    expect(right.status).toBe(200);
    const tokens = (await right.json()) as { access_token: string };
    const send = (headers: Record<string, string>, body: Record<string, unknown>) =>
      fetch(`${codex.url}/backend-api/codex/responses`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${tokens.access_token}`, ...headers },
        body: JSON.stringify({ model: "gpt-5.4", stream: true, instructions: "x", input: [], ...body }),
      });
    const headers = {
      "chatgpt-account-id": codex.accountId,
      "openai-beta": "responses=experimental",
      originator: "test",
    };
    expect((await send({}, { store: false })).status).toBe(403);
    expect((await send({ ...headers, "openai-beta": "" }, { store: false })).status).toBe(400);
    expect(await (await send(headers, {})).text()).toContain("Store must be set to false");
    expect(await (await send(headers, { store: false, max_output_tokens: 100 })).text()).toContain(
      "Unsupported parameter",
    );
  });
});

describe("provider-openai-codex", () => {
  it("logs in through the browser (PKCE S256, state, the callback server) and shows the plan in auth list and doctor", async () => {
    const p = project();
    const r = await browserLogin(p);
    expect(r.stderr).toContain("Opened a browser to log in with your ChatGPT account at this address:");
    expect(r.stdout).toContain("Logged in to ChatGPT (Codex) (ChatGPT Plus)");
    expect(readFileSync(p.browserLog, "utf8")).toMatch(/^callback 200 .*You can close this tab/);
    const authorize = codex.calls.find((c) => c.path === "/oauth/authorize")!;
    expect(authorize.query).toMatchObject({
      client_id: CODEX_CLIENT_ID,
      redirect_uri: `http://localhost:${port}/auth/callback`,
      code_challenge_method: "S256",
    });
    const exchange = tokenCalls("authorization_code");
    expect(exchange.map((c) => c.status)).toEqual([200]);
    expect(exchange[0]!.form!.code_verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    const stored = auth(p.home)["openai-codex"];
    expect(stored).toMatchObject({
      type: "oauth",
      access: codex.access,
      refresh: codex.refresh,
      accountId: codex.accountId,
      planType: "plus",
    });
    expect(stored.expires).toBeGreaterThan(Date.now() + 50 * 60_000);
    expect(statSync(join(p.home, "auth.json")).mode & 0o777).toBe(0o600);
    expect(r.stdout + r.stderr).not.toContain(codex.access!);
    expect(r.stdout + r.stderr).not.toContain(codex.refresh!);

    const list = await coil(p.dir, ["auth", "list"]);
    expect(list.stdout).toMatch(/openai-codex: logged in \(ChatGPT Plus\), access token valid until .* \(in 60 min/);
    const doctor = await coil(p.dir, ["doctor"], {}, false); // the default preset: it has provider-openai-codex
    expect(doctor.stdout).toMatch(/openai-codex: logged in \(ChatGPT Plus\), access token valid until/);
    expect(doctor.stdout + list.stdout).not.toContain(codex.access!);
    const models = await coil(p.dir, ["models", "openai-codex"]);
    expect(models.stdout).toMatch(/openai-codex\/gpt-5\.4\s+yes/);
  });

  it("without a reachable callback (port taken) the pasted address logs in; another login's state is refused", async () => {
    const p = project();
    const blocker: Server = createServer((_q, s) => s.end("someone else"));
    await new Promise<void>((r) => blocker.listen(port, "127.0.0.1", () => r()));
    try {
      const paste = async (change?: (u: URL) => void) => {
        const run = start(p.dir, ["login", "openai-codex"]);
        const [, url] = await run.stderrMatch(/(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+)/);
        await run.stderrMatch(/Paste the address your browser ended on/);
        const page = await fetch(url!, { redirect: "manual" }); // the user's browser, on another machine
        const back = new URL(page.headers.get("location")!);
        change?.(back);
        run.child.stdin.write(`${back}\n`);
        return run.done;
      };
      const bad = await paste((u) => u.searchParams.set("state", "someone-elses-state"));
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain("127.0.0.1:" + port + " is taken");
      expect(bad.stderr).toContain("another login's state");
      expect(bad.stderr).toContain("coil login openai-codex");
      expect(existsSync(join(p.home, "auth.json"))).toBe(false);

      codex.calls.length = 0;
      const good = await paste();
      expect(good.code, good.stderr).toBe(0);
      expect(good.stdout).toContain("Logged in to ChatGPT (Codex)");
      expect(tokenCalls("authorization_code").map((c) => c.status)).toEqual([200]);
      expect(auth(p.home)["openai-codex"].access).toBe(codex.access);
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });

  it("a login denied in the browser fails with what to do", async () => {
    const p = project();
    codex.deny = true;
    const r = await coil(p.dir, ["login", "openai-codex"], { BROWSER: p.browser });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the login was cancelled or denied in the browser");
    expect(existsSync(join(p.home, "auth.json"))).toBe(false);
  });

  it("runs a tool loop on the plan: the backend's headers, store false, instructions, no output limit", async () => {
    const p = project();
    await browserLogin(p);
    codex.calls.length = 0;
    openai.push(
      responses([{ text: "Computing." }, { call: { name: "multiply", args: { a: 6, b: 7 }, callId: "call_1" } }]),
      (body) => {
        expect(body.input.at(-1)).toMatchObject({ type: "function_call_output", call_id: "call_1", output: "42" });
        return responses([{ text: "6 × 7 = 42" }]);
      },
    );
    const r = await coil(p.dir, ["--plugin", "./calc.ts", "--model", "openai-codex/gpt-5.4", "-p", "compute 6*7"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("6 × 7 = 42");
    const calls = backend();
    expect(calls.map((c) => c.status)).toEqual([200, 200]);
    expect(calls[0]!.headers).toMatchObject({
      authorization: `Bearer ${codex.access}`,
      "chatgpt-account-id": codex.accountId,
      "openai-beta": "responses=experimental",
      originator: "coil",
    });
    expect(calls[0]!.headers.session_id).toBe(calls[1]!.headers.session_id);
    const body = calls[0]!.body!;
    expect(body).toMatchObject({
      model: "gpt-5.4",
      store: false,
      stream: true,
      include: ["reasoning.encrypted_content"],
    });
    expect(body.instructions).toMatch(/\S/);
    expect(body).not.toHaveProperty("max_output_tokens");
    expect(body.tools.map((t: { name: string }) => t.name)).toContain("multiply");
    expect(tokenCalls("refresh_token")).toHaveLength(0);
  });

  it("refreshes before expiry and stores the rotated refresh token; a 401 refreshes once and sends again", async () => {
    const p = project();
    await browserLogin(p);
    const first = auth(p.home)["openai-codex"];
    writeFileSync(
      join(p.home, "auth.json"),
      JSON.stringify({ "openai-codex": { ...first, expires: Date.now() + 10_000 } }),
    );
    codex.calls.length = 0;
    openai.push(responses([{ text: "refreshed first" }]));
    const r = await coil(p.dir, ["--model", "openai-codex/gpt-5.4", "-p", "hi"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("refreshed first");
    expect(tokenCalls("refresh_token").map((c) => [c.status, c.form!.refresh_token])).toEqual([[200, first.refresh]]);
    const second = auth(p.home)["openai-codex"];
    expect(second.refresh).toBe(codex.refresh);
    expect(second.refresh).not.toBe(first.refresh);
    expect(second.access).toBe(codex.access);
    expect(statSync(join(p.home, "auth.json")).mode & 0o777).toBe(0o600);

    codex.expireAccess(); // the server stops taking the stored token before its expiry
    codex.calls.length = 0;
    openai.push(responses([{ text: "after the 401" }]));
    const again = await coil(p.dir, ["--model", "openai-codex/gpt-5.4", "-p", "hi"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe("after the 401");
    expect(backend().map((c) => c.status)).toEqual([401, 200]);
    expect(tokenCalls("refresh_token").map((c) => [c.status, c.form!.refresh_token])).toEqual([[200, second.refresh]]);
    expect(auth(p.home)["openai-codex"].refresh).toBe(codex.refresh);

    // the old refresh token was rotated away: using it again is refused, and the run says to log in
    writeFileSync(
      join(p.home, "auth.json"),
      JSON.stringify({ "openai-codex": { ...second, refresh: first.refresh, expires: Date.now() - 1000 } }),
    );
    codex.calls.length = 0;
    const reused = await coil(p.dir, ["--model", "openai-codex/gpt-5.4", "-p", "hi"]);
    expect(reused.code).not.toBe(0);
    expect(reused.stdout + reused.stderr).toContain("its refresh token was already used");
    expect(reused.stdout + reused.stderr).toContain("coil login openai-codex");
    expect(tokenCalls("refresh_token")).toHaveLength(1);
    expect(backend()).toHaveLength(0);
  });

  it("the plan's usage limit says when it resets, a model the plan lacks says so, a revoked login says to log in; none retried", async () => {
    const p = project();
    await browserLogin(p);
    codex.calls.length = 0;
    codex.usageLimit = 90 * 60;
    const limited = await coil(p.dir, ["--model", "openai-codex/gpt-5.4", "-p", "hi"]);
    expect(limited.code).not.toBe(0);
    const said = limited.stdout + limited.stderr;
    expect(said).toContain("usage limit of your ChatGPT Plus plan");
    expect(said).toMatch(/resets at \d{4}-\d\d-\d\d \d\d:\d\d UTC \(in 90 min\)/);
    expect(backend().map((c) => c.status)).toEqual([429]);

    codex.calls.length = 0;
    const missing = await coil(p.dir, ["--model", "openai-codex/gpt-5.5", "-p", "hi"]);
    expect(missing.code).not.toBe(0);
    expect(missing.stdout + missing.stderr).toContain("your ChatGPT plan does not offer 'gpt-5.5'");
    expect(backend().map((c) => c.status)).toEqual([400]);

    const entry = auth(p.home)["openai-codex"];
    writeFileSync(join(p.home, "auth.json"), JSON.stringify({ "openai-codex": { ...entry, expires: Date.now() - 1 } }));
    codex.revoked = true;
    codex.calls.length = 0;
    try {
      const revoked = await coil(p.dir, ["--model", "openai-codex/gpt-5.4", "-p", "hi"]);
      expect(revoked.code).not.toBe(0);
      const text = revoked.stdout + revoked.stderr;
      expect(text).toContain("ChatGPT no longer accepts the openai-codex login: the login was revoked");
      expect(text).toContain("run `coil login openai-codex`");
      expect(tokenCalls("refresh_token")).toHaveLength(1);
      expect(backend()).toHaveLength(0);
      expect(text).not.toContain(entry.refresh);
    } finally {
      codex.revoked = false;
    }
  });
});
