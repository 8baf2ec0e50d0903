/**
 * The provider plugins through the shipped CLI (dist/bin/coil.js, built by `npm run build`), as a
 * user runs them: multi-turn tool loops against local servers that speak each API, `coil models`,
 * `coil auth`, `--api-key`, and the errors for a missing key, an unknown provider and a bad models.yaml.
 */
import { spawn } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN } from "../support/ecosystem.js";
import { apiError, reply, startMockAnthropic, text, type MockAnthropic } from "../support/mock-anthropic.js";
import { chat, responses, startMockOpenAI, type MockOpenAI } from "../support/mock-openai.js";
import { CALC_TOOL, useCliProjects } from "../support/provider-mocks.js";

let anthropic: MockAnthropic;
let openai: MockOpenAI;
const AKEY = "sk-ant-cli-test-0123456789";
const OKEY = "sk-proj-cli-test-0123456789";

const cli = useCliProjects("provider-cli", async () => {
  anthropic = await startMockAnthropic({ key: AKEY });
  openai = await startMockOpenAI({ key: OKEY });
  return [anthropic, openai];
});
const project = (files: Record<string, string> = {}) => cli.project({ "calc.ts": CALC_TOOL, ...files });
const coil = cli.coil;

const PROVIDER_VARS = /^(ANTHROPIC_|OPENAI_|OPENROUTER_|DEEPSEEK_|GROQ_|TOGETHER_|XAI_)/;

/** Three model turns: one call, then two parallel calls whose arguments arrive in small pieces, then the answer. */
function anthropicLoop() {
  anthropic.requests.length = 0;
  anthropic.push(
    (body) => {
      expect(body.tools.map((t: { name: string }) => t.name)).toContain("multiply");
      return reply([{ text: "Let me compute." }, { tool: { id: "toolu_1", name: "multiply", input: { a: 6, b: 7 } } }]);
    },
    (body) => {
      expect(body.messages.at(-1).content[0]).toMatchObject({
        type: "tool_result",
        tool_use_id: "toolu_1",
        content: [{ type: "text", text: "42" }],
      });
      return reply(
        [
          { tool: { id: "toolu_2", name: "multiply", input: { a: 42, b: 2 } } },
          { tool: { id: "toolu_3", name: "multiply", input: { a: 42, b: 3 } } },
        ],
        { chunk: 3 },
      );
    },
    (body) => {
      const results = body.messages
        .at(-1)
        .content.map(
          (b: { tool_use_id: string; content: { text: string }[] }) => `${b.tool_use_id}=${b.content[0]!.text}`,
        );
      expect(results).toEqual(["toolu_2=84", "toolu_3=126"]);
      return text("The answers are 84 and 126.");
    },
  );
}

