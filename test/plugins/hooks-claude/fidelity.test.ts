/**
 * Claude Code hooks fidelity (#17): updatedInput, top-level additionalContext, PostToolUseFailure,
 * PermissionRequest, Notification, SessionStart sources, the Claude Code–format transcript and hook
 * sources with CLAUDE_PLUGIN_ROOT. Hook scripts are real bash and python3 programs; coil is the built CLI.
 */
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcClient } from "../../../sdk/rpc-client/index.js";
import { BIN, cleanTemps, coil, requireBuild, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";

beforeAll(requireBuild);
afterAll(cleanTemps);

function sandbox(scripts: Record<string, string>) {
  const base = tempDir("coil-hooks-fidelity-");
  const project = join(base, "project");
  const hooksDir = join(base, "hooks");
  writeFiles(project, { "keep.txt": "precious\n" });
  writeFiles(hooksDir, scripts);
  for (const name of Object.keys(scripts)) chmodSync(join(hooksDir, name), 0o755);
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
  const lines = (file: string) =>
    readFileSync(join(hooksDir, file), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
  return { base, project, hooksDir, env, events, results, lines };
}

/** A preset with the scripted replies and the hooks given (Claude Code's shape, as YAML flow JSON). */
const preset = (
  _replies: string,
  hooks: Record<string, unknown>,
  options: Record<string, unknown> = {},
  plugins = "",
) => `extends: default
provider: scripted
plugins:
  - provider-scripted:
      recordTo: requests.jsonl
      script: ./replies.yaml
  - hooks-claude: ${JSON.stringify({ user: false, hooks, ...options })}
${plugins}`;
const on = (matcher: string | undefined, command: string) => [
  { ...(matcher ? { matcher } : {}), hooks: [{ type: "command", command }] },
];
const text = (r: { content: { text?: string }[] }) => r.content.map((c) => c.text ?? "").join("");

describe("hooks-claude fidelity", () => {
  it("PreToolUse updatedInput (bash and python3) replaces the arguments; later hooks and the tool see them; an invalid one is an error naming the plugin", async () => {
    const s = sandbox({
      // bash: rewrites the command, keeping the other fields
      "rewrite.sh": `#!/usr/bin/env bash
input=$(cat)
if printf '%s' "$input" | grep -q '"command":"echo original"'; then
  echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"echo rewritten"}}}'
fi
`,
      // python3: redirects a write to another file (only the changed field), and breaks a read's limit
      "redirect.py": `#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
name, inp = data["tool_name"], data["tool_input"]
if name == "Write":
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"file_path": inp["file_path"].replace("draft.txt", "final.txt")}}}))
elif name == "Read":
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"limit": "all of it"}}}))
`,
      "post.sh": `#!/usr/bin/env bash\ncat >> "$HOOKS/post.jsonl"\necho >> "$HOOKS/post.jsonl"\n`,
    });
    const replies = `- toolCalls:
    - { name: bash, arguments: { command: "echo original" } }
    - { name: write, arguments: { path: draft.txt, content: hello } }
    - { name: read, arguments: { path: keep.txt } }
- text: done
`;
    writeFiles(s.project, {
      "replies.yaml": replies,
      "preset.yaml": preset(replies, {
        PreToolUse: [...on("Bash", "$HOOKS/rewrite.sh"), ...on("Write|Read", "python3 $HOOKS/redirect.py")],
        PostToolUse: on(undefined, "$HOOKS/post.sh"),
      }),
    });
    const ran = await coil(s.project, ["--preset", "./preset.yaml", "--mode", "json", "-p", "go"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    const [bash, write, read] = s.results(ran.stdout);
    expect(bash.isError).toBe(false);
    expect(text(bash)).toContain("rewritten");
    expect(write.isError).toBe(false);
    expect(readFileSync(join(s.project, "final.txt"), "utf8")).toBe("hello");
    expect(existsSync(join(s.project, "draft.txt"))).toBe(false);
    expect(read.isError).toBe(true);
    expect(text(read)).toMatch(
      /^Blocked: hooks-claude replaced the arguments with invalid ones: Invalid arguments for tool 'read': \/limit /,
    );
    const post = s.lines("post.jsonl");
    expect(post.map((p) => [p.tool_name, p.tool_input.command ?? p.tool_input.file_path])).toEqual([
      ["Bash", "echo rewritten"],
      ["Write", join(s.project, "final.txt")],
    ]);
    // the model's own call stays as it made it
    const assistant = s
      .events(ran.stdout)
      .find((e) => e.type === "message_end" && e.message.role === "assistant").message;
    expect(assistant.content[0].arguments).toEqual({ command: "echo original" });
  });

  it("PostToolUseFailure (python3) and top-level additionalContext (UserPromptSubmit, PostToolUse); the transcript is Claude Code's JSONL, current before each hook", async () => {
    const s = sandbox({
      "failure.py": `#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
with open(sys.argv[1], "a") as f:
    f.write(json.dumps(data) + "\\n")
print(json.dumps({"additionalContext": "failure hook: the file is missing, list the folder first"}))
`,
      "prompt.py": `#!/usr/bin/env python3
import json, sys
json.load(sys.stdin)
print(json.dumps({"additionalContext": "ticket ABC-1 is open"}))
`,
      // reads the transcript the way transcript tools do, and records what it saw
      "transcript.py": `#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
entries = [json.loads(l) for l in open(data["transcript_path"]) if l.strip()]
seen = []
for e in entries:
    m = e["message"]
    assert e["type"] in ("user", "assistant") and m["role"] == e["type"], e
    assert e["sessionId"] == data["session_id"]
    kinds = [m["content"]] if isinstance(m["content"], str) else [c["type"] + (":" + c["name"] if c["type"] == "tool_use" else "") for c in m["content"]]
    seen.append([e["type"], kinds, e["parentUuid"] is None])
with open(sys.argv[1], "a") as f:
    f.write(json.dumps({"event": data["hook_event_name"], "seen": seen}) + "\\n")
`,
    });
    const replies = `- toolCalls: [{ name: read, arguments: { path: missing.txt } }]
- toolCalls: [{ name: ls, arguments: {} }]
- text: done
`;
    writeFiles(s.project, {
      "replies.yaml": replies,
      "preset.yaml": preset(replies, {
        UserPromptSubmit: on(undefined, "python3 $HOOKS/prompt.py"),
        PostToolUseFailure: on("Read", `python3 $HOOKS/failure.py $HOOKS/failure.jsonl`),
        PostToolUse: on("LS", `python3 $HOOKS/transcript.py $HOOKS/transcript.jsonl`),
        Stop: on(undefined, `python3 $HOOKS/transcript.py $HOOKS/transcript.jsonl`),
      }),
    });
    const ran = await coil(s.project, ["--preset", "./preset.yaml", "--mode", "json", "-p", "look"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    const [read, ls] = s.results(ran.stdout);
    expect(read.isError).toBe(true);
    expect(text(read)).toContain(
      "[PostToolUseFailure hook context]\nfailure hook: the file is missing, list the folder first",
    );
    expect(ls.isError).toBe(false);
    const [failure] = s.lines("failure.jsonl");
    expect(failure).toMatchObject({
      hook_event_name: "PostToolUseFailure",
      tool_name: "Read",
      tool_input: { file_path: join(s.project, "missing.txt") },
      is_interrupt: false,
    });
    expect(failure.error).toContain("missing.txt");
    const requests = readFileSync(join(s.project, "requests.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(requests[0].messages[0].content[1].text).toContain("ticket ABC-1 is open");
    const [atLs, atStop] = s.lines("transcript.jsonl");
    const start = [
      ["user", ["look"], true],
      ["assistant", ["tool_use:Read"], false],
      ["user", ["tool_result"], false],
      ["assistant", ["tool_use:LS"], false],
    ];
    expect(atLs).toEqual({ event: "PostToolUse", seen: start });
    expect(atStop).toEqual({
      event: "Stop",
      seen: [...start, ["user", ["tool_result"], false], ["assistant", ["text"], false]],
    });
  });

  it("PermissionRequest hooks answer the permission gate's question: allow (bash), deny with a message (python3)", async () => {
    const s = sandbox({
      "allow.sh": `#!/usr/bin/env bash
input=$(cat)
printf '%s\\n' "$input" >> "$HOOKS/perm.jsonl"
if printf '%s' "$input" | grep -q '"command":"echo fine"'; then
  echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'
fi
`,
      "deny.py": `#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
if data["tool_input"].get("command", "").startswith("touch"):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "no new files today"}}}))
`,
    });
    const replies = `- toolCalls:
    - { name: bash, arguments: { command: "echo fine" } }
    - { name: bash, arguments: { command: "touch new.txt" } }
    - { name: bash, arguments: { command: "echo unanswered" } }
- text: done
`;
    writeFiles(s.project, {
      "replies.yaml": replies,
      "preset.yaml": preset(
        replies,
        { PermissionRequest: [...on("Bash", "$HOOKS/allow.sh"), ...on("Bash", "python3 $HOOKS/deny.py")] },
        {},
        `  - permission-gate: { ask: [bash] }\n`,
      ),
    });
    const ran = await coil(s.project, ["--preset", "./preset.yaml", "--mode", "json", "-p", "go"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    const [fine, touch, unanswered] = s.results(ran.stdout);
    expect(fine).toMatchObject({ isError: false });
    expect(text(fine)).toContain("fine");
    expect(touch.isError).toBe(true);
    expect(text(touch)).toContain("a PermissionRequest hook denied bash: touch new.txt: no new files today");
    expect(existsSync(join(s.project, "new.txt"))).toBe(false);
    // no hook answered: the gate goes on as before (no one to ask in print mode: denied)
    expect(unanswered.isError).toBe(true);
    expect(text(unanswered)).toContain("no one can approve in print mode");
    expect(s.lines("perm.jsonl")[0]).toMatchObject({
      hook_event_name: "PermissionRequest",
      tool_name: "Bash",
      tool_input: { command: "echo fine" },
      permission_suggestions: [],
    });
  });

  it("SessionStart source: startup for a new session, resume for -c", async () => {
    const s = sandbox({
      "start.py": `#!/usr/bin/env python3\nimport json, sys\ndata = json.load(sys.stdin)\nopen(sys.argv[1], "a").write(json.dumps({"source": data["source"], "session": data["session_id"]}) + "\\n")\n`,
    });
    writeFiles(s.project, {
      "replies.yaml": "- text: one\n- text: two\n",
      "preset.yaml": preset("- text: one\n- text: two\n", {
        SessionStart: on(undefined, "python3 $HOOKS/start.py $HOOKS/starts.jsonl"),
      }),
    });
    expect((await coil(s.project, ["--preset", "./preset.yaml", "-p", "first"], s.env)).code).toBe(0);
    const resumed = await coil(s.project, ["--preset", "./preset.yaml", "-c", "-p", "second"], s.env);
    expect(resumed.code, resumed.stderr).toBe(0);
    const [first, second] = s.lines("starts.jsonl");
    expect(first.source).toBe("startup");
    expect(second).toEqual({ source: "resume", session: first.session });
  });

  it("hook files from `sources` run with CLAUDE_PLUGIN_ROOT set to their plugin folder", async () => {
    const s = sandbox({});
    const pluginRoot = writeFiles(join(s.base, "cc-plugin"), {
      "hooks/hooks.json": JSON.stringify({
        description: "guard",
        hooks: {
          PreToolUse: [
            { matcher: "Bash", hooks: [{ type: "command", command: "${CLAUDE_PLUGIN_ROOT}/scripts/guard.sh" }] },
          ],
        },
      }),
      "scripts/guard.sh": `#!/usr/bin/env bash\ncat > /dev/null\necho "blocked by the plugin in $CLAUDE_PLUGIN_ROOT" >&2\nexit 2\n`,
    });
    chmodSync(join(pluginRoot, "scripts/guard.sh"), 0o755);
    writeFiles(s.project, {
      "replies.yaml": "- toolCalls: [{ name: bash, arguments: { command: 'echo hi' } }]\n- text: done\n",
      "preset.yaml": preset(
        "- toolCalls: [{ name: bash, arguments: { command: 'echo hi' } }]\n- text: done\n",
        {},
        { sources: [{ file: join(pluginRoot, "hooks/hooks.json"), root: pluginRoot }] },
      ),
    });
    const ran = await coil(s.project, ["--preset", "./preset.yaml", "--mode", "json", "-p", "go"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(s.results(ran.stdout)[0]).toMatchObject({
      isError: true,
      content: [{ text: `Blocked: blocked by the plugin in ${pluginRoot} (hooks-claude)` }],
    });
  });

  it("rpc front end: Notification on a permission prompt and idle input; PreCompact; SessionStart compact, clear (with SessionEnd clear) and resume", async () => {
    const s = sandbox({
      "notify.sh": `#!/usr/bin/env bash\ncat >> "$HOOKS/notes.jsonl"\necho >> "$HOOKS/notes.jsonl"\n`,
      "life.py": `#!/usr/bin/env python3\nimport json, sys\nd = json.load(sys.stdin)\nopen(sys.argv[1], "a").write(json.dumps([d["hook_event_name"], d.get("source") or d.get("reason") or d.get("trigger"), d["session_id"]]) + "\\n")\n`,
    });
    const replies = `- toolCalls: [{ name: bash, arguments: { command: 'echo hi' } }]
- text: ${"a long answer that makes compaction worth it ".repeat(200)}
- text: second
- text: "## Goal\\nSay hi."
- text: after compact
- text: fresh
- text: resumed
`;
    const life = "python3 $HOOKS/life.py $HOOKS/life.jsonl";
    writeFiles(s.project, {
      "replies.yaml": replies,
      "preset.yaml": preset(
        replies,
        {
          Notification: on(undefined, "$HOOKS/notify.sh"),
          SessionStart: on(undefined, life),
          SessionEnd: on(undefined, life),
          PreCompact: on("manual", life),
        },
        { idleNotification: 0.5 },
        `  - permission-gate: { ask: [bash] }\n  - compaction-summary: { keepRecentTokens: 0 }\n  - ui-rpc\n`,
      ),
    });
    const noted = (type: string) =>
      existsSync(join(s.hooksDir, "notes.jsonl")) &&
      readFileSync(join(s.hooksDir, "notes.jsonl"), "utf8").includes(type);
    const client = await RpcClient.start({
      bin: BIN,
      cwd: s.project,
      env: s.env,
      args: ["--preset", "./preset.yaml"],
      timeoutMs: 15_000,
    });
    try {
      client.onUi((req) => (req.method === "select" ? "Allow once" : undefined));
      expect((await client.run("go")).stopReason).toBe("stop");
      const deadline = Date.now() + 5000;
      while (Date.now() < deadline && !noted("idle_prompt")) await new Promise((r) => setTimeout(r, 100));
      await client.run("and now");
      await client.compact();
      await client.run("again");
      await client.newSession();
      await client.run("fresh start");
      const first = s.lines("life.jsonl")[0][2];
      await client.switchSession(first);
      await client.run("back");
    } finally {
      await client.close();
    }
    const notes = s.lines("notes.jsonl");
    expect(notes.map((n) => [n.hook_event_name, n.notification_type])).toEqual([
      ["Notification", "permission_prompt"],
      ["Notification", "idle_prompt"],
    ]);
    expect(notes[0].message).toContain("bash: echo hi");
    const events = s.lines("life.jsonl");
    const [first, second] = [events[0][2], events[4][2]];
    expect(second).not.toBe(first);
    expect(events).toEqual([
      ["SessionStart", "startup", first],
      ["PreCompact", "manual", first],
      ["SessionStart", "compact", first],
      ["SessionEnd", "clear", first],
      ["SessionStart", "clear", second],
      ["SessionStart", "resume", first],
      ["SessionEnd", "other", first],
    ]);
  });
});
