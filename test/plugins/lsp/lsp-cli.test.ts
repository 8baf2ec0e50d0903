/**
 * lsp through the built CLI (dist/bin/coil.js) on the default preset: the server found in a trusted project's
 * node_modules/.bin, an edit's diagnostics in the JSON event stream, and no server process left after
 * coil exits or is killed with SIGKILL (the reaper ends the group). One server per test.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv } from "../../support/env.js";
import { until } from "../../support/harness.js";
import { cleanTemps, tempDir } from "../../support/tools.js";
import { BIN as DEV_BIN, groupMembers, ROOT } from "./lsp-support.js";

const COIL = join(ROOT, "dist", "bin", "coil.js");
const node = process.execPath;

beforeAll(() => {
  if (!existsSync(COIL)) throw new Error(`${COIL} is missing: run \`npm run build\``);
});
afterAll(cleanTemps);

/** Process groups of the servers started from `dir`'s node_modules/.bin (a server may change its working directory). */
function serverGroups(dir: string): number[] {
  const groups = new Set<number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(join(dir, "node_modules", ".bin"))) continue;
      const fields = readFileSync(`/proc/${entry}/stat`, "utf8")
        .replace(/\(.*\)/, "x")
        .split(" ");
      groups.add(Number(fields[4]));
    } catch {
      // gone meanwhile
    }
  }
  return [...groups];
}

function project(files: Record<string, string>, bins: string[], preset: string) {
  const dir = realpathSync(tempDir(files, "coil-lsp-cli-"));
  mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
  for (const b of bins) symlinkSync(join(DEV_BIN, b), join(dir, "node_modules", ".bin", b));
  const home = join(dir, ".home");
  mkdirSync(home);
  writeFileSync(join(home, "preset.yaml"), preset);
  return { dir, home };
}

function run(dir: string, home: string, args: string[], onOutput?: (out: string, kill: () => void) => void) {
  return new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(node, [COIL, ...args], { cwd: dir, env: childEnv({ COIL_HOME: home }), stdio: "pipe" });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      onOutput?.(stdout, () => child.kill("SIGKILL"));
    });
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdin.end();
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** The result of the first `tool_execution_end` of `tool` in a JSON event stream. */
function resultOf(stdout: string, tool: string): { content: { text: string }[]; details?: any } | undefined {
  for (const line of stdout.split("\n")) {
    if (!line.includes('"tool_execution_end"')) continue;
    const e = JSON.parse(line) as { toolName: string; result: { content: { text: string }[]; details?: any } };
    if (e.toolName === tool) return e.result;
  }
  return undefined;
}

const TSCONFIG = JSON.stringify({ compilerOptions: { strict: true, noEmit: true, types: [], lib: ["es2022"] } });

describe("lsp in coil -p", () => {
  it("finds typescript-language-server in node_modules/.bin, reports the edit's error (pushed diagnostics), and leaves no server behind", async () => {
    const { dir, home } = project(
      {
        "tsconfig.json": TSCONFIG,
        "src/b.ts": "export const total: number = 1 + 2;\n",
        "s.yaml": [
          "- toolCalls: [{ name: read, arguments: { path: src/b.ts } }]",
          "- toolCalls: [{ name: lsp, arguments: { action: diagnostics, path: src/b.ts } }]",
          '- toolCalls: [{ name: edit, arguments: { path: src/b.ts, edits: [{ oldText: "total: number", newText: "total: string" }] } }]',
          "- text: done",
          "",
        ].join("\n"),
      },
      ["typescript-language-server"],
      // Pushed diagnostics (the way for servers with neither pull nor tsserver requests), waited for generously.
      "plugins:\n  - lsp: { wait: 30000, toolTimeout: 60000, servers: { typescript: { diagnostics: push } } }\n",
    );
    let groups: number[] = [];
    let members: number[] = [];
    // The project's node_modules/.bin is searched only in a trusted project (a project with nothing to load is not).
    const args = ["--trust", "--provider", "scripted", "--script", "s.yaml", "--mode", "json", "go"];
    const r = await run(dir, home, args, (out) => {
      if (members.length || !resultOf(out, "edit")) return;
      groups = serverGroups(dir);
      members = groups.flatMap(groupMembers);
    });
    expect(r.code).toBe(0);
    expect(resultOf(r.stdout, "lsp")?.content[0]?.text).toBe("No errors or warnings in src/b.ts.");
    const edit = resultOf(r.stdout, "edit")!;
    expect(edit.content.map((c) => c.text).join("\n")).toContain(
      "src/b.ts:1:14 error Type 'number' is not assignable to type 'string'. [TS2322]",
    );
    expect(edit.details.diagnostics.items).toHaveLength(1);
    // typescript-language-server and its tsserver ran in one group while coil did; none is left.
    expect(groups).toHaveLength(1);
    expect(members.length).toBeGreaterThanOrEqual(2);
    await until(() => groups.flatMap(groupMembers).length === 0, 5000);
  }, 90_000);

  it("pyright (pull diagnostics) does not outlive coil killed with SIGKILL", async () => {
    const { dir, home } = project(
      {
        "pyproject.toml": "[project]\nname = 'demo'\nversion = '0.1.0'\n",
        "u.py": "total: int = 1 + 2\n",
        "s.yaml": [
          "- toolCalls: [{ name: read, arguments: { path: u.py } }]",
          '- toolCalls: [{ name: edit, arguments: { path: u.py, edits: [{ oldText: "total: int", newText: "total: str" }] } }]',
          "- toolCalls: [{ name: bash, arguments: { command: 'sleep 60' } }]",
          "- text: done",
          "",
        ].join("\n"),
      },
      ["pyright-langserver"],
      "",
    );
    // A server with a child that ignores its stdin closing (as wrappers' children do): only the group's end stops it.
    const script = `sleep 300 & exec ${join(dir, "node_modules", ".bin", "pyright-langserver")} --stdio`;
    writeFileSync(
      join(home, "preset.yaml"),
      `plugins:\n  - lsp:\n      wait: 40000\n      servers:\n        python: { diagnostics: pull, command: bash, args: ["-c", ${JSON.stringify(script)}] }\n`,
    );
    let groups: number[] = [];
    let alive: number[] = [];
    let edit: ReturnType<typeof resultOf>;
    const r = await run(
      dir,
      home,
      ["--provider", "scripted", "--script", "s.yaml", "--mode", "json", "go"],
      (out, kill) => {
        if (alive.length || !out.includes('"toolName":"bash"')) return;
        edit = resultOf(out, "edit");
        groups = serverGroups(dir);
        alive = groups.flatMap(groupMembers);
        kill();
      },
    );
    expect(r.signal).toBe("SIGKILL");
    expect(edit!.content.map((c) => c.text).join("\n")).toMatch(
      /u\.py:1:14 error Type "Literal\[3\]" is not assignable to declared type "str"/,
    );
    // The server and its child were running when coil died ...
    expect(alive.length).toBeGreaterThanOrEqual(2);
    // ... and its process group is ended by the reaper.
    await until(() => groups.flatMap(groupMembers).length === 0, 8000);
  }, 90_000);
});
