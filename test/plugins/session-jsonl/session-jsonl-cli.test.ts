/** session-jsonl through the shipped CLI (dist/bin/coil.js, built by `npm test`): kill, resume, locks, subcommands. */
import { childEnv } from "../../support/env.js";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { pairingProblems } from "../../support/session-jsonl.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});
beforeAll(() => {
  if (!existsSync(join(packageRoot(), "dist", "plugins", "session-jsonl", "index.js"))) {
    throw new Error("dist/ has no session-jsonl plugin: run `npm run build` (npm test does it first)");
  }
});

// Line numbers below count the session's own entries: plugins that add session state are left out.
const PRESET = `extends: default
plugins:
  - session-jsonl
  - cost-audit: false
  - checkpoints: false
  - provider-scripted: { recordTo: requests.jsonl }
`;

const WAIT_TOOL = `import { definePlugin, Type } from "coil";
export default definePlugin({
  id: "wait-tool",
  setup(ctx) {
    ctx.tools.register({
      name: "wait_echo",
      description: "wait ms milliseconds, then echo the text",
      parameters: Type.Object({ text: Type.String(), ms: Type.Integer() }),
      async execute(args, run) {
        await new Promise((resolve) => {
          const t = setTimeout(resolve, args.ms);
          run.signal.addEventListener("abort", () => (clearTimeout(t), resolve(undefined)), { once: true });
        });
        return { content: [{ type: "text", text: "echo " + args.text }] };
      },
    });
  },
});
`;

function project(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "coil-session-cli-"));
  temps.push(dir);
  for (const [name, text] of Object.entries({ "p.yaml": PRESET, "wait-tool.ts": WAIT_TOOL, ...files })) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Start coil; `onLine` sees each stdout line as it arrives (JSON mode events). */
function start(
  cwd: string,
  args: string[],
  onLine?: (line: string, child: ChildProcess) => void,
): { child: ChildProcess; done: Promise<Ran> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: childEnv({ COIL_HOME: join(cwd, ".home") }),
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin!.end();
  let stdout = "";
  let stderr = "";
  let pending = "";
  child.stdout!.on("data", (d: Buffer) => {
    stdout += d.toString();
    pending += d.toString();
    for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      onLine?.(line, child);
    }
  });
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Ran>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

const coil = (cwd: string, args: string[], onLine?: (line: string, child: ChildProcess) => void) =>
  start(cwd, args, onLine).done;

function sessionFiles(cwd: string): string[] {
  const root = join(cwd, ".home", "sessions");
  if (!existsSync(root)) return [];
  return readdirSync(root).flatMap((d) =>
    readdirSync(join(root, d))
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => join(root, d, f)),
  );
}

