/**
 * Claude Code plugins as coil packages (issue #18): a plugin fixture written here (a command with
 * $ARGUMENTS and ${CLAUDE_PLUGIN_ROOT}, a skill, an agent, a PreToolUse hook script that blocks bash
 * and reads a file through $CLAUDE_PLUGIN_ROOT, an .mcp.json starting the reference MCP server
 * through ${CLAUDE_PLUGIN_ROOT}) installed from a folder, a local git repository, a tarball and a
 * local marketplace; each contribution is checked in a real `coil -p` run (scripted provider,
 * requests recorded), and after disable/remove none of them act.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claudePluginMcpServers } from "../../../lib/claude-plugins.js";
import {
  detectClaudePlugin,
  installClaudePlugin,
  listClaudePlugins,
  removeClaudePlugin,
  restoreClaudePlugins,
  setClaudePluginEnabled,
  updateClaudePlugins,
} from "../../../plugins/packages/claude/index.js";
import { BIN, cleanTemps, coil, requireBuild, ROOT, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { hasTmux, Tmux } from "../../support/tmux.js";

const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

/** The fixture plugin's files. */
function pluginFiles(name = "demo-tools", version = "1.2.0"): Record<string, string> {
  return {
    ".claude-plugin/plugin.json": JSON.stringify(
      { name, version, description: "Review helpers for the demo" },
      null,
      2,
    ),
    "commands/review.md":
      "---\ndescription: Review a file against the team checklist\nargument-hint: <file>\n---\nReview $ARGUMENTS against the checklist in ${CLAUDE_PLUGIN_ROOT}/checklist.md.\n",
    "commands/git/summary.md": "Summarise the last commits of $1.\n",
    "checklist.md": "- names say what they hold\n",
    "policy.txt": "bash is off limits in this repository",
    "skills/release-notes/SKILL.md":
      "---\nname: release-notes\ndescription: Write release notes from the commits since the last tag\n---\nList the commits, group them, write the notes.\n",
    "agents/reviewer.md":
      "---\nname: reviewer\ndescription: Reviews a change for naming and tests\ntools: Read, Grep\n---\nYou review changes. Report problems with file and line.\n",
    "hooks/hooks.json": JSON.stringify(
      {
        description: "no bash",
        hooks: {
          PreToolUse: [
            {
              matcher: "Bash",
              hooks: [{ type: "command", command: 'bash "${CLAUDE_PLUGIN_ROOT}/scripts/no-bash.sh"' }],
            },
          ],
        },
      },
      null,
      2,
    ),
    "scripts/no-bash.sh":
      '#!/usr/bin/env bash\ncat > /dev/null\necho "demo-tools: $(cat "$CLAUDE_PLUGIN_ROOT/policy.txt")" >&2\nexit 2\n',
    ".mcp.json": JSON.stringify(
      { mcpServers: { everything: { command: process.execPath, args: ["${CLAUDE_PLUGIN_ROOT}/mcp/start.mjs"] } } },
      null,
      2,
    ),
    "mcp/start.mjs": `await import(${JSON.stringify(pathToFileURL(EVERYTHING).href)});\n`,
  };
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    "git",
    ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", ...args],
    { cwd, encoding: "utf8" },
  ).trim();
}

function gitRepo(dir: string, files: Record<string, string>): string {
  writeFiles(dir, files);
  git(dir, "init", "-q");
  git(dir, "add", "-A");
  git(dir, "commit", "-qm", "first");
  return dir;
}

const PRESET = `extends: default
provider: scripted
plugins:
  - provider-scripted:
      recordTo: requests.jsonl
      replies:
        - toolCalls:
            - { name: bash, arguments: { command: "echo bash ran" } }
            - { name: mcp__everything__echo, arguments: { message: ping } }
        - text: done
`;

function sandbox() {
  const base = tempDir("coil-ccplug-");
  const project = writeFiles(join(base, "project"), { "preset.yaml": PRESET });
  const env = sandboxEnv(base);
  const home = env.COIL_HOME!;
  const io = { cwd: project, env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr } as never;
  const opts = (project_ = false) => ({ home, project: project_, cwd: project, io });
  const lock = (dir = join(home, "packages")) => JSON.parse(readFileSync(join(dir, "coil-lock.json"), "utf8"));
  return { base, project, env, home, opts, lock };
}

