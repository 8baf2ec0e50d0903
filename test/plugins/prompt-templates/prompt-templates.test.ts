import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { testHost } from "../../support/host.js";
import templates, { expandTemplate, splitArgs } from "../../../plugins/prompt-templates/index.js";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});
const savedHome = process.env.COIL_HOME;
const savedUserHome = process.env.HOME;
let cwd: string;
let home: string;
beforeEach(() => {
  const root = mkdtempSync(join(tmpdir(), "coil-templates-"));
  temps.push(root);
  cwd = join(root, "project");
  home = join(root, "home");
  mkdirSync(cwd, { recursive: true });
  process.env.COIL_HOME = home;
  process.env.HOME = join(root, "user"); // no ~/.claude/commands or ~/.pi/agent/prompts of the machine's user
});
afterEach(() => {
  if (savedHome === undefined) delete process.env.COIL_HOME;
  else process.env.COIL_HOME = savedHome;
  process.env.HOME = savedUserHome;
});

describe("template arguments", () => {
  it("splits like a shell: quotes group words", () => {
    expect(splitArgs(`src/a.ts "two words" 'single q' x\\"y`)).toEqual(["src/a.ts", "two words", "single q", 'x\\"y']);
    expect(splitArgs(`"esc \\"quoted\\""`)).toEqual(['esc "quoted"']);
    expect(splitArgs("   ")).toEqual([]);
  });

  it.each([
    ["$1 and $2", "a b c", "a and b"],
    ["[$3]", "a b", "[]"],
    ["all: $@", "a  b   c", "all: a b c"],
    ["raw: $ARGUMENTS", 'a  "b c"', 'raw: a  "b c"'],
    ["from 2: ${@:2}", "a b c d", "from 2: b c d"],
    ["two from 2: ${@:2:2}", "a b c d", "two from 2: b c"],
    ["past the end: ${@:9}|", "a", "past the end: |"],
    ["quoted: $1", '"x y" z', "quoted: x y"],
    ["no re-expansion: $1 $2", "$2 second", "no re-expansion: $2 second"],
    ["$10th", "1 2 3 4 5 6 7 8 9 ten", "tenth"],
    ["no placeholder", "extra words", "no placeholder\n\nextra words"],
    ["no placeholder", "", "no placeholder"],
  ])("%s with %j → %j", (body, args, expected) => {
    expect(expandTemplate(body, args)).toBe(expected);
  });
});

describe("prompt-templates", () => {
  it("turns markdown files into /name commands with description and argument hint; the project wins over built-ins", async () => {
    const dir = join(cwd, ".coil", "prompt-templates");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "review.md"),
      "---\ndescription: our own review\nargument-hint: <file>\n---\nReview $1 strictly.\n",
    );
    writeFileSync(join(dir, "deploy.md"), "# Deploy the app\n\nDeploy to $1 with ${@:2}.\n");
    writeFileSync(join(dir, "compact.md"), "clashes with /compact\n");
    writeFileSync(join(dir, "README.md"), "not a template\n");
    const host = testHost({ cwd });
    const logs: string[] = [];
    host.subscribe("diagnostic", (e) => void (e.type === "diagnostic" && logs.push(e.message)));
    host.install(templates);
    expect(host.commands.get("review")).toMatchObject({ description: "our own review", argumentHint: "<file>" });
    expect(host.commands.get("deploy")).toMatchObject({ description: "Deploy the app" });
    expect(await host.commands.get("review")!.run("src/a.ts", undefined as never)).toEqual({
      prompt: "Review src/a.ts strictly.",
    });
    expect(await host.commands.get("deploy")!.run("prod --fast --dry", undefined as never)).toEqual({
      prompt: "# Deploy the app\n\nDeploy to prod with --fast --dry.",
    });
    expect(host.commands.get("compact")).toBeUndefined();
    expect(host.commands.get("README")).toBeUndefined();
    expect(logs).toEqual([
      expect.stringMatching(/compact\.md not loaded: \/compact is a command of coil itself/),
      expect.stringMatching(
        /prompt-templates\/review\.md not loaded: \/review is already defined by .*\.coil\/prompt-templates\/review\.md/,
      ),
    ]);
    // Built-ins that were not overridden are there.
    for (const name of ["explain", "write-tests", "fix"]) expect(host.commands.get(name), name).toBeDefined();
    // An edited template applies without a restart.
    writeFileSync(join(dir, "review.md"), "Review $1 gently.\n");
    expect(await host.commands.get("review")!.run("b.ts", undefined as never)).toEqual({
      prompt: "Review b.ts gently.",
    });
  });

  it("the built-in write-tests template places its arguments", async () => {
    const host = testHost({ cwd });
    host.install(templates, { project: false, user: false, packages: false });
    const out = (await host.commands.get("write-tests")!.run("src/parse.ts edge cases only", undefined as never)) as {
      prompt: string;
    };
    expect(out.prompt).toContain(
      "Write tests for src/parse.ts.\n\nWhat the user also asked for (may be empty): edge cases only\n",
    );
    const review = (await host.commands.get("review")!.run("", undefined as never)) as { prompt: string };
    expect(review.prompt).toMatch(/^Review the following code changes: \n/);
  });
});
