/** The shipped CLI (dist/bin/coil.js) as a child process: quiet subcommands, a private $COIL_HOME, -r -p without a provider key. */
import { chmodSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanTemps, coil, requireBuild, sandboxEnv, tempDir, writeFiles } from "../support/ecosystem.js";

beforeAll(requireBuild);
afterAll(cleanTemps);

const SKILL = (name: string, what: string) => `---\nname: ${name}\ndescription: ${what}\n---\nDo it.\n`;
const TEMPLATE = "---\ndescription: my own review\n---\nReview $ARGUMENTS\n";

describe("subcommands and setup warnings", () => {
  it("coil list and coil sessions list print no shadowing warnings; /skills notes the shadowed skill", async () => {
    const base = tempDir("coil-front-");
    const env = sandboxEnv(base);
    // A user skill and prompt template that shadow the built-in ones.
    writeFiles(join(base, "coil-home"), {
      "skills/debug-systematically/SKILL.md": SKILL("debug-systematically", "my own debugging steps"),
      "prompt-templates/review.md": TEMPLATE,
    });
    // The project's copy of the same skill shadows the user's (the same warning a run would print).
    const project = writeFiles(join(base, "project"), {
      ".agents/skills/debug-systematically/SKILL.md": SKILL("debug-systematically", "the project's"),
      "hi.yaml": "- text: hi\n",
    });

    for (const args of [["list"], ["sessions", "list"]]) {
      const r = await coil(project, args, env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(/already defined|takes precedence|warn:/);
    }
    const run = await coil(
      project,
      ["-p", "--provider", "scripted", "--script", "hi.yaml", "--no-session", "hello"],
      env,
    );
    expect(run.stdout).toContain("hi");
    // A skill shadowed by one of the same name is a note in /skills, not a warning on every run (#17).
    expect(run.stderr).not.toMatch(/\[plugin skills\].*already defined/);
    const listed = await coil(
      project,
      ["-p", "--provider", "scripted", "--script", "hi.yaml", "--no-session", "/skills"],
      env,
    );
    expect(listed.stdout).toMatch(
      /not used: .*coil-home\/skills\/debug-systematically\/SKILL\.md: 'debug-systematically' is already defined by .*project\/\.agents\/skills\/debug-systematically\/SKILL\.md/,
    );
  });
});

describe("$COIL_HOME", () => {
  it("is tightened to 0700 when it exists with wider rights, and created 0700", async () => {
    const base = tempDir("coil-front-");
    const env = sandboxEnv(base);
    const home = join(base, "coil-home");
    mkdirSync(join(home, "sessions"), { recursive: true });
    chmodSync(home, 0o755);
    const project = writeFiles(join(base, "project"), { "ok.yaml": "- text: ok\n" });
    const r = await coil(project, ["sessions", "list"], env);
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(home).mode & 0o777).toBe(0o700);

    const fresh = join(base, "fresh-home");
    const p = await coil(project, ["-p", "--provider", "scripted", "--script", "ok.yaml", "hello"], {
      ...env,
      COIL_HOME: fresh,
    });
    expect(p.code, p.stderr).toBe(0);
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
  });
});

describe("coil -r -p", () => {
  it("lists the sessions without a provider key", async () => {
    const base = tempDir("coil-front-");
    const env = sandboxEnv(base);
    const project = writeFiles(join(base, "project"), { "r.yaml": "- text: remember me\n" });
    const first = await coil(project, ["-p", "--provider", "scripted", "--script", "r.yaml", "first prompt"], env);
    expect(first.code, first.stderr).toBe(0);
    // No ANTHROPIC_/OPENAI_ keys in env (childEnv drops them): choosing a model would fail.
    const listed = await coil(project, ["-r", "-p"], env);
    expect(listed.stderr).not.toMatch(/not configured|no usable provider/);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain("first prompt");
    expect(listed.stdout).toContain("resume one with: coil --session");
    // A real run still says what is missing.
    const run = await coil(project, ["-p", "hello"], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/no usable provider|not configured/);
    // ... and leaves no session behind.
    const again = await coil(project, ["sessions", "list", "--json"], env);
    expect(JSON.parse(again.stdout)).toHaveLength(1);
  });
});
