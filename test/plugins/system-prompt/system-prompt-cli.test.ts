/** The context plugins end to end: the shipped CLI (dist/bin/coil.js) as a child process, in a temp project. */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});
beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` (npm test does it first)`);
});

function coil(cwd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { ...process.env, COIL_HOME: join(cwd, ".home") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const PRESET = `extends: default
plugins:
  - provider-scripted: { recordTo: requests.jsonl }
  - system-prompt
  - context-files
  - skills
  - prompt-templates
  - compaction-summary
  - cost-audit
`;

describe("the default preset's prompt", () => {
  it("sends at most 6 KB of system prompt and tool definitions before skills and project files, and says each guideline once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "coil-prompt-size-"));
    temps.push(dir);
    writeFileSync(
      join(dir, "preset.yaml"),
      "extends: default\nplugins:\n  - provider-scripted: { recordTo: requests.jsonl }\n",
    );
    writeFileSync(join(dir, "reply.yaml"), "- text: ok\n");
    const r = await coil(dir, [
      "--preset",
      "./preset.yaml",
      "--provider",
      "scripted",
      "--script",
      "reply.yaml",
      "--no-session",
      "-p",
      "hi",
    ]);
    expect(r).toMatchObject({ code: 0, stdout: "ok\n" });
    const [request] = readFileSync(join(dir, "requests.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const system: { id: string; text: string }[] = request.system.filter(
      (b: { id: string }) => b.id !== "skills" && b.id !== "project",
    );
    // the tools as the Anthropic Messages API receives them
    const tools: string[] = request.tools.map((t: { name: string; description: string; parameters: unknown }) =>
      JSON.stringify({ name: t.name, description: t.description, input_schema: t.parameters }),
    );
    expect(request.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      "bash",
      "edit",
      "find",
      "grep",
      "ls",
      "read",
      "task",
      "write",
    ]);
    const bytes = [...system.map((b) => b.text), ...tools].reduce((n, s) => n + Buffer.byteLength(s), 0);
    expect(bytes).toBeLessThanOrEqual(6 * 1024);
    // what the model needs is still there: the limits, the continuation offset, the edit/write split, read before edit
    const all = [...system.map((b) => b.text), ...tools].join("\n");
    for (const needed of [
      "2000 lines",
      "offset",
      "oldText",
      "write only for new files",
      "Read a file before you edit it",
      "timeout",
    ])
      expect(all).toContain(needed);
    const guidelines = system
      .find((b) => b.id === "guidelines")!
      .text.split("\n")
      .slice(1);
    expect(guidelines.filter((g) => /\bedit\b/.test(g) && /\bwrite\b/.test(g))).toHaveLength(1);
  });
});

describe("context plugins in the CLI", () => {
  it("templates, skills, the system prompt, /compact, /cost and `coil sessions stats` work together", async () => {
    const dir = mkdtempSync(join(tmpdir(), "coil-context-cli-"));
    temps.push(dir);
    mkdirSync(join(dir, ".git"));
    writeFileSync(join(dir, "preset.yaml"), PRESET);
    writeFileSync(join(dir, "AGENTS.md"), "Always answer in haiku.");
    writeFileSync(join(dir, "one.yaml"), "- text: reviewed\n  usage: { input: 40, cacheWrite: 3000, output: 12 }\n");
    writeFileSync(join(dir, "two.yaml"), "- text: skilled\n  usage: { input: 60, cacheRead: 3000, output: 8 }\n");
    writeFileSync(join(dir, "three.yaml"), "- text: '## Goal\\nreview and plugin work'\n");
    const requests = () =>
      readFileSync(join(dir, "requests.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));

    const review = await coil(dir, [
      "--preset",
      "./preset.yaml",
      "--script",
      "one.yaml",
      "--system-prompt",
      "You are terse.",
      "-p",
      "/review src/a.ts",
    ]);
    expect(review.stderr).toBe("");
    expect(review).toMatchObject({ code: 0, stdout: "reviewed\n" });
    const [first] = requests();
    expect(first.system.map((b: { id: string }) => b.id)).toEqual([
      "role",
      "guidelines",
      "docs",
      "skills",
      "project",
      "env",
    ]);
    expect(first.system[0].text).toBe("You are terse.");
    expect(first.system.find((b: { id: string }) => b.id === "project").text).toContain("Always answer in haiku.");
    expect(first.system.find((b: { id: string }) => b.id === "skills").text).toContain(
      "<name>write-coil-plugin</name>",
    );
    expect(first.messages[0].content).toMatch(/^Review the following code changes: src\/a\.ts\n/);

    const skill = await coil(dir, [
      "--preset",
      "./preset.yaml",
      "--script",
      "two.yaml",
      "-c",
      "-p",
      "/skill:write-coil-plugin add a greet tool",
    ]);
    expect(skill).toMatchObject({ code: 0, stdout: "skilled\n" });
    const second = requests()[1];
    expect(second.system.slice(1)).toEqual(first.system.slice(1)); // only the role differed (no --system-prompt now)
    const last = second.messages.at(-1);
    expect(last.content[0].text).toContain('<skill name="write-coil-plugin"');
    expect(last.content[0].text).toContain("# Writing a coil plugin");
    expect(last.content[1].text).toBe("add a greet tool");

    const compact = await coil(dir, ["--preset", "./preset.yaml", "--script", "three.yaml", "-c", "-p", "/compact"]);
    expect(compact.code).toBe(0);
    expect(compact.stdout).toMatch(
      /^Compacted: [\d,]+ → [\d,]+ tokens\. \d+ messages summarised by scripted\/scripted, \d+ kept verbatim\.\n$/,
    );

    const cost = await coil(dir, ["--preset", "./preset.yaml", "--script", "one.yaml", "-c", "-p", "/cost"]);
    expect(cost.code).toBe(0);
    expect(cost.stdout).toContain(
      "total: 2 requests, 6,100 prompt tokens (3,000 read from the cache, 49%; 3,000 written), 20 output tokens",
    );
    expect(cost.stdout).toMatch(
      /^2\s+scripted\/scripted\s+3,060\s+3,000\s+0\s+8\s+\$0\.00\s+40\s+system prompt changed$/m,
    );
    expect(cost.stdout).toContain("cache misses: 40 prompt tokens in 1 request; system prompt changed (1)");

    const list = await coil(dir, ["--preset", "./preset.yaml", "sessions", "list", "--json"]);
    const [session] = JSON.parse(list.stdout);
    const stats = await coil(dir, ["--preset", "./preset.yaml", "sessions", "stats", session.id.slice(0, 8)]);
    expect(stats.code).toBe(0);
    expect(stats.stdout).toContain(`session ${session.id}`);
    expect(stats.stdout).toContain("total: 2 requests, 6,100 prompt tokens");
  });
});
