/**
 * README shows commands and flags a user will type; each must exist in `coil --help` of the default
 * preset (flags of plugins and subcommand usage included), so the README cannot drift from the code.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { packageRoot } from "../../boot/paths.js";

const root = packageRoot();
const home = mkdtempSync(join(tmpdir(), "coil-readme-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** Commands (`coil <word>`) and flags written in README's code: code spans and fenced blocks. */
function documented(markdown: string): { commands: Set<string>; flags: Set<string> } {
  const fenced = [...markdown.matchAll(/```[\w-]*\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const prose = markdown.replace(/```[\w-]*\n[\s\S]*?```/g, "");
  const spans = [...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
  const commands = new Set<string>();
  const flags = new Set<string>();
  for (const line of [...fenced.flatMap((b) => b.split("\n")), ...spans]) {
    const code = line.replace(/#.*$/, "");
    // a span that is only an option (a table's first column) and every `coil ...` invocation up to a pipe or `&&`
    const parts = /^\s*-/.test(code) ? [code] : [...code.matchAll(/\bcoil((?:\s+[^|&;]*)?)/g)].map((m) => m[1] ?? "");
    // after a lone `--` the words belong to another program (`coil mcp add x -- npx -y ...`)
    for (const part of parts.map((p) => p.split(/\s--(?:\s|$)/)[0]!)) {
      for (const f of part.matchAll(/(?<![\w-])(--[a-z][a-z-]*|-[a-zA-Z])(?![\w-])/g)) flags.add(f[1]!);
    }
    for (const m of code.matchAll(/\bcoil\s+([a-z][a-z-]+)\b/g)) commands.add(m[1]!);
  }
  return { commands, flags };
}

it("every command and flag README shows is in coil --help", () => {
  const r = spawnSync(process.execPath, [join(root, "dist", "bin", "coil.js"), "--help"], {
    cwd: home,
    env: { ...process.env, COIL_HOME: home },
    encoding: "utf8",
  });
  expect(r.status).toBe(0);
  const help = r.stdout;
  const { commands, flags } = documented(readFileSync(join(root, "README.md"), "utf8"));
  // sanity: the extraction sees the README's main commands and flags
  expect([...commands]).toEqual(expect.arrayContaining(["preset", "doctor"]));
  expect([...flags]).toEqual(expect.arrayContaining(["-p", "--mode", "--preset", "--trust"]));
  const listed = (c: string) => new RegExp(`^\\s+${c}\\b`, "m").test(help);
  expect(
    [...commands].filter((c) => !listed(c)),
    "README commands missing from coil --help",
  ).toEqual([]);
  expect(
    [...flags].filter((f) => !new RegExp(`(^|[\\s,\\[])${f}\\b`, "m").test(help)),
    "README flags missing from coil --help",
  ).toEqual([]);
});

it("the extraction finds what it must (and would catch a flag help does not list)", () => {
  const { commands, flags } = documented(
    "Run `coil doctr --bogus` or:\n\n```bash\nnode -e 0\ncoil -p --thinking high 'x' | head -1 # --not-this\ncoil mcp add x -- npx -y server\n```\n| `--image <file>` | x |\n",
  );
  expect([...commands].sort()).toEqual(["doctr", "mcp"]);
  expect([...flags].sort()).toEqual(["--bogus", "--image", "--thinking", "-p"]);
});