interface Observed {
  results: { toolName: string; isError: boolean; text: string }[];
  firstUserText: string;
  system: string;
  tools: string[];
  taskDescription: string;
  stderr: string;
}

/** One `coil -p` run with the fixture preset: what the tools returned and what the model was sent. */
async function observe(s: ReturnType<typeof sandbox>, prompt: string, extra: string[] = []): Promise<Observed> {
  const requestsFile = join(s.project, "requests.jsonl");
  if (existsSync(requestsFile)) execFileSync("rm", [requestsFile]);
  const ran = await coil(s.project, ["--preset", "./preset.yaml", "--mode", "json", ...extra, "-p", prompt], s.env);
  expect(ran.code, ran.stderr).toBe(0);
  const events = ran.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const results = events
    .filter((e) => e.type === "tool_execution_end")
    .map((e) => ({
      toolName: e.result.toolName,
      isError: e.result.isError,
      text: e.result.content.map((c: { text?: string }) => c.text ?? "").join(""),
    }));
  const first = JSON.parse(readFileSync(requestsFile, "utf8").split("\n")[0]!);
  const user = first.messages.find((m: { role: string }) => m.role === "user");
  const firstUserText =
    typeof user.content === "string"
      ? user.content
      : user.content.map((c: { text?: string }) => c.text ?? "").join("\n");
  const tools: { name: string; description: string }[] = first.tools ?? [];
  return {
    results,
    firstUserText,
    system: first.system.map((b: { text: string }) => b.text).join("\n"),
    tools: tools.map((t) => t.name),
    taskDescription: tools.find((t) => t.name === "task")?.description ?? "",
    stderr: ran.stderr,
  };
}

function expectActive(o: Observed, root: string) {
  expect(o.firstUserText).toContain("Review src/app.ts against the checklist in");
  expect(o.firstUserText).toContain(`${root}/checklist.md`);
  expect(o.system).toContain("release-notes");
  expect(o.system).toContain("Write release notes from the commits since the last tag");
  expect(o.taskDescription).toContain("demo-tools:reviewer: Reviews a change for naming and tests");
  expect(o.tools).toContain("mcp__everything__echo");
  const [bash, echo] = o.results;
  expect(bash).toMatchObject({ toolName: "bash", isError: true });
  expect(bash!.text).toContain("demo-tools: bash is off limits in this repository");
  expect(echo).toMatchObject({ toolName: "mcp__everything__echo", isError: false });
  expect(echo!.text).toContain("ping");
}

function expectInactive(o: Observed) {
  expect(o.system).not.toContain("release-notes");
  expect(o.taskDescription).not.toContain("demo-tools:reviewer");
  expect(o.tools).not.toContain("mcp__everything__echo");
  const [bash, echo] = o.results;
  expect(bash).toMatchObject({ toolName: "bash", isError: false });
  expect(bash!.text).toContain("bash ran");
  expect(echo).toMatchObject({ toolName: "mcp__everything__echo", isError: true });
}

beforeAll(() => requireBuild());
afterAll(cleanTemps);

