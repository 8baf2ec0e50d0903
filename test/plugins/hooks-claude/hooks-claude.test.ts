/** Claude Code hook scripts (real bash scripts in temp dirs) run by the built CLI at coil's hooks. */
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { matches, parseHooks } from "../../../plugins/hooks-claude/index.js";
import { claudeToolInput, coilToolArgs } from "../../../plugins/hooks-claude/mapping.js";
import { cleanTemps, coil, requireBuild, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";

beforeAll(requireBuild);
afterAll(cleanTemps);

function sandbox(scripts: Record<string, string>, settings?: unknown) {
  const base = tempDir("coil-hooks-");
  const project = join(base, "project");
  const hooksDir = join(base, "hooks");
  writeFiles(project, { "keep.txt": "precious\n" });
  writeFiles(hooksDir, scripts);
  for (const name of Object.keys(scripts)) chmodSync(join(hooksDir, name), 0o755);
  if (settings)
    writeFiles(join(base, "home"), { ".claude/settings.json": JSON.stringify({ hooks: settings }, null, 2) });
  const env = sandboxEnv(base, { HOOKS: hooksDir });
  const events = (stdout: string) =>
    stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  const results = (stdout: string) =>
    events(stdout)
      .filter((e) => e.type === "tool_execution_end")
      .map((e) => e.result);
  return { base, project, hooksDir, env, events, results };
}

const cmd = (script: string, extra: Record<string, unknown> = {}) => ({
  type: "command",
  command: `$HOOKS/${script}`,
  ...extra,
});

describe("hooks-claude", () => {
  it("a PreToolUse script that exits 2 blocks the call with its stderr as the reason, and gets Claude Code's JSON on stdin", async () => {
    const s = sandbox(
      {
        "guard.sh": `#!/usr/bin/env bash
input=$(cat)
printf '%s' "$input" > "$HOOKS/pre-input.json"
if printf '%s' "$input" | grep -q '"command":"rm '; then
  echo "rm is not allowed here; move files to ./trash instead" >&2
  exit 2
fi
exit 0
`,
      },
      { PreToolUse: [{ matcher: "Bash", hooks: [cmd("guard.sh")] }] },
    );
    writeFiles(s.project, {
      "r.yaml": `- toolCalls: [{ name: bash, arguments: { command: "rm keep.txt" } }]\n- toolCalls: [{ name: bash, arguments: { command: "echo fine" } }]\n- text: done\n`,
    });
    const ran = await coil(
      s.project,
      ["--plugin", "hooks-claude", "--provider", "scripted", "--script", "r.yaml", "--mode", "json", "-p", "clean up"],
      s.env,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const [blocked, allowed] = s.results(ran.stdout);
    expect(blocked).toMatchObject({ toolName: "bash", isError: true });
    expect(blocked.content[0].text).toContain("rm is not allowed here; move files to ./trash instead");
    expect(readFileSync(join(s.project, "keep.txt"), "utf8")).toBe("precious\n");
    expect(allowed).toMatchObject({ isError: false });
    expect(allowed.content[0].text).toContain("fine");
    const input = JSON.parse(readFileSync(join(s.hooksDir, "pre-input.json"), "utf8"));
    expect(input).toMatchObject({
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "echo fine" },
      cwd: s.project,
      tool_use_id: "call_2_0",
    });
    expect(typeof input.session_id).toBe("string");
    expect(input.transcript_path).toMatch(/\.jsonl$/);
  });

  it("honours JSON permission decisions (deny, and ask without a ui) and matches Write|Edit by regex; other tools pass", async () => {
    const s = sandbox(
      {
        "deny.sh": `#!/usr/bin/env bash
cat > /dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"generated files are read-only"}}'
`,
        "ask.sh": `#!/usr/bin/env bash
cat > /dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"reading secrets"}}'
`,
      },
      {
        PreToolUse: [
          { matcher: "Write|Edit", hooks: [cmd("deny.sh")] },
          { matcher: "Read", hooks: [cmd("ask.sh")] },
        ],
      },
    );
    writeFiles(s.project, {
      "r.yaml": `- toolCalls:
    - { name: write, arguments: { path: gen.txt, content: x } }
    - { name: read, arguments: { path: keep.txt } }
    - { name: ls, arguments: {} }
- text: done
`,
    });
    const ran = await coil(
      s.project,
      ["--plugin", "hooks-claude", "--provider", "scripted", "--script", "r.yaml", "--mode", "json", "-p", "go"],
      s.env,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const [write, read, ls] = s.results(ran.stdout);
    expect(write).toMatchObject({
      isError: true,
      content: [{ text: expect.stringContaining("generated files are read-only") }],
    });
    expect(existsSync(join(s.project, "gen.txt"))).toBe(false);
    expect(read).toMatchObject({ isError: true, content: [{ text: expect.stringContaining("reading secrets") }] });
    expect(ls).toMatchObject({ isError: false });
  });

  it("a PostToolUse script's additionalContext and exit-2 stderr reach the model with the tool result", async () => {
    const s = sandbox(
      {
        "lint.sh": `#!/usr/bin/env bash
input=$(cat)
file=$(printf '%s' "$input" | sed -n 's/.*"file_path":"\\([^"]*\\)".*/\\1/p')
echo "{\\"hookSpecificOutput\\":{\\"hookEventName\\":\\"PostToolUse\\",\\"additionalContext\\":\\"lint: $file has 0 problems\\"}}"
`,
        "fmt.sh": `#!/usr/bin/env bash
cat > /dev/null
echo "formatter: line 1 is too long" >&2
exit 2
`,
      },
      {
        PostToolUse: [
          { matcher: "Write", hooks: [cmd("lint.sh")] },
          { matcher: "Bash", hooks: [cmd("fmt.sh")] },
        ],
      },
    );
    writeFiles(s.project, {
      "r.yaml": `- toolCalls:
    - { name: write, arguments: { path: out.txt, content: hello } }
    - { name: bash, arguments: { command: "echo ran" } }
- text: done
`,
    });
    const ran = await coil(
      s.project,
      ["--plugin", "hooks-claude", "--provider", "scripted", "--script", "r.yaml", "--mode", "json", "-p", "go"],
      s.env,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const [write, bash] = s.results(ran.stdout);
    expect(write.isError).toBe(false);
    expect(write.content.at(-1).text).toContain(
      `[PostToolUse hook context]\nlint: ${join(s.project, "out.txt")} has 0 problems`,
    );
    expect(bash.content.map((c: { text: string }) => c.text).join("")).toMatch(
      /ran[\s\S]*\[PostToolUse hook feedback\]\nformatter: line 1 is too long/,
    );
    expect(readFileSync(join(s.project, "out.txt"), "utf8")).toBe("hello");
  });

  it("a Stop hook keeps the agent going once (decision: block), then lets it stop when stop_hook_active is true", async () => {
    const s = sandbox(
      {
        "stop.sh": `#!/usr/bin/env bash
input=$(cat)
echo "$input" >> "$HOOKS/stop-inputs.jsonl"
if printf '%s' "$input" | grep -q '"stop_hook_active":true'; then exit 0; fi
echo '{"decision":"block","reason":"Run the tests before you stop."}'
`,
      },
      { Stop: [{ hooks: [cmd("stop.sh")] }] },
    );
    writeFiles(s.project, { "r.yaml": "- text: All done.\n- text: Tests pass; now I am done.\n" });
    const ran = await coil(
      s.project,
      ["--plugin", "hooks-claude", "--provider", "scripted", "--script", "r.yaml", "--mode", "json", "-p", "fix it"],
      s.env,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const messages = s
      .events(ran.stdout)
      .filter((e) => e.type === "message_end")
      .map((e) => e.message);
    expect(messages.map((m) => [m.role, typeof m.content === "string" ? m.content : m.content[0]?.text])).toEqual([
      ["user", "fix it"],
      ["assistant", "All done."],
      ["user", "Run the tests before you stop."],
      ["assistant", "Tests pass; now I am done."],
    ]);
    const inputs = readFileSync(join(s.hooksDir, "stop-inputs.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(inputs.map((i) => [i.hook_event_name, i.stop_hook_active])).toEqual([
      ["Stop", false],
      ["Stop", true],
    ]);
  });

  it("hooks from preset options: UserPromptSubmit context goes into the prompt's message, SessionStart's into the system prompt, SessionEnd runs, timeouts are enforced", async () => {
    const s = sandbox({
      "prompt.sh": `#!/usr/bin/env bash\ncat > /dev/null\necho "The user's branch is feature/x."\n`,
      "start.sh": `#!/usr/bin/env bash\ncat >> "$HOOKS/lifecycle.log"\necho >> "$HOOKS/lifecycle.log"\necho '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"Project uses pnpm."}}'\n`,
      "end.sh": `#!/usr/bin/env bash\ncat >> "$HOOKS/lifecycle.log"\necho >> "$HOOKS/lifecycle.log"\n`,
      "slow.sh": `#!/usr/bin/env bash\ncat > /dev/null\nsleep 20\n`,
    });
    writeFiles(s.project, {
      "preset.yaml": `extends: default
provider: scripted
plugins:
  - provider-scripted:
      recordTo: requests.jsonl
      replies:
        - toolCalls: [{ name: ls, arguments: {} }]
        - text: done
  - hooks-claude:
      hooks:
        UserPromptSubmit: [{ hooks: [{ type: command, command: "$HOOKS/prompt.sh" }] }]
        SessionStart: [{ matcher: startup, hooks: [{ type: command, command: "$HOOKS/start.sh" }] }]
        SessionEnd: [{ hooks: [{ type: command, command: "$HOOKS/end.sh" }] }]
        PreToolUse: [{ matcher: LS, hooks: [{ type: command, command: "$HOOKS/slow.sh", timeout: 1 }] }]
`,
    });
    const started = Date.now();
    const ran = await coil(s.project, ["--preset", "./preset.yaml", "-p", "hello"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(ran.stdout).toBe("done\n");
    expect(ran.stderr).toContain("PreToolUse hook `$HOOKS/slow.sh` timed out after 1 s; ignored");
    const requests = readFileSync(join(s.project, "requests.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(requests).toHaveLength(2);
    for (const r of requests) {
      // SessionStart context: a system block for the session; UserPromptSubmit context: in the prompt's own message, the same in every request.
      const block = r.system.find((b: { id: string }) => b.id === "hooks-claude");
      expect(block.text).toContain("Project uses pnpm.");
      expect(JSON.stringify(r.system)).not.toContain("feature/x");
      expect(r.messages[0]).toMatchObject({
        role: "user",
        content: [
          { type: "text", text: "hello" },
          {
            type: "text",
            text: "<user-prompt-submit-hook>\nThe user's branch is feature/x.\n</user-prompt-submit-hook>",
          },
        ],
      });
    }
    const log = readFileSync(join(s.hooksDir, "lifecycle.log"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(log.map((e) => e.hook_event_name)).toEqual(["SessionStart", "SessionEnd"]);
    expect(log[0]).toMatchObject({ source: "startup", cwd: s.project });
  });

  it("project hooks (.claude/settings.json) run only when the project is trusted", async () => {
    const s = sandbox({ "guard.sh": `#!/usr/bin/env bash\ncat > /dev/null\necho "project says no" >&2\nexit 2\n` });
    writeFiles(s.project, {
      ".claude/settings.json": JSON.stringify({ hooks: { PreToolUse: [{ matcher: "LS", hooks: [cmd("guard.sh")] }] } }),
      "r.yaml": "- toolCalls: [{ name: ls, arguments: {} }]\n- text: done\n",
    });
    const args = [
      "--plugin",
      "hooks-claude",
      "--provider",
      "scripted",
      "--script",
      "r.yaml",
      "--mode",
      "json",
      "-p",
      "go",
    ];
    const untrusted = await coil(s.project, args, s.env);
    expect(untrusted.stderr).toContain("are not run: the project is not trusted (coil trust)");
    expect(s.results(untrusted.stdout)[0].isError).toBe(false);
    expect((await coil(s.project, ["trust"], s.env)).code).toBe(0);
    const trusted = await coil(s.project, args, s.env);
    expect(s.results(trusted.stdout)[0]).toMatchObject({
      isError: true,
      content: [{ text: expect.stringContaining("project says no") }],
    });
  });

  it("parses Claude Code settings, maps tool inputs and matches like Claude Code", () => {
    const warnings: string[] = [];
    const defs = parseHooks(
      {
        PreToolUse: [
          {
            matcher: "Bash",
            hooks: [
              { type: "command", command: "a", timeout: 5 },
              { type: "prompt", prompt: "x" },
            ],
          },
        ],
        TeammateIdle: [],
      },
      "settings.json",
      60,
      (w) => warnings.push(w),
    );
    // prompt hooks run (with the session's model, 30 s by default, #28.3); TeammateIdle is Claude Code's, not coil's
    expect(defs).toEqual([
      { event: "PreToolUse", matcher: "Bash", type: "command", command: "a", timeoutMs: 5000, source: "settings.json" },
      {
        event: "PreToolUse",
        matcher: "Bash",
        type: "prompt",
        command: "x",
        prompt: "x",
        timeoutMs: 30_000,
        source: "settings.json",
      },
    ]);
    expect(warnings).toEqual([expect.stringContaining("TeammateIdle hooks are not run: coil has no such event")]);
    expect(matches("Edit|Write", "Write")).toBe(true);
    expect(matches("Edit", "MultiEdit")).toBe(false);
    expect(matches("Notebook.*", "NotebookEdit")).toBe(true);
    expect(matches("", "anything")).toBe(true);
    expect(matches("*", "anything")).toBe(true);
    expect(claudeToolInput("edit", { path: "a.ts", edits: [{ oldText: "x", newText: "y" }] }, "/p")).toEqual({
      file_path: "/p/a.ts",
      old_string: "x",
      new_string: "y",
      replace_all: false,
      edits: [{ old_string: "x", new_string: "y" }],
    });
    expect(claudeToolInput("bash", { command: "ls", timeout: 2 }, "/p")).toEqual({ command: "ls", timeout: 2000 });
    expect(claudeToolInput("find", { pattern: "*.ts" }, "/p")).toEqual({ pattern: "*.ts" });
    // updatedInput back to coil's arguments: only the given fields change; an unchanged path keeps the model's spelling
    expect(
      coilToolArgs("edit", { new_string: "z" }, { path: "a.ts", edits: [{ oldText: "x", newText: "y" }] }, "/p"),
    ).toEqual({ path: "a.ts", edits: [{ oldText: "x", newText: "z" }] });
    expect(
      coilToolArgs(
        "edit",
        {
          edits: [
            { old_string: "1", new_string: "2" },
            { old_string: "3", new_string: "4" },
          ],
        },
        { path: "a.ts", edits: [{ oldText: "x", newText: "y" }] },
        "/p",
      ),
    ).toEqual({
      path: "a.ts",
      edits: [
        { oldText: "1", newText: "2" },
        { oldText: "3", newText: "4" },
      ],
    });
    expect(coilToolArgs("write", { file_path: "/p/b.ts" }, { path: "a.ts", content: "c" }, "/p")).toEqual({
      path: "/p/b.ts",
      content: "c",
    });
    expect(coilToolArgs("bash", { command: "ls -la", timeout: 5000 }, { command: "ls" }, "/p")).toEqual({
      command: "ls -la",
      timeout: 5,
    });
    expect(coilToolArgs("grep", { "-i": true }, { pattern: "x" }, "/p")).toEqual({ pattern: "x", ignoreCase: true });
    expect(coilToolArgs("mcp__s__t", { q: 1 }, { q: 0, r: 2 }, "/p")).toEqual({ q: 1, r: 2 });
  });
});