const requests = (cwd: string) =>
  readFileSync(join(cwd, "requests.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { messages: { role: string; content: unknown; toolCallId?: string }[] });

const roleOf = (m: { role: string }) => m.role;

describe("session-jsonl CLI", () => {
  it("a coil -p killed with SIGKILL mid tool loop is resumed by coil -c -p: complete lines kept, no orphan call, the run finishes", async () => {
    const dir = project({
      "run1.yaml": `- text: "Looking first."
  toolCalls:
    - { name: wait_echo, arguments: { text: "first", ms: 0 } }
- text: "Two more."
  delayMs: 150
  toolCalls:
    - { name: wait_echo, arguments: { text: "fast", ms: 0 } }
    - { name: wait_echo, arguments: { text: "slow", ms: 60000 } }
- text: "never reached"
`,
      "run2.yaml": `- text: "Resumed and finished."\n`,
    });
    let killed = false;
    const first = await coil(
      dir,
      [
        "--preset",
        "./p.yaml",
        "--plugin",
        "./wait-tool.ts",
        "--script",
        "run1.yaml",
        "--mode",
        "json",
        "-p",
        "do the thing",
      ],
      (line, child) => {
        const event = JSON.parse(line) as { type: string; args?: { text?: string } };
        if (!killed && event.type === "tool_execution_start" && event.args?.text === "slow") {
          killed = true;
          child.kill("SIGKILL");
        }
      },
    );
    expect(first.signal).toBe("SIGKILL");
    const [file] = sessionFiles(dir);
    expect(file).toBeDefined();
    const before = readFileSync(file!, "utf8");
    expect(before.endsWith("\n")).toBe(true);
    const lines = before
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, any>); // every line is complete JSON
    expect(lines.map((e) => e.message?.role ?? e.type)).toEqual([
      "session",
      "model_change",
      "user",
      "assistant",
      "toolResult",
      "assistant",
    ]);
    expect(lines.at(-1)!.message.content.filter((c: { type: string }) => c.type === "toolCall")).toHaveLength(2);
    expect(existsSync(`${file}.lock`)).toBe(true); // left behind by the killed process

    const second = await coil(dir, [
      "--preset",
      "./p.yaml",
      "--plugin",
      "./wait-tool.ts",
      "--script",
      "run2.yaml",
      "-c",
      "-p",
      "continue please",
    ]);
    expect(second.stderr).toContain("took over the lock");
    expect(second.stderr).toContain("closed 2 tool call(s)");
    expect(second).toMatchObject({ code: 0, stdout: "Resumed and finished.\n" });
    const resumed = requests(dir).at(-1)!;
    expect(pairingProblems(resumed.messages)).toEqual([]);
    expect(resumed.messages.map(roleOf)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "assistant",
      "toolResult",
      "toolResult",
      "user",
    ]);
    expect(JSON.stringify(resumed.messages[4])).toContain("coil stopped before this tool finished");
    const after = readFileSync(file!, "utf8");
    expect(after.startsWith(before)).toBe(true); // appended, never rewritten
    expect(sessionFiles(dir)).toEqual([file]);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it("refuses a second coil on a session in use, naming the process, until the first one ends", async () => {
    const dir = project({
      "slow.yaml": `- text: "slow answer"\n  delayMs: 20000\n`,
      "r.yaml": `- text: "second run"\n`,
    });
    let ready!: () => void;
    const running = new Promise<void>((resolve) => (ready = resolve));
    const holder = start(
      dir,
      ["--preset", "./p.yaml", "--script", "slow.yaml", "--mode", "json", "-p", "hold it"],
      (line) => {
        if (JSON.parse(line).type === "turn_start") ready();
      },
    );
    await running;
    const refused = await coil(dir, ["--preset", "./p.yaml", "--script", "r.yaml", "--continue", "-p", "second"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("SESSION_LOCKED");
    expect(refused.stderr).toContain(`in use by coil process ${holder.child.pid}`);
    holder.child.kill("SIGINT");
    expect((await holder.done).code).toBe(1);
    const [file] = sessionFiles(dir);
    expect(existsSync(`${file}.lock`)).toBe(false);
    const next = await coil(dir, ["--preset", "./p.yaml", "--script", "r.yaml", "--continue", "-p", "second"]);
    expect(next).toMatchObject({ code: 0, stdout: "second run\n" });
  });

  it("resumes past a corrupt middle line and a torn last line, warning with line numbers", async () => {
    const dir = project({ "r1.yaml": `- text: "one"\n- text: "two"\n`, "r2.yaml": `- text: "three"\n` });
    await coil(dir, ["--preset", "./p.yaml", "--script", "r1.yaml", "-p", "first"]);
    const [file] = sessionFiles(dir);
    const id = JSON.parse(readFileSync(file!, "utf8").split("\n")[0]!).id as string;
    const good = readFileSync(file!, "utf8").trim().split("\n");
    writeFileSync(
      file!,
      [...good.slice(0, 2), "not json at all", ...good.slice(2), '{"type":"message","id":"ab'].join("\n"),
    );
    const ran = await coil(dir, [
      "--preset",
      "./p.yaml",
      "--script",
      "r2.yaml",
      "--session",
      id.slice(0, 6),
      "-p",
      "second",
    ]);
    expect(ran.code).toBe(0);
    expect(ran.stderr).toMatch(/warning: .*:3: not valid JSON; line skipped/);
    expect(ran.stderr).toMatch(/warning: .*:6: the last line is incomplete/);
    const request = requests(dir).at(-1)!;
    expect(
      request.messages.map(
        (m) => `${m.role}:${typeof m.content === "string" ? m.content : (m.content as { text: string }[])[0]!.text}`,
      ),
    ).toEqual(["user:first", "assistant:one", "user:second"]);
  });

  it("coil sessions list / export, -r in print mode lists and exits, --no-session writes nothing, -c shows in --help", async () => {
    const dir = project({ "r.yaml": `- text: "Hi <there>"\n` });
    expect((await coil(dir, ["--preset", "./p.yaml", "--script", "r.yaml", "-p", "say hi"])).code).toBe(0);
    const [file] = sessionFiles(dir);
    const id = JSON.parse(readFileSync(file!, "utf8").split("\n")[0]!).id as string;

    const list = await coil(dir, ["--preset", "./p.yaml", "sessions", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`1 +${id.slice(0, 8)} .* +2 +say hi`));
    const json = JSON.parse((await coil(dir, ["--preset", "./p.yaml", "sessions", "list", "--json"])).stdout);
    expect(json).toEqual([expect.objectContaining({ id, file, messages: 2, firstMessage: "say hi" })]);

    const md = await coil(dir, ["--preset", "./p.yaml", "sessions", "export", id.slice(0, 8), "--format", "md"]);
    expect(md.stdout).toContain("## User\n\nsay hi");
    expect(md.stdout).toContain("Hi <there>");
    const html = await coil(dir, [
      "--preset",
      "./p.yaml",
      "sessions",
      "export",
      id,
      "--format",
      "html",
      "--out",
      "s.html",
    ]);
    expect(html.code).toBe(0);
    expect(readFileSync(join(dir, "s.html"), "utf8")).toContain("Hi &lt;there&gt;");
    const jsonl = await coil(dir, ["--preset", "./p.yaml", "sessions", "export", file!, "--format", "jsonl"]);
    expect(jsonl.stdout).toBe(readFileSync(file!, "utf8"));
    const bad = await coil(dir, ["--preset", "./p.yaml", "sessions", "export", id, "--format", "pdf"]);
    expect(bad.code).toBe(2);

    const asked = requests(dir).length;
    const resume = await coil(dir, ["--preset", "./p.yaml", "--script", "r.yaml", "-r", "-p", "ignored"]);
    expect(resume.code).toBe(0);
    expect(resume.stdout).toContain(id.slice(0, 8));
    expect(resume.stdout).toContain("resume one with: coil --session <id>");
    expect(requests(dir)).toHaveLength(asked);

    const none = await coil(dir, ["--preset", "./p.yaml", "--script", "r.yaml", "--no-session", "-p", "ephemeral"]);
    expect(none.code).toBe(0);
    expect(sessionFiles(dir)).toEqual([file]);

    const help = await coil(dir, ["--preset", "./p.yaml", "--help"]);
    expect(help.stdout).toMatch(/-c, --continue\s+continue the latest session/);
    expect(help.stdout).toMatch(/-r, --resume/);
    expect(help.stdout).toContain("--no-session");
    expect(help.stdout).toMatch(/^ {2}sessions <command>\s+this directory's sessions/m);
  });
});
