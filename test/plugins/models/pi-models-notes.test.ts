/**
 * What coil skips in Pi's models.json is said where a user looks (#28.11): a `google-generative-ai`
 * provider (and a model with an API coil does not speak) is named in `coil models` and `coil doctor`, and
 * `--model` naming it fails with the reason instead of "unknown provider"; the rest of the file still
 * works against the validating Anthropic mock.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { coil, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { text } from "../../support/mock-anthropic.js";
import { useMockAnthropic } from "../../support/provider-mocks.js";

const KEY = "sk-ant-pi-notes-test-0123456789";
const mock = useMockAnthropic(KEY);

describe("Pi's models.json: what coil cannot use is said", () => {
  it("a google-generative-ai provider and model are named in coil models and coil doctor, and --model naming them says why", async () => {
    const base = tempDir("coil-pi-notes-");
    const project = join(base, "project");
    writeFiles(project, { ".keep": "" });
    writeFiles(join(base, "home"), {
      ".pi/agent/models.json": JSON.stringify({
        providers: {
          "my-gemini": {
            baseUrl: "https://generativelanguage.googleapis.com/v1beta",
            api: "google-generative-ai",
            apiKey: "GEMINI_API_KEY",
            models: [{ id: "gemini-2.5-flash" }],
          },
          proxy: {
            baseUrl: mock.url,
            api: "anthropic-messages",
            apiKey: "PROXY_KEY",
            models: [
              { id: "claude-via-proxy", contextWindow: 200000, maxTokens: 8000 },
              { id: "gemini-via-proxy", api: "google-generative-ai" },
            ],
          },
        },
      }),
    });
    const env = sandboxEnv(base, { PROXY_KEY: KEY });
    const piFile = join(base, "home", ".pi", "agent", "models.json");

    const models = await coil(project, ["models"], env);
    expect(models.code, models.stderr).toBe(0);
    expect(models.stdout).toMatch(/^proxy\/claude-via-proxy /m);
    expect(models.stdout).not.toMatch(/^(proxy\/gemini-via-proxy|my-gemini\/)/m);
    expect(models.stdout).toContain(
      `note: ${piFile}: provider 'my-gemini' not read: coil does not speak api 'google-generative-ai'`,
    );
    expect(models.stdout).toMatch(/built-in gemini provider/);
    expect(models.stdout).toContain(
      `note: ${piFile}: provider 'proxy': models[1] (gemini-via-proxy) not read: coil does not speak api 'google-generative-ai'`,
    );

    const doctor = await coil(project, ["doctor"], env);
    expect(doctor.stdout).toContain(`provider 'my-gemini' not read: coil does not speak api 'google-generative-ai'`);

    const named = await coil(project, ["--model", "my-gemini/gemini-2.5-flash", "-p", "hi"], env);
    expect(named.code).not.toBe(0);
    expect(named.stderr).toMatch(/provider 'my-gemini' .*not read.*google-generative-ai/);

    mock.requests.length = 0;
    mock.push(text("through the proxy"));
    const ok = await coil(project, ["--model", "proxy/claude-via-proxy", "-p", "hi"], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe("through the proxy\n");
    expect(mock.requests[0]!.body.model).toBe("claude-via-proxy");
    expect(mock.rejected()).toEqual([]);
  });
});
