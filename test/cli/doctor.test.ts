/**
 * `coil doctor` in every built-in preset: versions, the project and its trust, how commands are confined,
 * which providers are usable (never a key), MCP servers, prompt templates, skills and context files.
 */
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanTemps, coil, requireBuild, sandboxEnv, tempDir, writeFiles } from "../support/ecosystem.js";

beforeAll(requireBuild);
afterAll(cleanTemps);

const KEY = "sk-ant-doctor-test-0123456789abcdef";

describe("coil doctor", () => {
  it("reports versions, project trust, providers, MCP servers, templates, skills and context files", async () => {
    const base = realpathSync(tempDir("coil-doctor-"));
    const repo = join(base, "repo");
    writeFiles(join(base, "coil-home"), {
      "mcp.json": JSON.stringify({ mcpServers: { files: { command: "npx", args: ["-y", "some-mcp-server"] } } }),
    });
    writeFiles(repo, {
      ".git/HEAD": "ref: refs/heads/main\n",
      ".coil/preset.yaml": "extends: default\n",
      ".claude/commands/ship.md": "---\ndescription: ship it\n---\nShip $ARGUMENTS\n",
      "AGENTS.md": "be brief",
    });
    const env = sandboxEnv(base, { ANTHROPIC_API_KEY: KEY });
    const r = await coil(join(repo), ["doctor"], env);
    expect(r.code).toBe(0);
    const out = r.stdout;
    expect(out).toMatch(/^coil \d+\.\d+\.\d+ \(node v\d+/);
    expect(out).toContain(`project: ${repo} (git root), not trusted`);
    expect(out).toContain("sandbox: none");
    expect(out).toMatch(/providers:\n(.*\n)* {2}anthropic {2}ready/);
    expect(out).toContain("  openai  not set up: set OPENAI_API_KEY");
    expect(out).toContain("MCP servers:\n  files  stdio  npx -y some-mcp-server");
    expect(out).toMatch(/prompt templates:\n {2}\d+ loaded: .*\/ship/);
    expect(out).toContain("skills:\n");
    expect(out).toContain(join(repo, "AGENTS.md"));
    expect(out + r.stderr).not.toContain(KEY);
  });

  it("exists in every built-in preset", async () => {
    const base = realpathSync(tempDir("coil-doctor-presets-"));
    const env = sandboxEnv(base);
    for (const preset of ["default", "print", "readonly", "safe"]) {
      const r = await coil(base, ["--preset", preset, "doctor"], env);
      expect([preset, r.stdout]).toEqual([
        preset,
        expect.stringMatching(/^coil .*\nproject: .*\n(sandbox|bash)[\s\S]*providers:/),
      ]);
    }
  });
});
