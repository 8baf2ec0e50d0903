/**
 * Pi's own files beyond models.json (#28.10), through the built CLI against the validating Anthropic mock:
 * `~/.pi/agent/SYSTEM.md` replaces the role, `.pi/APPEND_SYSTEM.md` (the working directory's) is appended;
 * `~/.pi/agent/settings.json` gives the start model (`defaultProvider` + `defaultModel`), the thinking level
 * and more skill and prompt folders; what coil does not read in it is listed key by key in `coil doctor`;
 * an untrusted project's `.pi/settings.json` is not read, and doctor says so.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { coil, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { text } from "../../support/mock-anthropic.js";
import { useMockAnthropic } from "../../support/provider-mocks.js";

const KEY = "sk-ant-pi-settings-test-0123456789";
const mock = useMockAnthropic(KEY);

function sandbox(projectSettings?: unknown) {
  const base = tempDir("coil-pi-settings-");
  const project = join(base, "project");
  const home = join(base, "home");
  writeFiles(project, {
    ".git/HEAD": "ref: refs/heads/main\n",
    ".pi/APPEND_SYSTEM.md": "Always answer in French.\n",
    ...(projectSettings ? { ".pi/settings.json": JSON.stringify(projectSettings) } : {}),
  });
  writeFiles(home, {
    ".pi/agent/SYSTEM.md": "You are PiBot, a careful assistant.\n",
    ".pi/agent/settings.json": JSON.stringify({
      defaultProvider: "anthropic",
      defaultModel: "claude-sonnet-4-5",
      defaultThinkingLevel: "high",
      skills: ["../extra-skills", "~/more-skills/*"],
      prompts: ["prompts-extra"],
      packages: ["pi-skills", { source: "@org/pi-tools" }],
      theme: "dark",
      extensions: ["./ext.ts"],
    }),
    ".pi/extra-skills/from-settings/SKILL.md":
      "---\nname: from-settings\ndescription: A skill found through Pi's settings.json.\n---\nBody.\n",
    ".pi/agent/prompts-extra/hello.md": "---\ndescription: Say hello\n---\nSay hello to $1 politely.\n",
  });
  // Without Pi's defaults coil would start on Anthropic's own default model, without thinking.
  const env = sandboxEnv(base, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url });
  return { base, project, home, env };
}

const systemOf = (i: number) => mock.requests[i]!.body.system.map((b: { text: string }) => b.text).join("\n");

describe("Pi's SYSTEM.md, APPEND_SYSTEM.md and settings.json", () => {
  it("the start model, thinking level, extra skill and prompt folders come from settings.json; SYSTEM.md and APPEND_SYSTEM.md shape the prompt", async () => {
    const s = sandbox();
    mock.requests.length = 0;
    mock.push(text("bonjour"));
    const ran = await coil(s.project, ["-p", "/hello Ada"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe("bonjour\n");
    const body = mock.requests[0]!.body;
    expect(body.model).toBe("claude-sonnet-4-5");
    expect(body.thinking).toMatchObject({ type: "enabled" });
    const system = systemOf(0);
    expect(system.startsWith("You are PiBot, a careful assistant.")).toBe(true);
    expect(system).toContain("Always answer in French.");
    expect(system).toContain("<name>from-settings</name>");
    const last = body.messages.at(-1).content;
    expect(JSON.stringify(last)).toContain("Say hello to Ada politely.");
    expect(mock.rejected()).toEqual([]);
  });

  it("coil doctor lists what it read and, key by key, what it did not; an untrusted project's settings are not read", async () => {
    const s = sandbox({ defaultModel: "other", theme: "light" });
    const doctor = await coil(s.project, ["doctor"], s.env);
    expect(doctor.code, doctor.stderr).toBe(0);
    const out = doctor.stdout;
    const file = join(s.home, ".pi", "agent", "settings.json");
    expect(out).toContain("Pi settings:");
    expect(out).toContain(`read: ${file}`);
    expect(out).toContain(
      `not read: ${join(s.project, ".pi", "settings.json")}: the project is not trusted (coil trust)`,
    );
    expect(out).toContain(`start model: anthropic/claude-sonnet-4-5 (defaultProvider + defaultModel, ${file};`);
    expect(out).toContain("thinking level: high");
    expect(out).toMatch(/skills: .*extra-skills/);
    expect(out).toMatch(/prompts: .*prompts-extra/);
    expect(out).toMatch(/not read: skills: "~\/more-skills\/\*" .*glob patterns/);
    expect(out).toMatch(/elsewhere: packages \(.*\): the pi-extensions plugin loads the packages' extensions/);
    expect(out).toMatch(/not read: theme \(.*\): /);
    expect(out).toMatch(/elsewhere: extensions \(.*\): the pi-extensions plugin loads them/);
    expect(out).not.toMatch(/not read: (packages|extensions) \(/);
    // where the system prompt's role and appended text come from
    expect(out).toContain(`role: ${join(s.home, ".pi", "agent", "SYSTEM.md")}`);
    expect(out).toContain(`append: ${join(s.project, ".pi", "APPEND_SYSTEM.md")}`);
  });
});
