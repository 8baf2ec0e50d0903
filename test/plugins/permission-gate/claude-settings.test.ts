/**
 * Issue 28.2 and 28.7: Claude Code's settings files, written in its documented format, do in coil what
 * they do in Claude Code. Through the built CLI:
 * - `permissions` in ~/.claude/settings.json, .claude/settings.json and .claude/settings.local.json are
 *   enforced by the permission gate (deny wins, across every tool), shown by `coil doctor` and
 *   `coil preset show` with their file, and a rule form coil cannot map is warned about once;
 * - a project's allow rules apply only once the project is trusted, its deny rules always;
 * - `env` (yours always, a project's when trusted) and `model` / `ANTHROPIC_MODEL` are read: the
 *   Anthropic provider finds its key and base URL there, and the run uses the model they name.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanTemps, coil, requireBuild, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { reply, startMockAnthropic, text, type MockAnthropic } from "../../support/mock-anthropic.js";

beforeAll(requireBuild);
afterAll(cleanTemps);

const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
const calls = (list: { name: string; arguments: Record<string, unknown> }[]) =>
  `${list.map((c) => `- toolCalls:\n    - ${JSON.stringify(c)}\n`).join("")}- text: done\n`;
const ends = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l.includes('"tool_execution_end"'))
    .map((l) => JSON.parse(l) as { result: { content: { text?: string }[]; isError?: boolean } })
    .map((e) => e.result.content.map((c) => c.text ?? "").join(""));

/** A project with its .claude/settings files and a home with ~/.claude/settings.json. */
function world(user: unknown, project: unknown, local?: unknown, files: Record<string, string> = {}) {
  const base = tempDir("coil-claude-settings-");
  writeFiles(join(base, "home"), { ".claude/settings.json": json(user) });
  const dir = writeFiles(join(base, "project"), {
    ".claude/settings.json": json(project),
    ...(local ? { ".claude/settings.local.json": json(local) } : {}),
    ...files,
  });
  writeFiles(dir, { ".git/HEAD": "ref: refs/heads/main\n" });
  return { base, dir, env: sandboxEnv(base) };
}