describe("Claude Code plugins as coil packages", () => {
  it("installs from a folder: the command expands, the skill is indexed, the agent is listed, the hook blocks, the MCP tool runs; disable, enable and remove", async () => {
    const s = sandbox();
    const src = writeFiles(join(s.base, "src", "demo-tools"), pluginFiles());
    expect(await detectClaudePlugin(src, s.project, s.home)).toBe(true);

    const report = await installClaudePlugin(src, s.opts());
    const root = join(s.home, "claude-plugins", "demo-tools");
    expect(report).toMatchObject({
      name: "demo-tools",
      version: "1.2.0",
      scope: "user",
      root,
      enabled: true,
      commands: ["/demo-tools:git:summary", "/demo-tools:review"],
      skills: ["release-notes"],
      agents: ["demo-tools:reviewer"],
      hooks: ["PreToolUse(Bash)"],
      mcpServers: ["everything"],
    });
    expect(existsSync(join(root, "scripts", "no-bash.sh"))).toBe(true);
    expect(s.lock().claudePlugins["demo-tools"]).toMatchObject({
      spec: src,
      source: "dir",
      version: "1.2.0",
      resolved: src,
      enabled: true,
      integrity: expect.stringMatching(/^sha256-/),
    });

    expectActive(await observe(s, "/demo-tools:review src/app.ts"), root);

    await setClaudePluginEnabled("demo-tools", false, s.opts());
    expect(s.lock().claudePlugins["demo-tools"].enabled).toBe(false);
    expect((await listClaudePlugins(s.opts())).map((p) => [p.name, p.enabled])).toEqual([["demo-tools", false]]);
    const disabled = await observe(s, "/demo-tools:review src/app.ts");
    expectInactive(disabled);
    expect(disabled.firstUserText).not.toContain("against the checklist");

    await setClaudePluginEnabled("demo-tools", true, s.opts());
    expectActive(await observe(s, "/demo-tools:review src/app.ts"), root);

    const removed = await removeClaudePlugin("demo-tools", s.opts());
    expect(removed.commands).toContain("/demo-tools:review");
    expect(existsSync(root)).toBe(false);
    expect(s.lock().claudePlugins).toBeUndefined();
    expectInactive(await observe(s, "/demo-tools:review src/app.ts"));
    await expect(removeClaudePlugin("demo-tools", s.opts())).rejects.toThrow(
      /no Claude Code plugin 'demo-tools' is installed in/,
    );
  }, 60_000);

  it("installs from a local git repository (file:// URL) and records the commit; from a tarball with one top-level folder", async () => {
    const s = sandbox();
    const repo = gitRepo(join(s.base, "repo"), pluginFiles());
    const commit = git(repo, "rev-parse", "HEAD");
    const url = pathToFileURL(repo).href;
    expect(await detectClaudePlugin(url, s.project, s.home)).toBe(true);
    const report = await installClaudePlugin(url, s.opts());
    expect(report.hooks).toEqual(["PreToolUse(Bash)"]);
    const root = join(s.home, "claude-plugins", "demo-tools");
    expect(existsSync(join(root, ".git"))).toBe(false);
    expect(s.lock().claudePlugins["demo-tools"]).toMatchObject({
      spec: url,
      source: "git",
      resolved: `${url}#${commit}`,
    });
    expectActive(await observe(s, "/demo-tools:review src/app.ts"), root);

    const tgz = join(s.base, "other.tgz");
    writeFiles(join(s.base, "tar", "package"), pluginFiles("other-tools", "0.3.0"));
    execFileSync("tar", ["-czf", tgz, "-C", join(s.base, "tar"), "package"]);
    expect(await detectClaudePlugin(tgz, s.project, s.home)).toBe(true);
    const fromTar = await installClaudePlugin(tgz, s.opts());
    expect(fromTar).toMatchObject({
      name: "other-tools",
      version: "0.3.0",
      commands: ["/other-tools:git:summary", "/other-tools:review"],
    });
    expect(Object.keys(s.lock().claudePlugins)).toEqual(["demo-tools", "other-tools"]);
  }, 60_000);

  it("plugin.json custom paths add to the default folders (files or folders, hooks and MCP servers by path or inline); paths outside the plugin are ignored; a strict:false marketplace entry stands in for plugin.json", async () => {
    const s = sandbox();
    const src = writeFiles(join(s.base, "custom"), {
      ".claude-plugin/plugin.json": JSON.stringify({
        name: "custom",
        commands: ["./extra/special.md", "./more-commands", "../outside"],
        agents: "./team-agents/",
        skills: "./more-skills",
        hooks: "./config/hooks.json",
        mcpServers: {
          inline: { command: "${CLAUDE_PLUGIN_ROOT}/bin/server", args: ["--root", "${CLAUDE_PLUGIN_ROOT}"] },
        },
        lspServers: "./config/lsp.json",
      }),
      "config/lsp.json": JSON.stringify({ gopls: { command: "gopls", extensionToLanguage: { ".go": "go" } } }),
      "commands/plain.md": "Plain.",
      "extra/special.md": "Special $ARGUMENTS.",
      "more-commands/deploy.md": "Deploy.",
      "team-agents/checker.md": "---\nname: checker\ndescription: Checks\n---\nCheck.\n",
      "more-skills/notes/SKILL.md": "---\nname: notes\ndescription: Notes\n---\nNotes.\n",
      "config/hooks.json": JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command: "true" }] }] } }),
    });
    writeFiles(s.base, { "outside/evil.md": "Outside." });
    const report = await installClaudePlugin(src, s.opts());
    expect(report).toMatchObject({
      commands: ["/custom:plain", "/custom:special", "/custom:deploy"],
      agents: ["custom:checker"],
      skills: ["notes"],
      hooks: ["Stop"],
      mcpServers: ["inline"],
      lspServers: ["gopls"],
    });
    const [servers] = claudePluginMcpServers({ home: s.home });
    expect(servers!.servers.inline).toEqual({
      command: `${report.root}/bin/server`,
      args: ["--root", report.root],
      env: { CLAUDE_PLUGIN_ROOT: report.root },
    });

    const market = writeFiles(join(s.base, "loose-market"), {
      ".claude-plugin/marketplace.json": JSON.stringify({
        name: "loose",
        metadata: { pluginRoot: "./plugins" },
        plugins: [{ name: "bare", source: "bare", strict: false, version: "0.1.0", description: "No plugin.json" }],
      }),
      "plugins/bare/commands/hello.md": "Hello.",
    });
    expect((await coil(s.project, ["marketplace", "add", market], s.env)).code).toBe(0);
    expect(await installClaudePlugin("bare@loose", s.opts())).toMatchObject({
      name: "bare",
      version: "0.1.0",
      commands: ["/bare:hello"],
    });
  });

  it("a coil package, an npm name and an unknown <plugin>@<marketplace> are not Claude Code plugins; a folder without plugin.json installs from its folders, one without any component is refused", async () => {
    const s = sandbox();
    expect(await detectClaudePlugin(join(ROOT, "examples", "coil-bundle-demo"), s.project, s.home)).toBe(false);
    expect(await detectClaudePlugin("left-pad@1.3.0", s.project, s.home)).toBe(false);
    expect(await detectClaudePlugin("demo-tools@team-tools", s.project, s.home)).toBe(false);
    // Claude Code installs a plugin without plugin.json from its folders (#28.4)
    const bare = writeFiles(join(s.base, "bare"), { "commands/x.md": "x" });
    expect(await detectClaudePlugin(bare, s.project, s.home)).toBe(true);
    expect(await installClaudePlugin(bare, s.opts())).toMatchObject({ name: "bare", commands: ["/bare:x"] });
    const empty = writeFiles(join(s.base, "empty"), { "README.md": "nothing here" });
    await expect(installClaudePlugin(empty, s.opts())).rejects.toThrow(
      `${empty} is not a Claude Code plugin: no .claude-plugin/plugin.json, and none of commands/, agents/, skills/, hooks/hooks.json, .mcp.json`,
    );
  });

  it("marketplaces: coil marketplace add (folder and git), list, install <plugin>@<marketplace> (relative and git sources), update, remove", async () => {
    const s = sandbox();
    const remote = gitRepo(join(s.base, "remote-plugin"), pluginFiles("remote-tools", "2.0.0"));
    const market = gitRepo(join(s.base, "market"), {
      ".claude-plugin/marketplace.json": JSON.stringify({
        name: "team-tools",
        owner: { name: "Team" },
        plugins: [
          { name: "demo-tools", source: "./plugins/demo-tools", description: "Review helpers" },
          {
            name: "remote-tools",
            source: { source: "url", url: pathToFileURL(remote).href },
            description: "From another repository",
          },
        ],
      }),
      ...Object.fromEntries(Object.entries(pluginFiles()).map(([k, v]) => [`plugins/demo-tools/${k}`, v])),
    });

    const added = await coil(s.project, ["marketplace", "add", market], s.env);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain("added marketplace team-tools");
    expect(added.stdout).toContain("coil install <plugin>@team-tools");
    const listed = await coil(s.project, ["marketplace", "list"], s.env);
    expect(listed.stdout).toContain("demo-tools@team-tools  Review helpers");
    expect(listed.stdout).toContain("remote-tools@team-tools  From another repository");

    expect(await detectClaudePlugin("demo-tools@team-tools", s.project, s.home)).toBe(true);
    const report = await installClaudePlugin("demo-tools@team-tools", s.opts());
    expect(report).toMatchObject({ name: "demo-tools", marketplace: "team-tools", skills: ["release-notes"] });
    expect(s.lock().claudePlugins["demo-tools"]).toMatchObject({
      spec: "demo-tools@team-tools",
      marketplace: "team-tools",
      source: "dir",
    });
    expectActive(await observe(s, "/demo-tools:review src/app.ts"), join(s.home, "claude-plugins", "demo-tools"));

    const fromGit = await installClaudePlugin("remote-tools@team-tools", s.opts());
    expect(fromGit).toMatchObject({ name: "remote-tools", version: "2.0.0", agents: ["remote-tools:reviewer"] });
    expect(s.lock().claudePlugins["remote-tools"].resolved).toBe(
      `${pathToFileURL(remote).href}#${git(remote, "rev-parse", "HEAD")}`,
    );
    await expect(installClaudePlugin("nope@team-tools", s.opts())).rejects.toThrow("marketplace 'team-tools'");

    // A git marketplace is cloned; update fetches its new commit.
    const gitAdded = await coil(s.project, ["marketplace", "add", pathToFileURL(market).href], s.env);
    expect(gitAdded.code, gitAdded.stderr).toBe(0);
    expect(existsSync(join(s.home, "claude-marketplaces", "team-tools", ".claude-plugin", "marketplace.json"))).toBe(
      true,
    );
    writeFiles(market, { "plugins/demo-tools/commands/extra.md": "Extra." });
    git(market, "add", "-A");
    git(market, "commit", "-qm", "second");
    const updated = await coil(s.project, ["marketplace", "update", "team-tools"], s.env);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toContain(
      `team-tools: updated to ${pathToFileURL(market).href}#${git(market, "rev-parse", "HEAD")}`,
    );
    expect((await installClaudePlugin("demo-tools@team-tools", s.opts())).commands).toContain("/demo-tools:extra");

    const removed = await coil(s.project, ["marketplace", "remove", "team-tools"], s.env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(existsSync(join(s.home, "claude-marketplaces", "team-tools"))).toBe(false);
    expect((await coil(s.project, ["marketplace", "list"], s.env)).stdout).toContain("no marketplaces");
    const bad = await coil(s.project, ["marketplace", "add", s.base], s.env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      `coil marketplace: ${s.base} is not a Claude Code marketplace: .claude-plugin/marketplace.json is missing`,
    );
  }, 90_000);

  it("coil install of an npm package keeps the lock file's Claude Code plugins", async () => {
    const s = sandbox();
    await installClaudePlugin(writeFiles(join(s.base, "src", "demo-tools"), pluginFiles()), s.opts());
    const npm = await coil(s.project, ["install", join(ROOT, "examples", "coil-bundle-demo")], s.env);
    expect(npm.code, npm.stderr).toBe(0);
    expect(s.lock().packages["coil-bundle-demo"]).toMatchObject({ version: "1.0.0" });
    expect(s.lock().claudePlugins["demo-tools"]).toMatchObject({ source: "dir", enabled: true });
  }, 60_000);

  it("a team preset names a marketplace and a plugin: without a terminal the run goes on and says so; with --yes the first run installs them and uses them", async () => {
    const s = sandbox();
    writeFiles(join(s.base, "market"), {
      ".claude-plugin/marketplace.json": JSON.stringify({
        name: "team-tools",
        plugins: [{ name: "demo-tools", source: "./plugins/demo-tools" }],
      }),
      ...Object.fromEntries(Object.entries(pluginFiles()).map(([k, v]) => [`plugins/demo-tools/${k}`, v])),
    });
    writeFiles(s.project, {
      "team.yaml":
        "extends: ./preset.yaml\nplugins:\n  - packages:\n      marketplaces: { team-tools: ../market }\n      claudePlugins: [demo-tools@team-tools]\n",
    });
    const team = async (extra: string[]) => {
      writeFiles(s.project, { "preset.yaml": PRESET });
      return observe(s, "/demo-tools:review src/app.ts", ["--preset", "./team.yaml", ...extra]);
    };
    const without = await team([]);
    expect(without.stderr).toContain(
      `coil: the preset needs what is not installed (this run goes on without it):\n  Claude Code marketplace team-tools (../market)\n  Claude Code plugin demo-tools@team-tools\n  pass --yes to install it on first use`,
    );
    expectInactive(without);

    const first = await team(["--yes"]);
    expect(first.stderr).toContain("coil: added marketplace team-tools");
    expect(first.stderr).toContain("coil: installed Claude Code plugin demo-tools@1.2.0 from marketplace team-tools");
    expectActive(first, join(s.home, "claude-plugins", "demo-tools"));

    const next = await team([]);
    expect(next.stderr).not.toContain("the preset needs");
    expectActive(next, join(s.home, "claude-plugins", "demo-tools"));
  }, 60_000);

  it.skipIf(!hasTmux)(
    "on a terminal, the first run asks before installing what the team preset names, then uses it",
    async () => {
      const s = sandbox();
      writeFiles(join(s.base, "market"), {
        ".claude-plugin/marketplace.json": JSON.stringify({
          name: "team-tools",
          plugins: [{ name: "demo-tools", source: "./plugins/demo-tools" }],
        }),
        ...Object.fromEntries(Object.entries(pluginFiles()).map(([k, v]) => [`plugins/demo-tools/${k}`, v])),
      });
      writeFiles(s.project, {
        "team.yaml":
          "extends: ./preset.yaml\nplugins:\n  - packages:\n      marketplaces: { team-tools: ../market }\n      claudePlugins: [demo-tools@team-tools]\n",
      });
      const pane = new Tmux({
        dir: s.base,
        cwd: s.project,
        env: { COIL_HOME: s.home, HOME: s.env.HOME! },
        command: `${process.execPath} ${BIN} --preset ./team.yaml -p "/demo-tools:review src/app.ts"`,
        cols: 160,
      }).start();
      try {
        await pane.waitFor("install? [y/N]");
        expect(pane.screen()).toContain("Claude Code plugin demo-tools@team-tools");
        pane.type("y");
        pane.keys("Enter");
        await pane.waitFor("[exited 0]", 30_000);
      } finally {
        pane.kill();
      }
      const first = JSON.parse(readFileSync(join(s.project, "requests.jsonl"), "utf8").split("\n")[0]!);
      expect(JSON.stringify(first.messages)).toContain("Review src/app.ts against the checklist in");
      expect(existsSync(join(s.home, "claude-plugins", "demo-tools", ".claude-plugin", "plugin.json"))).toBe(true);
    },
    60_000,
  );

  it("restores what the lock records (a teammate's checkout): git at the locked commit, up-to-date plugins left alone, a changed tarball refused; update moves to the new tip and keeps the enabled state", async () => {
    const s = sandbox();
    const repo = gitRepo(join(s.base, "repo"), pluginFiles());
    const locked = git(repo, "rev-parse", "HEAD");
    await installClaudePlugin(pathToFileURL(repo).href, s.opts(true));
    writeFiles(repo, { "commands/later.md": "Added after the lock." });
    git(repo, "add", "-A");
    git(repo, "commit", "-qm", "later");
    const plugins = join(s.project, ".coil", "claude-plugins");
    execFileSync("rm", ["-rf", plugins]);

    const restored = await restoreClaudePlugins(s.opts(true));
    expect(restored.problems).toEqual([]);
    expect(restored.installed.map((r) => [r.name, r.scope])).toEqual([["demo-tools", "project"]]);
    expect(restored.installed[0]!.commands).not.toContain("/demo-tools:later");
    expect(existsSync(join(plugins, "demo-tools", "commands", "review.md"))).toBe(true);
    expect(s.lock(join(s.project, ".coil", "packages")).claudePlugins["demo-tools"].resolved).toBe(
      `${pathToFileURL(repo).href}#${locked}`,
    );
    expect(await restoreClaudePlugins(s.opts(true))).toMatchObject({
      installed: [],
      upToDate: ["demo-tools"],
      problems: [],
    });

    // update: the branch's new tip, still disabled if it was
    await setClaudePluginEnabled("demo-tools", false, s.opts(true));
    writeFiles(repo, { ".claude-plugin/plugin.json": JSON.stringify({ name: "demo-tools", version: "1.3.0" }) });
    git(repo, "commit", "-qam", "1.3.0");
    expect(await updateClaudePlugins([], s.opts(true))).toEqual({ lines: ["demo-tools 1.2.0 → 1.3.0"], problems: [] });
    expect(await updateClaudePlugins(["demo-tools", "nope"], s.opts(true))).toEqual({
      lines: ["demo-tools 1.3.0 (up to date)"],
      problems: [`nope: not installed in ${plugins}`],
    });
    expect(s.lock(join(s.project, ".coil", "packages")).claudePlugins["demo-tools"]).toMatchObject({
      version: "1.3.0",
      enabled: false,
      resolved: `${pathToFileURL(repo).href}#${git(repo, "rev-parse", "HEAD")}`,
    });
    expect(existsSync(join(plugins, "demo-tools", "commands", "later.md"))).toBe(true);

    const tgz = join(s.base, "p.tgz");
    writeFiles(join(s.base, "tar", "package"), pluginFiles("other-tools"));
    execFileSync("tar", ["-czf", tgz, "-C", join(s.base, "tar"), "package"]);
    await installClaudePlugin(tgz, s.opts());
    writeFiles(join(s.base, "tar", "package"), { "commands/review.md": "Something else entirely." });
    execFileSync("tar", ["-czf", tgz, "-C", join(s.base, "tar"), "package"]);
    execFileSync("rm", ["-rf", join(s.home, "claude-plugins", "other-tools")]);
    const refused = await restoreClaudePlugins(s.opts());
    expect(refused.installed).toEqual([]);
    expect(refused.problems).toEqual([
      expect.stringMatching(
        /^other-tools: other-tools from .*p\.tgz: integrity sha256-\S+ does not match the lock's sha256-\S+; the lock file was left as it is/,
      ),
    ]);
    expect(existsSync(join(s.home, "claude-plugins", "other-tools"))).toBe(false);
  }, 60_000);

  it("a project-level plugin contributes only while the project is trusted", async () => {
    const s = sandbox();
    const src = writeFiles(join(s.base, "src", "demo-tools"), pluginFiles());
    const report = await installClaudePlugin(src, s.opts(true));
    const root = join(s.project, ".coil", "claude-plugins", "demo-tools");
    expect(report).toMatchObject({
      scope: "project",
      root,
      notes: ["project plugins contribute only while the project is trusted (coil trust)"],
    });
    expect(s.lock(join(s.project, ".coil", "packages")).claudePlugins["demo-tools"]).toMatchObject({ source: "dir" });
    expectInactive(await observe(s, "hello"));
    expectActive(await observe(s, "/demo-tools:review src/app.ts", ["--trust"]), root);
  }, 60_000);
});

