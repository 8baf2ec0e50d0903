/** Where skills are found (every family's places, ancestors up to the project root), what is reported, the prompt index budget, and scanning once per run. */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SystemBlock } from "../../../api/index.js";
import { testHost } from "../../support/host.js";
import { createTestKit, type ScriptedService } from "../../../sdk/testing/index.js";
import skills, { type SkillsService } from "../../../plugins/skills/index.js";
import systemPrompt from "../../../plugins/system-prompt/index.js";
import toolsCoding from "../../../plugins/tools-coding/index.js";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});
const saved = { COIL_HOME: process.env.COIL_HOME, HOME: process.env.HOME };
let root: string;
let user: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "coil-skills-find-")));
  temps.push(root);
  user = join(root, "user");
  process.env.COIL_HOME = join(root, "coil-home");
  process.env.HOME = user;
});
afterEach(() => {
  for (const [k, v] of Object.entries(saved))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
});

function skill(dir: string, name: string | undefined, description = `the ${name} skill`) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "SKILL.md"),
    `---\n${name ? `name: ${name}\n` : ""}description: ${description}\n---\nBody of ${name}.\n`,
  );
}

function install(cwd: string, options: Record<string, unknown> = {}) {
  const host = testHost({ cwd });
  const logs: string[] = [];
  host.subscribe("diagnostic", (e) => void (e.type === "diagnostic" && logs.push(`${e.level}: ${e.message}`)));
  host.install(skills, { builtin: false, ...options });
  return { host, logs, service: host.services.get("skills") as SkillsService };
}

describe("skills discovery", () => {
  it("reads .coil, .agents, .claude and .pi skills from the working directory up to the git root, then the user's places; the first name wins, noted", async () => {
    const repo = join(root, "work", "repo");
    mkdirSync(join(repo, ".git"), { recursive: true });
    const cwd = join(repo, "pkg", "src");
    skill(join(cwd, ".coil", "skills", "here"), "here");
    skill(join(cwd, ".claude", "skills", "shared"), "shared", "the nearest one");
    skill(join(repo, "pkg", ".agents", "skills", "mid"), "mid");
    skill(join(repo, ".claude", "skills", "shared"), "shared", "the root's one");
    skill(join(repo, ".claude", "skills", "root-claude"), "root-claude");
    skill(join(repo, ".pi", "skills", "root-pi"), "root-pi");
    skill(join(root, "work", ".claude", "skills", "outside"), "outside");
    skill(join(process.env.COIL_HOME!, "skills", "coil-user"), "coil-user");
    skill(join(user, ".agents", "skills", "agents-user"), "agents-user");
    skill(join(user, ".claude", "skills", "claude-user"), "claude-user");
    skill(join(user, ".pi", "agent", "skills", "pi-user"), "pi-user");
    const { service, host } = install(cwd);
    expect(service.list().map((s) => [s.name, s.source])).toEqual([
      ["here", "project"],
      ["shared", "project"],
      ["mid", "project"],
      ["root-claude", "project"],
      ["root-pi", "project"],
      ["coil-user", "user"],
      ["agents-user", "user"],
      ["claude-user", "user"],
      ["pi-user", "user"],
    ]);
    expect(service.get("shared")!.description).toBe("the nearest one");
    expect(service.shadowed()).toEqual([
      {
        name: "shared",
        file: join(repo, ".claude", "skills", "shared", "SKILL.md"),
        by: join(cwd, ".claude", "skills", "shared", "SKILL.md"),
      },
    ]);
    const listing = String(await host.commands.get("skills")!.run("", undefined as never));
    expect(listing).toContain(
      `not used: ${join(repo, ".claude", "skills", "shared", "SKILL.md")}: 'shared' is already defined by ${join(cwd, ".claude", "skills", "shared", "SKILL.md")}`,
    );
    expect(listing).toContain(`  ${join(repo, ".pi", "skills")}  [project, pi]  1 skill`);
    expect(listing).toContain(`  ~/.claude/skills  [user, claude]  1 skill`);
    expect(listing).toContain(`  ${join(repo, "pkg", ".claude", "skills")}  [project, claude]  (none)`);
    expect(listing).not.toContain(join(root, "work", ".claude"));
  });

  it("the compat option switches a family's places off", () => {
    const cwd = join(root, "p");
    skill(join(cwd, ".claude", "skills", "c"), "c");
    skill(join(cwd, ".agents", "skills", "a"), "a");
    skill(join(cwd, ".pi", "skills", "p"), "p");
    skill(join(user, ".claude", "skills", "cu"), "cu");
    expect(
      install(cwd, { compat: { claude: false } })
        .service.list()
        .map((s) => s.name),
    ).toEqual(["a", "p"]);
    expect(
      install(cwd, { compat: { pi: false, agents: false } })
        .service.list()
        .map((s) => s.name),
    ).toEqual(["c", "cu"]);
    expect(install(cwd, { compat: { claude: false } }).service.compat).toEqual({
      claude: false,
      pi: true,
      agents: true,
    });
  });

  it("skills at any depth load (Pi's rules); SKILL.md files in dot-folders are reported in /skills, not silently skipped, and warn no one at start-up", async () => {
    const cwd = join(root, "p");
    const base = join(cwd, ".claude", "skills");
    skill(join(base, "a", "b", "c", "ok-depth"), "ok-depth");
    skill(join(base, "a", "b", "c", "d", "e", "f", "deep"), "deep");
    skill(join(base, ".curated", "hidden"), "hidden");
    const { service, logs, host } = install(cwd);
    expect(service.list().map((s) => s.name)).toEqual(["deep", "ok-depth"]);
    expect(service.skipped()).toEqual([{ dir: join(base, ".curated"), reason: expect.stringContaining("dot-folder") }]);
    expect(logs.filter((l) => l.startsWith("warn: "))).toEqual([]);
    expect(logs.filter((l) => l.startsWith("info: skills in "))).toHaveLength(1);
    const listing = String(await host.commands.get("skills")!.run("", undefined as never));
    expect(listing).toContain(`not searched: ${join(base, ".curated")}: found SKILL.md files in a dot-folder`);
  });
});

