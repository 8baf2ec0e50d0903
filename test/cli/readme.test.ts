/**
 * README shows commands and flags a user will type; each must exist in the help of the default preset
 * (flags of plugins included): a `coil <command> ... --flag` in the help of that command
 * (`coil mcp add --help`), or coil's own and the plugins' flags in `coil --help`, so the README cannot
 * drift from the code. Every help comes from the built CLI (dist/bin/coil.js), each asked once.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../boot/paths.js";
import { coil } from "../support/ecosystem.js";
import { childEnv } from "../support/env.js";

const root = packageRoot();
const home = mkdtempSync(join(tmpdir(), "coil-readme-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const env = childEnv({ COIL_HOME: home, COLUMNS: "100" });

interface Invocation {
  /** The words after `coil` before its first option (the command path is their start). */
  words: string[];
  flags: string[];
}

/** Every `coil ...` invocation in README's code (code spans and fenced blocks), and spans that are only an option. */
function invocations(markdown: string): { invocations: Invocation[]; bareFlags: string[] } {
  const fenced = [...markdown.matchAll(/```[\w-]*\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const prose = markdown.replace(/```[\w-]*\n[\s\S]*?```/g, "");
  const spans = [...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
  const found: Invocation[] = [];
  const bareFlags: string[] = [];
  const flagsOf = (text: string) =>
    [...text.matchAll(/(?<![\w-])(--[a-z][a-z-]*|-[a-zA-Z])(?![\w-])/g)].map((f) => f[1]!);
  for (const line of [...fenced.flatMap((b) => b.split("\n")), ...spans]) {
    const code = line.replace(/#.*$/, "");
    // a span that is only an option (a table's first column)
    if (/^\s*-/.test(code)) {
      bareFlags.push(...flagsOf(code));
      continue;
    }
    // every `coil ...` invocation up to a pipe or `&&`; after a lone `--` the words belong to another program
    for (const m of code.matchAll(/\bcoil((?:\s+[^|&;]*)?)/g)) {
      const part = (m[1] ?? "").split(/\s--(?:\s|$)/)[0]!;
      const unquoted = part.replace(/"[^"]*"|'[^']*'/g, " ");
      const tokens = unquoted.split(/\s+/).filter(Boolean);
      const firstOption = tokens.findIndex((t) => t.startsWith("-"));
      const words = firstOption < 0 ? tokens : tokens.slice(0, firstOption);
      found.push({ words, flags: flagsOf(unquoted) });
    }
  }
  return { invocations: found, bareFlags };
}

const ran = new Map<string, Promise<{ code: number | null; out: string; err: string }>>();
/** The built CLI with these arguments (each distinct command line runs once per file). */
function run(argv: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const key = JSON.stringify(argv);
  if (!ran.has(key))
    ran.set(
      key,
      coil(home, argv, env).then((r) => ({ code: r.code, out: r.stdout, err: r.stderr })),
    );
  return ran.get(key)!;
}

/** The command names a help text lists under "Commands:". */
function commandsIn(help: string): string[] {
  const section = /^Commands:\n([\s\S]*?)(?:\n\n|(?![\s\S]))/m.exec(help)?.[1] ?? "";
  return [...section.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]!);
}

const flagIn = (help: string, flag: string) => new RegExp(`(^|[\\s,\\[])${flag}\\b`, "m").test(help);

describe("README", () => {
  let rootHelp = "";
  const helps = new Map<string, string>();
  /** The help of `coil <path...>`: the deepest prefix of `words` that names commands. */
  const helpFor = async (words: string[]): Promise<{ path: string[]; help: string }> => {
    const path: string[] = [];
    let help = rootHelp;
    for (const word of words) {
      if (!commandsIn(help).includes(word) || word === "help") break;
      path.push(word);
      const key = path.join(" ");
      if (!helps.has(key)) {
        const r = await run([...path, "--help"]);
        expect(r.code, `coil ${key} --help`).toBe(0);
        expect(r.out).toMatch(new RegExp(`^Usage: coil ${key}\\b`));
        helps.set(key, r.out);
      }
      help = helps.get(key)!;
    }
    return { path, help };
  };

  beforeAll(async () => {
    const r = await run(["--help"]);
    expect(r.code).toBe(0);
    rootHelp = r.out;
  });

  it("every command README shows is one, and every flag is in the help of the command it follows", async () => {
    const { invocations: all, bareFlags } = invocations(readFileSync(join(root, "README.md"), "utf8"));
    // sanity: the extraction sees the README's main commands and flags
    expect(all.map((i) => i.words[0])).toEqual(expect.arrayContaining(["preset", "doctor", "install", "mcp"]));
    expect(all.flatMap((i) => i.flags)).toEqual(expect.arrayContaining(["-p", "--mode", "--preset", "--script"]));
    expect(bareFlags).toEqual(expect.arrayContaining(["--project", "--trust"]));
    const missingCommands: string[] = [];
    const missingFlags: string[] = [];
    for (const inv of all) {
      // `coil help mcp add` is the help of `coil mcp add`; `<command>` and `[command...]` are placeholders
      const words = (inv.words[0] === "help" ? inv.words.slice(1) : inv.words).filter((w) => !/^[<[]/.test(w));
      const { path, help } = await helpFor(words);
      if (words[0] && !path.length) missingCommands.push(`coil ${inv.words.join(" ")}`);
      for (const flag of inv.flags)
        if (!flagIn(help, flag) && !flagIn(rootHelp, flag)) missingFlags.push(`coil ${path.join(" ")} ${flag}`);
    }
    const everyHelp = [rootHelp, ...helps.values()].join("\n");
    for (const flag of bareFlags) if (!flagIn(everyHelp, flag)) missingFlags.push(flag);
    expect(missingCommands, "README commands coil does not have").toEqual([]);
    expect(missingFlags, "README flags missing from the help of their command").toEqual([]);
  }, 60_000);

  it("the extraction finds what it must (and would catch a flag help does not list)", () => {
    const { invocations: found, bareFlags } = invocations(
      "Run `coil doctr --bogus` or:\n\n```bash\nnode -e 0\ncoil -p --thinking high 'x' | head -1 # --not-this\ncoil mcp add x --project -- npx -y server\n```\n| `--image <file>` | x |\n",
    );
    expect(found).toEqual([
      { words: [], flags: ["-p", "--thinking"] },
      { words: ["mcp", "add", "x"], flags: ["--project"] },
      { words: ["doctr"], flags: ["--bogus"] },
    ]);
    expect(bareFlags).toEqual(["--image"]);
  });
});

describe("help everywhere", () => {
  it("every command of the default preset answers --help with its usage, exit 0; coil help <command> and -h say the same", async () => {
    const commands = commandsIn((await run(["--help"])).out).filter((c) => c !== "help");
    expect(commands).toEqual(expect.arrayContaining(["doctor", "install", "mcp", "checkpoints", "trust", "models"]));
    for (const command of commands) {
      const long = await run([command, "--help"]);
      expect(long.code, `coil ${command} --help`).toBe(0);
      expect(long.out).toMatch(new RegExp(`^Usage: coil ${command} `));
      expect(long.out).toContain("-h, --help");
    }
    for (const command of ["doctor", "mcp", "trust"]) {
      const long = await run([command, "--help"]);
      expect((await run(["help", command])).out, `coil help ${command}`).toBe(long.out);
      expect((await run([command, "-h"])).out, `coil ${command} -h`).toBe(long.out);
    }
    const nested = await run(["help", "mcp", "add"]);
    expect(nested.out).toMatch(/^Usage: coil mcp add \[options\] <name> \[command\.\.\.\]/);
    expect(nested.out).toContain("--url <url>");
  }, 120_000);
});
