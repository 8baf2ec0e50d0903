/** plan-mode through the shipped CLI (dist/bin/coil.js): the mode and the approved plan live in the session, so -c and --session (what /reload runs) keep them. */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanTemps, coil, requireBuild, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";

beforeAll(requireBuild);
afterAll(cleanTemps);

const PRESET = "extends: default\nplugins:\n  - plan-mode\n  - provider-scripted: { recordTo: requests.jsonl }\n";
const PLAN = "# Bump\\n\\n- [ ] change app.txt\\n";

describe("plan mode across runs", () => {
  it("coil -c and coil --session <file> come back in plan mode, and after /plan approve with the approved plan", async () => {
    const base = tempDir("coil-plan-cli-");
    const project = writeFiles(join(base, "project"), {
      "p.yaml": PRESET,
      "app.txt": "version 1\n",
      "plan.yaml": `- toolCalls: [{ name: write_plan, arguments: { plan: "${PLAN}" } }]\n- text: planned\n`,
      "look.yaml": "- text: still planning\n",
      "go.yaml": "- text: approved, working\n",
      "next.yaml": "- text: next step\n",
    });
    const env = sandboxEnv(base);
    const run = (script: string, args: string[]) =>
      coil(project, ["--preset", "p.yaml", "--provider", "scripted", "--script", script, ...args], env);
    const requests = () =>
      readFileSync(join(project, "requests.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { tools: { name: string }[]; system: { id: string; text: string }[] });
    const tools = (r: { tools: { name: string }[] }) => r.tools.map((t) => t.name).sort();

    const first = await run("plan.yaml", ["-p", "--plan", "plan the bump"]);
    expect(first.code, first.stderr).toBe(0);
    expect(tools(requests()[0]!)).toEqual(["bash", "find", "grep", "ls", "read", "task", "write_plan"]);

    // A new process on the same session: still planning (read-only tools).
    const again = await run("look.yaml", ["-c", "-p", "look further"]);
    expect(again.code, again.stderr).toBe(0);
    expect(tools(requests()[2]!)).toEqual(["bash", "find", "grep", "ls", "read", "task", "write_plan"]);

    const approved = await run("go.yaml", ["-c", "-p", "/plan approve"]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(tools(requests()[3]!)).toContain("edit");

    // /reload runs coil again with --session <file> (and no --plan): the approval holds.
    const [file] = readdirSync(join(base, "coil-home", "sessions"), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(".jsonl"));
    const reloaded = await run("next.yaml", ["--session", join(base, "coil-home", "sessions", file!), "-p", "next"]);
    expect(reloaded.code, reloaded.stderr).toBe(0);
    const last = requests().at(-1)!;
    expect(tools(last)).toEqual(["bash", "edit", "find", "grep", "ls", "read", "task", "write"]);
    expect(last.system.find((b) => b.id === "plan")?.text).toContain("- [ ] change app.txt");
  });
});
