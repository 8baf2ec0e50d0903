/**
 * The system prerequisites (scripts/prerequisites.mjs, one list used by `npm test` and `.ci/run`): with a
 * tool missing from PATH, `npm test` stops at once with one list of what to install, before lint, build or
 * any test file runs.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, realpathSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanTemps, ROOT, run, tempDir } from "../support/ecosystem.js";

afterAll(cleanTemps);

/** npm's own script (the `npm` on PATH is a link to it), run with this node so the test PATH needs no npm. */
const NPM_CLI = realpathSync(spawnSync("sh", ["-c", "command -v npm"], { encoding: "utf8" }).stdout.trim());
const TOOLS = ["git", "bash", "python3", "tmux", "bwrap", "redis-server", "sh"];

/** A PATH of one folder holding node and every tool the tests need except `without`. */
function pathWithout(without: string[]): string {
  const dir = join(tempDir("coil-prereq-"), "bin");
  mkdirSync(dir);
  symlinkSync(process.execPath, join(dir, "node"));
  for (const tool of TOOLS.filter((t) => !without.includes(t))) {
    const found = spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
    if (!found) throw new Error(`${tool} is not installed here; the test needs it to build its PATH`);
    symlinkSync(found, join(dir, tool));
  }
  return dir;
}

describe("system prerequisites", () => {
  it("`npm test` with bwrap and redis-server missing stops at once, naming both and the apt packages", async () => {
    const ran = await run(process.execPath, [NPM_CLI, "test"], {
      cwd: ROOT,
      env: { ...process.env, PATH: pathWithout(["bwrap", "redis-server"]) },
    });
    expect(ran.code).not.toBe(0);
    expect(ran.stderr).toContain("the tests need these tools, not found on PATH:");
    expect(ran.stderr).toMatch(/^ {2}bwrap +\(the sandbox tests/m);
    expect(ran.stderr).toMatch(/^ {2}redis-server +\(the fleet tests/m);
    expect(ran.stderr).toMatch(/apt-get install bubblewrap redis-server$/m);
    // Only the missing ones are named, and nothing after the check ran (no Biome, no build, no vitest).
    expect(ran.stderr).not.toMatch(/^ {2}(git|tmux|python3|bash) /m);
    expect(ran.stdout + ran.stderr).not.toMatch(/biome ci|vitest|Checked \d+ files/);
  });

  it("passes with every required tool on PATH, noting the optional ones that are absent", async () => {
    const ran = await run(process.execPath, [join(ROOT, "scripts", "prerequisites.mjs"), "--check"], {
      cwd: ROOT,
      env: { ...process.env, PATH: pathWithout([]) },
    });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toContain("rg (ripgrep) is not installed; skipped");
    expect(ran.stderr).not.toContain("the tests need");
  });
});
