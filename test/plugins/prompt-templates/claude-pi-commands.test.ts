/**
 * Commands and prompt templates where Claude Code and Pi keep them, and their bodies as Claude Code runs
 * them: subfolders, `$ARGUMENTS`, `` !`cmd` ``, `@file`, `allowed-tools` and `model` for one run, trust.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { Agent, type AgentMessage, type ProviderRequest, type UserMessage } from "../../../api/index.js";
import { findCommand } from "../../../lib/front-end.js";
import { testHost } from "../../support/host.js";
import scriptedPlugin, { type ScriptedService } from "../../../plugins/provider-scripted/index.js";
import templates, { type PromptTemplatesService } from "../../../plugins/prompt-templates/index.js";
import toolsCoding from "../../../plugins/tools-coding/index.js";
import systemPrompt from "../../../plugins/system-prompt/index.js";
import { cleanTemps, coil, requireBuild, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
  cleanTemps();
});
const saved = {
  COIL_HOME: process.env.COIL_HOME,
  HOME: process.env.HOME,
  CLAUDE_CONFIG_DIR: process.env.CLAUDE_CONFIG_DIR,
  PI_CODING_AGENT_DIR: process.env.PI_CODING_AGENT_DIR,
};
let root: string;
let project: string;
let cwd: string;
let home: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "coil-cc-commands-")));
  temps.push(root);
  project = join(root, "repo");
  cwd = join(project, "packages", "app");
  home = join(root, "home");
  mkdirSync(join(project, ".git"), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  process.env.HOME = home;
  process.env.COIL_HOME = join(root, "coil-home");
  delete process.env.CLAUDE_CONFIG_DIR;
  delete process.env.PI_CODING_AGENT_DIR;
});
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

function write(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

/** A real host and agent on the scripted provider, with the coding tools and prompt-templates. */
function start(options: Record<string, unknown> = {}, trusted = true, withSystemPrompt = false) {
  const host = testHost({ cwd, projectTrusted: trusted });
  const logs: string[] = [];
  host.subscribe("diagnostic", (e) => void (e.type === "diagnostic" && logs.push(e.message)));
  host.install(scriptedPlugin, { chunkSize: 64 }, { ref: "provider-scripted" });
  host.install(toolsCoding, {}, { ref: "tools-coding" });
  // system-prompt comes first, as in the default preset.
  // toolList: the per-tool lines, to check the prompt names only the tools a command's run offers.
  if (withSystemPrompt)
    host.install(systemPrompt, { docs: false, date: false, toolList: true }, { ref: "system-prompt" });
  host.install(templates, { builtin: false, packages: false, ...options }, { ref: "prompt-templates" });
  const scripted = host.services.get("scripted") as ScriptedService;
  const agent = new Agent(host, {
    provider: "scripted",
    model: { id: "scripted", provider: "scripted", contextWindow: 200_000, maxOutput: 32_000 },
  });
  /** Type `/name args` as a front end does: run the command, send the prompt it returns. */
  const type = async (text: string) => {
    const slash = findCommand(host, text);
    if (!slash) throw new Error(`no command for ${text}`);
    const out = await slash.command.run(slash.args, agent);
    if (!out || typeof out === "string") return out;
    return agent.prompt(out.prompt);
  };
  return { host, agent, logs, scripted, requests: scripted.requests as ProviderRequest[], type };
}

const userText = (m: AgentMessage | undefined) => {
  const u = m as UserMessage;
  return typeof u.content === "string"
    ? u.content
    : u.content.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("\n");
};

