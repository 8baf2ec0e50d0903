/**
 * Many MCP calls in one run, through the built CLI with the real server-memory from npm: no abort
 * listener is left on the run's signal per call, so Node never prints MaxListenersExceededWarning.
 * Replies of 8 parallel calls: while calls run, the loop holds one listener of its own per running call
 * (released when it ends), so 11 parallel calls of any tool would pass Node's default of 10 for a moment.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { childEnv } from "../../support/env.js";
import { cleanTemps, tempDir } from "../../support/tools.js";

const ROOT = packageRoot();
const BIN = join(ROOT, "dist", "bin", "coil.js");
const MEMORY = join(ROOT, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js");

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\``);
});
afterAll(cleanTemps);

describe("MCP calls at scale", () => {
  it("200 calls in one run (25 replies of 8 parallel calls) leave no listener warning, and every call answers", async () => {
    const dir = realpathSync(tempDir({}, "coil-mcp-calls-"));
    const home = join(dir, "home");
    mkdirSync(home);
    writeFileSync(
      join(home, "mcp.json"),
      JSON.stringify({ mcpServers: { memory: { command: process.execPath, args: [MEMORY] } } }),
    );
    const reply = () =>
      `- toolCalls:\n${Array.from({ length: 8 }, () => `    - name: mcp__memory__read_graph\n      arguments: {}\n`).join("")}`;
    writeFileSync(join(dir, "s.yaml"), `${Array.from({ length: 25 }, reply).join("")}- text: all read\n`);
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [BIN, "--provider", "scripted", "--script", "s.yaml", "--no-session", "--mode", "json", "go"],
        {
          cwd: dir,
          env: childEnv({ COIL_HOME: home, MEMORY_FILE_PATH: join(dir, "memory.jsonl") }),
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
    expect(r.stderr).not.toContain("MaxListenersExceededWarning");
    expect(r.code).toBe(0);
    const ends = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; result?: { isError: boolean; content: { text: string }[] } })
      .filter((e) => e.type === "tool_execution_end");
    expect(ends).toHaveLength(200);
    expect(ends.every((e) => !e.result!.isError && e.result!.content[0]!.text.includes("entities"))).toBe(true);
  }, 60_000);
});
