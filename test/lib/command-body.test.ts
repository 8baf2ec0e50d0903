import { describe, expect, it } from "vitest";
import {
  bashRefusal,
  expandShellCommands,
  expandTemplate,
  parseAllowedTools,
  shellCommands,
  substituteArguments,
} from "../../lib/command-body.js";

const coilTools = new Set(["read", "bash", "edit", "write", "grep", "find", "ls", "task"]);
const known = (name: string) => coilTools.has(name);

describe("argument placeholders", () => {
  it("$ARGUMENTS[N] counts from 0 as Claude Code writes it; $N from 1", () => {
    expect(substituteArguments("$ARGUMENTS[0]/$ARGUMENTS[1]/$ARGUMENTS[5]|$1", "a b")).toEqual({
      text: "a/b/|a",
      used: true,
    });
    expect(substituteArguments("nothing here", "a")).toEqual({ text: "nothing here", used: false });
    expect(substituteArguments("awk '{print $0}' $1", "f.txt")).toEqual({ text: "awk '{print $0}' f.txt", used: true });
    expect(expandTemplate("plain", "x y")).toBe("plain\n\nx y");
  });
});

describe("!`cmd` lines", () => {
  it("finds them at a line start or after a space, not inside words, and replaces each by its output in order", async () => {
    const body = "Status: !`git status`\n!`echo a`\nnot a!`b` command\n!`echo a` again";
    expect(shellCommands(body)).toEqual(["git status", "echo a", "echo a"]);
    const ran: string[] = [];
    const out = await expandShellCommands(body, async (c) => {
      ran.push(c);
      return `<${c}>`;
    });
    expect(out).toBe("Status: <git status>\n<echo a>\nnot a!`b` command\n<echo a> again");
    expect(ran).toEqual(["git status", "echo a"]);
  });
});

describe("allowed-tools", () => {
  it("maps Claude Code's names to coil's and reads Bash(prefix:*) forms, from a string or a list", () => {
    expect(parseAllowedTools("Bash(git add:*), Bash(git status:*), Read, Glob LS", known)).toEqual({
      tools: new Set(["bash", "read", "find", "ls"]),
      bashPrefixes: ["git add", "git status"],
      unknown: [],
    });
    expect(parseAllowedTools(["Read", "Grep", "WebFetch", "Edit", "MultiEdit", "Write"], known)).toEqual({
      tools: new Set(["read", "grep", "edit", "write"]),
      unknown: ["WebFetch"],
    });
    // A plain Bash next to a restricted one allows any command; coil's own names work too.
    expect(parseAllowedTools("Bash(git:*) Bash read", known)).toEqual({
      tools: new Set(["bash", "read"]),
      unknown: [],
    });
    expect(parseAllowedTools("Bash(npm test)", known)).toEqual({
      tools: new Set(["bash"]),
      bashPrefixes: ["npm test"],
      unknown: [],
    });
    expect(parseAllowedTools(42, known)).toBeUndefined();
  });

  it("a bash prefix must start every command of the line; substitutions are refused", () => {
    expect(bashRefusal("git add a.ts && git status", ["git add", "git status"])).toBeUndefined();
    expect(bashRefusal("git add . && rm -rf /", ["git add"])).toMatch(/only commands starting with `git add`/);
    expect(bashRefusal("git add $(rm -rf /)", ["git add"])).toMatch(/no substitutions/);
    expect(bashRefusal("git addx", ["git add"])).toBeDefined();
  });
});
