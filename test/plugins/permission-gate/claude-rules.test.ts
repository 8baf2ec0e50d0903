/** Claude Code's permission rule forms as coil's rules (issue 28.2), and the trust rules for a project's settings. */
import { describe, expect, it } from "vitest";
import type { SettingsFile } from "../../../lib/claude-settings.js";
import { claudePermissions, mapClaudeRule } from "../../../plugins/permission-gate/claude.js";
import { ruleMatches, subjectOf } from "../../../plugins/permission-gate/index.js";

const ROOT = "/work/proj";
const map = (rule: string) => mapClaudeRule(rule, "/f/settings.json", ROOT);
const coil = (rule: string) => map(rule).coil;

describe("Claude Code rule forms", () => {
  it("map onto coil rules", () => {
    expect(coil("Bash")).toBe("bash");
    expect(coil("Bash(*)")).toBe("bash");
    expect(coil("Bash(npm run test:*)")).toBe("bash(npm run test:*)");
    expect(coil("Bash(ls *)")).toBe("bash(ls:*)"); // a trailing " *" also matches the bare command
    expect(coil("Bash(git * main)")).toBe("bash(git * main)");
    expect(coil("Bash(echo {a,b}?)")).toBe("bash(echo \\{a,b\\}\\?)");
    expect(coil("Read(./.env)")).toBe("read(.env)");
    expect(coil("Read(.env)")).toBe("read(**/.env)"); // gitignore: no slash, any depth
    expect(coil("Read(*.pem)")).toBe("read(**/*.pem)");
    expect(coil("Edit(src/**)")).toBe("{edit,write}(src/**)");
    expect(coil("Edit(/docs/**)")).toBe(`{edit,write}(${ROOT}/docs/**)`); // from the project root
    expect(coil("Read(//etc/passwd)")).toBe("read(/etc/passwd)");
    expect(coil("Read(~/.ssh/**)")).toBe("read(~/.ssh/**)");
    expect(coil("Read(secrets/)")).toBe("read(**/secrets/**)"); // a folder, at any depth
    expect(coil("Write(out/*.log)")).toBe("write(out/*.log)");
    expect(coil("Grep")).toBe("grep");
    expect(coil("Glob")).toBe("find");
    expect(coil("mcp__github")).toBe("mcp__github__*");
    expect(coil("mcp__github__create_issue")).toBe("mcp__github__create_issue");
    expect(coil("mcp__github__*")).toBe("mcp__github__*");
    expect(coil("Task(explore)")).toBe("task(explore)");
    expect(map("WebFetch(domain:example.com)")).toMatchObject({
      coil: "web_fetch(domain:example.com)",
      note: expect.stringMatching(/no built-in WebFetch tool/),
    });
    expect(map("Read(./x)").rule?.text).toBe("Read(./x) (/f/settings.json)");
  });

  it("say why a form cannot be applied", () => {
    expect(map("NotebookEdit(a.ipynb)")).toMatchObject({ note: "coil has no notebook tool" });
    expect(map("Skill(deploy)").rule).toBeUndefined();
    expect(map("Frobnicate").note).toMatch(/no tool that Claude Code's Frobnicate maps to/);
    expect(map("Read(!keep.txt)").note).toMatch(/negated/);
    expect(map("not a rule(").note).toMatch(/not of the form/);
  });

  it("match as Claude Code's do", () => {
    const m = (rule: string, tool: string, args: Record<string, unknown>, list: "deny" | "allow" = "deny") =>
      ruleMatches(map(rule).rule!, tool, subjectOf(tool, args, ROOT), undefined, list);
    expect(m("Bash(ls *)", "bash", { command: "ls" })).toBe(true);
    expect(m("Bash(ls *)", "bash", { command: "ls -la" })).toBe(true);
    expect(m("Bash(ls *)", "bash", { command: "lsof" })).toBe(false);
    expect(m("Bash(npm run test:*)", "bash", { command: "npm run test -- -w" })).toBe(true);
    expect(m("Read(.env)", "read", { path: "deep/dir/.env" })).toBe(true);
    expect(m("Read(./.env)", "read", { path: "deep/.env" })).toBe(false);
    expect(m("Read(./.env)", "bash", { command: "cat .env" })).toBe(true); // a deny also covers commands naming it
    expect(m("Read(./.env)", "bash", { command: "cat .env" }, "allow")).toBe(false);
    expect(m("Edit(src/**)", "write", { path: "src/a.ts" })).toBe(true);
    expect(m("WebFetch(domain:example.com)", "web_fetch", { url: "https://example.com/x" })).toBe(true);
    expect(m("WebFetch(domain:example.com)", "web_fetch", { url: "https://evil.com/?example.com" })).toBe(false);
    expect(m("mcp__github", "mcp__github__create_issue", {})).toBe(true);
  });
});

describe("the settings files' permissions", () => {
  const file = (scope: SettingsFile["scope"], permissions: unknown): SettingsFile => ({
    scope,
    path: `/${scope}/settings.json`,
    exists: true,
    data: { permissions },
  });
  const files = [
    file("user", { deny: ["Bash(rm:*)"], defaultMode: "acceptEdits" }),
    file("project", {
      allow: ["Bash(make:*)"],
      deny: ["Read(./.env)"],
      ask: ["Bash(git push:*)"],
      defaultMode: "bypassPermissions",
      additionalDirectories: ["../shared"],
    }),
  ];

  it("untrusted: the project's deny and ask rules apply; its allow rules, mode and directories do not", () => {
    const p = claudePermissions(files, ROOT, false);
    expect(p.rules.deny.map((r) => r.text)).toEqual([
      "Bash(rm:*) (/user/settings.json)",
      "Read(./.env) (/project/settings.json)",
    ]);
    expect(p.rules.ask).toHaveLength(1);
    expect(p.rules.allow).toEqual([]);
    expect(p.mode).toEqual({ mode: "accept-edits", file: "/user/settings.json" });
    expect(p.directories).toEqual([]);
    expect(p.skipped).toEqual([
      "allow Bash(make:*)",
      "defaultMode bypassPermissions",
      "additionalDirectories ../shared",
    ]);
  });

  it("trusted: all of it, except that only your own file can turn on bypassPermissions", () => {
    const p = claudePermissions(files, ROOT, true);
    expect(p.rules.allow).toHaveLength(1);
    expect(p.directories).toEqual([{ path: `${ROOT}/../shared`, file: "/project/settings.json" }]);
    expect(p.mode).toEqual({ mode: "accept-edits", file: "/user/settings.json" });
    expect(p.problems).toEqual([
      "/project/settings.json: defaultMode bypassPermissions is taken only from your own ~/.claude/settings.json",
    ]);
    const dontAsk = claudePermissions([file("user", { defaultMode: "dontAsk" })], ROOT, true);
    expect(dontAsk.mode).toEqual({ mode: "default", file: "/user/settings.json", refuseAsks: true });
  });
});