describe("Claude Code permissions (28.2)", () => {
  it("are enforced for every tool, deny winning; doctor and preset show list them; an unmappable rule warns once", async () => {
    const w = world(
      { permissions: { deny: ["Edit(src/**)", "NotebookEdit(x.ipynb)"], ask: ["Bash(git push:*)"] } },
      { permissions: { deny: ["Bash(rm:*)", "Read(./config/prod.json)"], allow: ["Bash(rm:*)", "Read"] } },
      { permissions: { deny: ["Bash(curl *)"] } },
      {
        "victim.txt": "keep me\n",
        "config/prod.json": '{ "password": "prod-secret-77" }\n',
        "src/a.ts": "export const a = 1;\n",
      },
    );
    writeFiles(w.dir, {
      "r.yaml": calls([
        { name: "bash", arguments: { command: "rm victim.txt" } },
        { name: "read", arguments: { path: "config/prod.json" } },
        { name: "bash", arguments: { command: "cat config/prod.json" } },
        { name: "grep", arguments: { pattern: "password", path: "." } },
        { name: "edit", arguments: { path: "src/a.ts", oldText: "1", newText: "2" } },
        { name: "write", arguments: { path: "src/b.ts", content: "x" } },
        { name: "bash", arguments: { command: "git push origin main" } },
        { name: "bash", arguments: { command: "curl http://127.0.0.1:9/" } },
      ]),
    });
    const r = await coil(w.dir, ["--provider", "scripted", "--script", "r.yaml", "--mode", "json", "-p", "go"], w.env);
    expect(r.code, r.stderr).toBe(0);
    const t = ends(r.stdout);
    expect(t).toHaveLength(8);
    expect(existsSync(join(w.dir, "victim.txt"))).toBe(true);
    expect(t[0]).toContain(`denied by the rule Bash(rm:*) (${join(w.dir, ".claude", "settings.json")})`);
    expect(t[1]).toMatch(/denied by the rule Read\(\.\/config\/prod\.json\)/);
    expect(t[2]).toMatch(/denied by the rule Read\(\.\/config\/prod\.json\)/);
    for (const out of t) expect(out).not.toContain("prod-secret-77");
    expect(t[3]).toMatch(/withheld/);
    expect(readFileSync(join(w.dir, "src", "a.ts"), "utf8")).toBe("export const a = 1;\n");
    expect(t[4]).toMatch(/denied by the rule Edit\(src\/\*\*\)/);
    expect(existsSync(join(w.dir, "src", "b.ts"))).toBe(false);
    expect(t[6]).toMatch(/needs approval \(the rule Bash\(git push:\*\) .*asks\)/);
    expect(t[7]).toMatch(/denied by the rule Bash\(curl \*\) \(.*settings\.local\.json\)/);
    // the rule coil cannot map: once per run, naming the file and why
    const warned = r.stderr.split("\n").filter((l) => l.includes("NotebookEdit(x.ipynb)"));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(
      /settings\.json: permissions\.deny rule NotebookEdit\(x\.ipynb\) is not applied: coil has no notebook tool/,
    );

    const doctor = await coil(w.dir, ["doctor"], w.env);
    expect(doctor.stdout).toContain(join(w.base, "home", ".claude", "settings.json"));
    expect(doctor.stdout).toMatch(/deny Bash\(rm:\*\) → bash\(rm:\*\)/);
    expect(doctor.stdout).toMatch(/deny Read\(\.\/config\/prod\.json\) → read\(config\/prod\.json\)/);
    expect(doctor.stdout).toMatch(/deny NotebookEdit\(x\.ipynb\) not applied: coil has no notebook tool/);
    const show = await coil(w.dir, ["preset", "show"], w.env);
    expect(show.stdout).toContain(join(w.dir, ".claude", "settings.local.json"));
    expect(show.stdout).toMatch(/permissions\.deny: Bash\(rm:\*\), Read\(\.\/config\/prod\.json\)/);
  });

  it("a project's allow rules apply once it is trusted; its deny rules always", async () => {
    const w = world(
      {},
      {
        permissions: { allow: ["Bash(touch made.txt)"], deny: ["Bash(touch denied.txt)"], defaultMode: "acceptEdits" },
      },
    );
    writeFiles(w.dir, {
      "r.yaml": calls([
        { name: "bash", arguments: { command: "touch made.txt" } },
        { name: "bash", arguments: { command: "touch denied.txt" } },
      ]),
    });
    const args = ["--preset", "safe", "--provider", "scripted", "--script", "r.yaml", "--mode", "json", "-p", "go"];
    const untrusted = await coil(w.dir, args, w.env);
    expect(ends(untrusted.stdout)[0]).toMatch(/needs approval/);
    expect(ends(untrusted.stdout)[1]).toMatch(/denied by the rule Bash\(touch denied\.txt\)/);
    expect(existsSync(join(w.dir, "made.txt"))).toBe(false);
    expect(untrusted.stderr).toMatch(
      /ask for allow Bash\(touch made\.txt\), defaultMode acceptEdits; not applied: the project is not trusted/,
    );
    const trusted = await coil(w.dir, ["--trust", ...args], w.env);
    expect(ends(trusted.stdout)[0], trusted.stderr).not.toMatch(/Blocked/);
    expect(existsSync(join(w.dir, "made.txt"))).toBe(true);
    expect(ends(trusted.stdout)[1]).toMatch(/denied by the rule Bash\(touch denied\.txt\)/);
    expect(existsSync(join(w.dir, "denied.txt"))).toBe(false);
    const doctor = await coil(w.dir, ["--trust", "doctor"], w.env);
    expect(doctor.stdout).toMatch(/mode: accept-edits \(from defaultMode in .*\.claude\/settings\.json\)/);
  });
});

