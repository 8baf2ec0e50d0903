/**
 * Pi's skill discovery rules (#28.9), through the built CLI against the validating Anthropic mock: a
 * repository of skills cloned into `~/.pi/agent/skills` (skills five folders down, as in a plugin
 * collection) loads every skill, with no warnings; a folder holding SKILL.md is one skill (its own
 * folders are its resources); dot-folders, `node_modules` and what `.gitignore` / `.ignore` / `.fdignore`
 * list are not searched; the root `.md` files of Pi's own skill folders are skills, those of
 * `.agents/skills` are not; `~/.codex/skills` is read. The tree is generated here.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { coil, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { text } from "../../support/mock-anthropic.js";
import { useMockAnthropic } from "../../support/provider-mocks.js";

const KEY = "sk-ant-pi-skills-test-0123456789";
const mock = useMockAnthropic(KEY);

const skillMd = (name: string, extra = "") =>
  `---\nname: ${name}\ndescription: The ${name} skill, for testing discovery.\n${extra}---\nBody of ${name}.\n`;

/** A collection laid out like a marketplace of plugins: plugins/<plugin>/skills/<skill>/SKILL.md. */
function collection(plugins: number, perPlugin: number): { files: Record<string, string>; names: string[] } {
  const files: Record<string, string> = {};
  const names: string[] = [];
  for (let p = 0; p < plugins; p++)
    for (let k = 0; k < perPlugin; k++) {
      const name = `tool-${p}-${k}`;
      names.push(name);
      files[`plugins/plugin-${p}/skills/${name}/SKILL.md`] = skillMd(
        name,
        k === 0 && p < 3 ? "disable-model-invocation: true\n" : "",
      );
      // a skill's own folders are resources, never searched for more skills
      files[`plugins/plugin-${p}/skills/${name}/reference/notes/SKILL.md`] = skillMd(`${name}-resource`);
    }
  files["plugins/plugin-0/README.md"] = "# not a skill\n";
  files[".gitignore"] = "build/\n*.bak\n";
  files["build/stale/SKILL.md"] = skillMd("stale-build");
  files["plugins/plugin-1/.ignore"] = "scratch/\n";
  files["plugins/plugin-1/scratch/draft/SKILL.md"] = skillMd("draft");
  files["plugins/plugin-2/.fdignore"] = "old\n";
  files["plugins/plugin-2/old/legacy/SKILL.md"] = skillMd("legacy");
  files[".github/workflows/x/SKILL.md"] = skillMd("in-dot-folder");
  files["node_modules/dep/skills/dep-skill/SKILL.md"] = skillMd("dep-skill");
  return { files, names };
}

describe("Pi's skill discovery rules", () => {
  it("a cloned collection five folders deep loads every skill without warnings; ignore files, dot-folders and node_modules are not searched", async () => {
    const base = tempDir("coil-pi-skills-");
    const project = join(base, "project");
    writeFiles(project, { ".git/HEAD": "ref: refs/heads/main\n" });
    const { files, names } = collection(6, 4);
    const home = join(base, "home");
    writeFiles(join(home, ".pi/agent/skills/vendor-skills"), files);
    writeFiles(home, {
      // Pi's own folders: a root .md file is a skill
      ".pi/agent/skills/quick-notes.md": skillMd("quick-notes"),
      // .agents/skills: root .md files are not skills
      ".agents/skills/loose.md": skillMd("loose"),
      ".agents/skills/agents-one/SKILL.md": skillMd("agents-one"),
      // Codex's user skills
      ".codex/skills/codex-one/SKILL.md": skillMd("codex-one"),
    });
    const env = sandboxEnv(base, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url });
    mock.requests.length = 0;
    mock.push(text("ok"), text("deep ok"));
    const ran = await coil(project, ["--model", "anthropic/claude-sonnet-4-5", "-p", "hi"], env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).not.toMatch(/skill|SKILL\.md/i);
    const system = mock.requests[0]!.body.system.map((b: { text: string }) => b.text).join("\n");
    const listed = [...system.matchAll(/<name>([^<]+)<\/name>/g)].map((m) => m[1]);
    const hidden = ["tool-0-0", "tool-1-0", "tool-2-0"]; // disable-model-invocation: loaded, not in the index
    expect(listed.sort()).toEqual(
      [
        ...names.filter((n) => !hidden.includes(n)),
        "quick-notes",
        "agents-one",
        "codex-one",
        "debug-systematically", // coil's built-in skills
        "write-coil-plugin",
      ].sort(),
    );
    // a hidden one still runs by name, five folders down
    const deep = await coil(project, ["--model", "anthropic/claude-sonnet-4-5", "-p", "/skill:tool-1-0 now"], env);
    expect(deep.code, deep.stderr).toBe(0);
    const sent = JSON.stringify(mock.requests[1]!.body.messages.at(-1).content);
    expect(sent).toContain("Body of tool-1-0.");
    expect(mock.rejected()).toEqual([]);

    const doctor = await coil(project, ["doctor"], env);
    expect(doctor.stdout).toMatch(/~\/\.pi\/agent\/skills {2}\[user, pi\] {2}25 skills/);
    expect(doctor.stdout).toMatch(/~\/\.codex\/skills {2}\[user, agents\] {2}1 skill/);
    expect(doctor.stdout).not.toMatch(/below the search depth/);
    // the dot-folder is still named, as coil names every SKILL.md it does not load
    expect(doctor.stdout).toMatch(/dot-folder.*\.github|\.github.*dot-folder/);
    expect(doctor.stdout).not.toMatch(/stale-build|draft|legacy|dep-skill|-resource|loose/);
  });
});
