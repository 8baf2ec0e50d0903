/**
 * Commands in subfolders of `.claude/commands` as Claude Code 2.1 names them (#28.1):
 * `.claude/commands/tools/api-scaffold.md` is `/tools:api-scaffold`; the bare `/api-scaffold` is not a
 * command and answers with a did-you-mean, without calling the model (Claude Code prints
 * `Unknown command: /api-scaffold` and sends nothing). Through the built CLI against the validating
 * Anthropic mock.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { coil, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { text } from "../../support/mock-anthropic.js";
import { useMockAnthropic } from "../../support/provider-mocks.js";

const KEY = "sk-ant-subfolders-test-0123456789";
const mock = useMockAnthropic(KEY);

function sandbox() {
  const base = tempDir("coil-cc-subfolders-");
  const project = join(base, "repo");
  writeFiles(project, {
    ".git/HEAD": "ref: refs/heads/main\n",
    ".claude/commands/tools/api-scaffold.md":
      "---\ndescription: Scaffold an API\n---\nScaffold an API named $ARGUMENTS\n",
    ".claude/commands/frontend/component.md": "---\ndescription: Make a component\n---\nCreate component $1\n",
    ".claude/commands/backend/component.md": "---\ndescription: Make a service\n---\nCreate service $1\n",
    ".claude/commands/review.md": "Review $ARGUMENTS\n",
    ".claude/commands/lint/review.md": "Lint-review $ARGUMENTS\n",
  });
  writeFiles(join(base, "home"), { ".claude/commands/git/wip.md": "Commit the work in progress\n" });
  const env = sandboxEnv(base, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url });
  const run = (prompt: string) => coil(project, ["--model", "anthropic/claude-sonnet-4-5", "-p", prompt], env);
  return { base, project, env, run };
}

const sent = () =>
  mock.requests.map((r) => {
    const content = r.body.messages.at(-1).content;
    return typeof content === "string" ? content : content.map((c: { text?: string }) => c.text ?? "").join("");
  });

describe("subfolder commands are /folder:name, as in Claude Code", () => {
  it("/tools:api-scaffold runs the template; /git:wip runs a user command from a subfolder", async () => {
    const s = sandbox();
    mock.requests.length = 0;
    mock.push(text("scaffolded"), text("committed"));
    const a = await s.run("/tools:api-scaffold users");
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toBe("scaffolded\n");
    const b = await s.run("/git:wip");
    expect(b.code, b.stderr).toBe(0);
    expect(sent()).toEqual(["Scaffold an API named users", "Commit the work in progress"]);
    expect(mock.rejected()).toEqual([]);
  });

  it("the bare name is rejected with a did-you-mean and the model is not called; two folders give two suggestions", async () => {
    const s = sandbox();
    mock.requests.length = 0;
    const bare = await s.run("/api-scaffold users");
    expect(bare.code).toBe(0);
    expect(bare.stdout).toMatch(/^Unknown command \/api-scaffold\. Did you mean \/tools:api-scaffold\?/);
    const two = await s.run("/component Button");
    expect(two.stdout).toMatch(
      /Unknown command \/component\. Did you mean \/backend:component or \/frontend:component\?/,
    );
    const user = await s.run("/wip");
    expect(user.stdout).toMatch(/Did you mean \/git:wip\?/);
    expect(mock.requests).toHaveLength(0);
  });

  it("a top-level command keeps its name next to a subfolder one of the same name; /templates lists the folder names", async () => {
    const s = sandbox();
    mock.requests.length = 0;
    mock.push(text("reviewed"), text("lint-reviewed"));
    await s.run("/review src/a.ts");
    await s.run("/lint:review src/a.ts");
    expect(sent()).toEqual(["Review src/a.ts", "Lint-review src/a.ts"]);
    const list = await s.run("/templates");
    expect(list.stdout).toMatch(/^\/tools:api-scaffold +Scaffold an API +\[project\]$/m);
    expect(list.stdout).toMatch(/^\/frontend:component /m);
    expect(list.stdout).toMatch(/^\/backend:component /m);
    expect(list.stdout).toMatch(/^\/git:wip .*\[user\]$/m);
    expect(list.stdout).not.toMatch(/^\/(api-scaffold|component|wip) /m);
  });
});
