/**
 * The command line as Claude Code and Pi users expect it (issue #27 items 1–8, #29 item 3), through the
 * built CLI: `coil help [command]` and `--help`/`-h` on every subcommand from one place, unknown options
 * alike everywhere, `--json` where offered, `coil --help` at 80 and 60 columns, piped stdin merged after
 * the prompt, `--script` choosing its provider, an unknown `/name` in print mode, a flag a built-in plugin
 * would add, a plugin flag that takes one of coil's own, and (in tmux) a prompt opening the TUI.
 * What the command line prints and returns runs in process (`inProcess`: dist/cli/main.js's `main`); exit
 * codes as a process sees them, piped stdin and the terminal go through dist/bin/coil.js.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, coil as coilIn } from "../support/ecosystem.js";
import { childEnv } from "../support/env.js";
import { useProviderMocks } from "../support/provider-mocks.js";
import { editorText, hasTmux, Tmux } from "../support/tmux.js";

const mocks = useProviderMocks("cmdline");
const { project, coil, inProcess } = mocks;
/** The built CLI with `input` piped to its stdin. */
const piped = (dir: string, args: string[], input: string) =>
  coilIn(dir, args, childEnv({ COIL_HOME: join(dir, ".home") }), input);

describe("help everywhere (#27.2, #27.3)", () => {
  it("coil help and coil help <sub> print help, exit 0, and never reach the model", async () => {
    const dir = project({ "r.yaml": "- text: SENT TO THE MODEL\n" });
    const root = await coil(dir, ["--script", "r.yaml", "help"]);
    expect(root.code).toBe(0);
    expect(root.stdout).toMatch(/^Usage: coil \[options\] \[command\] \[prompt\.\.\.\]/);
    expect(root.stdout).not.toContain("SENT TO THE MODEL");
    const sub = await inProcess(dir, ["--script", "r.yaml", "help", "checkpoints", "prune"]);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toMatch(/^Usage: coil checkpoints prune \[options\]/);
    const none = await coil(dir, ["help", "doctr"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("coil help: no command 'doctr'. Did you mean: doctor?");
  });

  it("--help and -h on subcommands the issue names print usage with options and exit 0", async () => {
    const dir = project();
    for (const words of [["models"], ["doctor"], ["install"], ["checkpoints", "list"], ["trust"], ["mcp"]]) {
      for (const flag of ["--help", "-h"]) {
        const r = await inProcess(dir, [...words, flag]);
        expect([words.join(" "), flag, r.code], r.stderr).toEqual([words.join(" "), flag, 0]);
        expect(r.stdout).toMatch(new RegExp(`^Usage: coil ${words.join(" ")} `));
        expect(r.stdout).toContain("-h, --help");
      }
    }
  });

  it("an unknown option exits 2 with the same message on every subcommand", async () => {
    const dir = project();
    for (const words of [["doctor"], ["models"], ["install"], ["checkpoints", "list"], ["trust"], ["mcp", "list"]]) {
      const r = await inProcess(dir, [...words, "--bogus"]);
      expect([words.join(" "), r.code]).toEqual([words.join(" "), 2]);
      expect(r.stderr).toContain(`coil ${words.join(" ")}: unknown option '--bogus'`);
    }
  });

  it("--json prints JSON where a subcommand offers it (doctor, checkpoints list, auth list)", async () => {
    const dir = project();
    for (const words of [["doctor"], ["checkpoints", "list"], ["auth", "list"]]) {
      const r = await inProcess(dir, [...words, "--json"]);
      expect([words.join(" "), r.code], r.stderr).toEqual([words.join(" "), 0]);
      expect(() => JSON.parse(r.stdout), `coil ${words.join(" ")} --json: ${r.stdout.slice(0, 80)}`).not.toThrow();
    }
  });
});

describe("coil --help at 80 and 60 columns (#27.4)", () => {
  for (const columns of [80, 60]) {
    it(`no line is wider than ${columns} columns and no description breaks mid-word`, async () => {
      const r = await inProcess(project(), ["--help"], { COLUMNS: String(columns) });
      expect(r.code).toBe(0);
      const lines = r.stdout.split("\n");
      expect(lines.filter((l) => l.length > columns)).toEqual([]);
      // descriptions keep room for whole phrases (a 71-column term once left them 6 columns, breaking words)
      expect(r.stdout).toContain("replies file for the scripted provider");
      expect(r.stdout).toContain("list the models of every provider");
      expect(r.stdout).toMatch(/^ {2}fleet <command>/m);
    });
  }
});

describe("piped stdin (#27.5)", () => {
  it("is added after the prompt; alone it is the prompt; binary and oversized input are refused", async () => {
    const dir = project({ "r.yaml": "- text: ok\n- text: ok\n" });
    const args = ["--script", "r.yaml", "--mode", "json", "-p"];
    const userText = (out: string) =>
      out
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { type: string; message?: { role: string; content: unknown } })
        .find((e) => e.type === "message_end" && e.message?.role === "user")?.message?.content;
    const merged = await piped(dir, [...args, "explain"], "ERROR: disk full\n");
    expect(merged.code, merged.stderr).toBe(0);
    expect(JSON.stringify(userText(merged.stdout))).toContain("explain\\nERROR: disk full");
    const alone = await piped(dir, ["--script", "r.yaml", "--mode", "json"], "only stdin\n");
    expect(JSON.stringify(userText(alone.stdout))).toContain("only stdin");

    const binary = await piped(dir, [...args, "x"], "\u0000\u0001\u0002ELF\u0000\u0000binary");
    expect(binary.code).toBe(2);
    expect(binary.stderr).toMatch(/piped stdin is binary/);
    const big = await piped(dir, [...args, "x"], "y".repeat(10 * 1024 * 1024 + 1));
    expect(big.code).toBe(2);
    expect(big.stderr).toContain("piped stdin is over 10 MB");
  });
});

describe("--script picks the scripted provider (#27.6)", () => {
  it("runs scripted even with a provider key set; --model of another provider with it is an error", async () => {
    const dir = project({ "r.yaml": "- text: from the script\n" });
    const key = { ANTHROPIC_API_KEY: mocks.keys.anthropic, ANTHROPIC_BASE_URL: mocks.anthropic.url };
    const r = await inProcess(dir, ["--script", "r.yaml", "-p", "hi"], key);
    expect([r.code, r.stdout.trim()], r.stderr).toEqual([0, "from the script"]);
    expect(mocks.anthropic.requests).toHaveLength(0);
    const clash = await inProcess(
      dir,
      ["--script", "r.yaml", "--model", "anthropic/claude-sonnet-4-5", "-p", "hi"],
      key,
    );
    expect(clash.code).toBe(2);
    expect(clash.stderr).toContain("--script runs the scripted provider, but --model anthropic/claude-sonnet-4-5");
    const provider = await inProcess(dir, ["--script", "r.yaml", "--provider", "anthropic", "-p", "hi"], key);
    expect(provider.code).toBe(2);
    expect(provider.stderr).toContain("--provider names anthropic");
  });
});

describe("an unknown /name in print mode (#27.7)", () => {
  it("exits 2 with did-you-mean over registered commands; after -- it is a prompt", async () => {
    const dir = project({ "r.yaml": "- text: sent as text\n" });
    const r = await inProcess(dir, ["--script", "r.yaml", "-p", "/compcat"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("coil: unknown command /compcat. Did you mean: /compact");
    expect(r.stdout).toBe("");
    const literal = await inProcess(dir, ["--script", "r.yaml", "-p", "--", "/compcat"]);
    expect([literal.code, literal.stdout.trim()], literal.stderr).toEqual([0, "sent as text"]);
    // a path is not a command name
    const path = await inProcess(dir, ["--script", "r.yaml", "-p", "/usr/bin/env is missing"]);
    expect([path.code, path.stdout.trim()], path.stderr).toEqual([0, "sent as text"]);
  });
});

describe("a flag a built-in plugin would add (#27.8)", () => {
  it("coil --plan in the default preset names plan-mode and the presets that include it", async () => {
    const r = await inProcess(project(), ["--plan", "-p", "hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--plan is a flag of the built-in plugin plan-mode");
    expect(r.stderr).toContain("--plugin plan-mode");
    expect(r.stderr).toContain("--preset safe");
    expect(r.stderr).not.toContain("Did you mean --plugin");
  });
});

describe("a plugin flag that takes one of coil's own (#29.3)", () => {
  it("--yes, --trust and -p are REGISTRY_DUPLICATE naming the plugin, not commander's raw error", async () => {
    for (const flag of ['name: "yes"', 'name: "trust"', 'name: "pretty", short: "p"']) {
      const dir = project({
        "r.yaml": "- text: ok\n",
        "p.ts": `import { definePlugin } from "coil";\nexport default definePlugin({ id: "clasher", setup(ctx) { ctx.flags.register({ ${flag}, description: "d", type: "boolean" }); } });\n`,
      });
      const r = await inProcess(dir, ["--plugin", "./p.ts", "--script", "r.yaml", "-p", "hi"]);
      expect([flag, r.code]).toEqual([flag, 2]);
      expect(r.stderr).toMatch(/\[plugin clasher\] setup: REGISTRY_DUPLICATE flag -(-yes|-trust|p) .*coil's own/);
    }
  });
});

describe.skipIf(!hasTmux)("a prompt in a terminal opens the TUI with it sent (#27.1)", () => {
  let pane: Tmux | undefined;
  afterEach(() => pane?.kill());

  it('coil "prompt" on a TTY opens the interactive UI and submits the prompt; piped, it prints', async () => {
    const dir = project({ "r.yaml": "- text: THE ANSWER\n" });
    pane = new Tmux({
      dir,
      cwd: dir,
      cols: 80,
      rows: 24,
      env: { COIL_HOME: join(dir, ".home") },
      command: `${process.execPath} ${BIN} --script r.yaml "say the answer"`,
    }).start();
    const screen = await pane.waitFor("THE ANSWER", 30_000);
    expect(screen).toContain("say the answer");
    expect(screen).toContain("Enter to send");
    expect(editorText(screen)).toBe("");
    expect(screen).not.toContain("[exited");
    const piped = await coil(dir, ["--script", "r.yaml", "say the answer"]);
    expect([piped.code, piped.stdout.trim()]).toEqual([0, "THE ANSWER"]);
  }, 60_000);
});