describe("coil with provider-anthropic", () => {
  it("runs a three-turn tool loop against the Messages API with zero rejected requests", async () => {
    const dir = project();
    anthropicLoop();
    const r = await coil(
      dir,
      [
        "--plugin",
        "provider-anthropic",
        "--plugin",
        "./calc.ts",
        "--model",
        "anthropic/claude-sonnet-4-5",
        "-p",
        "multiply 6 by 7, then the result by 2 and by 3",
      ],
      {
        ANTHROPIC_API_KEY: AKEY,
        ANTHROPIC_BASE_URL: anthropic.url,
      },
    );
    expect(r.stderr).not.toContain("error");
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("The answers are 84 and 126.");
    expect(anthropic.requests).toHaveLength(3);
    expect(anthropic.rejected()).toEqual([]);
    expect(anthropic.requests[0]!.body.model).toBe("claude-sonnet-4-5");
  });

  it("retries a 429 and shows the wait on stderr", async () => {
    const dir = project();
    anthropic.requests.length = 0;
    anthropic.push(
      apiError(429, "rate_limit_error", "Number of requests has exceeded your rate limit", { "retry-after-ms": "50" }),
      text("done"),
    );
    const r = await coil(dir, ["--plugin", "provider-anthropic", "--model", "anthropic/sonnet", "-p", "hi"], {
      ANTHROPIC_API_KEY: AKEY,
      ANTHROPIC_BASE_URL: anthropic.url,
    });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("done");
    expect(r.stderr).toMatch(/retrying in .*attempt 1.*429/);
    expect(anthropic.requests[0]!.body.model).toBe("claude-sonnet-5-5");
  });

  it("--mode json keeps stderr empty when the stream sends malformed SSE; the SDK's complaint is a diagnostic event (#12.19)", async () => {
    const dir = project();
    anthropic.requests.length = 0;
    anthropic.push(text("a reply that breaks", { malformedAfter: 4, chunk: 4 }), text("a whole reply"));
    // claude-sonnet-4-5 is one the SDK warns about on every request, through console.warn directly
    const r = await coil(
      dir,
      ["--plugin", "provider-anthropic", "--model", "anthropic/claude-sonnet-4-5", "--mode", "json", "-p", "hi"],
      { ANTHROPIC_API_KEY: AKEY, ANTHROPIC_BASE_URL: anthropic.url },
    );
    expect(r.stderr).toBe("");
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; message?: unknown; level?: string; plugin?: string });
    const sdk = events.filter(
      (e) => e.type === "diagnostic" && String(e.message).includes("Could not parse message into JSON"),
    );
    expect(sdk.length).toBeGreaterThan(0);
    expect(sdk[0]).toMatchObject({ plugin: "provider-anthropic" });
    // the deprecation notice came with both requests and is reported once
    expect(
      events.filter((e) => e.type === "diagnostic" && /claude-sonnet-4-5' is deprecated/.test(String(e.message))),
    ).toHaveLength(1);
    // the corrupted stream is retried like a dropped one
    expect(events.filter((e) => e.type === "retry")).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", stopReason: "stop" });
    expect(r.code).toBe(0);
  });

  it("a missing key names the variable to set", async () => {
    const r = await coil(project(), [
      "--plugin",
      "provider-anthropic",
      "--model",
      "anthropic/claude-sonnet-5-5",
      "-p",
      "hi",
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("provider 'anthropic' is not configured");
    expect(r.stderr).toContain("set ANTHROPIC_API_KEY");
  });

  it("--api-key works without the variable and never appears in the JSON event stream", async () => {
    const dir = project();
    anthropic.requests.length = 0;
    anthropic.push(text("keyed"));
    const ok = await coil(
      dir,
      [
        "--plugin",
        "provider-anthropic",
        "--model",
        "anthropic/claude-opus-5-5",
        "--api-key",
        AKEY,
        "--mode",
        "json",
        "-p",
        "hi",
      ],
      { ANTHROPIC_BASE_URL: anthropic.url },
    );
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('"keyed"');
    expect(ok.stdout + ok.stderr).not.toContain(AKEY);
    // a wrong key that the server echoes back in its error is redacted too
    const bad = await coil(
      dir,
      [
        "--plugin",
        "provider-anthropic",
        "--model",
        "anthropic/claude-opus-5-5",
        "--api-key",
        "sk-ant-wrong-9876543210",
        "--mode",
        "json",
        "-p",
        "hi",
      ],
      { ANTHROPIC_BASE_URL: anthropic.url },
    );
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain("HTTP 401");
    expect(bad.stdout + bad.stderr).not.toContain("sk-ant-wrong-9876543210");
  });

  it("`coil auth set` stores the key with mode 0600 and the next run uses it", async () => {
    const dir = project();
    const set = await coil(dir, ["--plugin", "provider-anthropic", "auth", "set", "anthropic"], {}, `${AKEY}\n`);
    expect(set.code).toBe(0);
    expect(set.stdout).toContain("stored the key for anthropic");
    expect(set.stdout + set.stderr).not.toContain(AKEY);
    const file = join(dir, ".home", "auth.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ anthropic: { type: "api_key", key: AKEY } });
    anthropic.push(text("from the stored key"));
    const r = await coil(
      dir,
      ["--plugin", "provider-anthropic", "--model", "anthropic/claude-sonnet-5-5", "-p", "hi"],
      { ANTHROPIC_BASE_URL: anthropic.url },
    );
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("from the stored key");
    const list = await coil(dir, ["--plugin", "provider-anthropic", "auth", "list"]);
    expect(list.stdout).toContain("anthropic: key stored");
    expect(list.stdout).not.toContain(AKEY);
  });
});

describe("coil with provider-openai", () => {
  it("runs a three-turn tool loop over Chat Completions (OPENAI_BASE_URL, a model the catalog does not list)", async () => {
    const dir = project();
    openai.requests.length = 0;
    openai.push(
      chat({ text: "Computing.", tools: [{ id: "call_1", name: "multiply", args: { a: 6, b: 7 } }] }),
      (body) => {
        expect(body.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "call_1", content: "42" });
        return chat({
          tools: [
            { id: "call_2", name: "multiply", args: { a: 42, b: 2 } },
            { id: "call_3", name: "multiply", args: { a: 42, b: 3 } },
          ],
          chunk: 3,
        });
      },
      (body) => {
        expect(body.messages.slice(-2).map((m: { content: string }) => m.content)).toEqual(["84", "126"]);
        return chat({ text: "84 and 126." });
      },
    );
    const r = await coil(
      dir,
      ["--plugin", "provider-openai", "--plugin", "./calc.ts", "--model", "openai/llama3.3-local", "-p", "compute"],
      { OPENAI_API_KEY: OKEY, OPENAI_BASE_URL: openai.url },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("84 and 126.");
    expect(openai.requests.map((q) => q.path)).toEqual([
      "/v1/chat/completions",
      "/v1/chat/completions",
      "/v1/chat/completions",
    ]);
    expect(openai.rejected()).toEqual([]);
  });

  it("--mode json keeps stderr empty when a Chat Completions stream sends malformed SSE (#12.19)", async () => {
    const dir = project();
    openai.requests.length = 0;
    openai.push(chat({ text: "a reply that breaks", malformedAfter: 2, chunk: 4 }), chat({ text: "a whole reply" }));
    const r = await coil(
      dir,
      ["--plugin", "provider-openai", "--model", "openai/llama3.3-local", "--mode", "json", "-p", "hi"],
      { OPENAI_API_KEY: OKEY, OPENAI_BASE_URL: openai.url },
    );
    expect(r.stderr).toBe("");
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; message?: unknown; plugin?: string });
    expect(
      events.filter(
        (e) => e.type === "diagnostic" && String(e.message).includes("Could not parse message into JSON"),
      )[0],
    ).toMatchObject({ plugin: "provider-openai" });
    expect(r.code).toBe(0);
  });

  it("runs a three-turn tool loop over the Responses API for a catalog model", async () => {
    const dir = project();
    openai.requests.length = 0;
    openai.push(
      responses([
        { reasoning: "Multiply first." },
        { call: { name: "multiply", args: { a: 6, b: 7 }, callId: "call_r1" } },
      ]),
      (body) => {
        expect(body.input.at(-1)).toEqual({ type: "function_call_output", call_id: "call_r1", output: "42" });
        return responses(
          [
            { call: { name: "multiply", args: { a: 42, b: 2 }, callId: "call_r2" } },
            { call: { name: "multiply", args: { a: 42, b: 3 }, callId: "call_r3" } },
          ],
          { chunk: 3 },
        );
      },
      () => responses([{ text: "84 and 126 again." }]),
    );
    const r = await coil(
      dir,
      ["--plugin", "provider-openai", "--plugin", "./calc.ts", "--model", "openai/gpt-5.4", "-p", "compute"],
      { OPENAI_API_KEY: OKEY, OPENAI_BASE_URL: openai.url },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("84 and 126 again.");
    expect(openai.requests.map((q) => q.path)).toEqual(["/v1/responses", "/v1/responses", "/v1/responses"]);
    expect(openai.rejected()).toEqual([]);
  });

  it("uses a keyless local server declared in models.yaml", async () => {
    const open = await startMockOpenAI({ steps: [chat({ text: "hello from ollama" })] });
    try {
      const dir = project();
      writeFileSync(
        join(dir, ".home", "models.yaml"),
        `providers:\n  ollama:\n    baseUrl: ${open.url}\n    models:\n      - id: qwen3:32b\n        contextWindow: 40960\n`,
      );
      const r = await coil(dir, ["--plugin", "provider-openai", "--model", "ollama/qwen3:32b", "-p", "hi"]);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe("hello from ollama");
      expect(open.requests[0]!.body.model).toBe("qwen3:32b");
    } finally {
      await open.close();
    }
  });

  it("--api-key is registered when provider-openai is the only provider plugin", async () => {
    openai.push(chat({ text: "flag key" }));
    const r = await coil(
      project(),
      ["--plugin", "provider-openai", "--model", "openai/any-model", "--api-key", OKEY, "-p", "hi"],
      { OPENAI_BASE_URL: openai.url },
    );
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("flag key");
  });
});

describe("coil with both provider plugins", () => {
  it("`coil models` lists every provider's models, searches, and prints JSON", async () => {
    const dir = project();
    const all = await coil(dir, ["--plugin", "provider-anthropic", "--plugin", "provider-openai", "models"], {
      ANTHROPIC_API_KEY: AKEY,
    });
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(
      /anthropic\/claude-sonnet-4-5\s+yes\s+200K\s+64K\s+yes\s+yes\s+\$3\/\$15\s+built-in\s+Claude Sonnet 4.5/,
    );
    expect(all.stdout).toMatch(/anthropic\/claude-sonnet-5-5\s+yes\s.*Claude Sonnet 5.5 \(default\)/);
    expect(all.stdout).toMatch(/^gemini\/gemini-2.5-flash \*\s+-\s/m);
    expect(all.stdout).toContain("openai/gpt-5.4 *");
    expect(all.stdout).toContain("openai: set OPENAI_API_KEY");
    expect(all.stdout).toContain("deepseek/deepseek-reasoner");
    const search = await coil(
      dir,
      ["--plugin", "provider-anthropic", "--plugin", "provider-openai", "models", "sonnet", "4.5"],
      { ANTHROPIC_API_KEY: AKEY },
    );
    expect(
      search.stdout
        .split("\n\n")[0]!
        .trim()
        .split("\n")
        .slice(1)
        .map((l) => l.split(/\s+/)[0]),
    ).toEqual(["anthropic/claude-sonnet-4-5", "openrouter/anthropic/claude-sonnet-4.5"]);
    expect(search.stdout).toContain("openrouter: set OPENROUTER_API_KEY");
    const json = await coil(
      dir,
      ["--plugin", "provider-anthropic", "--plugin", "provider-openai", "models", "--json", "haiku"],
      { ANTHROPIC_API_KEY: AKEY },
    );
    expect(JSON.parse(json.stdout).map((m: { id: string }) => m.id)).toEqual(["claude-haiku-5-5", "claude-haiku-4-5"]);
  });

  it("an unknown provider lists the known ones", async () => {
    const r = await coil(project(), [
      "--plugin",
      "provider-anthropic",
      "--plugin",
      "provider-openai",
      "--model",
      "nosuch/flash",
      "-p",
      "hi",
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown provider 'nosuch'");
    expect(r.stderr).toMatch(/known providers: .*anthropic.*openai.*deepseek/);
  });

  it("a malformed models.yaml gives the file, line and bad field", async () => {
    const dir = project();
    const file = join(dir, ".home", "models.yaml");
    writeFileSync(
      file,
      "providers:\n  lmstudio:\n    baseUrl: http://localhost:1234/v1\n    models:\n      - id: local\n        maxOutput: -5\n",
    );
    const r = await coil(dir, ["--plugin", "provider-anthropic", "--plugin", "provider-openai", "-p", "hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("'providers.lmstudio.models[0].maxOutput' must be a positive integer, got -5");
    expect(r.stderr).toContain(`${file}:6:20`);
  });

  it("`-c` on a thinking Claude model after a tool loop cut off on OpenAI is accepted, every time (#12.0)", async () => {
    const dir = project({
      "slow.ts": `import { definePlugin, Type } from "coil";
export default definePlugin({
  id: "slow-tool",
  setup(ctx) {
    ctx.tools.register({
      name: "slow_edit",
      description: "Edit a file (slowly)",
      parameters: Type.Object({ path: Type.String() }),
      // a timer keeps the process alive like a real tool's I/O, until the run is aborted
      execute: (args, run) => new Promise((resolve) => {
        const busy = setInterval(() => undefined, 1000);
        run.signal.addEventListener("abort", () => (clearInterval(busy), resolve({ content: [{ type: "text", text: "stopped" }], isError: true })), { once: true });
      }),
    });
  },
});
`,
    });
    const env = {
      OPENAI_API_KEY: OKEY,
      OPENAI_BASE_URL: openai.url,
      ANTHROPIC_API_KEY: AKEY,
      ANTHROPIC_BASE_URL: anthropic.url,
    };
    const plugins = ["--plugin", "provider-anthropic", "--plugin", "provider-openai", "--plugin", "./slow.ts"];
    anthropic.requests.length = 0;
    openai.requests.length = 0;
    openai.push(chat({ tools: [{ id: "call_cut", name: "slow_edit", args: { path: "a.ts" } }] }));
    // run 1: interrupted (SIGINT) while the tool runs
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !PROVIDER_VARS.test(k)));
    const child = spawn(process.execPath, [BIN, ...plugins, "--model", "openai/local-model", "-p", "edit a.ts"], {
      cwd: dir,
      env: { ...base, COIL_HOME: join(dir, ".home"), ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stdin.end();
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const closed = new Promise<number | null>((r) => child.on("close", r));
    const t0 = Date.now();
    while (openai.requests.length === 0 && Date.now() - t0 < 15_000) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500)); // the reply is read and the tool has started
    child.kill("SIGINT");
    expect(openai.requests).toHaveLength(1);
    expect(await closed, stderr).toBe(1);
    expect(stderr).toContain("aborted");
    // `-c` twice with an always-thinking model, then with a budget-thinking one, thinking on (user preset)
    writeFileSync(join(dir, ".home", "preset.yaml"), "extends: default\nthinking: high\n");
    for (const [model, answer] of [
      ["anthropic/claude-opus-5-5", "first"],
      ["anthropic/claude-fable-5-1", "second"],
      ["anthropic/claude-sonnet-4-5", "third"],
    ] as const) {
      anthropic.push(text(answer));
      const r = await coil(dir, [...plugins, "--model", model, "-c", "-p", "go on"], env);
      expect(r.stderr).not.toContain("error");
      expect(r.stdout.trim()).toBe(answer);
      expect(r.code).toBe(0);
    }
    expect(anthropic.rejected().map((q) => q.error)).toEqual([]);
    expect(anthropic.requests).toHaveLength(3);
    expect(anthropic.requests[0]!.body.thinking).toMatchObject({ type: "adaptive" });
  }, 60_000);

  it("switching providers mid-conversation keeps the history valid for both APIs", async () => {
    // turn 1 on OpenAI (a tool call), then the same session continues on Anthropic via `--model` in an embedded agent
    const dir = project();
    anthropic.requests.length = 0;
    openai.requests.length = 0;
    openai.push(chat({ tools: [{ id: "call_x", name: "multiply", args: { a: 2, b: 2 } }] }), chat({ text: "4" }));
    const r1 = await coil(
      dir,
      [
        "--plugin",
        "provider-anthropic",
        "--plugin",
        "provider-openai",
        "--plugin",
        "./calc.ts",
        "--model",
        "openai/local-model",
        "-p",
        "2*2",
      ],
      {
        OPENAI_API_KEY: OKEY,
        OPENAI_BASE_URL: openai.url,
        ANTHROPIC_API_KEY: AKEY,
        ANTHROPIC_BASE_URL: anthropic.url,
      },
    );
    expect(r1.code).toBe(0);
    expect(r1.stdout.trim()).toBe("4");
    expect(openai.rejected()).toEqual([]);
  });
});
