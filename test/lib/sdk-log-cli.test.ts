/**
 * The provider SDKs' own log lines through the shipped CLI: whatever path inside an SDK writes them (its
 * logger, or `console.error` directly), they become diagnostics of the provider plugin and never reach
 * stderr in `--mode json` (lib/provider-kit/sdk-log.ts).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../boot/paths.js";
import { childEnv } from "../support/env.js";
import { chat, startMockOpenAI, type MockOpenAI } from "../support/mock-openai.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
const KEY = "sk-proj-sdk-log-test-0123456789";
let openai: MockOpenAI;
const temps: string[] = [];

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\``);
  openai = await startMockOpenAI({ key: KEY });
});
afterAll(async () => {
  await openai.close();
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function coil(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), "coil-sdk-log-"));
  temps.push(dir);
  mkdirSync(join(dir, ".home"));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: dir,
      env: childEnv({ COIL_HOME: join(dir, ".home"), OPENAI_API_KEY: KEY, OPENAI_BASE_URL: openai.url }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("SDK log lines are diagnostics, never stderr", () => {
  it("a malformed `thread.*` frame, which the OpenAI SDK reports with console.error past its logger", async () => {
    openai.push(
      chat({ text: "a reply that breaks", malformedAfter: 2, malformedEvent: "thread.message.delta", chunk: 4 }),
      chat({ text: "a whole reply" }),
    );
    const r = await coil([
      "--plugin",
      "provider-openai",
      "--model",
      "openai/llama3.3-local",
      "--mode",
      "json",
      "-p",
      "hi",
    ]);
    expect(r.stderr).toBe("");
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; message?: unknown; plugin?: string; level?: string });
    const sdk = events.filter(
      (e) => e.type === "diagnostic" && String(e.message).includes("Could not parse message into JSON"),
    );
    expect(sdk[0]).toMatchObject({ plugin: "provider-openai", level: "warn" });
    expect(events.filter((e) => e.type === "diagnostic" && String(e.message).includes("From chunk:"))).toHaveLength(1);
  });
});