describe("where Claude Code and Pi keep commands", () => {
  it("finds .claude/commands (with subfolders) and .pi/prompts at the project root from a subdirectory, and the user's ~/.claude/commands and ~/.pi/agent/prompts", async () => {
    write(
      join(project, ".claude/commands/review.md"),
      "---\ndescription: Review the diff\nargument-hint: [focus]\n---\nReview it: $ARGUMENTS\n",
    );
    write(
      join(project, ".claude/commands/frontend/component.md"),
      "---\ndescription: Make a component\n---\nCreate component $1\n",
    );
    write(
      join(project, ".claude/commands/backend/component.md"),
      "---\ndescription: Make a backend component\n---\nCreate service $1\n",
    );
    write(join(project, ".pi/prompts/pi-project.md"), "Pi project prompt ${@:2}\n");
    write(join(home, ".claude/commands/git/wip.md"), "---\ndescription: Commit work in progress\n---\nCommit WIP\n");
    write(join(home, ".claude/commands/review.md"), "the user's own review, shadowed by the project's\n");
    write(join(home, ".pi/agent/prompts/pi-user.md"), "---\ndescription: From Pi\n---\nPi user prompt $1\n");
    const { host, logs } = start();
    expect(host.commands.get("review")).toMatchObject({ description: "Review the diff", argumentHint: "[focus]" });
    // A subfolder's command is named after its folder, as in Claude Code 2.1; the bare name only says which was meant.
    expect(host.commands.get("backend:component")).toMatchObject({ description: "Make a backend component" });
    expect(host.commands.get("frontend:component")).toMatchObject({ description: "Make a component" });
    expect(host.commands.get("git:wip")).toMatchObject({ description: "Commit work in progress" });
    expect(await host.commands.get("component")!.run("Auth", undefined as never)).toBe(
      "Unknown command /component. Did you mean /backend:component or /frontend:component? (A command in a subfolder of .claude/commands is named after its folder, as in Claude Code.)",
    );
    expect(host.commands.get("pi-user")).toMatchObject({ description: "From Pi" });
    expect(await host.commands.get("frontend:component")!.run("Button", undefined as never)).toEqual({
      prompt: "Create component Button",
    });
    expect(await host.commands.get("backend:component")!.run("Auth", undefined as never)).toEqual({
      prompt: "Create service Auth",
    });
    expect(await host.commands.get("pi-project")!.run("a b c", undefined as never)).toEqual({
      prompt: "Pi project prompt b c",
    });
    const list = (await host.commands.get("templates")!.run("", undefined as never)) as string;
    expect(list).toContain("/frontend:component  Make a component  [project]");
    expect(list).toMatch(
      /not loaded: .*home\/\.claude\/commands\/review\.md: \/review is already defined by .*repo\/\.claude\/commands\/review\.md/,
    );
    expect(logs.join("\n")).toMatch(/home\/\.claude\/commands\/review\.md not loaded/);
    // The service lists every folder looked in, for `coil doctor`.
    const dirs = (host.services.get("prompt-templates") as PromptTemplatesService).dirs();
    expect(dirs.map((d) => [d.dir.replace(root, "~"), d.source, d.exists, d.loaded])).toEqual([
      ["~/repo/.coil/prompt-templates", "project", false, 0],
      ["~/repo/.agents/prompt-templates", "project", false, 0],
      ["~/repo/.claude/commands", "project", true, 3],
      ["~/repo/.pi/prompts", "project", true, 1],
      ["~/coil-home/prompt-templates", "user", false, 0],
      ["~/home/.claude/commands", "user", true, 1],
      ["~/home/.pi/agent/prompts", "user", true, 1],
    ]);
  });

  it("a home folder that is a git repository (dotfiles) does not make the user's ~/.claude/commands an untrusted project's", async () => {
    mkdirSync(join(home, ".git"), { recursive: true });
    cwd = join(home, "scratch");
    mkdirSync(cwd, { recursive: true });
    write(join(home, ".claude/commands/hello.md"), "Say !`echo hi-from-user`\n");
    const { host, agent } = start({}, false);
    expect(await host.commands.get("templates")!.run("", undefined as never)).toMatch(/^\/hello .*\[user\]$/m);
    const out = (await host.commands.get("hello")!.run("", agent)) as { prompt: string };
    expect(out.prompt).toBe("Say hi-from-user");
  });

  it("compat.claude and compat.pi switch those folders off", () => {
    write(join(project, ".claude/commands/cc.md"), "from Claude Code\n");
    write(join(home, ".pi/agent/prompts/pi.md"), "from Pi\n");
    const off = start({ compat: { claude: false, pi: false } });
    expect(off.host.commands.get("cc")).toBeUndefined();
    expect(off.host.commands.get("pi")).toBeUndefined();
    const on = start({ compat: { pi: false } });
    expect(on.host.commands.get("cc")).toBeDefined();
    expect(on.host.commands.get("pi")).toBeUndefined();
  });

  it("commandDirs adds a folder under a namespace, with ${CLAUDE_PLUGIN_ROOT} set to the plugin's folder", async () => {
    const plugin = join(root, "plugins", "acme");
    write(
      join(plugin, "commands/deploy.md"),
      "---\ndescription: Deploy\n---\nRun ${CLAUDE_PLUGIN_ROOT}/scripts/deploy.sh for $ARGUMENTS (keep ${OTHER})\n",
    );
    const { host } = start({
      commandDirs: [{ path: join(plugin, "commands"), namespace: "acme", pluginRoot: plugin }],
    });
    expect(host.commands.get("deploy")).toBeUndefined();
    expect(await host.commands.get("acme:deploy")!.run("staging", undefined as never)).toEqual({
      prompt: `Run ${plugin}/scripts/deploy.sh for staging (keep \${OTHER})`,
    });
  });
});

