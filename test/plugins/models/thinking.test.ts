/**
 * The thinking level through the shipped CLI (#22): `--thinking` reaches the wire as each provider maps it
 * (Anthropic: a thinking budget; OpenAI Responses: the reasoning effort), a model without reasoning says
 * so and runs, a wrong level is a usage error, and `-c` continues with the level the session ran with.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { startMockAnthropic, text, type MockAnthropic } from "../../support/mock-anthropic.js";
import { responses, startMockOpenAI, type MockOpenAI } from "../../support/mock-openai.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
const AKEY = "sk-ant-thinking-test-0123456789";
const OKEY = "sk-proj-thinking-test-0123456789";
const temps: string[] = [];
let anthropic: MockAnthropic;
let openai: MockOpenAI;

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` first`);
  anthropic = await startMockAnthropic({ key: AKEY });
  openai = await startMockOpenAI({ key: OKEY });
});
afterAll(async () => {
  await anthropic.close();
  await openai.close();
  temps.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

const PROVIDER_VARS = /^(ANTHROPIC_|OPENAI_|OPENROUTER_|DEEPSEEK_|GROQ_|TOGETHER_|XAI_)/;

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), "coil-thinking-"));
  temps.push(dir);
  mkdirSync(join(dir, ".home"));
  return dir;
}

function coil(cwd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !PROVIDER_VARS.test(k)));
  const env = { ...base, COIL_HOME: join(cwd, ".home"), ANTHROPIC_API_KEY: AKEY, ANTHROPIC_BASE_URL: anthropic.url, OPENAI_API_KEY: OKEY, OPENAI_BASE_URL: openai.url };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdin.end("");
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("--thinking", () => {
  it("sends a thinking budget to Anthropic and a reasoning effort to OpenAI", async () => {
    const dir = project();
    anthropic.requests.length = 0;
    anthropic.push(text("thought about it"));
    const a = await coil(dir, ["--model", "anthropic/claude-haiku-4-5", "--thinking", "high", "--no-session", "-p", "hi"]);
    expect(a.stderr).toBe("");
    expect(a.code).toBe(0);
    expect(anthropic.rejected()).toEqual([]);
    expect(anthropic.requests[0]!.body.thinking).toEqual({ type: "enabled", budget_tokens: 24_576 });

    anthropic.requests.length = 0;
    anthropic.push(text("no thoughts"));
    const off = await coil(dir, ["--model", "anthropic/claude-haiku-4-5", "--thinking", "off", "--no-session", "-p", "hi"]);
    expect(off.code).toBe(0);
    expect(anthropic.requests[0]!.body.thinking).toBeUndefined();

    openai.requests.length = 0;
    openai.push(responses([{ text: "reasoned" }]));
    const o = await coil(dir, ["--model", "openai/gpt-5.4", "--thinking", "low", "--no-session", "-p", "hi"]);
    expect(o.stderr).toBe("");
    expect(o.code).toBe(0);
    expect(openai.requests[0]!.body.reasoning).toMatchObject({ effort: "low" });
  });

  it("a model without reasoning says so and runs; a level that does not exist is a usage error", async () => {
    const dir = project();
    writeFileSync(join(dir, "r.yaml"), "- text: plain answer\n");
    const plain = await coil(dir, ["--provider", "scripted", "--script", "r.yaml", "--thinking", "high", "--no-session", "-p", "hi"]);
    expect(plain.code).toBe(0);
    expect(plain.stdout.trim()).toBe("plain answer");
    expect(plain.stderr).toMatch(/--thinking high: scripted\/scripted does not reason, so the level has no effect on it/);
    const wrong = await coil(dir, ["--provider", "scripted", "--script", "r.yaml", "--thinking", "hgih", "--no-session", "-p", "hi"]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("--thinking 'hgih' is not a thinking level");
    expect(wrong.stderr).toContain("off, minimal, low, medium, high, xhigh");
  });

  it("-c continues with the level the session ran with; --thinking overrides it", async () => {
    const dir = project();
    anthropic.requests.length = 0;
    anthropic.push(text("one"), text("two"), text("three"));
    expect((await coil(dir, ["--model", "anthropic/claude-haiku-4-5", "--thinking", "medium", "-p", "first"])).code).toBe(0);
    const sessions = join(dir, ".home", "sessions");
    const file = readdirSync(sessions, { recursive: true }).map(String).find((f) => f.endsWith(".jsonl"))!;
    const entries = readFileSync(join(sessions, file), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { type: string; thinkingLevel?: string });
    expect(entries.filter((e) => e.type === "thinking_level_change").map((e) => e.thinkingLevel)).toEqual(["medium"]);

    expect((await coil(dir, ["-c", "-p", "second"])).code).toBe(0);
    expect(anthropic.requests[1]!.body.model).toBe("claude-haiku-4-5");
    expect(anthropic.requests[1]!.body.thinking).toEqual({ type: "enabled", budget_tokens: 10_240 });

    expect((await coil(dir, ["-c", "--thinking", "low", "-p", "third"])).code).toBe(0);
    expect(anthropic.requests[2]!.body.thinking).toEqual({ type: "enabled", budget_tokens: 4096 });
  });
});
