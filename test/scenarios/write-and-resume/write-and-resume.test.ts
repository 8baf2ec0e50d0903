/**
 * End to end, through the shipped CLI and the default preset: a scripted model writes a file with the
 * `write` tool and answers; the run is saved as a session, and `-c` continues it with the history
 * (boot's assemble(), the models plugin's provider choice, tools, session-jsonl, ui-print together).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanTemps, coil, requireBuild, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";

beforeAll(requireBuild);
afterAll(cleanTemps);

describe("scenario: write a file, then continue the session", () => {
  it("the tool runs in the project, the answer is printed, and -c continues the same session", async () => {
    const base = tempDir("coil-scenario-");
    const project = writeFiles(join(base, "project"), {
      "first.yaml":
        'replies:\n  - text: "Writing it."\n    toolCalls:\n      - name: write\n        arguments: { path: "notes.txt", content: "hello from coil\\n" }\n  - text: "Done: notes.txt written."\n',
      "second.yaml": 'replies:\n  - text: "It says hello."\n',
    });
    const env = sandboxEnv(base);
    const first = await coil(
      project,
      ["--provider", "scripted", "--script", "first.yaml", "-p", "write notes.txt"],
      env,
    );
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout.trim()).toBe("Done: notes.txt written.");
    expect(readFileSync(join(project, "notes.txt"), "utf8")).toBe("hello from coil\n");

    const sessions = join(base, "coil-home", "sessions");
    expect(existsSync(sessions)).toBe(true);
    const second = await coil(
      project,
      ["--provider", "scripted", "--script", "second.yaml", "--mode", "json", "-c", "-p", "what does it say?"],
      env,
    );
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("It says hello.");
    // -c continued the same session: one session file holds both runs, in order.
    const files = readdirSync(sessions, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(".jsonl"));
    expect(files).toHaveLength(1);
    const log = readFileSync(join(sessions, files[0]!), "utf8");
    const order = ["write notes.txt", "Done: notes.txt written.", "what does it say?", "It says hello."].map((t) =>
      log.indexOf(t),
    );
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((x, y) => x - y)).toEqual(order);
  });
});
