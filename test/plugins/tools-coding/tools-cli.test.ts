/** tools-coding and tools-search end to end: the built CLI (dist/bin/coil.js) as a child process, a scripted model. */
import { childEnv } from "../../support/env.js";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { until } from "../../support/harness.js";
import { cleanTemps, killAllWith, processesWith, tempDir } from "../../support/tools.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` (npm test does it first)`);
});
afterAll(cleanTemps);

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function coil(
  cwd: string,
  args: string[],
  onStdout?: (text: string, child: ReturnType<typeof spawn>) => void,
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: childEnv({ COIL_HOME: tempDir({}, "coil-home-") }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      onStdout?.(stdout, child);
    });
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdin.end();
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const SCRIPT = `replies:
  - text: "Writing the notes."
    toolCalls:
      - name: write
        arguments: { path: notes/todo.txt, content: "first\\r\\nsecond\\r\\n" }
  - toolCalls:
      - name: read
        arguments: { path: notes/todo.txt }
  - toolCalls:
      - name: edit
        arguments: { path: notes/todo.txt, oldText: second, newText: "2nd\\nthird" }
  - toolCalls:
      - name: ls
        arguments: { path: notes }
      - name: grep
        arguments: { pattern: "2nd", path: notes }
  - text: "Done."
`;

describe("coding tools through the CLI", () => {
  it("write, read, edit, ls and grep in a temp project leave the expected bytes", async () => {
    const dir = tempDir({ "replies.yaml": SCRIPT });
    const ran = await coil(dir, [
      "--plugin",
      "tools-coding",
      "--plugin",
      "tools-search",
      "--script",
      "replies.yaml",
      "--mode",
      "json",
      "-p",
      "take notes",
    ]);
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0);
    expect(readFileSync(join(dir, "notes/todo.txt"), "utf8")).toBe("first\r\n2nd\r\nthird\r\n");
    const results = ran.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
      .filter((e) => e.type === "tool_execution_end")
      .map((e) => ({ tool: e.toolName, isError: e.result.isError, text: e.result.content[0].text }));
    expect(results).toEqual([
      { tool: "write", isError: false, text: "Wrote 15 B (2 lines) to notes/todo.txt; created." },
      { tool: "read", isError: false, text: "first\nsecond" },
      { tool: "edit", isError: false, text: "Edited notes/todo.txt: 1 replacement at line 2." },
      { tool: "ls", isError: false, text: "todo.txt" },
      { tool: "grep", isError: false, text: "notes/todo.txt:2: 2nd" },
    ]);
  });

  it("Ctrl-C during a bash command ends the run and leaves no process of its tree", async () => {
    const marker = `32${Math.floor(Math.random() * 1e6)}.`;
    const command = `trap '' TERM; echo started; setsid sleep ${marker}1 & sleep ${marker}2 & wait`;
    const dir = tempDir({
      "replies.yaml": `- toolCalls:\n    - name: bash\n      arguments: { command: ${JSON.stringify(command)} }\n- text: never\n`,
    });
    try {
      let signalled = false;
      const ran = await coil(
        dir,
        ["--plugin", "tools-coding", "--script", "replies.yaml", "--mode", "json", "-p", "run it"],
        (stdout, child) => {
          if (!signalled && stdout.includes('"type":"tool_execution_update"')) {
            signalled = true;
            // both sleeps are up before the interrupt
            void until(
              () => processesWith(marker).filter((l) => /^\s*\d+\s+\S+\s+sleep /.test(l)).length === 2,
              5000,
            ).then(() => child.kill("SIGINT"));
          }
        },
      );
      expect(signalled).toBe(true);
      expect(ran.code).toBe(1);
      const end = ran.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line))
        .find((e) => e.type === "agent_end");
      expect(end.stopReason).toBe("aborted");
      await until(() => processesWith(marker).length === 0, 5000);
      expect(processesWith(marker)).toEqual([]);
    } finally {
      killAllWith(marker);
    }
  });
});
