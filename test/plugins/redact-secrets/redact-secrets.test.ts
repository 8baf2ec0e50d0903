/**
 * #13.4: keys that reach tool output are redacted before the result is stored (session file) or sent
 * (the next request, seen on the wire by a local Anthropic mock), through the shipped CLI; bash
 * full-output files are deleted when coil exits.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { reply, startMockAnthropic, text, type MockAnthropic } from "../../support/mock-anthropic.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
const AKEY = "sk-ant-redact-test-0123456789abcdef";
const STORED = "sk-proj-stored-in-auth-json-55aa77";
const TOKEN = "svc-token-value-31415926";
const DB_PASSWORD = "db-pass-word-2718281828";
const CONFIGURED = "configured-secret-value-4242";
const SECRETS = [AKEY, STORED, TOKEN, DB_PASSWORD, CONFIGURED];
const temps: string[] = [];
let mock: MockAnthropic;

beforeAll(async () => {
  mock = await startMockAnthropic({ key: AKEY });
});
afterAll(async () => {
  await mock.close();
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function project(): { dir: string; home: string; tmp: string } {
  const dir = mkdtempSync(join(tmpdir(), "coil-redact-"));
  temps.push(dir);
  const home = join(dir, ".home");
  const tmp = join(dir, "tmp");
  mkdirSync(home);
  mkdirSync(tmp);
  writeFileSync(join(home, "auth.json"), JSON.stringify({ openai: { type: "api_key", key: STORED } }), { mode: 0o600 });
  writeFileSync(join(home, "preset.yaml"), `plugins:\n  - redact-secrets: { secrets: ["${CONFIGURED}"] }\n`);
  return { dir, home, tmp };
}

function coil(
  cwd: string,
  home: string,
  tmp: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(ANTHROPIC_|OPENAI_)/.test(k)));
  const env = {
    ...base,
    COIL_HOME: home,
    TMPDIR: tmp,
    ANTHROPIC_API_KEY: AKEY,
    ANTHROPIC_BASE_URL: mock.url,
    SVC_TOKEN: TOKEN,
    DATABASE_URL: `postgres://app:${DB_PASSWORD}@db.internal/app`,
  };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const sessionText = (home: string): string => {
  const walk = (d: string): string[] =>
    existsSync(d)
      ? readdirSync(d, { withFileTypes: true }).flatMap((e) =>
          e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)],
        )
      : [];
  return walk(join(home, "sessions"))
    .map((f) => readFileSync(f, "utf8"))
    .join("\n");
};

describe("redacting secrets from tool output (#13.4)", () => {
  it("keys printed by a command never reach the session file or the next request", async () => {
    const { dir, home, tmp } = project();
    writeFileSync(join(dir, "notes.txt"), `configured: ${CONFIGURED}\n`);
    const command = `env | grep -i -e key -e token -e database; cat "$COIL_HOME/auth.json"; cat notes.txt`;
    mock.push(
      reply([{ tool: { id: "toolu_1", name: "bash", input: { command } } }], { stop: "tool_use" }),
      text("done"),
    );
    const before = mock.requests.length;
    const r = await coil(dir, home, tmp, ["--model", "anthropic/sonnet", "-p", "show me the keys"]);
    // the once-per-run notice that bash runs unconfined (#13.7) is the only thing on stderr
    expect(r.stderr.replace(/^coil: warn: \[plugin tools-coding\] bash runs commands WITHOUT a sandbox.*\n/m, "")).toBe(
      "",
    );
    expect(r.code).toBe(0);
    const second = JSON.stringify(mock.requests[before + 1]!.body);
    const stored = sessionText(home);
    expect(stored).toContain("toolu_1");
    for (const s of SECRETS) {
      expect(second, `request carries ${s}`).not.toContain(s);
      expect(stored, `session carries ${s}`).not.toContain(s);
    }
    expect(second).toContain("ANTHROPIC_API_KEY=[redacted]");
    expect(second).toContain("SVC_TOKEN=[redacted]");
    expect(second).toContain("postgres://app:[redacted]@db.internal/app");
    expect(second).toContain("configured: [redacted]");
    expect(stored).toContain("[redacted]");
  });

  it("bash full-output files are deleted when coil exits", async () => {
    const { dir, home, tmp } = project();
    rmSync(join(home, "preset.yaml"));
    mock.push(
      reply([{ tool: { id: "toolu_2", name: "bash", input: { command: "seq 1 200000" } } }], { stop: "tool_use" }),
      text("done"),
    );
    const before = mock.requests.length;
    const r = await coil(dir, home, tmp, ["--model", "anthropic/sonnet", "-p", "count"]);
    expect(r.code).toBe(0);
    const path = /Full output: (\S+\.log)/.exec(JSON.stringify(mock.requests[before + 1]!.body))?.[1];
    expect(path).toBeDefined();
    expect(path!.startsWith(tmp)).toBe(true);
    expect(existsSync(path!)).toBe(false);
    expect(readdirSync(tmp)).toEqual([]);
  });
});

describe("history stored before redaction (#13.4)", () => {
  it("a resumed session's old tool output is redacted on the wire", async () => {
    const { dir, home, tmp } = project();
    writeFileSync(join(home, "preset.yaml"), "plugins:\n  - redact-secrets: false\n");
    mock.push(
      reply([{ tool: { id: "toolu_3", name: "bash", input: { command: "env | grep SVC_" } } }], { stop: "tool_use" }),
      text("done"),
    );
    expect((await coil(dir, home, tmp, ["--model", "anthropic/sonnet", "-p", "one"])).code).toBe(0);
    expect(sessionText(home)).toContain(TOKEN); // stored unredacted while the plugin was off
    rmSync(join(home, "preset.yaml"));
    mock.push(text("ok"));
    const before = mock.requests.length;
    const r = await coil(dir, home, tmp, ["--model", "anthropic/sonnet", "-c", "-p", "two"]);
    expect(r.code).toBe(0);
    const body = JSON.stringify(mock.requests[before]!.body);
    expect(body).toContain("toolu_3");
    expect(body).not.toContain(TOKEN);
    expect(body).toContain("SVC_TOKEN=[redacted]");
  });
});

describe("which values are secrets", () => {
  it("credential-named variables and URL passwords, not paths, switches or look-alike names", async () => {
    const { secretsInEnv, redactor } = await import("../../../plugins/redact-secrets/index.js");
    const env = {
      ANTHROPIC_API_KEY: "sk-ant-aaaaaaaaaaaa",
      GH_TOKEN: "ghp_bbbbbbbbbbbb",
      PGPASSWORD: "pg-pass-cccc",
      CLIENT_SECRET: "client-dddddddd",
      AWS_SECRET_ACCESS_KEY: "aws-eeeeeeeeeeee",
      DOCKER_AUTH_CONFIG: '{"auths":{"x":"ffffffff"}}',
      DATABASE_URL: "postgres://app:db-gggggggg@db/app",
      REDIS_URL: "redis://:redis-hhhhhhhh@cache:6379",
      GIT_AUTHOR_NAME: "Jane Q. Developer",
      TOKENIZERS_PARALLELISM: "false",
      KEYTIMEOUT: "100000000",
      SSH_AUTH_SOCK: "/tmp/ssh-XXXX/agent.1",
      SSH_KEY_PATH: "/home/me/.ssh/id_ed25519",
      FEATURE_TOKEN_ENABLED: "true",
      HOME: "/home/me",
    };
    expect(secretsInEnv(env).sort()).toEqual(
      [
        "sk-ant-aaaaaaaaaaaa",
        "ghp_bbbbbbbbbbbb",
        "pg-pass-cccc",
        "client-dddddddd",
        "aws-eeeeeeeeeeee",
        '{"auths":{"x":"ffffffff"}}',
        "db-gggggggg",
        "redis-hhhhhhhh",
      ].sort(),
    );
    expect(secretsInEnv({ MY_DSN: "not-a-secret-name" }, ["MY_DSN"])).toEqual(["not-a-secret-name"]);
    const f = redactor(["short", "a-long-secret-value", "a-long-secret"], 8)!;
    expect(f("x a-long-secret-value y a-long-secret short")).toBe("x [redacted] y [redacted] short");
    expect(redactor(["tiny"], 8)).toBeUndefined();
  });
});
