/** Claude Code, Codex and Pi instruction files where their users keep them, @imports, nested folders loaded on first use, and reading once per run. */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SystemBlock } from "../../../api/index.js";
import { testHost } from "../../support/host.js";
import { createTestKit, type ScriptedService } from "../../../sdk/testing/index.js";
import contextFiles, { type ContextFilesService } from "../../../plugins/context-files/index.js";
import systemPrompt from "../../../plugins/system-prompt/index.js";
import toolsCoding from "../../../plugins/tools-coding/index.js";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});
const saved = { COIL_HOME: process.env.COIL_HOME, HOME: process.env.HOME };
let root: string;
let user: string;
let repo: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "coil-context-compat-")));
  temps.push(root);
  user = join(root, "user");
  repo = join(root, "repo");
  mkdirSync(join(repo, ".git"), { recursive: true });
  process.env.COIL_HOME = join(root, "coil-home");
  process.env.HOME = user;
});
afterEach(() => {
  for (const [k, v] of Object.entries(saved))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
});

function write(path: string, text: string) {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

function service(cwd: string, options: Record<string, unknown> = {}) {
  const host = testHost({ cwd });
  host.install(contextFiles, options);
  return host.services.get("context-files") as ContextFilesService;
}

const project = (blocks: readonly SystemBlock[] | undefined) => blocks!.find((b) => b.id === "project")?.text ?? "";

describe("context files where Claude Code, Codex and Pi users keep them", () => {
  it("reads the user's ~/.claude, ~/.codex and ~/.pi files and the project's CLAUDE.local.md, .claude/CLAUDE.md, .claude/rules and AGENTS.override.md", () => {
    write(join(user, ".claude", "CLAUDE.md"), "claude user");
    write(join(user, ".codex", "AGENTS.md"), "codex user");
    write(join(user, ".pi", "agent", "AGENTS.md"), "pi user");
    write(join(repo, "AGENTS.md"), "repo agents: replaced by the override");
    write(join(repo, "AGENTS.override.md"), "repo override");
    write(join(repo, ".claude", "CLAUDE.md"), "dot-claude");
    write(join(repo, ".claude", "rules", "b.md"), "rule b");
    write(join(repo, ".claude", "rules", "a.md"), "rule a");
    write(join(repo, ".claude", "rules", "notes.txt"), "not a rule");
    write(join(repo, "CLAUDE.local.md"), "local");
    const names = (s: ContextFilesService) => s.files().map((f) => f.path.slice(root.length + 1));
    expect(names(service(repo))).toEqual([
      "user/.claude/CLAUDE.md",
      "user/.codex/AGENTS.md",
      "user/.pi/agent/AGENTS.md",
      "repo/AGENTS.override.md",
      "repo/.claude/CLAUDE.md",
      "repo/.claude/rules/a.md",
      "repo/.claude/rules/b.md",
      "repo/CLAUDE.local.md",
    ]);
    expect(names(service(repo, { compat: { claude: false, pi: false } }))).toEqual([
      "user/.codex/AGENTS.md",
      "repo/AGENTS.override.md",
    ]);
    expect(names(service(repo, { compat: { agents: false, claude: false, pi: false } }))).toEqual(["repo/AGENTS.md"]);
  });

  it("AGENTS.md and CLAUDE.md in one folder: both when they differ, once when identical or linked", () => {
    const a = join(repo, "a");
    const b = join(repo, "a", "b");
    write(join(repo, "AGENTS.md"), "same words");
    write(join(repo, "CLAUDE.md"), "same words");
    write(join(a, "AGENTS.md"), "a's rules");
    symlinkSync(join(a, "AGENTS.md"), join(a, "CLAUDE.md"));
    write(join(b, "AGENTS.md"), "b agents");
    write(join(b, "CLAUDE.md"), "b claude");
    const s = service(b);
    expect(s.files().map((f) => [f.path.slice(repo.length + 1), f.content])).toEqual([
      ["AGENTS.md", "same words"],
      ["a/AGENTS.md", "a's rules"],
      ["a/b/AGENTS.md", "b agents"],
      ["a/b/CLAUDE.md", "b claude"],
    ]);
    expect(s.places()).toContainEqual({
      path: join(repo, "CLAUDE.md"),
      status: "skipped",
      reason: `same text as ${join(repo, "AGENTS.md")}; loaded once`,
    });
    expect(s.places()).toContainEqual({
      path: join(a, "CLAUDE.md"),
      status: "skipped",
      reason: `same file as ${join(a, "AGENTS.md")} (a link); loaded once`,
    });
  });

  it("expands @imports relative to the file, not in code, up to 5 levels; cycles and missing files are noted", () => {
    write(
      join(repo, "CLAUDE.md"),
      [
        "Follow @docs/style.md and see @~/personal.md.",
        "Not an import: `@docs/code-span.md`, nor mail@example.com.",
        "```",
        "@docs/in-fence.md",
        "```",
        "Also @missing/file.md.",
      ].join("\n"),
    );
    write(join(user, "personal.md"), "personal notes");
    write(join(repo, "docs", "style.md"), "style: tabs. More in @../shared/deep1.md");
    write(join(repo, "docs", "code-span.md"), "CODE SPAN FILE");
    write(join(repo, "docs", "in-fence.md"), "FENCE FILE");
    for (let i = 1; i <= 6; i++)
      write(join(repo, "shared", `deep${i}.md`), `level ${i}${i < 6 ? ` @deep${i + 1}.md` : ""}`);
    write(join(repo, "shared", "cycle.md"), "cycle back to @../CLAUDE.md");
    write(join(repo, "shared", "deep2.md"), "level 2 @deep3.md and @cycle.md");
    const [file] = service(repo, { home: false }).files();
    const text = file!.content;
    expect(text).toContain("style: tabs.");
    // outside the project: left out until you approve it (issue 36.3; imports.test.ts covers the CLI), then read
    expect(text).not.toContain("personal notes");
    expect(text).toContain("@~/personal.md not imported: it is outside the project and not approved yet");
    write(
      join(root, "coil-home", "imports.json"),
      JSON.stringify({ version: 1, projects: { [repo]: { approved: [join(user, "personal.md")] } } }),
    );
    expect(service(repo, { home: false }).files()[0]!.content).toContain("personal notes");
    expect(text).toContain("level 4");
    expect(text).not.toContain("level 5");
    expect(text).toContain("@deep5.md not expanded: imports are followed 5 levels deep");
    expect(text).toContain(
      `${join(repo, "shared", "cycle.md")}: @../CLAUDE.md imports a file that imports it (a cycle)`,
    );
    expect(text).toContain(`@missing/file.md not found (looked for ${join(repo, "missing", "file.md")})`);
    expect(text).not.toContain("CODE SPAN FILE");
    expect(text).not.toContain("FENCE FILE");
    expect(text).not.toContain("example.com not found");
  });
});

describe("nested instructions and reading once per run", () => {
  it("a folder's AGENTS.md below the working directory joins the first read in that folder, once; the system prompt does not change", async () => {
    write(join(repo, "AGENTS.md"), "root rules");
    write(join(repo, "pkg", "AGENTS.md"), "PKG RULES");
    write(join(repo, "pkg", "src", "a.ts"), "export const a = 1;\n");
    write(join(repo, "pkg", "src", "b.ts"), "export const b = 2;\n");
    const kit = createTestKit({
      cwd: repo,
      plugins: [toolsCoding, systemPrompt, contextFiles],
      replies: [
        { toolCalls: [{ name: "read", arguments: { path: "pkg/src/a.ts" } }] },
        { toolCalls: [{ name: "read", arguments: { path: "pkg/src/b.ts" } }] },
        { text: "done" },
      ],
    });
    await kit.run("read them");
    const [first, second] = kit.toolResults("read").map((r) => kit.text(r));
    expect(first).toContain("export const a = 1;");
    expect(first).toContain(
      `[coil: instructions for ${join(repo, "pkg")}/, which apply to work in that folder; loaded on first use]`,
    );
    expect(first).toContain("PKG RULES");
    expect(second).not.toContain("PKG RULES");
    expect(kit.requests.map((r) => JSON.stringify(r.system))).toEqual(
      Array(3).fill(JSON.stringify(kit.requests[0]!.system)),
    );
    expect(project(kit.requests[0]!.system)).not.toContain("PKG RULES");
    const places = (kit.host.services.get("context-files") as ContextFilesService).places();
    expect(places).toContainEqual({ path: join(repo, "pkg", "AGENTS.md"), status: "loaded" });
    kit.dispose();
  });

  it("a resumed session that already has a folder's instructions does not get them again", async () => {
    write(join(repo, "pkg", "AGENTS.md"), "PKG RULES");
    write(join(repo, "pkg", "a.ts"), "a\n");
    const first = createTestKit({
      cwd: repo,
      plugins: [toolsCoding, systemPrompt, contextFiles],
      replies: [{ toolCalls: [{ name: "read", arguments: { path: "pkg/a.ts" } }] }, { text: "done" }],
    });
    await first.run("read");
    expect(first.text(first.toolResults("read")[0])).toContain("PKG RULES");
    // A new process resumes the session: same history, fresh plugins.
    const second = createTestKit({
      cwd: repo,
      plugins: [toolsCoding, systemPrompt, contextFiles],
      replies: [{ toolCalls: [{ name: "read", arguments: { path: "pkg/a.ts" } }] }, { text: "done" }],
    });
    second.agent.replaceMessages(first.agent.state.messages);
    await second.run("read again");
    const results = second.toolResults("read");
    expect(results).toHaveLength(2);
    expect(second.text(results[1])).not.toContain("PKG RULES");
    first.dispose();
    second.dispose();
  });

  it("reads once per run: an edit during a 10-turn run waits for the next prompt, which sees it", async () => {
    write(join(repo, "AGENTS.md"), "version one");
    const kit = createTestKit({ cwd: repo, plugins: [toolsCoding, systemPrompt, contextFiles] });
    const scripted = kit.host.services.get("scripted") as ScriptedService;
    scripted.push({
      toolCalls: [{ name: "write", arguments: { path: join(repo, "AGENTS.md"), content: "version two" } }],
    });
    for (let i = 0; i < 8; i++) scripted.push({ toolCalls: [{ name: "read", arguments: { path: "AGENTS.md" } }] });
    scripted.push({ text: "done" });
    await kit.run("edit");
    expect(kit.requests).toHaveLength(10);
    for (const r of kit.requests) expect(project(r.system)).toContain("version one");
    scripted.push({ text: "ok" });
    await kit.run("again");
    expect(project(kit.requests.at(-1)!.system)).toContain("version two");
    kit.dispose();
  });
});
