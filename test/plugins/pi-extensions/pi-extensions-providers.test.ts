/**
 * Providers registered by Pi extensions (#34) that coil used to report: the Anthropic Messages API (through
 * provider-anthropic's SDK against the validating Anthropic mock), a custom `streamSimple` (scripted in the
 * extension, with pi-ai's createAssistantMessageEventStream), and an `oauth` login that `coil login <name>`
 * runs, stored in coil's auth.json and refreshed when it has run out. Through the built CLI.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { coil, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { text } from "../../support/mock-anthropic.js";
import { useMockAnthropic } from "../../support/provider-mocks.js";

const KEY = "sk-ant-pi-provider-test-0123456789";
const mock = useMockAnthropic(KEY);

const MODEL = `models: [{ id: "claude-proxy", name: "Claude via proxy", reasoning: false, input: ["text"],
      cost: { input: 3, output: 15, cacheRead: 0, cacheWrite: 0 }, contextWindow: 200000, maxTokens: 8192 }]`;

function sandbox(extensions: Record<string, string>) {
  const base = tempDir("coil-pi-prov-");
  const project = join(base, "project");
  writeFiles(project, { ".git/HEAD": "ref: refs/heads/main\n" });
  const home = join(base, "home");
  writeFiles(
    home,
    Object.fromEntries(Object.entries(extensions).map(([name, src]) => [`.pi/agent/extensions/${name}`, src])),
  );
  const env = sandboxEnv(base, {});
  return { base, project, home, env, coilHome: String(env.COIL_HOME) };
}

describe("providers registered by Pi extensions", () => {
  it("api anthropic-messages: the provider answers through the Anthropic SDK against the validating mock, with the extension's key and headers", async () => {
    const s = sandbox({
      "claude-proxy.ts": `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerProvider("my-claude", {
    baseUrl: ${JSON.stringify(mock.url)},
    apiKey: "MY_CLAUDE_KEY",
    api: "anthropic-messages",
    headers: { "x-team": "blue" },
    ${MODEL},
  });
}
`,
    });
    mock.requests.length = 0;
    mock.push(text("hello from the proxied Claude"));
    const env = { ...s.env, MY_CLAUDE_KEY: KEY };
    const ran = await coil(s.project, ["--model", "my-claude/claude-proxy", "-p", "hi"], env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout.trim()).toBe("hello from the proxied Claude");
    expect(ran.stderr).not.toContain("not supported");
    const request = mock.requests[0]!;
    expect(request.body.model).toBe("claude-proxy");
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request.headers["x-team"]).toBe("blue");
    expect(mock.rejected()).toEqual([]);
    // without the key: the provider says what to set, naming the extension
    const missing = await coil(s.project, ["--model", "my-claude/claude-proxy", "-p", "hi"], s.env);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("set MY_CLAUDE_KEY (Pi extension claude-proxy)");
    const doctor = await coil(s.project, ["doctor"], env);
    expect(doctor.stdout).toMatch(/claude-proxy \(user, .*\): providers my-claude/);
  });

  it("streamSimple: the extension's stream is the reply (deltas as message_update events), with the context and key it was given", async () => {
    const s = sandbox({
      "echo-provider.ts": `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { createAssistantMessageEventStream, calculateCost } from "@mariozechner/pi-ai";

export default function (pi: ExtensionAPI) {
  pi.registerProvider("echo", {
    baseUrl: "https://echo.invalid",
    apiKey: "ECHO_KEY",
    api: "echo-api",
    ${MODEL},
    streamSimple(model, context, options) {
      const stream = createAssistantMessageEventStream();
      (async () => {
        const output = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id,
          usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15,
            cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
          stopReason: "stop", timestamp: Date.now() };
        stream.push({ type: "start", partial: output });
        const last = context.messages[context.messages.length - 1];
        const said = typeof last.content === "string" ? last.content : last.content.map((p) => p.text).join("");
        const parts = ["echo: ", said, " (key " + options.apiKey + ", " + context.tools.length + " tools, system "
          + (context.systemPrompt.length > 0 ? "given" : "empty") + ")"];
        output.content.push({ type: "text", text: "" });
        stream.push({ type: "text_start", contentIndex: 0, partial: output });
        for (const p of parts) {
          output.content[0].text += p;
          stream.push({ type: "text_delta", contentIndex: 0, delta: p, partial: output });
        }
        stream.push({ type: "text_end", contentIndex: 0, content: output.content[0].text, partial: output });
        calculateCost(model, output.usage);
        stream.push({ type: "done", reason: "stop", message: output });
        stream.end();
      })();
      return stream;
    },
  });
}
`,
    });
    const env = { ...s.env, ECHO_KEY: "echo-secret-1" };
    const ran = await coil(s.project, ["--model", "echo/claude-proxy", "--mode", "json", "ping"], env);
    expect(ran.code, ran.stderr).toBe(0);
    const events = ran.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l));
    const deltas = events
      .filter((e) => e.type === "message_update" && e.event?.type === "text_delta")
      .map((e) => e.event.delta);
    expect(deltas.slice(0, 2)).toEqual(["echo: ", "ping"]);
    const end = events.find((e) => e.type === "message_end" && e.message.role === "assistant");
    expect(end.message.content).toEqual([
      { type: "text", text: expect.stringMatching(/^echo: ping \(key echo-secret-1, \d+ tools, system given\)$/) },
    ]);
    expect(Number(end.message.content[0].text.match(/(\d+) tools/)[1])).toBeGreaterThan(3);
    expect(end.message.usage).toMatchObject({ input: 10, output: 5 });
    expect(end.message.usage.cost.total).toBeCloseTo((10 * 3 + 5 * 15) / 1e6, 10);
    expect(ran.stderr).not.toContain("not supported");
  });

  it("a streamSimple that throws is an error reply naming the extension; coil goes on", async () => {
    const s = sandbox({
      "broken-provider.ts": `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerProvider("broken", { baseUrl: "https://x.invalid", api: "x", ${MODEL},
    streamSimple() { throw new Error("upstream is down"); } });
}
`,
    });
    const ran = await coil(s.project, ["--model", "broken/claude-proxy", "-p", "ping"], s.env);
    expect(ran.code).not.toBe(0);
    expect(ran.stderr).toContain("Pi extension broken-provider: upstream is down");
  });

  it("oauth: `coil login <name>` runs the extension's login (prompt answered on stdin) into coil's auth.json; an expired login is refreshed before the request", async () => {
    const s = sandbox({
      "corp.ts": `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerProvider("corp", {
    baseUrl: ${JSON.stringify(mock.url)},
    api: "anthropic-messages",
    ${MODEL},
    oauth: {
      name: "Corporate AI (SSO)",
      async login(callbacks) {
        callbacks.onAuth({ url: "https://sso.corp.invalid/authorize?x=1" });
        const code = await callbacks.onPrompt({ message: "Enter SSO code:" });
        // already run out: the first request must refresh it
        return { access: "stale-" + code, refresh: "refresh-" + code, expires: Date.now() - 1000 };
      },
      async refreshToken(credentials) {
        return { access: ${JSON.stringify(KEY)}, refresh: credentials.refresh + "-2", expires: Date.now() + 3600000 };
      },
      getApiKey(credentials) {
        return credentials.access;
      },
    },
  });
}
`,
    });
    const login = await coil(s.project, ["login", "corp"], s.env, "code-42\n");
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain("Open https://sso.corp.invalid/authorize?x=1");
    expect(login.stderr).toContain("Enter SSO code:");
    expect(login.stdout).toContain("Logged in to Corporate AI (SSO)");
    const auth = () => JSON.parse(readFileSync(join(s.coilHome, "auth.json"), "utf8")).corp;
    expect(auth()).toMatchObject({ type: "oauth", access: "stale-code-42", refresh: "refresh-code-42" });

    mock.requests.length = 0;
    mock.push(text("hello, corporate user"));
    const ran = await coil(s.project, ["--model", "corp/claude-proxy", "-p", "hi"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout.trim()).toBe("hello, corporate user");
    expect(mock.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(mock.rejected()).toEqual([]);
    expect(auth()).toMatchObject({ type: "oauth", access: KEY, refresh: "refresh-code-42-2" });
    const list = await coil(s.project, ["auth", "list"], s.env);
    expect(list.stdout).toContain("corp: logged in (Pi extension corp)");
  });
});
