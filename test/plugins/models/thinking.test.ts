/**
 * The thinking level through the shipped CLI (#22): `--thinking` reaches the wire as each provider maps it
 * (Anthropic: a thinking budget; OpenAI Responses: the reasoning effort), a model without reasoning says
 * so and runs, a wrong level is a usage error, and `-c` continues with the level the session ran with.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { text } from "../../support/mock-anthropic.js";
import { responses } from "../../support/mock-openai.js";
import { useProviderMocks } from "../../support/provider-mocks.js";

const mocks = useProviderMocks("thinking");
const { project } = mocks;
/** The CLI with both mocks as the anthropic and openai providers. */
const coil = (cwd: string, args: string[]) =>
  mocks.coil(cwd, args, {
    ANTHROPIC_API_KEY: mocks.keys.anthropic,
    ANTHROPIC_BASE_URL: mocks.anthropic.url,
    OPENAI_API_KEY: mocks.keys.openai,
    OPENAI_BASE_URL: mocks.openai.url,
  });

describe("--thinking", () => {
  it("sends a thinking budget to Anthropic and a reasoning effort to OpenAI", async () => {
    const dir = project();
    mocks.anthropic.requests.length = 0;
    mocks.anthropic.push(text("thought about it"));
    const a = await coil(dir, [
      "--model",
      "anthropic/claude-haiku-4-5",
      "--thinking",
      "high",
      "--no-session",
      "-p",
      "hi",
    ]);
    expect(a.stderr).toBe("");
    expect(a.code).toBe(0);
    expect(mocks.anthropic.rejected()).toEqual([]);
    expect(mocks.anthropic.requests[0]!.body.thinking).toEqual({ type: "enabled", budget_tokens: 24_576 });

    mocks.anthropic.requests.length = 0;
    mocks.anthropic.push(text("no thoughts"));
    const off = await coil(dir, [
      "--model",
      "anthropic/claude-haiku-4-5",
      "--thinking",
      "off",
      "--no-session",
      "-p",
      "hi",
    ]);
    expect(off.code).toBe(0);
    expect(mocks.anthropic.requests[0]!.body.thinking).toBeUndefined();

    mocks.openai.requests.length = 0;
    mocks.openai.push(responses([{ text: "reasoned" }]));
    const o = await coil(dir, ["--model", "openai/gpt-5.4", "--thinking", "low", "--no-session", "-p", "hi"]);
    expect(o.stderr).toBe("");
    expect(o.code).toBe(0);
    expect(mocks.openai.requests[0]!.body.reasoning).toMatchObject({ effort: "low" });
  });

  it("a model without reasoning says so and runs; a level that does not exist is a usage error", async () => {
    const dir = project();
    writeFileSync(join(dir, "r.yaml"), "- text: plain answer\n");
    const plain = await coil(dir, [
      "--provider",
      "scripted",
      "--script",
      "r.yaml",
      "--thinking",
      "high",
      "--no-session",
      "-p",
      "hi",
    ]);
    expect(plain.code).toBe(0);
    expect(plain.stdout.trim()).toBe("plain answer");
    expect(plain.stderr).toMatch(
      /--thinking high: scripted\/scripted does not reason, so the level has no effect on it/,
    );
    const wrong = await coil(dir, [
      "--provider",
      "scripted",
      "--script",
      "r.yaml",
      "--thinking",
      "hgih",
      "--no-session",
      "-p",
      "hi",
    ]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("--thinking 'hgih' is not a thinking level");
    expect(wrong.stderr).toContain("off, minimal, low, medium, high, xhigh");
  });

  it("-c continues with the level the session ran with; --thinking overrides it", async () => {
    const dir = project();
    mocks.anthropic.requests.length = 0;
    mocks.anthropic.push(text("one"), text("two"), text("three"));
    expect(
      (await coil(dir, ["--model", "anthropic/claude-haiku-4-5", "--thinking", "medium", "-p", "first"])).code,
    ).toBe(0);
    const sessions = join(dir, ".home", "sessions");
    const file = readdirSync(sessions, { recursive: true })
      .map(String)
      .find((f) => f.endsWith(".jsonl"))!;
    const entries = readFileSync(join(sessions, file), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; thinkingLevel?: string });
    expect(entries.filter((e) => e.type === "thinking_level_change").map((e) => e.thinkingLevel)).toEqual(["medium"]);

    expect((await coil(dir, ["-c", "-p", "second"])).code).toBe(0);
    expect(mocks.anthropic.requests[1]!.body.model).toBe("claude-haiku-4-5");
    expect(mocks.anthropic.requests[1]!.body.thinking).toEqual({ type: "enabled", budget_tokens: 10_240 });

    expect((await coil(dir, ["-c", "--thinking", "low", "-p", "third"])).code).toBe(0);
    expect(mocks.anthropic.requests[2]!.body.thinking).toEqual({ type: "enabled", budget_tokens: 4096 });
  });
});
