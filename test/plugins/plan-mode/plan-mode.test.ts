/** plan-mode: switching tools both ways, the read-only bash allowlist, the plan file, approval with and without a UI, progress. */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { createTestKit } from "../../../sdk/testing/index.js";
import { afterAll, describe, expect, it } from "vitest";
import {
  textOf,
  type Plugin,
  type ProviderRequest,
  type SlashResult,
  type ToolResultMessage,
} from "../../../api/index.js";
import planMode, { notReadOnly, progress } from "../../../plugins/plan-mode/index.js";
import type { ScriptedService } from "../../../plugins/provider-scripted/index.js";
import type { ScriptStep } from "../../../plugins/provider-scripted/script.js";
import toolsCoding from "../../../plugins/tools-coding/index.js";
import toolsSearch from "../../../plugins/tools-search/index.js";
import { scriptedUi } from "../../support/safety.js";
import { startPlugins } from "../../../boot/lifecycle.js";

const kits: ReturnType<typeof createTestKit>[] = [];
afterAll(() => {
  for (const k of kits) k.dispose();
});

function rig(script: ScriptStep[], ui?: ReturnType<typeof scriptedUi>) {
  const kit = createTestKit({
    files: { "app.txt": "version 1\n" },
    plugins: [toolsCoding, toolsSearch, ...(ui ? [ui.plugin] : []), planMode as Plugin],
    replies: script,
    agent: { model: { id: "m", provider: "scripted", contextWindow: 100_000, maxOutput: 1000 } },
  });
  kits.push(kit);
  const { host, agent, events, commandLine } = kit;
  const cwd = kit.workspace.dir;
  const scripted = host.services.get("scripted") as ScriptedService;
  const plan = (args = ""): Promise<SlashResult> => Promise.resolve(host.commands.get("plan")!.run(args, agent));
  return { cwd, host, agent, scripted, plan, events, commandLine };
}

const toolNames = (r: ProviderRequest) => r.tools.map((t) => t.name).sort();
const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });
const results = (messages: readonly unknown[]) =>
  (messages as ToolResultMessage[]).filter((m) => m.role === "toolResult");
const PLAN = "# Bump the version\n\n- [ ] change app.txt to version 2\n- [ ] check it with cat\n";

describe("switching tools", () => {
  it("plan mode offers only read-only tools and write_plan; approval brings every tool back with the plan in context", async () => {
    const ui = scriptedUi([true]);
    const { agent, scripted, plan, cwd } = rig(
      [call("write_plan", { plan: PLAN }), { text: "planned" }, { text: "working" }],
      ui,
    );
    expect(await plan("")).toMatch(/^plan mode: on/);
    await agent.prompt("bump the version");
    const [first, second] = scripted.requests;
    expect(toolNames(first!)).toEqual(["bash", "find", "grep", "ls", "read", "write_plan"]);
    expect(first!.system.map((b) => b.id)).toContain("plan-mode");
    // The approval happened inside write_plan, so the next request already has every tool.
    expect(toolNames(second!)).toEqual(["bash", "edit", "find", "grep", "ls", "read", "write"]);
    expect(second!.system.find((b) => b.id === "plan")!.text).toContain("- [ ] change app.txt to version 2");
    expect(ui.asked[0]).toMatchObject({
      kind: "confirm",
      title: expect.stringMatching(/^Approve this plan\? \(\.coil\/plans\/.*\.md, 2 steps\)$/),
    });
    const files = readdirSync(join(cwd, ".coil", "plans"));
    expect(files).toHaveLength(1);
    expect(readFileSync(join(cwd, ".coil", "plans", files[0]!), "utf8")).toBe(PLAN);
    await agent.prompt("next");
    expect(toolNames(scripted.requests[2]!)).not.toContain("write_plan");
  });

  it("outside plan mode write_plan is hidden and refused", async () => {
    const { agent, scripted } = rig([call("write_plan", { plan: PLAN }), { text: "ok" }]);
    const run = await agent.prompt("go");
    expect(toolNames(scripted.requests[0]!)).not.toContain("write_plan");
    expect(textOf(results(run.messages)[0])).toContain("write_plan works only in plan mode");
  });

  it("--plan starts in plan mode; /plan off leaves it", async () => {
    const { host, agent, scripted, plan, commandLine } = rig([{ text: "a" }, { text: "b" }]);
    commandLine.values = { plan: true };
    await startPlugins(
      host,
      agent,
      { cwd: host.cwd, env: {}, stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() },
      { mode: "text", modelFromCli: false },
    );
    await agent.prompt("look");
    expect(toolNames(scripted.requests[0]!)).not.toContain("edit");
    expect(await plan("off")).toBe("plan mode: off (all tools available)");
    await agent.prompt("do");
    expect(toolNames(scripted.requests[1]!)).toContain("edit");
  });
});

