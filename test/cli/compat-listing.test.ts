/** Every place coil reads skills and instructions from is listed: `coil preset show` (where), `coil doctor` (what loaded, what was skipped and why). */
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanTemps, coil, requireBuild, sandboxEnv, tempDir, writeFiles } from "../support/ecosystem.js";

beforeAll(requireBuild);
afterAll(cleanTemps);

describe("listing where coil looks", () => {
  it("preset show lists the project root and every skill folder and instruction file pattern; doctor says what loaded and what was skipped", async () => {
    const base = realpathSync(tempDir("coil-listing-"));
    const repo = join(base, "repo");
    writeFiles(join(base, "home"), {
      ".claude/skills/user-skill/SKILL.md": "---\nname: user-skill\ndescription: from ~/.claude/skills\n---\n",
      ".claude/CLAUDE.md": "user claude rules",
    });
    writeFiles(repo, {
      ".git/HEAD": "ref: refs/heads/main\n",
      ".claude/skills/dup/SKILL.md": "---\nname: user-skill\ndescription: same name, nearer\n---\n",
      ".agents/skills/a/b/c/d/deep/SKILL.md": "---\nname: deep\ndescription: deep down\n---\n",
      ".agents/skills/.drafts/hidden/SKILL.md": "---\nname: hidden\ndescription: in a dot-folder\n---\n",
      "AGENTS.md": "same rules",
      "CLAUDE.md": "same rules",
    });
    const cwd = join(repo, "sub");
    mkdirSync(cwd, { recursive: true });
    const env = sandboxEnv(base);
    const show = await coil(cwd, ["preset", "show"], env);
    expect(show.stdout).toContain(`# project root: ${repo}`);
    expect(show.stdout).toContain(`#   ${join(repo, ".claude", "skills")}  [claude]`);
    expect(show.stdout).toContain(`#   ${join(cwd, ".pi", "skills")}  [pi]  (none)`);
    expect(show.stdout).toContain(`#   ${join(base, "home", ".pi", "agent", "skills")}  [pi]  (none)`);
    expect(show.stdout).toContain("~/.codex/AGENTS.md");
    expect(show.stdout).toContain(".claude/rules/*.md");
    const json = JSON.parse((await coil(cwd, ["preset", "show", "--json"], env)).stdout);
    expect(json.places.compat).toEqual({ claude: true, pi: true, agents: true });

    const doctor = await coil(cwd, ["doctor"], env);
    expect(doctor.stdout).toContain("skills:\n");
    expect(doctor.stdout).toContain(`  user-skill  [project]  ${join(repo, ".claude", "skills", "dup", "SKILL.md")}`);
    expect(doctor.stdout).toContain(
      `  not used: ~/.claude/skills/user-skill/SKILL.md: 'user-skill' is already defined by ${join(repo, ".claude", "skills", "dup", "SKILL.md")}`,
    );
    // Pi's rules: any depth loads; a dot-folder is named, not searched.
    expect(doctor.stdout).toContain(
      `  deep  [project]  ${join(repo, ".agents", "skills", "a", "b", "c", "d", "deep", "SKILL.md")}`,
    );
    expect(doctor.stdout).toContain(
      `  not searched: ${join(repo, ".agents", "skills", ".drafts")}: found SKILL.md files in a dot-folder`,
    );
    expect(show.stdout).toContain(`#   ${join(base, "home", ".codex", "skills")}  [agents]  (none)`);
    expect(doctor.stdout).toContain("context files:\n");
    expect(doctor.stdout).toContain(`  loaded: ${join(base, "home", ".claude", "CLAUDE.md")}`);
    expect(doctor.stdout).toContain(`  loaded: ${join(repo, "AGENTS.md")}`);
    expect(doctor.stdout).toContain(
      `  skipped: ${join(repo, "CLAUDE.md")}  (same text as ${join(repo, "AGENTS.md")}; loaded once)`,
    );
  });
});
