/** Started in a subdirectory, coil uses the project root (the git root): its preset, trust, .mcp.json and .claude/. */
import { existsSync, mkdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot, foldersUpToRoot } from "../../lib/locations.js";
import { cleanTemps, coil, requireBuild, sandboxEnv, tempDir, writeFiles } from "../support/ecosystem.js";

beforeAll(requireBuild);
afterAll(cleanTemps);

describe("project root", () => {
  it("is the git root above the working directory, else the working directory", () => {
    const base = realpathSync(tempDir("coil-root-"));
    const repo = join(base, "repo");
    mkdirSync(join(repo, ".git"), { recursive: true });
    mkdirSync(join(repo, "a", "b"), { recursive: true });
    mkdirSync(join(base, "loose", "x"), { recursive: true });
    expect(projectRoot(join(repo, "a", "b"))).toBe(repo);
    expect(projectRoot(repo)).toBe(repo);
    expect(projectRoot(join(base, "loose", "x"))).toBe(join(base, "loose", "x"));
    expect(foldersUpToRoot(join(repo, "a", "b"))).toEqual([join(repo, "a", "b"), join(repo, "a"), repo]);
  });

  it("from a subdirectory, the root's .coil/preset.yaml, trust and .mcp.json apply", async () => {
    const base = realpathSync(tempDir("coil-root-"));
    const repo = join(base, "repo");
    writeFiles(repo, {
      ".git/HEAD": "ref: refs/heads/main\n",
      ".coil/preset.yaml": "plugins:\n  - system-prompt:\n      append: ROOT-PRESET-APPENDED\n",
      ".mcp.json": JSON.stringify({ mcpServers: { "root-server": { command: "node", args: ["server.js"] } } }),
      "src/deep/file.txt": "x\n",
    });
    const cwd = join(repo, "src", "deep");
    const env = sandboxEnv(base);
    const before = await coil(cwd, ["preset", "show"], env);
    expect(before.stdout).toContain(`project ${join(repo, ".coil", "preset.yaml")}  (skipped: untrusted project`);
    expect(before.stdout).not.toContain("ROOT-PRESET-APPENDED");
    const listed = await coil(cwd, ["mcp", "list"], env);
    expect(listed.stdout).toContain(`not loaded (project not trusted; coil trust): ${join(repo, ".mcp.json")}`);

    const trusted = await coil(cwd, ["trust"], env);
    expect(trusted.stdout).toContain(`trusted ${repo}`);
    const after = await coil(cwd, ["preset", "show"], env);
    expect(after.stdout).toContain("ROOT-PRESET-APPENDED");
    expect(after.stdout).not.toContain("skipped: untrusted");
    const servers = await coil(cwd, ["mcp", "list"], env);
    expect(servers.stdout).toContain(`root-server  stdio  node server.js  (${join(repo, ".mcp.json")})`);
  });

  it("from a subdirectory of a trusted project, the root's .claude/settings.json hooks run, with CLAUDE_PROJECT_DIR the root", async () => {
    const base = realpathSync(tempDir("coil-root-"));
    const repo = join(base, "repo");
    const hook = `echo "$CLAUDE_PROJECT_DIR" > "$CLAUDE_PROJECT_DIR/hook-ran.txt"`;
    writeFiles(repo, {
      ".git/HEAD": "ref: refs/heads/main\n",
      ".claude/settings.json": JSON.stringify({
        hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: hook }] }] },
      }),
      "pkg/r.yaml": "- text: done\n",
    });
    const cwd = join(repo, "pkg");
    const env = sandboxEnv(base);
    const untrusted = await coil(
      cwd,
      ["-p", "--provider", "scripted", "--script", "r.yaml", "--no-session", "hi"],
      env,
    );
    expect(untrusted.stdout).toContain("done");
    expect(existsSync(join(repo, "hook-ran.txt"))).toBe(false);
    const trusted = await coil(
      cwd,
      ["--trust", "-p", "--provider", "scripted", "--script", "r.yaml", "--no-session", "hi"],
      env,
    );
    expect(trusted.stdout).toContain("done");
    expect(readFileSync(join(repo, "hook-ran.txt"), "utf8").trim()).toBe(repo);
  });
});