describe("read-only enforcement in plan mode", () => {
  it("blocks mutating tools and non-read-only bash even if the model calls them", async () => {
    const { agent, plan, cwd } = rig([
      {
        toolCalls: [
          { name: "edit", arguments: { path: "app.txt", edits: [{ oldText: "1", newText: "2" }] } },
          { name: "bash", arguments: { command: "cat app.txt | head -1 && git status 2>/dev/null; ls" } },
          { name: "bash", arguments: { command: "echo x > app.txt" } },
          { name: "bash", arguments: { command: "rm app.txt" } },
          { name: "bash", arguments: { command: "cat $(rm app.txt)" } },
          { name: "read", arguments: { path: "app.txt" } },
        ],
      },
      { text: "looked" },
    ]);
    await plan("");
    const run = await agent.prompt("look around");
    const texts = results(run.messages).map((r) => `${r.isError ? "ERR " : ""}${textOf(r)}`);
    expect(texts[0]).toContain("plan mode is read-only: edit is not available");
    expect(texts[1]).toMatch(/^(ERR )?version 1/); // git status may fail outside a repo; it still ran
    expect(texts[2]).toContain(
      "plan mode allows only read-only bash commands: it uses substitution, a subshell, backgrounding or a redirection",
    );
    expect(texts[3]).toContain("`rm` is not on the read-only list");
    expect(texts[4]).toContain("plan mode allows only read-only bash commands");
    expect(texts[5]).toBe("version 1\n".trimEnd());
    expect(readFileSync(join(cwd, "app.txt"), "utf8")).toBe("version 1\n");
  });

  it("classifies commands", () => {
    expect(notReadOnly("git log --oneline | head -5")).toBeUndefined();
    expect(notReadOnly("grep -r 'a > b' src")).toBeUndefined();
    expect(notReadOnly("find . -name '*.ts' -delete")).toMatch(/find -delete runs, deletes or writes files/);
    expect(notReadOnly("ls & rm x")).toMatch(/backgrounding/);
    expect(notReadOnly("ls `rm x`")).toBe("it uses substitution, a subshell, backgrounding or a redirection");
    expect(notReadOnly('echo "$(rm x)"')).toBe("it uses substitution, a subshell, backgrounding or a redirection");
    expect(notReadOnly("npm test")).toMatch(/`npm` is not on the read-only list/);
  });
});

describe("approval", () => {
  it("without a UI the plan is saved, approval is refused and said, and plan mode stays on", async () => {
    const { agent, scripted, plan, cwd } = rig([call("write_plan", { plan: PLAN }), { text: "see the plan" }]);
    await plan("bump it");
    const run = await agent.prompt("bump it");
    const text = textOf(results(run.messages)[0]);
    expect(text).toMatch(
      /^Plan saved to \.coil\/plans\/.*\.md\. It is not approved: no one can approve in print mode, so plan mode stays on/,
    );
    expect(toolNames(scripted.requests[1]!)).not.toContain("edit");
    expect(existsSync(join(cwd, ".coil", "plans"))).toBe(true);
    // The user approves from the command line later (print mode runs slash commands).
    const approved = await plan("approve");
    expect(approved).toEqual({
      prompt: expect.stringMatching(/^I approve the plan in \.coil\/plans\/.*\.md\. Carry it out/),
    });
    scripted.push({ text: "on it" });
    await agent.prompt((approved as { prompt: string }).prompt);
    expect(toolNames(scripted.requests[2]!)).toContain("edit");
    expect(scripted.requests[2]!.system.find((b) => b.id === "plan")!.text).toContain("0 of 2 steps done");
  });

  it("a rejected plan keeps plan mode on and passes the feedback", async () => {
    const ui = scriptedUi([false, "add a test step"]);
    const { agent, scripted, plan } = rig([call("write_plan", { plan: PLAN }), { text: "will revise" }], ui);
    await plan("");
    const run = await agent.prompt("go");
    expect(textOf(results(run.messages)[0])).toBe(
      "The user did not approve the plan; plan mode stays on. Their feedback: add a test step",
    );
    expect(toolNames(scripted.requests[1]!)).not.toContain("edit");
  });
});

describe("progress", () => {
  it("counts checkboxes; ticking a step shows in /plan status, the context and a notification", async () => {
    expect(progress("- [x] a\n- [ ] b\n  * [X] c\nnot - [ ] d")).toEqual({ done: 2, total: 3 });
    const ui = scriptedUi([true]);
    const steps: ScriptStep[] = [
      call("write_plan", { plan: PLAN }),
      (req) => {
        const file = /\((\.coil\/plans\/[^;]+\.md);/.exec(req.system.find((b) => b.id === "plan")!.text)![1]!;
        return {
          toolCalls: [
            { name: "edit", arguments: { path: "app.txt", edits: [{ oldText: "version 1", newText: "version 2" }] } },
            {
              name: "edit",
              arguments: { path: file, edits: [{ oldText: "- [ ] change app.txt", newText: "- [x] change app.txt" }] },
            },
          ],
        };
      },
      { text: "step one done" },
    ];
    const { agent, plan, scripted, cwd } = rig(steps, ui);
    await plan("");
    await agent.prompt("bump");
    expect(readFileSync(join(cwd, "app.txt"), "utf8")).toBe("version 2\n");
    const status = (await plan("status")) as string;
    expect(status).toMatch(
      /^plan mode: off\napproved plan: \.coil\/plans\/.*\.md — 1 of 2 steps done\n- \[x\] change app.txt to version 2\n- \[ \] check it with cat$/,
    );
    expect(scripted.requests[2]!.system.find((b) => b.id === "plan")!.text).toContain("1 of 2 steps done");
    expect(ui.notes).toContain("plan progress: 1 of 2 steps done");
  });
});