describe("command bodies as Claude Code runs them", () => {
  it("a user command runs its !`cmd` lines as bash tool calls, inlines @file and $ARGUMENTS, and sends the result", async () => {
    write(join(cwd, "notes.txt"), "remember the milk\n");
    write(
      join(home, ".claude/commands/ctx/status.md"),
      "---\ndescription: Status\n---\nArgs: $ARGUMENTS\nFirst: $1\nShell: !`echo hello-$1`\nFile: @notes.txt\n",
    );
    const { type, requests, scripted, agent } = start();
    scripted.push({ text: "ok" });
    const events: string[] = [];
    agent.subscribe(
      (e) => void (e.type === "tool_execution_start" && events.push(`${e.toolName}:${JSON.stringify(e.args)}`)),
    );
    await type("/ctx:status one two");
    const sent = userText(requests[0]!.messages.at(-1));
    expect(sent).toContain("Args: one two\nFirst: one\nShell: hello-one\nFile: @notes.txt");
    expect(sent).toContain('<file path="notes.txt">\nremember the milk\n</file>');
    // The `!` line went through the tool pipeline as a bash call (gates and sandbox apply there).
    expect(events).toEqual([`bash:${JSON.stringify({ command: "echo hello-one" })}`]);
  });

  it("an untrusted project's command leaves its !`cmd` unrun with a note, and attaches no file from outside the project", async () => {
    const marker = join(root, "ran");
    write(join(root, "secret.txt"), "outside\n");
    write(join(project, "inside.txt"), "inside\n");
    write(
      join(project, ".claude/commands/setup.md"),
      `Setup: !\`touch ${marker}\`\nSee @${join(root, "secret.txt")} and @${join(project, "inside.txt")}\n`,
    );
    const { host, logs } = start({}, false);
    const out = (await host.commands.get("setup")!.run("", undefined as never)) as { prompt: string };
    expect(out.prompt).toContain(
      `Setup: [not run: !\`touch ${marker}\`: commands in an untrusted project's templates do not run]`,
    );
    expect(out.prompt).toContain("inside\n</file>");
    expect(out.prompt).not.toContain("outside\n");
    expect(logs.join("\n")).toMatch(/not run: .*setup\.md is a project file and this project is not trusted/);
    expect(logs.join("\n")).toMatch(/secret\.txt: not attached: it is outside the project/);
    const { existsSync } = await import("node:fs");
    expect(existsSync(marker)).toBe(false);
  });

  it("allowed-tools limits the tools sent and run for that command's run only; Bash(prefix:*) limits bash", async () => {
    write(
      join(project, ".claude/commands/commit.md"),
      "---\nallowed-tools: Bash(git status:*), Bash(echo:*), Read\n---\nCommit: $ARGUMENTS\n",
    );
    const { type, requests, scripted, agent } = start({}, true, true);
    scripted.push(
      {
        toolCalls: [
          { name: "bash", arguments: { command: "echo fine" } },
          { name: "bash", arguments: { command: "echo fine && rm -rf x" } },
          { name: "write", arguments: { path: "x.txt", content: "no" } },
        ],
      },
      { text: "done" },
      { text: "next prompt" },
    );
    await type("/commit all");
    const names = (r: ProviderRequest) => r.tools.map((t) => t.name).sort();
    expect(names(requests[0]!)).toEqual(["bash", "read"]);
    expect(names(requests[1]!)).toEqual(["bash", "read"]);
    // The system prompt describes only the tools this run offers.
    const toolsBlock = (r: ProviderRequest) =>
      r.system.map((b) => b.text).find((t) => t.startsWith("Tools you can call:"))!;
    expect(toolsBlock(requests[0]!)).not.toMatch(/^- (write|edit)/m);
    const results = agent.state.messages.filter((m) => m.role === "toolResult");
    expect(results.map((r) => [r.isError, userText({ ...r, role: "user" } as never)])).toEqual([
      [false, expect.stringContaining("fine")],
      [
        true,
        expect.stringMatching(/allowed-tools limit bash: only commands starting with `git status`, `echo` are allowed/),
      ],
      [true, expect.stringMatching(/\/commit allows only these tools \(its allowed-tools\): bash, read/)],
    ]);
    // The next prompt has every tool again.
    await agent.prompt("hello");
    expect(names(requests[2]!)).toEqual(expect.arrayContaining(["bash", "edit", "read", "write"]));
    expect(toolsBlock(requests[2]!)).toMatch(/^- write/m);
  });

  it("model switches the model for that command's run only", async () => {
    write(join(home, ".claude/commands/quick.md"), "---\nmodel: scripted/fast-one\n---\nQuick: $ARGUMENTS\n");
    const { type, requests, scripted, agent } = start();
    scripted.push({ toolCalls: [{ name: "ls", arguments: {} }] }, { text: "done" }, { text: "back" });
    await type("/quick look");
    expect(requests.map((r) => r.model.id)).toEqual(["fast-one", "fast-one"]);
    expect(agent.state.model.id).toBe("scripted");
    await agent.prompt("again");
    expect(requests[2]!.model.id).toBe("scripted");
  });

  it("a command with its own model or tools does not join a run that is going", async () => {
    write(join(home, ".claude/commands/quick.md"), "---\nmodel: scripted/fast-one\n---\nQuick\n");
    const { host, agent, scripted } = start();
    scripted.push({ text: "slow", delayMs: 300 } as never);
    const running = agent.prompt("first");
    const out = await host.commands.get("quick")!.run("", agent);
    expect(out).toMatch(/\/quick sets its own model for its run, so it cannot join the run going now/);
    await running;
    expect(agent.state.model.id).toBe("scripted");
  });
});

