/**
 * Issue 32, credentials: subscription logins in $COIL_HOME/auth.json (mode 0600, written atomically),
 * `coil auth list` and `coil doctor` say who is logged in and until when (never a token), `coil logout`,
 * Pi's auth.json read and never rewritten, and the token shapes redacted.
 */
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { redact, redactShapes, writeAuthEntry } from "../../../lib/provider-kit/config.js";
import { secretsInAuth } from "../../../plugins/redact-secrets/secrets.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
const temps: string[] = [];

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\``);
});
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

const GH = "gho_abcdefghijklmnopqrstuvwxyz0123456789";
const COPILOT = "tid=0123456789abcdef;exp=1999999999;sku=copilot_for_individuals;8kp=1:deadbeefcafebabe";
const JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEyMzQ1Njc4In0.c2lnbmF0dXJlLXZhbHVlLWhlcmU";

function home(): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), "coil-subs-cred-"));
  temps.push(dir);
  mkdirSync(join(dir, ".home"));
  mkdirSync(join(dir, "pi"));
  return { dir, env: { COIL_HOME: join(dir, ".home"), PI_CODING_AGENT_DIR: join(dir, "pi") } };
}

function coil(cwd: string, args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, ...env }, stdio: "pipe" });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.stdin.end();
    child.on("close", (code) => resolve({ code, out }));
  });
}