describe("Claude Code plugins through the coil commands a user types", () => {
  it("coil install <folder>, coil list, disable, enable, remove; coil install with no spec restores from the lock file; coil update fetches again", async () => {
    const s = sandbox();
    const src = writeFiles(join(s.base, "src", "demo-tools"), pluginFiles());
    const root = join(s.home, "claude-plugins", "demo-tools");
    const cli = async (...args: string[]) => {
      const r = await coil(s.project, args, s.env);
      expect(r.code, `coil ${args.join(" ")}: ${r.stderr}`).toBe(0);
      return r.stdout;
    };
    const installed = await cli("install", src);
    expect(installed).toContain("installed Claude Code plugin demo-tools@1.2.0");
    expect(installed).toContain("/demo-tools:review");
    expectActive(await observe(s, "/demo-tools:review src/app.ts"), root);

    expect(await cli("list")).toMatch(/enabled Claude Code plugin demo-tools@1\.2\.0/);
    await cli("disable", "demo-tools");
    expect(await cli("list")).toMatch(/disabled Claude Code plugin demo-tools@1\.2\.0/);
    expectInactive(await observe(s, "/demo-tools:review src/app.ts"));
    await cli("enable", "demo-tools");
    expectActive(await observe(s, "/demo-tools:review src/app.ts"), root);

    // A teammate's checkout: the lock file is there, the plugin folder is not.
    execFileSync("rm", ["-rf", root]);
    expect(await cli("install")).toContain("installed Claude Code plugin demo-tools@1.2.0");
    expectActive(await observe(s, "/demo-tools:review src/app.ts"), root);

    // A new version at the source: coil update fetches it again.
    writeFiles(src, { ".claude-plugin/plugin.json": JSON.stringify({ name: "demo-tools", version: "1.3.0" }) });
    expect(await cli("update", "demo-tools")).toContain("1.3.0");
    expect(s.lock().claudePlugins["demo-tools"].version).toBe("1.3.0");

    await cli("remove", "demo-tools");
    expect(existsSync(root)).toBe(false);
    expectInactive(await observe(s, "/demo-tools:review src/app.ts"));
  }, 90_000);
});
