/** The shipped CLI (dist/bin/coil.js, built by `npm test`) run as a child process, as a user would. */
import { childEnv } from "../support/env.js";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../boot/paths.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` (npm test does it first)`);
});

function project(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "coil-cli-"));
  temps.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function coil(
  cwd: string,
  args: string[],
  opts: { input?: string; home?: string; onStdout?: (chunk: string, child: ReturnType<typeof spawn>) => void } = {},
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: childEnv({ COIL_HOME: opts.home ?? join(cwd, ".home") }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      opts.onStdout?.(d.toString(), child);
    });
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const TOOL_PLUGIN = `import { definePlugin, Type } from "coil";
export default definePlugin({
  id: "word-count",
  options: Type.Object({ unit: Type.String({ default: "words" }) }),
  setup(ctx) {
    ctx.tools.register({
      name: "count_words",
      description: "Count the words in a text",
      parameters: Type.Object({ text: Type.String() }),
      async execute(args) {
        const n = args.text.split(/\\s+/).filter(Boolean).length;
        return { content: [{ type: "text", text: n + " " + ctx.options.unit }] };
      },
    });
  },
});
`;

const TOOL_SCRIPT = `replies:
  - text: "Let me count."
    toolCalls:
      - name: count_words
        arguments: { text: "one two three" }
  - text: "There are 3 words."
`;

