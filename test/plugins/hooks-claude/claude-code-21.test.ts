/**
 * Claude Code 2.1's hook fields (#28.3), through the built CLI against the validating Anthropic mock, each
 * as Claude Code 2.1.197 was observed to do on a local mock: `if` (a permission rule, any command of a
 * compound Bash line), `async` (not waited for; its output reaches the model at the next request),
 * `asyncRewake` (waited for in print mode, as `claude -p` does; in the background with a UI, waking the agent
 * when it exits 2), a hook's own `timeout`, `CLAUDE_ENV_FILE` for SessionStart (bash commands see what it
 * exports, hooks do not), `type: "prompt"` hooks asking the session's model, the Stop payload's
 * `last_assistant_message`, and hooks coil does not run listed in `coil doctor`.
 */
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RpcClient } from "../../../sdk/rpc-client/index.js";
import { BIN, coil, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";
import { reply, text, type Step } from "../../support/mock-anthropic.js";
import { useMockAnthropic } from "../../support/provider-mocks.js";

const KEY = "sk-ant-hooks-21-test-0123456789";
const MODEL = "claude-sonnet-4-5";
const mock = useMockAnthropic(KEY);

/** A project, a hooks folder ($HOOKS) with scripts, and ~/.claude/settings.json with these hooks. */
function sandbox(hooks: Record<string, unknown>, scripts: Record<string, string> = {}) {
  const base = tempDir("coil-hooks-21-");
  const project = writeFiles(join(base, "project"), { "a.ts": "export const a = 1;\n", "b.md": "# b\n" });
  const dir = join(base, "hooks");
  writeFiles(dir, { ".keep": "", ...scripts });
  for (const name of Object.keys(scripts)) chmodSync(join(dir, name), 0o755);
  writeFiles(join(base, "home"), { ".claude/settings.json": JSON.stringify({ hooks }) });
  const env = sandboxEnv(base, { HOOKS: dir, ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url });
  const run = (...args: string[]) => coil(project, ["--model", `anthropic/${MODEL}`, ...args], env);
  const lines = (file: string) =>
    existsSync(join(dir, file))
      ? readFileSync(join(dir, file), "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];
  return { base, project, dir, env, run, lines };
}

const log = (file: string) => `cat >> "$HOOKS/${file}"; echo >> "$HOOKS/${file}"`;
const command = (cmd: string, extra: Record<string, unknown> = {}) => ({ type: "command", command: cmd, ...extra });
const calls = (...list: { name: string; input: Record<string, unknown> }[]): Step =>
  reply(list.map((c, i) => ({ tool: { id: `toolu_${Math.random().toString(36).slice(2, 8)}${i}`, ...c } })));
const bash = (cmd: string) => ({ name: "bash", input: { command: cmd } });
/** The text of every block of a request's newest message. */
const lastText = (i: number) => JSON.stringify(mock.requests[i]!.body.messages.at(-1).content);

describe("Claude Code 2.1 hook fields", () => {
  it("if: a hook runs only for calls matching its rule (any command of a compound line); on a non-tool event it never runs, and doctor says so", async () => {
    const s = sandbox({
      PreToolUse: [
        {
          matcher: "Bash",
          hooks: [
            command(log("commit.jsonl"), { if: "Bash(git commit:*)" }),
            command(log("echo.jsonl"), { if: "Bash(echo *)" }),
          ],
        },
        { matcher: "Read", hooks: [command(log("ts.jsonl"), { if: "Read(*.ts)" })] },
      ],
      Stop: [{ hooks: [command(log("stop.jsonl"), { if: "Bash(true)" })] }],
    });
    mock.clear();
    mock.requests.length = 0;
    mock.push(
      calls(
        bash("echo hi"),
        bash("ls"),
        bash("git commit --dry-run -m one"),
        bash("echo a && git commit --dry-run -m two"),
        bash("GIT_AUTHOR_NAME=x git commit --dry-run -m three"),
      ),
      calls({ name: "read", input: { path: "a.ts" } }, { name: "read", input: { path: "b.md" } }),
      text("all done"),
    );
    const ran = await s.run("-p", "go");
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toMatch(
      /Stop hook `cat >> .*stop\.jsonl.*` is not run: it has an "if" rule, which applies to tool events only/,
    );
    const commands = (file: string) => s.lines(file).map((l) => l.tool_input.command ?? l.tool_input.file_path);
    // a leading variable assignment does not hide the command (as Claude Code matches since 2.1.89)
    expect(commands("commit.jsonl")).toEqual([
      "git commit --dry-run -m one",
      "echo a && git commit --dry-run -m two",
      "GIT_AUTHOR_NAME=x git commit --dry-run -m three",
    ]);
    expect(commands("echo.jsonl")).toEqual(["echo hi", "echo a && git commit --dry-run -m two"]);
    expect(commands("ts.jsonl")).toEqual([join(s.project, "a.ts")]);
    expect(s.lines("stop.jsonl")).toEqual([]);
    const doctor = await s.run("doctor");
    expect(doctor.stdout).toContain("Claude Code hooks:");
    expect(doctor.stdout).toMatch(/PreToolUse: Bash: cat >> .*commit\.jsonl.* \(if Bash\(git commit:\*\), 600 s\)/);
    expect(doctor.stdout).toMatch(/not run: Stop hook `cat >> .*stop\.jsonl.*`/);
  });

  it("async: the call does not wait for the hook, and its additionalContext reaches the model with a later request", async () => {
    // The hook waits for the second call's marker: were it waited for, the first call would never finish.
    const s = sandbox({
      PostToolUse: [
        {
          matcher: "Bash",
          hooks: [
            command(
              `cat > /dev/null; [ -f "$HOOKS/first" ] && exit 0; touch "$HOOKS/first"; until [ -f "$HOOKS/go" ]; do sleep 0.05; done; echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"ASYNC-CONTEXT from the review"}}'; touch "$HOOKS/hook-done"`,
              { async: true, timeout: 20 },
            ),
          ],
        },
      ],
    });
    mock.clear();
    mock.requests.length = 0;
    mock.push(
      calls(bash("echo one")),
      calls(bash(`touch "$HOOKS/go"; until [ -f "$HOOKS/hook-done" ]; do sleep 0.05; done; sleep 0.3; echo two`)),
      text("finished"),
    );
    // The markers live outside the project, where the default preset asks before a command writes (issue 36.4).
    const ran = await s.run("--permission-mode", "yolo", "-p", "go");
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe("finished\n");
    expect(lastText(1)).not.toContain("ASYNC-CONTEXT");
    expect(lastText(2)).toContain("ASYNC-CONTEXT from the review");
    expect(mock.rejected()).toEqual([]);
  });

  it("asyncRewake in print mode is waited for, as claude -p does: exit 2's stderr is feedback in the same turn", async () => {
    const s = sandbox({
      PostToolUse: [
        {
          matcher: "Bash",
          hooks: [command("cat > /dev/null; echo 'REVIEW: the commit leaks a key' >&2; exit 2", { asyncRewake: true })],
        },
      ],
    });
    mock.clear();
    mock.requests.length = 0;
    mock.push(calls(bash("echo committed")), text("noted"));
    const ran = await s.run("-p", "go");
    expect(ran.code, ran.stderr).toBe(0);
    expect(lastText(1)).toContain("REVIEW: the commit leaks a key");
  });

  it("asyncRewake with a UI (rpc): the run does not wait; when the hook exits 2 later, the agent is woken with its message", async () => {
    const s = sandbox({
      PostToolUse: [
        {
          matcher: "Bash",
          hooks: [
            command(
              `cat > /dev/null; until [ -f "$HOOKS/release" ]; do sleep 0.05; done; echo 'found a leaked key in the commit' >&2; exit 2`,
              { asyncRewake: true, rewakeMessage: "Background security review:", timeout: 30 },
            ),
          ],
        },
      ],
    });
    mock.clear();
    mock.requests.length = 0;
    mock.push(calls(bash("echo committed")), text("commit made"), text("I will fix the leaked key"));
    const client = await RpcClient.start({
      bin: BIN,
      cwd: s.project,
      env: s.env,
      args: ["--model", `anthropic/${MODEL}`],
      timeoutMs: 15_000,
    });
    try {
      const woken = new Promise<void>((resolve) =>
        client.on("event", (e: { type: string; stopReason?: string }) => {
          if (e.type === "agent_end" && mock.requests.length >= 3) resolve();
        }),
      );
      expect((await client.run("commit it")).stopReason).toBe("stop");
      expect(mock.requests).toHaveLength(2);
      writeFiles(s.dir, { release: "" });
      await woken;
    } finally {
      await client.close();
    }
    expect(lastText(2)).toContain("Background security review:\\nfound a leaked key in the commit");
    expect(mock.rejected()).toEqual([]);
  });

  it("a hook's own timeout ends it; the call goes on", async () => {
    const s = sandbox({ PreToolUse: [{ matcher: "Bash", hooks: [command("sleep 30", { timeout: 1 })] }] });
    mock.clear();
    mock.requests.length = 0;
    mock.push(calls(bash("echo through")), text("ok"));
    const started = Date.now();
    const ran = await s.run("-p", "go");
    expect(ran.code, ran.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(ran.stderr).toMatch(/PreToolUse hook `sleep 30` timed out after 1 s; ignored/);
    expect(lastText(1)).toContain("through");
  });

  it("CLAUDE_ENV_FILE: what a SessionStart hook writes there is in bash commands' environment, not in other hooks'", async () => {
    const s = sandbox({
      SessionStart: [
        {
          hooks: [
            command(
              `cat > /dev/null; mkdir -p "$HOME/envbin"; printf 'export FOO=bar-from-env-file\\nBAZ=plain\\nexport PATH="$HOME/envbin:$PATH"\\n' >> "$CLAUDE_ENV_FILE"`,
            ),
          ],
        },
      ],
      PreToolUse: [
        { matcher: "Bash", hooks: [command(`cat > /dev/null; echo "{\\"foo\\":\\"$FOO\\"}" >> "$HOOKS/pre.jsonl"`)] },
      ],
    });
    mock.clear();
    mock.requests.length = 0;
    mock.push(calls(bash('echo "FOO=$FOO BAZ=$BAZ"; echo "$PATH" | tr : "\\n" | head -1')), text("ok"));
    const ran = await s.run("-p", "go");
    expect(ran.code, ran.stderr).toBe(0);
    expect(lastText(1)).toContain("FOO=bar-from-env-file BAZ=plain");
    expect(lastText(1)).toContain(join(s.base, "home", "envbin"));
    expect(s.lines("pre.jsonl")).toEqual([{ foo: "" }]);
  });

  it('type: "prompt" hooks ask the session\'s model: ok false refuses a call and keeps a stopping agent going; the Stop payload has last_assistant_message', async () => {
    const s = sandbox({
      PreToolUse: [{ matcher: "Bash", hooks: [{ type: "prompt", prompt: "Is this command safe? $ARGUMENTS" }] }],
      Stop: [
        {
          hooks: [{ type: "prompt", prompt: "Did the assistant run the tests?" }, command(log("stop.jsonl"))],
        },
      ],
    });
    const judged: { system: string; model: string; last: string }[] = [];
    const judge: Step = (body) => {
      const system = body.system.map((b: { text: string }) => b.text).join("\n");
      const last = JSON.stringify(body.messages.at(-1).content);
      judged.push({ system, model: body.model, last });
      if (last.includes("Is this command safe?"))
        return text(
          last.includes("rm -f") ? '{"ok": false, "reason": "rm is dangerous"}' : '{"ok": true, "reason": "fine"}',
        );
      return text(
        JSON.stringify(body.messages).includes("tests pass now")
          ? '{"ok": true, "reason": "the tests ran"}'
          : '{"ok": false, "reason": "Run the tests before stopping"}',
      );
    };
    mock.clear();
    mock.requests.length = 0;
    mock.push(
      calls(bash("rm -f x.txt")),
      judge,
      calls(bash("echo safe")),
      judge,
      text("I am done"),
      judge,
      text("tests pass now"),
      judge,
    );
    const ran = await s.run("-p", "go");
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe("tests pass now\n");
    expect(judged).toHaveLength(4);
    for (const j of judged) {
      expect(j.model).toBe(MODEL);
      expect(j.system).toMatch(/answer with one JSON object/);
    }
    expect(judged[0]!.last).toContain('\\"tool_name\\":\\"Bash\\"');
    // the refused call's result, and the Stop hook's reason as the next user message
    expect(JSON.stringify(mock.requests[2]!.body.messages)).toContain("rm is dangerous");
    expect(JSON.stringify(mock.requests[6]!.body.messages.at(-1))).toContain("Run the tests before stopping");
    expect(s.lines("stop.jsonl").map((l) => [l.last_assistant_message, l.stop_hook_active])).toEqual([
      ["I am done", false],
      ["tests pass now", true],
    ]);
    expect(mock.rejected()).toEqual([]);
  });

  it("hooks coil does not run (events Claude Code has and coil lacks, agent and http handlers) are listed by coil doctor and warned about", async () => {
    const s = sandbox({
      TeammateIdle: [{ hooks: [command("echo idle")] }],
      PostCompact: [{ hooks: [command("echo compacted")] }],
      PreToolUse: [{ matcher: "Bash", hooks: [{ type: "agent", prompt: "check it" }, command("true")] }],
    });
    const doctor = await s.run("doctor");
    expect(doctor.code, doctor.stderr).toBe(0);
    expect(doctor.stdout).toMatch(/not run: TeammateIdle hooks \(.*settings\.json\): coil has no such event/);
    expect(doctor.stdout).toMatch(/not run: PostCompact hooks \(.*settings\.json\): coil has no such event/);
    expect(doctor.stdout).toMatch(
      /not run: PreToolUse hook of type 'agent' \(.*\): coil runs "command" and "prompt" hooks, not "agent"/,
    );
    expect(doctor.stdout).toMatch(/PreToolUse: Bash: true \(600 s\)/);
    mock.clear();
    mock.requests.length = 0;
    mock.push(text("hi"));
    const ran = await s.run("-p", "hi");
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toMatch(/TeammateIdle hooks are not run: coil has no such event/);
    expect(ran.stderr).toMatch(/PreToolUse hook of type 'agent' is not run: coil runs "command" and "prompt" hooks/);
  });
});