const blockOf = (system: readonly SystemBlock[] | undefined) => system!.find((b) => b.id === "skills")!.text;

describe("the skills index in the prompt", () => {
  it("120 skills: every name stays in the index, descriptions shortened to fit 8 KB, no skill left out (issue 30)", async () => {
    const cwd = join(root, "many");
    for (let i = 0; i < 120; i++)
      skill(
        join(cwd, ".coil", "skills", `skill-${String(i).padStart(3, "0")}`),
        `skill-${String(i).padStart(3, "0")}`,
        `Does task ${i}. ${"Long explanation. ".repeat(60)}`,
      );
    const kit = createTestKit({
      cwd,
      plugins: [toolsCoding, systemPrompt, [skills, { builtin: false }]],
      replies: [{ text: "ok" }],
    });
    await kit.run("hi");
    const block = blockOf(kit.requests[0]!.system);
    for (let i = 0; i < 120; i++) expect(block).toContain(`skill-${String(i).padStart(3, "0")}: Does task ${i}.`);
    expect(block).not.toContain("<description>");
    expect(block).not.toMatch(/more skills? (is|are) installed but not listed/);
    expect(block).toContain(`${join(cwd, ".coil", "skills")}`);
    expect(block).toContain("<folder>/<name>/SKILL.md");
    expect(Buffer.byteLength(block)).toBeLessThanOrEqual(8192);
    const total = kit.requests[0]!.system!.reduce((n, b) => n + Buffer.byteLength(b.text), 0);
    expect(total).toBeLessThan(16 * 1024);
    kit.dispose();
  });

  it("the indexBytes option sets the budget: full entries, then shortened descriptions, then names only — always every skill", () => {
    const cwd = join(root, "few");
    for (let i = 0; i < 10; i++)
      skill(join(cwd, ".coil", "skills", `s-${i}`), `s-${i}`, `Skill ${i}. ${"words ".repeat(30)}`);
    const roomy = install(cwd).service.index();
    expect(roomy.level).toBe("full");
    const tight = install(cwd, { indexBytes: 2048 }).service.index();
    expect(tight.level).toBe("short");
    expect(tight.bytes).toBeLessThanOrEqual(2048);
    const tiny = install(cwd, { indexBytes: 512 }).service.index();
    expect(tiny.level).toBe("names");
    for (const index of [roomy, tight, tiny]) expect(index.skills.map((s) => s.name).sort()).toHaveLength(10);
  });
});

describe("scanning", () => {
  it("scans at most once per run: a 10-turn run does not re-scan; a skill edited or added between prompts is seen at the next prompt", async () => {
    const cwd = join(root, "scan");
    mkdirSync(join(cwd, ".git"), { recursive: true });
    skill(join(cwd, ".coil", "skills", "first"), "first", "version one");
    const added = join(cwd, ".coil", "skills", "added", "SKILL.md");
    const kit = createTestKit({ cwd, plugins: [toolsCoding, systemPrompt, [skills, { builtin: false }]] });
    const scripted = kit.host.services.get("scripted") as ScriptedService;
    // Turn 1 writes a new skill; turns 2-10 follow in the same run.
    scripted.push({
      toolCalls: [
        {
          name: "write",
          arguments: { path: added, content: "---\nname: added\ndescription: written during the run\n---\n" },
        },
      ],
    });
    for (let i = 0; i < 8; i++) scripted.push({ toolCalls: [{ name: "read", arguments: { path: added } }] });
    scripted.push({ text: "done" });
    await kit.run("go");
    expect(kit.requests).toHaveLength(10);
    for (const r of kit.requests) expect(blockOf(r.system)).not.toContain("<name>added</name>");
    const service = kit.host.services.get("skills") as SkillsService;
    // Once at start-up, once for the run.
    expect(scansOf(service)).toBe(2);

    writeFileSync(
      join(cwd, ".coil", "skills", "first", "SKILL.md"),
      "---\nname: first\ndescription: version two\n---\n",
    );
    scripted.push({ text: "ok" });
    await kit.run("again");
    const block = blockOf(kit.requests.at(-1)!.system);
    expect(block).toContain("<name>added</name>");
    expect(block).toContain("version two");
    expect(scansOf(service)).toBe(3);
    kit.dispose();
  });
});

/** How many times the skill folders were scanned (coil doctor shows it too). */
const scansOf = (service: SkillsService): number => service.scans();
