/**
 * A one-turn `coil -p` through each provider SDK talks HTTP with coil's node:http client and never loads
 * Node's undici (its fetch, Headers and FormData): loading it cost ~100 ms and 12 MB of a one-turn run,
 * and its first connection compiled a WebAssembly parser the process waited for at exit (issue 37).
 * The shipped CLI against the local mocks; a preload records which of Node's own modules were loaded.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { text } from "../support/mock-anthropic.js";
import { chat, responses } from "../support/mock-openai.js";
import { useProviderMocks } from "../support/provider-mocks.js";

const mocks = useProviderMocks("http");

/** Runs the CLI with a preload that writes Node's loaded internal undici modules at exit. */
async function undiciAfter(args: string[], env: Record<string, string>) {
  const dir = mocks.project();
  const probe = join(dir, "probe.mjs");
  const out = join(dir, "loaded.json");
  writeFileSync(
    probe,
    `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.moduleLoadList.filter((m) => /undici/.test(m)))));\nimport { createRequire } from "node:module"; const require = createRequire(import.meta.url);\n`,
  );
  const r = await mocks.coil(dir, [...args, "--no-session", "-p", "hi"], { ...env, NODE_OPTIONS: `--import=${probe}` });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return { stdout: r.stdout.trim(), undici: JSON.parse(readFileSync(out, "utf8")) as string[] };
}

describe("print runs talk to the provider without Node's undici", () => {
  it("Anthropic Messages", async () => {
    mocks.anthropic.push(text("hello from the mock"));
    const r = await undiciAfter(["--model", "anthropic/sonnet"], {
      ANTHROPIC_API_KEY: mocks.keys.anthropic,
      ANTHROPIC_BASE_URL: mocks.anthropic.url,
    });
    expect(r.stdout).toBe("hello from the mock");
    expect(r.undici).toEqual([]);
    expect(mocks.anthropic.rejected()).toEqual([]);
  });

  it("OpenAI Responses and Chat Completions", async () => {
    const env = { OPENAI_API_KEY: mocks.keys.openai, OPENAI_BASE_URL: mocks.openai.url };
    mocks.openai.push(responses([{ text: "responses ok" }]));
    const a = await undiciAfter(["--model", "openai/gpt-5.4"], env);
    expect(a.stdout).toBe("responses ok");
    expect(a.undici).toEqual([]);
    mocks.openai.push(chat({ text: "chat ok" }));
    const b = await undiciAfter(["--model", "openai/llama3.3-local"], env);
    expect(b.stdout).toBe("chat ok");
    expect(b.undici).toEqual([]);
    expect(mocks.openai.rejected()).toEqual([]);
  });
});
