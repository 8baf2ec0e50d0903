/**
 * Claude Code plugins as Claude Code 2.1 accepts them (#28.4), through the built CLI, against the
 * validating Anthropic mock: a plugin without `.claude-plugin/plugin.json` installs from its folders; a
 * marketplace entry's `skills` list adds to the plugin's `skills/` folder, and replaces it for a plugin
 * at the marketplace's root (as anthropics/skills' document-skills: 4 skills, each listed once); an MCP
 * entry with an unknown key (`_docs`) starts, with a note; a skill named with spaces, a command file with
 * `:` in its name, and agents and commands with nested `hooks:` front matter load, with a note for what
 * coil ignores. The marketplace is generated here.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { coil, ROOT, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { text } from "../../support/mock-anthropic.js";
import { useMockAnthropic } from "../../support/provider-mocks.js";

const KEY = "sk-ant-ccplug-fidelity-0123456789";
const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const mock = useMockAnthropic(KEY);

const skill = (name: string) =>
  `---\nname: ${name}\ndescription: The ${name} skill for the fixture.\n---\nBody of ${name}.\n`;

function marketplace(dir: string): string {
  writeFiles(dir, {
    ".claude-plugin/marketplace.json": JSON.stringify({
      name: "fixture-market",
      owner: { name: "tests" },
      plugins: [
        { name: "p-loose", source: "./p1", strict: false, skills: ["./skills/alpha"] },
        {
          name: "doc-skills",
          source: "./",
          strict: false,
          skills: ["./skills/xlsx", "./skills/docx", "./skills/pptx", "./skills/pdf"],
        },
        { name: "p-bare", source: "./p3", description: "no plugin.json" },
      ],
    }),
    // the marketplace root's own skills folder: doc-skills lists four of its six
    ...Object.fromEntries(
      ["xlsx", "docx", "pptx", "pdf", "canvas", "brand"].map((n) => [`skills/${n}/SKILL.md`, skill(n)]),
    ),
    "p1/skills/alpha/SKILL.md": skill("alpha"),
    "p1/skills/beta/SKILL.md": skill("beta"),
    // p-bare: no .claude-plugin/plugin.json at all
    "p3/skills/spaced/SKILL.md":
      "---\nname: Spaced Name Skill\ndescription: A skill named with spaces.\n---\nSpaced body.\n",
    "p3/commands/git:commit.md": "---\ndescription: Commit with a message\n---\nCommit now: $ARGUMENTS\n",
    "p3/commands/plain.md": "Plain body\n",
    "p3/commands/nested.md":
      "---\ndescription: Review code: carefully, with hooks\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: echo stop\n---\nNested body $ARGUMENTS\n",
    "p3/agents/reviewer.md":
      "---\nname: reviewer\ndescription: Reviews code: carefully\ntools: Read, Grep\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: echo hi\n---\nYou review code.\n",
    "p3/hooks/hooks.json": JSON.stringify({
      hooks: {
        PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "true" }] }],
        TeammateIdle: [{ hooks: [{ type: "command", command: "echo idle" }] }],
        PostToolUse: [{ matcher: "Edit", hooks: [{ type: "agent", prompt: "check the edit" }] }],
      },
    }),
    "p3/.mcp.json": JSON.stringify({
      mcpServers: { docsrv: { _docs: "a comment for humans", command: process.execPath, args: [EVERYTHING] } },
    }),
  });
  return dir;
}

describe("Claude Code plugins as Claude Code accepts them", () => {
  it("installs from a marketplace: lists honoured, a root plugin's only what it lists, a plugin without plugin.json from its folders", async () => {
    const base = tempDir("coil-ccplug-fid-");
    const project = writeFiles(join(base, "project"), { ".git/HEAD": "ref: refs/heads/main\n" });
    const market = marketplace(join(base, "market"));
    const env = sandboxEnv(base, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url });
    const added = await coil(project, ["marketplace", "add", market], env);
    expect(added.code, added.stderr).toBe(0);

    const loose = await coil(project, ["install", "p-loose@fixture-market"], env);
    expect(loose.code, loose.stderr).toBe(0);
    expect(loose.stdout).toMatch(/^ {2}skills: alpha, beta$/m);

    const docs = await coil(project, ["install", "doc-skills@fixture-market"], env);
    expect(docs.code, docs.stderr).toBe(0);
    expect(docs.stdout).toMatch(/^ {2}skills: xlsx, docx, pptx, pdf$/m);

    const bare = await coil(project, ["install", "p-bare@fixture-market"], env);
    expect(bare.code, bare.stderr).toBe(0);
    expect(bare.stdout).toContain("installed Claude Code plugin p-bare@0.0.0 from marketplace fixture-market");
    expect(bare.stdout).toMatch(/^ {2}commands: \/p-bare:git:commit, \/p-bare:nested, \/p-bare:plain$/m);
    expect(bare.stdout).toMatch(/^ {2}skills: spaced$/m);
    expect(bare.stdout).toMatch(/^ {2}agents: p-bare:reviewer$/m);
    expect(bare.stdout).toMatch(/^ {2}MCP servers: docsrv$/m);
    // hooks coil does not run are never listed as installed: a note says why (#28.3)
    expect(bare.stdout).toMatch(/^ {2}hooks: PreToolUse\(Bash\)$/m);
    expect(bare.stdout).toMatch(/note: hooks\/hooks\.json: not run by coil: TeammateIdle: coil has no such event/);
    expect(bare.stdout).toMatch(/note: hooks\/hooks\.json: not run by coil: PostToolUse\(Edit\): a "agent" hook/);
    expect(bare.stdout).toMatch(/note: no \.claude-plugin\/plugin\.json: installed from its folders/);
    expect(bare.stdout).toMatch(
      /note: skills\/spaced: its name 'Spaced Name Skill' .*called by its folder's name 'spaced'/,
    );
    expect(bare.stdout).toMatch(/note: agents\/reviewer\.md: 'hooks' in its front matter are not run/);
    expect(bare.stdout).toMatch(/note: commands\/nested\.md: 'hooks' in its front matter are not run/);
    expect(bare.stdout).toMatch(/note: \.mcp\.json: docsrv: '_docs' is not an MCP server setting coil knows; ignored/);

    // In a run: the index, the commands and the MCP server
    mock.requests.length = 0;
    mock.push(text("committed"));
    const ran = await coil(project, ["--model", "anthropic/claude-sonnet-4-5", "-p", "/p-bare:git:commit fix it"], env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).not.toMatch(/not loaded|mcpServers|docsrv/);
    const body = mock.requests[0]!.body;
    expect(JSON.stringify(body.messages.at(-1).content)).toContain("Commit now: fix it");
    const system = body.system.map((b: { text: string }) => b.text).join("\n");
    const names = [...system.matchAll(/<name>([^<]+)<\/name>/g)].map((m) => m[1]).sort();
    expect(names).toEqual(
      ["alpha", "beta", "docx", "pdf", "pptx", "xlsx", "spaced", "debug-systematically", "write-coil-plugin"].sort(),
    );
    expect(body.tools.map((t: { name: string }) => t.name)).toContain("mcp__docsrv__echo");
    mock.push(text("nested ok"));
    const nested = await coil(project, ["--model", "anthropic/claude-sonnet-4-5", "-p", "/p-bare:nested x"], env);
    expect(nested.code, nested.stderr).toBe(0);
    expect(JSON.stringify(mock.requests[1]!.body.messages.at(-1).content)).toContain("Nested body x");
    expect(mock.rejected()).toEqual([]);

    const mcp = await coil(project, ["mcp", "list"], env);
    expect(mcp.code, mcp.stderr).toBe(0);
    expect(mcp.stdout).toMatch(/^docsrv {2}stdio /m);
    expect(mcp.stderr).toMatch(
      /note: .*\.mcp\.json \(mcpServers\.docsrv\._docs\): not an MCP server setting coil knows; ignored/,
    );
  }, 60_000); // nine CLI runs, one of them starting an MCP server

  it("a folder without .claude-plugin/plugin.json installs as a Claude Code plugin named after the folder", async () => {
    const base = tempDir("coil-ccplug-fid-");
    const project = writeFiles(join(base, "project"), { ".git/HEAD": "ref: refs/heads/main\n" });
    const folder = writeFiles(join(base, "review-kit"), {
      "commands/review.md": "Review $ARGUMENTS\n",
      "skills/checklist/SKILL.md": skill("checklist"),
    });
    const env = sandboxEnv(base);
    const r = await coil(project, ["install", folder], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("installed Claude Code plugin review-kit@0.0.0");
    expect(r.stdout).toMatch(/^ {2}commands: \/review-kit:review$/m);
    expect(r.stdout).toMatch(/^ {2}skills: checklist$/m);
    const list = await coil(project, ["list"], env);
    expect(list.stdout).toMatch(/review-kit/);
  });
});