describe("Claude Code commands through the CLI", () => {
  it("coil -p '/git:st main' from a project subfolder runs ~/.claude/commands/git/st.md: !`cmd` inlined, its model for that run", async () => {
    requireBuild();
    const base = tempDir("coil-cc-cli-");
    writeFiles(base, {
      "repo/.git/HEAD": "ref: refs/heads/main\n",
      "repo/packages/app/.keep": "",
      "home/.claude/commands/git/st.md":
        "---\ndescription: Show status\nmodel: scripted/tiny\n---\nStatus for $ARGUMENTS: !`echo clean-tree`\n",
      "r.yaml": "- text: fine\n",
    });
    const r = await coil(
      join(base, "repo/packages/app"),
      [
        "-p",
        "--provider",
        "scripted",
        "--script",
        join(base, "r.yaml"),
        "--no-session",
        "--mode",
        "json",
        "/git:st main",
      ],
      sandboxEnv(base),
    );
    expect(r.code, r.stderr).toBe(0);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; message?: { role: string; content: unknown; model?: string } });
    expect(events.find((e) => e.type === "message_end" && e.message?.role === "user")!.message!.content).toBe(
      "Status for main: clean-tree",
    );
    expect(events.find((e) => e.type === "message_end" && e.message?.role === "assistant")!.message!.model).toBe(
      "tiny",
    );
  });

  it("coil -c after a command with its own model continues on the model the user had, not the command's", async () => {
    requireBuild();
    const base = tempDir("coil-cc-cli-");
    writeFiles(base, {
      "repo/.git/HEAD": "ref: refs/heads/main\n",
      "home/.claude/commands/quick.md": "---\nmodel: scripted/tiny\n---\nQuick: $ARGUMENTS\n",
      "r.yaml": "- text: one\n- text: two\n",
    });
    const env = sandboxEnv(base);
    const cwd = join(base, "repo");
    const first = await coil(
      cwd,
      ["-p", "--provider", "scripted", "--script", join(base, "r.yaml"), "--mode", "json", "/quick look"],
      env,
    );
    expect(first.code, first.stderr).toBe(0);
    const second = await coil(cwd, ["-c", "-p", "--script", join(base, "r.yaml"), "--mode", "json", "again"], env);
    expect(second.code, second.stderr).toBe(0);
    const models = (out: string) =>
      out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { type: string; message?: { role: string; model?: string } })
        .filter((e) => e.type === "message_end" && e.message?.role === "assistant")
        .map((e) => e.message!.model);
    expect(models(first.stdout)).toEqual(["tiny"]);
    expect(models(second.stdout)).toEqual(["scripted"]);
  });
});