describe("coil CLI", () => {
  it("answers --version and lists plugin flags in --help", async () => {
    const dir = project();
    const version = await coil(dir, ["--version"]);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")).version);
    const help = await coil(dir, ["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--script <file>\s+replies file for the scripted provider/);
    expect(help.stdout).toContain("[provider-scripted]");
    expect(help.stdout).toContain("--plugin <spec>");
  });

  it("coil -p prints the final assistant text and exits 0", async () => {
    const dir = project({ "r.yaml": "- thinking: hmm\n  text: Hello from the script.\n" });
    const ran = await coil(dir, ["--provider", "scripted", "--script", "r.yaml", "-p", "say hello"]);
    expect(ran).toMatchObject({ code: 0, stdout: "Hello from the script.\n", stderr: "" });
  });

  it("reads the prompt from stdin when it is piped", async () => {
    const dir = project({ "r.yaml": "- text: got it\n", "rec.txt": "" });
    const ran = await coil(dir, ["--script", "r.yaml", "-p"], { input: "from a pipe\n" });
    expect(ran.stdout).toBe("got it\n");
  });

  it("runs a tool loop with a .ts plugin given by --plugin, and the model sees the result", async () => {
    const dir = project({ "tools/word-count.ts": TOOL_PLUGIN, "script.yaml": TOOL_SCRIPT });
    const ran = await coil(dir, ["--plugin", "./tools/word-count.ts", "--script", "script.yaml", "-p", "count"]);
    expect(ran.stderr).toBe("");
    expect(ran).toMatchObject({ code: 0, stdout: "There are 3 words.\n" });
  });

  it("--mode json writes every event as one JSON line", async () => {
    const dir = project({ "tools/word-count.ts": TOOL_PLUGIN, "script.yaml": TOOL_SCRIPT });
    const ran = await coil(dir, [
      "--plugin",
      "./tools/word-count.ts",
      "--script",
      "script.yaml",
      "--mode",
      "json",
      "-p",
      "count",
    ]);
    expect(ran.code).toBe(0);
    const events = ran.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
    expect(events[0]!.type).toBe("agent_start");
    expect(events.at(-1)).toMatchObject({ type: "agent_end", stopReason: "stop" });
    const types = new Set(events.map((e) => e.type));
    for (const t of [
      "turn_start",
      "message_start",
      "message_update",
      "message_end",
      "tool_execution_start",
      "tool_execution_end",
      "turn_end",
    ])
      expect(types).toContain(t);
    const end = events.find((e) => e.type === "tool_execution_end") as unknown as {
      result: { content: { text: string }[] };
    };
    expect(end.result.content[0]!.text).toBe("3 words");
  });

  it("exits 1 when the run ends in a provider error, and says why on stderr", async () => {
    const dir = project({ "r.yaml": "- error: '529 overloaded_error'\n" });
    const ran = await coil(dir, ["--script", "r.yaml", "-p", "x"]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain("coil: error: 529 overloaded_error");
  });

  it("exits 1 with a clear message when the script runs out", async () => {
    const dir = project({ "r.yaml": "- toolCalls: [{ name: nothing }]\n" });
    const ran = await coil(dir, ["--script", "r.yaml", "-p", "x"]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/script exhausted: request 2 asked for a reply, but .*r\.yaml has 1 reply/);
  });

  it("exits 1 when aborted with SIGINT mid-stream", async () => {
    const dir = project({ "r.yaml": "- text: 'a slow answer that takes a while to stream'\n  chunkDelayMs: 200\n" });
    let sent = false;
    const ran = await coil(dir, ["--script", "r.yaml", "--mode", "json", "-p", "x"], {
      onStdout: (chunk, child) => {
        if (!sent && chunk.includes("message_update")) {
          sent = true;
          child.kill("SIGINT");
        }
      },
    });
    expect(ran.code).toBe(1);
    expect(
      ran.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .at(-1),
    ).toMatchObject({ type: "agent_end", stopReason: "aborted" });
  });

  it("with no usable provider, says how to configure one and exits 2", async () => {
    const ran = await coil(project(), ["-p", "hi"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("no usable provider");
    expect(ran.stderr).toContain("--script");
  });

  it("a preset's inline scripted replies that break the format stop the run before it starts (exit 2), naming the reply and key", async () => {
    const preset =
      "extends: default\nplugins:\n  - provider-scripted:\n      replies:\n        - text: fine\n        - bogus: 1\n";
    const ran = await coil(project({ "bad.yaml": preset }), [
      "--preset",
      "./bad.yaml",
      "--provider",
      "scripted",
      "-p",
      "hi",
    ]);
    expect(ran.code).toBe(2);
    expect(ran.stdout).toBe("");
    expect(ran.stderr).toContain("reply 2 of the inline replies: unknown key 'bogus'");
  });

  it("names the nearest built-in for an unknown plugin id (exit 2)", async () => {
    const ran = await coil(project(), ["--plugin", "provider-scriptd", "-p", "hi"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("did you mean 'provider-scripted'?");
  });

  it("reports malformed preset YAML with file, line and column (exit 2)", async () => {
    const dir = project({ "team.yaml": "plugins:\n  - ui-print\n  - provider-scripted: { chunkSize: 4\n" });
    const ran = await coil(dir, ["--preset", "./team.yaml", "-p", "hi"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/team\.yaml:\d+:\d+/);
  });

  it("reports options that break a plugin's schema: plugin, key and file (exit 2)", async () => {
    const dir = project({ "team.yaml": "extends: default\nplugins:\n  - provider-scripted:\n      chunkSise: 4\n" });
    const ran = await coil(dir, ["--preset", "./team.yaml", "-p", "hi"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain(
      "[plugin provider-scripted] options: PLUGIN_OPTIONS_INVALID unknown option 'chunkSise'",
    );
    expect(ran.stderr).toContain("team.yaml");
  });

  it("names both plugins when two register the same tool (exit 2)", async () => {
    const dir = project({ "a.ts": TOOL_PLUGIN, "b.ts": TOOL_PLUGIN.replace('id: "word-count"', 'id: "word-count-2"') });
    const ran = await coil(dir, ["--plugin", "./a.ts", "--plugin", "./b.ts", "-p", "hi"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(
      /tool 'count_words' is registered by both plugin word-count \(\.\/a\.ts in cli\) and plugin word-count-2 \(\.\/b\.ts in cli\)/,
    );
  });

  it("reports a plugin whose setup throws, with its id (exit 2), and starts nothing", async () => {
    const dir = project({
      "bad.ts": `import { definePlugin } from "coil";\nexport default definePlugin({ id: "bad-setup", setup() { throw new Error("missing API token"); } });\n`,
    });
    const ran = await coil(dir, ["--plugin", "./bad.ts", "--script", "x.yaml", "-p", "hi"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("[plugin bad-setup] setup: PLUGIN_SETUP_FAILED missing API token");
    expect(ran.stdout).toBe("");
  });

  it("loads the project preset only with --trust, and the user layer from COIL_HOME", async () => {
    const dir = project({
      ".coil/preset.yaml": "plugins:\n  - provider-scripted:\n      replies: [{ text: from the project preset }]\n",
      ".home/preset.yaml": "plugins:\n  - provider-scripted:\n      replies: [{ text: from the user preset }]\n",
    });
    const untrusted = await coil(dir, ["-p", "hi"]);
    expect(untrusted.stdout).toBe("from the user preset\n");
    expect(untrusted.stderr).toMatch(/skipped .*\.coil\/preset\.yaml: untrusted/);
    const trusted = await coil(dir, ["--trust", "-p", "hi"]);
    expect(trusted).toMatchObject({ code: 0, stdout: "from the project preset\n" });
  });

  it("coil preset show prints the resolved preset and where each value came from", async () => {
    const dir = project({
      ".home/preset.yaml": "model: scripted/fast\nplugins:\n  - provider-scripted: { chunkSize: 2 }\n",
    });
    const ran = await coil(dir, ["preset", "show"]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/chunkSize: 2 .*# .*\.home\/preset\.yaml/);
    expect(ran.stdout).toMatch(/ui-print.*# builtin:default/);
    const json = JSON.parse((await coil(dir, ["preset", "show", "--json"])).stdout);
    expect(json.settings.model).toBe("scripted/fast");
    expect(json.plugins.map((p: { key: string }) => p.key)).toEqual(
      expect.arrayContaining(["provider-scripted", "ui-print"]),
    );
  });

  it("rejects an unknown provider in --model (exit 2)", async () => {
    const dir = project({ "r.yaml": "- text: x\n" });
    const ran = await coil(dir, ["--script", "r.yaml", "--model", "nope/x", "-p", "hi"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("unknown provider 'nope'");
  });

  it("without a prompt and no interactive front end, says what to do (exit 2)", async () => {
    const dir = project({ "no-tui.yaml": "extends: default\nplugins:\n  - ui-tui: false\n", "r.yaml": "- text: x\n" });
    const ran = await coil(dir, ["--preset", "./no-tui.yaml", "--script", "r.yaml"], { input: "" });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("no front end in this preset serves mode 'interactive'");
    // With the default preset the interactive UI answers: no terminal here, so it says how to run.
    const tui = await coil(dir, ["--script", "r.yaml"], { input: "" });
    expect(tui.code).toBe(2);
    expect(tui.stderr).toContain("the interactive UI needs a terminal");
  });

  it("runs plugin subcommands, start and stop callbacks, and --no-x flags", async () => {
    const lifecycle = `import { definePlugin } from "coil";
import { writeFileSync } from "node:fs";
export default definePlugin({
  id: "lifecycle",
  setup(ctx) {
    ctx.flags.register({ name: "no-history", description: "start without the seeded history", type: "boolean" });
    ctx.flags.register({ name: "greeting", short: "g", description: "text of the seeded message", type: "string" });
    ctx.subcommands.register({ name: "hello", description: "say hello", arguments: "<name>", run: (args, io) => (io.stdout.write("hello " + args.join(" ") + "\\n"), 0) });
    ctx.onStart((agent) => {
      if (!ctx.flags.get("no-history")) agent.replaceMessages([{ role: "user", content: String(ctx.flags.get("greeting") ?? "seeded earlier"), timestamp: 1 }]);
    });
    ctx.onStop(() => writeFileSync("stopped.txt", "yes"));
  },
});
`;
    const dir = project({ "life.ts": lifecycle, "r.yaml": "- text: ok\n", "rec.yaml": "- text: ok\n" });
    const hello = await coil(dir, ["--plugin", "./life.ts", "hello", "world"]);
    expect(hello).toMatchObject({ code: 0, stdout: "hello world\n" });
    const help = await coil(dir, ["--plugin", "./life.ts", "--help"]);
    expect(help.stdout).toMatch(/hello <name>\s+say hello \[lifecycle\]/);
    expect(help.stdout).toContain("--no-history");

    const preset = "extends: default\nplugins:\n  - provider-scripted: { recordTo: requests.jsonl }\n  - ./life.ts\n";
    writeFileSync(join(dir, "p.yaml"), preset);
    const seeded = await coil(dir, ["--preset", "./p.yaml", "--script", "r.yaml", "-p", "now"]);
    expect(seeded.code).toBe(0);
    const first = JSON.parse(readFileSync(join(dir, "requests.jsonl"), "utf8").trim().split("\n")[0]!);
    expect(first.messages.map((m: { content: string }) => m.content)).toEqual(["seeded earlier", "now"]);
    expect(readFileSync(join(dir, "stopped.txt"), "utf8")).toBe("yes");
    await coil(dir, ["--preset", "./p.yaml", "--script", "r.yaml", "--no-history", "-p", "fresh"]);
    const second = JSON.parse(readFileSync(join(dir, "requests.jsonl"), "utf8").trim().split("\n")[1]!);
    expect(second.messages.map((m: { content: string }) => m.content)).toEqual(["fresh"]);
    await coil(dir, ["--preset", "./p.yaml", "-g", "short flag works", "--script", "r.yaml", "-p", "third"]);
    const third = JSON.parse(readFileSync(join(dir, "requests.jsonl"), "utf8").trim().split("\n")[2]!);
    expect(third.messages.map((m: { content: string }) => m.content)).toEqual(["short flag works", "third"]);
  });

  it("runs a registered slash command in print mode: text is printed, a prompt is sent to the model", async () => {
    const commands = `import { definePlugin } from "coil";
export default definePlugin({
  id: "commands",
  setup(ctx) {
    ctx.commands.register({ name: "info", description: "show info", run: (args) => "info about " + args });
    ctx.commands.register({ name: "inspect", description: "inspect a file", run: (args) => ({ prompt: "Review " + args + " carefully." }) });
  },
});
`;
    const dir = project({ "cmd.ts": commands, "r.yaml": "- text: reviewed\n" });
    const preset = "extends: default\nplugins:\n  - provider-scripted: { recordTo: requests.jsonl }\n  - ./cmd.ts\n";
    writeFileSync(join(dir, "p.yaml"), preset);
    const info = await coil(dir, ["--preset", "./p.yaml", "--script", "r.yaml", "-p", "/info the repo"]);
    expect(info).toMatchObject({ code: 0, stdout: "info about the repo\n" });
    const review = await coil(dir, ["--preset", "./p.yaml", "--script", "r.yaml", "-p", "/inspect src/a.ts"]);
    expect(review).toMatchObject({ code: 0, stdout: "reviewed\n" });
    const sent = JSON.parse(readFileSync(join(dir, "requests.jsonl"), "utf8").trim().split("\n")[0]!);
    expect(sent.messages.at(-1).content).toBe("Review src/a.ts carefully.");
    const plain = await coil(dir, [
      "--preset",
      "./p.yaml",
      "--script",
      "r.yaml",
      "-p",
      "/usr/bin is a path, not a command",
    ]);
    expect(plain.code).toBe(0);
  });
});

/** A provider plugin that reports a cost of $0.02 on every reply, each a call to `ls`. */
const COSTLY_PROVIDER = `import { definePlugin, emptyUsage } from "coil";
let n = 0;
export default definePlugin({
  id: "costly",
  setup(ctx) {
    ctx.providers.register({
      id: "costly",
      models: [{ id: "m", provider: "costly", contextWindow: 100000, maxOutput: 1000 }],
      async *stream() {
        const usage = { ...emptyUsage(), input: 10, cost: { input: 0.02, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.02 } };
        yield { type: "done", message: { role: "assistant", content: [{ type: "toolCall", id: "c" + ++n, name: "ls", arguments: {} }], provider: "costly", model: "m", usage, stopReason: "toolUse", timestamp: Date.now() } };
      },
    });
  },
});
`;

describe("coil CLI: runs stopped by a guard exit 3", () => {
  const ls = "- toolCalls: [{ name: ls, arguments: {} }]\n";
  const cases: { name: string; guards: string; script: string; plugin?: string; reason: RegExp }[] = [
    { name: "maxTurns", guards: "{ maxTurns: 2 }", script: ls.repeat(3), reason: /reached the limit of 2 turns/ },
    {
      name: "maxTokens",
      guards: "{ maxTokens: 1000 }",
      script: `- toolCalls: [{ name: ls, arguments: {} }]\n  usage: { input: 700 }\n`.repeat(2),
      reason: /over the limit of 1000/,
    },
    {
      name: "maxCost",
      guards: "{ maxCost: 0.05 }",
      script: "",
      plugin: "./costly.ts",
      reason: /spent \$0\.0600, over the limit of \$0\.05/,
    },
    {
      name: "repeated failures",
      guards: "{ repeatedFailures: { warnAfter: 1, stopAfter: 2 } }",
      script: "- toolCalls: [{ name: read, arguments: { path: missing.txt } }]\n".repeat(3),
      reason: /same failing call was repeated 2 times/,
    },
    {
      name: "a failing done-gate",
      guards: "{ verify: { command: 'exit 4', attempts: 2 } }",
      script: "- text: done\n- text: really done\n",
      reason: /still fails after 2 attempt/,
    },
  ];
  for (const c of cases) {
    it(`${c.name}: exit 3, the reason on stderr, stopReason "halted" in JSON`, async () => {
      const dir = project({
        "team.yaml": `extends: default\nplugins:\n  - guards: ${c.guards}\n`,
        "r.yaml": c.script || "[]\n",
        "costly.ts": COSTLY_PROVIDER,
      });
      const args = [
        "--preset",
        "./team.yaml",
        ...(c.plugin
          ? ["--plugin", c.plugin, "--provider", "costly"]
          : ["--provider", "scripted", "--script", "r.yaml"]),
      ];
      const text = await coil(dir, [...args, "-p", "go"]);
      expect(text.stderr).toMatch(c.reason);
      expect(text.stderr).toMatch(/coil: stopped: /);
      expect(text.code).toBe(3);
      const json = await coil(dir, [...args, "--mode", "json", "-p", "go"]);
      expect(json.code).toBe(3);
      const end = JSON.parse(json.stdout.trim().split("\n").at(-1)!);
      expect(end).toMatchObject({ type: "agent_end", stopReason: "halted" });
      expect(end.reason).toMatch(c.reason);
    });
  }

  it("a run that finishes within its limits still exits 0", async () => {
    const dir = project({
      "team.yaml": "extends: default\nplugins:\n  - guards: { maxTurns: 2 }\n",
      "r.yaml": `${ls}- text: fine\n`,
    });
    const ran = await coil(dir, ["--preset", "./team.yaml", "--script", "r.yaml", "-p", "go"]);
    expect(ran).toMatchObject({ code: 0, stdout: "fine\n", stderr: "" });
  });
});

describe("coil CLI: small context windows", () => {
  for (const window of [8_192, 16_384]) {
    it(`a short run on a ${window}-token model with the default preset does not compact`, async () => {
      const dir = project({
        "team.yaml": `extends: default\nplugins:\n  - provider-scripted: { contextWindow: ${window}, maxOutput: 2048 }\n`,
        "r.yaml": "- toolCalls: [{ name: ls, arguments: {} }]\n".repeat(3) + "- text: done\n",
      });
      const ran = await coil(dir, [
        "--preset",
        "./team.yaml",
        "--script",
        "r.yaml",
        "--mode",
        "json",
        "-p",
        "list the files",
      ]);
      const events = ran.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { type: string; level?: string; message?: string });
      expect(events.filter((e) => e.type === "diagnostic" && e.level !== "info")).toEqual([]);
      expect(events.filter((e) => e.type === "compaction")).toEqual([]);
      expect(events.at(-1)).toMatchObject({ type: "agent_end", stopReason: "stop" });
      expect(ran.code).toBe(0);
    });
  }
});