describe("subscription credentials", () => {
  it("auth list and doctor show logins and expiry, never a token; logout removes only coil's entry", async () => {
    const { dir, env } = home();
    const expires = Date.now() + 25 * 60_000;
    writeAuthEntry(env.COIL_HOME, "github-copilot", { type: "oauth", access: COPILOT, refresh: GH, expires });
    writeAuthEntry(env.COIL_HOME, "anthropic", { type: "api_key", key: "sk-ant-stored-0123456789" });
    const file = join(env.COIL_HOME, "auth.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(env.COIL_HOME)).toEqual(["auth.json"]); // no temporary file left behind
    const piFile = join(env.PI_CODING_AGENT_DIR, "auth.json");
    const piText = JSON.stringify({
      "openai-codex": {
        type: "oauth",
        access: JWT,
        refresh: "rt_pi0123456789abcdefghijkl",
        expires: Date.now() - 1000,
      },
      anthropic: { type: "api_key", key: "sk-ant-pi-0123456789abcdef" },
    });
    writeFileSync(piFile, piText);

    const list = await coil(dir, ["auth", "list"], env);
    expect(list.code).toBe(0);
    expect(list.out).toMatch(
      /github-copilot: logged in.*access token valid until \d{4}-\d\d-\d\d \d\d:\d\d UTC \(in 2[45] min/,
    );
    expect(list.out).toContain("anthropic: key stored");
    expect(list.out).toMatch(/openai-codex: logged in through Pi \(.*pi\/auth\.json, read only\).*expired/);
    for (const secret of [GH, COPILOT, JWT, "rt_pi0123456789abcdefghijkl", "sk-ant-stored-0123456789"])
      expect(list.out).not.toContain(secret);

    const asJson = await coil(dir, ["auth", "list", "--json"], env);
    expect(asJson.code).toBe(0);
    for (const secret of [GH, COPILOT, JWT, "rt_pi0123456789abcdefghijkl", "sk-ant-stored-0123456789"])
      expect(asJson.out).not.toContain(secret);
    const listed = JSON.parse(asJson.out) as { file: string; providers: Record<string, unknown> };
    expect(listed.file).toBe(file);
    expect(listed.providers).toEqual({
      "github-copilot": {
        stored: true,
        type: "oauth",
        inPreset: true,
        login: {
          from: "auth.json",
          file,
          expires: new Date(expires).toISOString(),
          expired: false,
          detail: "github.com",
        },
      },
      anthropic: { stored: true, type: "api_key", inPreset: true },
      // the default preset has provider-openai-codex, which names the plan (none in this token's claims)
      "openai-codex": {
        stored: false,
        inPreset: true,
        login: { from: "pi", file: piFile, expires: expect.any(String), expired: true, detail: "ChatGPT" },
      },
    });

    const doctor = await coil(dir, ["doctor"], env);
    expect(doctor.out).toContain("logins");
    expect(doctor.out).toMatch(/github-copilot: logged in/);
    expect(doctor.out).not.toContain(GH);

    const out = await coil(dir, ["logout", "github-copilot"], env);
    expect(out.code).toBe(0);
    expect(out.out).toContain("removed the login for github-copilot");
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      anthropic: { type: "api_key", key: "sk-ant-stored-0123456789" },
    });
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const piOut = await coil(dir, ["logout", "openai-codex"], env);
    expect(piOut.out).toContain("no login or key for openai-codex");
    expect(piOut.out).toContain("coil never rewrites that file");
    expect(readFileSync(piFile, "utf8")).toBe(piText);
  });

  it("auth remove says whether it removed a key or a login (and which), or that nothing was stored", async () => {
    const { dir, env } = home();
    const claims = Buffer.from(
      JSON.stringify({ "https://api.openai.com/auth": { chatgpt_account_id: "acc-1", chatgpt_plan_type: "pro" } }),
    ).toString("base64url");
    const access = `eyJhbGciOiJSUzI1NiJ9.${claims}.c2lnbmF0dXJlLXZhbHVlLWhlcmU`;
    writeAuthEntry(env.COIL_HOME, "openai-codex", {
      type: "oauth",
      access,
      refresh: "rt_coil0123456789abcdefghijkl",
      expires: Date.now() + 60_000,
      accountId: "acc-1",
    });
    writeAuthEntry(env.COIL_HOME, "anthropic", { type: "api_key", key: "sk-ant-stored-0123456789" });
    const file = join(env.COIL_HOME, "auth.json");
    const login = await coil(dir, ["auth", "remove", "openai-codex"], env);
    expect(login.code).toBe(0);
    expect(login.out).toContain(`removed the login for openai-codex (ChatGPT Pro) from ${file}`);
    expect(login.out).not.toContain(access);
    const key = await coil(dir, ["auth", "remove", "anthropic"], env);
    expect(key.out).toContain(`removed the stored key for anthropic from ${file}`);
    const none = await coil(dir, ["auth", "remove", "anthropic"], env);
    expect(none.out).toContain(`no login or key for anthropic in ${file}`);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({});
  });

  it("coil login without a subscription plugin says which logins exist and how keys are stored", async () => {
    const { dir, env } = home();
    const r = await coil(dir, ["login", "nope"], env);
    expect(r.code).toBe(2);
    expect(r.out).toContain("no subscription login for 'nope'");
    expect(r.out).toContain("coil auth set <provider>");
  });

  it("redacts GitHub, Copilot and JWT token shapes, and redact-secrets learns OAuth entries", () => {
    const text = `token ${GH} copilot ${COPILOT} jwt ${JWT} pat github_pat_11ABCDEFG0123456789_abcdefghijkl`;
    const out = redactShapes(text);
    for (const secret of [GH, COPILOT, JWT, "github_pat_11ABCDEFG0123456789_abcdefghijkl"])
      expect(out).not.toContain(secret);
    expect(out).toContain("gho_…[redacted]");
    expect(redact(`HTTP 401 for ${GH}`, [])).toBe("HTTP 401 for gho_…[redacted]");
    // every shape, alone in a text (the pre-scan for their prefixes must let each one through)
    const ones = [
      GH,
      COPILOT,
      JWT,
      "github_pat_11ABCDEFG0123456789_abcdefghijkl",
      "sk-ant-api03-abcdefghijklmnop",
      `rt_${"x".repeat(24)}`,
    ];
    for (const one of ones) {
      const out = redactShapes(`see ${one} here`);
      expect(out).not.toContain(one);
      expect(out).toMatch(/^see \S+…\[redacted\]\S* here$/);
    }
    expect(redactShapes("nothing secret in plain prose")).toBe("nothing secret in plain prose");
    expect(
      secretsInAuth({
        a: { type: "api_key", key: "k-123456789" },
        b: { type: "oauth", access: "acc-123456789", refresh: "ref-123456789", expires: 1 },
      }),
    ).toEqual(["k-123456789", "acc-123456789", "ref-123456789"]);
  });
});
