/**
 * Session hooks and coil's subcommands (#28.8): a SessionEnd (or SessionStart) hook belongs to an agent's
 * session, so `coil list`, `doctor`, `models` and `install` neither run it nor fail over it, as Claude Code's
 * own subcommands (`claude mcp list`, `claude plugin list`) run no session hooks. A run still fires both.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanTemps, coil, requireBuild, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";

beforeAll(requireBuild);
afterAll(cleanTemps);

describe("session hooks and subcommands", () => {
  it("coil list, doctor, models and install run no SessionStart/SessionEnd hook and print no SESSION_NOT_OPEN; a run fires both", async () => {
    const base = tempDir("coil-session-hooks-");
    const project = join(base, "project");
    const log = join(base, "hook-log.txt");
    const hook = (name: string) => [{ hooks: [{ type: "command", command: `echo ${name} >> '${log}'` }] }];
    writeFiles(join(base, "home"), {
      ".claude/settings.json": JSON.stringify({ hooks: { SessionStart: hook("start"), SessionEnd: hook("end") } }),
    });
    writeFiles(project, { "r.yaml": "- text: hello\n" });
    const env = sandboxEnv(base);
    for (const args of [["list"], ["doctor"], ["models"], ["install"]]) {
      const ran = await coil(project, args, env);
      expect(`${ran.stdout}\n${ran.stderr}`, args.join(" ")).not.toMatch(/SESSION_NOT_OPEN|session is not open/);
      expect(ran.stderr, args.join(" ")).not.toMatch(/\[plugin hooks-claude\]/);
    }
    expect(existsSync(log)).toBe(false);
    const ran = await coil(project, ["--provider", "scripted", "--script", "r.yaml", "-p", "hi"], env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe("hello\n");
    expect(readFileSync(log, "utf8")).toBe("start\nend\n");
  });
});
