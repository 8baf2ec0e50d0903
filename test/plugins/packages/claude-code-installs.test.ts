/**
 * What Claude Code itself installed is read (#28.5): plugins in `~/.claude/plugins` (installed_plugins.json,
 * known_marketplaces.json, enabledPlugins in the settings files) and MCP servers added with `claude mcp add`
 * (`~/.claude.json`, user and per-project), with coil's trust rules (a project's own installs and servers
 * only in a trusted project), listed in `coil doctor`. The files are written here in the shapes Claude Code
 * 2.1 writes; the run goes through the built CLI against the validating Anthropic mock.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { coil, ROOT, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { text } from "../../support/mock-anthropic.js";
import { useMockAnthropic } from "../../support/provider-mocks.js";

const KEY = "sk-ant-cc-installs-0123456789";
const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const mock = useMockAnthropic(KEY);

const skill = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill.\n---\nBody of ${name}.\n`;

function sandbox() {
  const base = tempDir("coil-cc-installs-");
  const home = join(base, "home");
  const project = join(base, "project");
  const cache = join(home, ".claude", "plugins", "cache", "cc-market");
  const market = join(home, ".claude", "plugins", "marketplaces", "cc-market");
  const install = (scope: string, path: string, projectPath?: string) => ({
    scope,
    installPath: path,
    version: "1.0.0",
    installedAt: "2026-01-01T00:00:00.000Z",
    lastUpdated: "2026-01-01T00:00:00.000Z",
    ...(projectPath ? { projectPath } : {}),
  });
  writeFiles(project, {
    ".git/HEAD": "ref: refs/heads/main\n",
    ".claude/settings.json": JSON.stringify({ enabledPlugins: { "cc-proj@cc-market": true } }),
  });
  writeFiles(home, {
    ".claude/settings.json": JSON.stringify({
      enabledPlugins: { "cc-tools@cc-market": true, "cc-off@cc-market": false, "cc-other@cc-market": true },
    }),
    ".claude/plugins/installed_plugins.json": JSON.stringify({
      version: 2,
      plugins: {
        "cc-tools@cc-market": [install("user", join(cache, "cc-tools", "1.0.0"))],
        "cc-off@cc-market": [install("user", join(cache, "cc-off", "1.0.0"))],
        "cc-proj@cc-market": [install("project", join(cache, "cc-proj", "1.0.0"), project)],
        "cc-other@cc-market": [install("local", join(cache, "cc-other", "1.0.0"), join(base, "elsewhere"))],
      },
    }),
    ".claude/plugins/known_marketplaces.json": JSON.stringify({
      "cc-market": {
        source: { source: "directory", path: market },
        installLocation: market,
        lastUpdated: "2026-01-01T00:00:00.000Z",
      },
    }),
    ".claude.json": JSON.stringify({
      mcpServers: { usersrv: { type: "stdio", command: process.execPath, args: [EVERYTHING], env: {} } },
      projects: {
        [project]: {
          mcpServers: { localsrv: { type: "stdio", command: process.execPath, args: [EVERYTHING], env: {} } },
          hasTrustDialogAccepted: false,
        },
      },
    }),
  });
  writeFiles(market, {
    ".claude-plugin/marketplace.json": JSON.stringify({
      name: "cc-market",
      owner: { name: "t" },
      plugins: [
        { name: "cc-tools", source: "./cc-tools" },
        { name: "cc-off", source: "./cc-off" },
        { name: "cc-proj", source: "./cc-proj", strict: false, skills: ["./extra/proj-extra"] },
        { name: "cc-other", source: "./cc-other" },
      ],
    }),
  });
  writeFiles(join(cache, "cc-tools", "1.0.0"), {
    ".claude-plugin/plugin.json": JSON.stringify({ name: "cc-tools", version: "1.0.0" }),
    "commands/hello.md": "---\ndescription: Say hello\n---\nSay hello to $ARGUMENTS from cc-tools.\n",
    "skills/cc-skill/SKILL.md": skill("cc-skill"),
  });
  writeFiles(join(cache, "cc-off", "1.0.0"), { "skills/off-skill/SKILL.md": skill("off-skill") });
  writeFiles(join(cache, "cc-proj", "1.0.0"), {
    "skills/proj-skill/SKILL.md": skill("proj-skill"),
    "extra/proj-extra/SKILL.md": skill("proj-extra"),
  });
  writeFiles(join(cache, "cc-other", "1.0.0"), { "skills/other-skill/SKILL.md": skill("other-skill") });
  const env = sandboxEnv(base, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url });
  return { base, home, project, cache, env };
}

describe("what Claude Code installed", () => {
  it("coil doctor lists Claude Code's plugins and `claude mcp add` servers, each with whether it loads and why", async () => {
    const s = sandbox();
    const doctor = await coil(s.project, ["doctor"], s.env);
    expect(doctor.code, doctor.stderr).toBe(0);
    const out = doctor.stdout;
    expect(out).toContain("Claude Code plugins:");
    expect(out).toMatch(
      /cc-tools@cc-market@1\.0\.0 {2}\[user, installed by Claude Code\] {2}loaded \(enabled in .*\.claude\/settings\.json\)/,
    );
    expect(out).toMatch(/cc-off@cc-market@1\.0\.0 {2}\[user, installed by Claude Code\] {2}not loaded: disabled in /);
    expect(out).toMatch(
      /cc-proj@cc-market@1\.0\.0 {2}\[project, installed by Claude Code\] {2}not loaded: the project is not trusted/,
    );
    expect(out).toMatch(
      /cc-other@cc-market@1\.0\.0 {2}\[local, installed by Claude Code\] {2}not loaded: a local install for /,
    );
    expect(out).toMatch(new RegExp(`usersrv {2}stdio .* \\(${join(s.home, ".claude.json").replace(/[.]/g, "\\.")}\\)`));
    expect(out).toContain(
      `not loaded (project not trusted; coil trust): ${join(s.home, ".claude.json")} (projects["${s.project}"].mcpServers)`,
    );
    expect(out).toMatch(/^ {2}cc-skill {2}\[package\]/m);
    expect(out).not.toMatch(/off-skill|other-skill|proj-skill/);
  });

  it("in a run: the plugin's command and skills, a trusted project's own install, and both servers' tools", async () => {
    const s = sandbox();
    mock.requests.length = 0;
    mock.push(text("hello done"));
    const ran = await coil(
      s.project,
      ["--trust", "--model", "anthropic/claude-sonnet-4-5", "-p", "/cc-tools:hello Ada"],
      s.env,
    );
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe("hello done\n");
    const body = mock.requests[0]!.body;
    expect(JSON.stringify(body.messages.at(-1).content)).toContain("Say hello to Ada from cc-tools.");
    const system = body.system.map((b: { text: string }) => b.text).join("\n");
    const names = [...system.matchAll(/<name>([^<]+)<\/name>/g)].map((m) => m[1]);
    expect(names).toEqual(expect.arrayContaining(["cc-skill", "proj-skill", "proj-extra"]));
    expect(names).not.toEqual(expect.arrayContaining(["off-skill"]));
    expect(names).not.toEqual(expect.arrayContaining(["other-skill"]));
    const tools = body.tools.map((t: { name: string }) => t.name);
    expect(tools).toEqual(expect.arrayContaining(["mcp__usersrv__echo", "mcp__localsrv__echo"]));
    expect(mock.rejected()).toEqual([]);
  }, 40_000);
});