describe("Claude Code env and model (28.7)", () => {
  let mock: MockAnthropic;
  beforeAll(async () => {
    mock = await startMockAnthropic({ key: "sk-ant-settings-key-0000000000000000" });
  });
  afterAll(() => mock.close());

  const echoThenDone = () => {
    mock.push(
      reply([{ tool: { id: "tu_1", name: "bash", input: { command: "echo v=$PROBE_USER-$PROBE_PROJECT" } } }], {
        stop: "tool_use",
      }),
    );
    mock.push(text("done"));
  };

  it("env: the provider's key and base URL and your variables from ~/.claude; a project's env only when trusted", async () => {
    const w = world(
      {
        env: {
          ANTHROPIC_API_KEY: "sk-ant-settings-key-0000000000000000",
          ANTHROPIC_BASE_URL: mock.url,
          PROBE_USER: "u",
        },
        model: "haiku",
      },
      { env: { PROBE_PROJECT: "p" } },
    );
    mock.requests.length = 0;
    echoThenDone();
    const r = await coil(w.dir, ["--mode", "json", "-p", "go"], w.env);
    expect(r.code, r.stderr).toBe(0);
    expect(mock.rejected()).toEqual([]);
    expect(mock.requests[0]!.body.model).toBe("claude-haiku-5-5");
    expect(ends(r.stdout)[0]).toContain("v=u-");
    expect(ends(r.stdout)[0]).not.toContain("v=u-p");

    mock.requests.length = 0;
    echoThenDone();
    const trusted = await coil(w.dir, ["--trust", "--mode", "json", "-p", "go"], w.env);
    expect(ends(trusted.stdout)[0], trusted.stderr).toContain("v=u-p");

    const doctor = await coil(w.dir, ["doctor"], w.env);
    expect(doctor.stdout).toMatch(/env PROBE_USER: set from .*home\/\.claude\/settings\.json/);
    expect(doctor.stdout).toMatch(
      /env of .*project\/\.claude\/settings\.json: not applied: the project is not trusted/,
    );
    expect(doctor.stdout).toMatch(/model: anthropic\/haiku from .*settings\.json/);
  });

  it("model: ANTHROPIC_MODEL over the settings' model, --model over both; unusable, it gives way with a warning", async () => {
    const w = world(
      {
        env: { ANTHROPIC_API_KEY: "sk-ant-settings-key-0000000000000000", ANTHROPIC_BASE_URL: mock.url },
        model: "haiku",
      },
      {},
      { model: "sonnet" },
    );
    mock.requests.length = 0;
    mock.push(text("a"), text("b"), text("c"));
    const local = await coil(w.dir, ["-p", "hi"], w.env);
    expect(local.code, local.stderr).toBe(0);
    const fromEnv = await coil(w.dir, ["-p", "hi"], { ...w.env, ANTHROPIC_MODEL: "opus" });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    const flag = await coil(w.dir, ["--model", "anthropic/fable", "-p", "hi"], { ...w.env, ANTHROPIC_MODEL: "opus" });
    expect(flag.code, flag.stderr).toBe(0);
    expect(mock.requests.map((q) => q.body.model)).toEqual([
      "claude-sonnet-5-5",
      "claude-opus-5-5",
      "claude-fable-5-1",
    ]);
    const show = await coil(w.dir, ["preset", "show"], { ...w.env, ANTHROPIC_MODEL: "opus" });
    expect(show.stdout).toMatch(/model: anthropic\/opus # ANTHROPIC_MODEL/);

    // a model no provider can serve here: the usual choice, and a warning naming where it came from
    const nothing = world({ model: "haiku" }, {});
    writeFiles(nothing.dir, { "r.yaml": "- text: scripted answer\n" });
    const r = await coil(nothing.dir, ["--provider", "scripted", "--script", "r.yaml", "-p", "hi"], nothing.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("scripted answer");
    const noKey = await coil(nothing.dir, ["--script", "r.yaml", "-p", "hi"], nothing.env);
    expect(noKey.stderr).toMatch(/the model anthropic\/haiku from .*settings\.json \(Claude Code's\) is not used/);
  });
});
