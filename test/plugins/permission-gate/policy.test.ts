/**
 * The gate's pure decision (policy.ts): no host, no UI, no session — rules, mode and remembered answers in,
 * a verdict with its reason out.
 */
import { describe, expect, it } from "vitest";
import { Policy, parseRule, subjectOf, READ_ONLY_COMMANDS } from "../../../plugins/permission-gate/index.js";

const cwd = "/work/project";
const policy = (
  mode: "default" | "accept-edits" | "plan" | "yolo",
  rules: { deny?: string[]; ask?: string[]; allow?: string[] } = {},
) =>
  new Policy(
    {
      rules: {
        deny: (rules.deny ?? []).map((r) => parseRule(r, "/root")),
        ask: (rules.ask ?? []).map((r) => parseRule(r, "/root")),
        allow: (rules.allow ?? []).map((r) => parseRule(r, "/root")),
      },
      readOnlyTools: ["read", "grep"],
      readOnlyCommands: READ_ONLY_COMMANDS,
    },
    mode,
  );
const bash = (command: string) => subjectOf("bash", { command }, cwd);
const edit = (path: string) => subjectOf("edit", { path }, cwd);

describe("policy", () => {
  it("deny beats plan mode, plan mode beats ask and allow, ask beats allow", () => {
    const p = policy("plan", { deny: ["bash(rm *)"], ask: ["bash(npm *)"], allow: ["bash(npm test)"] });
    expect(p.decide("bash", bash("rm -rf x")).worst).toEqual({
      verdict: "deny",
      rule: "bash(rm *)",
      item: "rm -rf x",
      why: "denied by the rule bash(rm *)",
    });
    expect(p.decide("bash", bash("npm test")).worst).toEqual({
      verdict: "deny",
      item: "npm test",
      why: "plan mode is read-only",
    });
    p.mode = "default";
    expect(p.decide("bash", bash("npm test")).worst).toEqual({
      verdict: "ask",
      rule: "bash(npm *)",
      item: "npm test",
      why: "the rule bash(npm *) asks",
    });
  });

  it("the worst command of a line decides, and every asking command is listed", () => {
    const p = policy("default", { allow: ["bash(git status)"] });
    const { worst, asking } = p.decide("bash", bash("git status && make && make install"));
    expect(worst.verdict).toBe("ask");
    expect(asking.map((v) => v.item)).toEqual(["make", "make install"]);
  });

  it("a remembered answer allows the same command again, not another", () => {
    const p = policy("default");
    p.remember("bash", "make");
    expect(p.decide("bash", bash("make")).worst).toEqual({
      verdict: "allow",
      item: "make",
      why: "allowed for this session",
    });
    expect(p.decide("bash", bash("make install")).worst.verdict).toBe("ask");
  });

  it("modes: read-only work is allowed everywhere, accept-edits allows edits inside the project, yolo everything", () => {
    expect(policy("default").decide("bash", bash("ls -la")).worst.why).toBe("read-only");
    expect(policy("default").decide("edit", edit("src/a.ts")).worst).toEqual({
      verdict: "ask",
      item: undefined,
      why: "default mode asks before using edit",
    });
    expect(policy("accept-edits").decide("edit", edit("src/a.ts")).worst.verdict).toBe("allow");
    expect(policy("accept-edits").decide("edit", edit("/etc/hosts")).worst.verdict).toBe("ask");
    expect(policy("yolo").decide("bash", bash("make")).worst.why).toBe("yolo mode");
  });

  it("names the deny or ask rule that covers a path a reading tool returned", () => {
    const p = policy("default", { deny: ["read(**/.env)"], ask: ["read(secrets/**)"] });
    expect(p.covering("grep", subjectOf("grep", { path: ".env" }, cwd))).toBe("read(**/.env)");
    expect(p.covering("grep", subjectOf("grep", { path: "secrets/key" }, cwd))).toBe("read(secrets/**)");
    expect(p.covering("grep", subjectOf("grep", { path: "src/a.ts" }, cwd))).toBeUndefined();
  });
});
