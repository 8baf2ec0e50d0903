/**
 * MCP servers under faults, through the built CLI (dist/bin/coil.js): an oversized or malformed message,
 * a server that exits in the middle of a call, a flood of stderr, `kill -9` of coil with servers that
 * ignore SIGTERM or leave grandchildren, a package runner still installing when start-up times out,
 * and prompts' usage errors. Servers are the official server-filesystem and a hand-written fixture
 * (test/fixtures/mcp/faulty.mjs); the model is the scripted provider.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { childEnv } from "../../support/env.js";
import { until } from "../../support/harness.js";
import { cleanTemps, processesWith, tempDir } from "../../support/tools.js";

const ROOT = packageRoot();
const BIN = join(ROOT, "dist", "bin", "coil.js");
const FILESYSTEM = join(ROOT, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");
const FAULTY = join(ROOT, "test", "fixtures", "mcp", "faulty.mjs");
const node = process.execPath;

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\``);
});
const spawned: ChildProcess[] = [];
afterEach(() => {
  for (const c of spawned.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});
afterAll(cleanTemps);

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function coil(
  cwd: string,
  args: string[],
  o: { env?: Record<string, string>; onStart?: (child: ChildProcess) => void } = {},
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(node, [BIN, ...args], {
      cwd,
      env: childEnv({ COIL_HOME: join(cwd, "home"), ...o.env }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    spawned.push(child);
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdin!.end("");
    o.onStart?.(child);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** A project whose `$COIL_HOME/mcp.json` configures `servers`, with a scripted model (`script`, YAML). */
function project(servers: Record<string, unknown>, script: string, files: Record<string, string> = {}): string {
  const dir = realpathSync(tempDir({ "s.yaml": script, ...files }, "coil-mcp-faults-"));
  mkdirSync(join(dir, "home"), { recursive: true });
  writeFileSync(join(dir, "home", "mcp.json"), JSON.stringify({ mcpServers: servers }));
  return dir;
}

const SCRIPTED = ["--provider", "scripted", "--script", "s.yaml"];

type Event = { type: string; toolName?: string; result?: { isError?: boolean; content: { text?: string }[] } };
const events = (stdout: string): Event[] =>
  stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Event);
const results = (stdout: string) =>
  events(stdout)
    .filter((e) => e.type === "tool_execution_end")
    .map((e) => ({
      tool: e.toolName!,
      isError: e.result!.isError === true,
      text: e.result!.content.map((c) => c.text ?? "").join("\n"),
    }));
/** What coil said: diagnostics in the JSON stream, and the start-up ones it printed on stderr before the run. */
const diagnostics = (r: Ran) => [
  ...events(r.stdout)
    .filter((e) => e.type === "diagnostic")
    .map((e) => String((e as { message?: string }).message)),
  ...r.stderr.split("\n").filter(Boolean),
];
const call = (name: string, args: Record<string, unknown> = {}) =>
  `- toolCalls:\n    - name: ${name}\n      arguments: ${JSON.stringify(args)}\n`;

describe("mcp: an oversized or malformed message", () => {
  it("server-filesystem reading a 12 MB file: the call is an error result, the server is marked failed, the run goes on", async () => {
    const dir = project(
      { fs: { command: node, args: [FILESYSTEM, "."] } },
      `${call("mcp__fs__read_text_file", { path: "big.txt" })}${call("mcp__fs__list_allowed_directories")}- text: the run went on\n`,
    );
    writeFileSync(join(dir, "big.txt"), `${"0123456789abcdef".repeat(64)}\n`.repeat(12 * 1024));
    const r = await coil(dir, [...SCRIPTED, "--mode", "json", "read it"]);
    expect(r.stderr).not.toMatch(/ReadBuffer|Uncaught|at .*\.js:\d+/);
    expect(r.code).toBe(0);
    const [read, next] = results(r.stdout);
    expect(read).toMatchObject({ tool: "mcp__fs__read_text_file", isError: true });
    expect(read!.text).toMatch(/more than 10 MB/);
    expect(read!.text).toMatch(/server was stopped/);
    // Marked failed: later calls say so at once, and name the way back.
    expect(next).toMatchObject({ tool: "mcp__fs__list_allowed_directories", isError: true });
    expect(next!.text).toMatch(/not connected.*more than 10 MB.*\/mcp reconnect fs/s);
    expect(r.stdout).toContain("the run went on");
    expect(diagnostics(r)).toContainEqual(expect.stringMatching(/MCP server 'fs' stopped: .*more than 10 MB/));
  }, 60_000);

  it("a reply that is not valid JSON-RPC fails that call (and stops the server); a non-JSON line on stdout is skipped with a warning", async () => {
    const markers = tempDir({}, "coil-mcp-markers-");
    const dir = project(
      { bad: { command: node, args: [FAULTY, markers] } },
      `${call("mcp__bad__noise")}${call("mcp__bad__malformed")}- text: still going\n`,
    );
    const r = await coil(dir, [...SCRIPTED, "--mode", "json", "go"]);
    expect(r.code).toBe(0);
    const [noise, malformed] = results(r.stdout);
    expect(noise).toEqual({ tool: "mcp__bad__noise", isError: false, text: "after the noise" });
    expect(malformed).toMatchObject({ tool: "mcp__bad__malformed", isError: true });
    expect(malformed!.text).toMatch(/not a valid JSON-RPC message/);
    expect(r.stdout).toContain("still going");
    expect(diagnostics(r)).toContainEqual(
      expect.stringMatching(/MCP server 'bad' printed a line that is not JSON-RPC on stdout.*Server ready!/),
    );
    expect(diagnostics(r)).toContainEqual(
      expect.stringMatching(/MCP server 'bad' stopped: .*not a valid JSON-RPC message/),
    );
  }, 30_000);
});

describe("mcp: nothing of a server survives kill -9 of coil", () => {
  it("a server that ignores SIGTERM and stdin's end, and a wrapper script's grandchild, end soon after coil is SIGKILLed", async () => {
    const markers = tempDir({}, "coil-mcp-markers-");
    const wrapper = join(markers, "wrapper.sh");
    // A wrapper like many `command`s: it starts a helper that never reads stdin, then execs the server.
    writeFileSync(
      wrapper,
      `#!/bin/sh\n${node} -e "setInterval(() => {}, 1000)" coil-mcp-helper-${basename(markers)} &\nexec ${node} ${FAULTY} ${markers} --ignore-term\n`,
    );
    chmodSync(wrapper, 0o755);
    const dir = project(
      {
        stubborn: { command: node, args: [FAULTY, markers, "--ignore-term"] },
        wrapped: { command: wrapper, args: [] },
      },
      `- toolCalls:\n    - name: mcp__stubborn__hang\n      arguments: {}\n    - name: mcp__wrapped__hang\n      arguments: {}\n- text: never\n`,
    );
    let before: string[] = [];
    await coil(dir, [...SCRIPTED, "--mode", "json", "go"], {
      onStart: (child) => {
        let out = "";
        child.stdout!.on("data", (d: Buffer) => {
          out += d.toString();
          if (out.split('"tool_execution_start"').length > 2 && !child.killed) {
            before = processesWith(basename(markers));
            child.kill("SIGKILL");
          }
        });
      },
    });
    // Both servers and the helper were running in the middle of the calls ...
    expect(before.filter((l) => l.includes("faulty.mjs"))).toHaveLength(2);
    expect(before.some((l) => l.includes("coil-mcp-helper-"))).toBe(true);
    // ... and none of them outlives coil, although SIGTERM and stdin's end do not stop them.
    await until(() => processesWith(basename(markers)).length === 0, 8000);
    expect(readFileSync(join(markers, "sigterm"), "utf8").trim().split("\n")).toHaveLength(2);
  }, 30_000);
});

describe("mcp: a server's stderr and its exit", () => {
  it("the stderr log is rotated while the server runs (bounded), and an exit during a call is reported as such", async () => {
    const markers = tempDir({}, "coil-mcp-markers-");
    const dir = project(
      { f: { command: node, args: [FAULTY, markers] } },
      `${call("mcp__f__chatter", { kb: 3072 })}${call("mcp__f__exit")}- text: done\n`,
    );
    const r = await coil(dir, [...SCRIPTED, "--mode", "json", "go"]);
    expect(r.code).toBe(0);
    const [chatter, exit] = results(r.stdout);
    expect(chatter).toEqual({ tool: "mcp__f__chatter", isError: false, text: "chattered" });
    // 3 MB went to stderr; the log and its one older copy stay near the 1 MB limit each.
    const log = join(dir, "home", "logs", "mcp", "f.log");
    expect(statSync(log).size).toBeLessThan(1.2 * 1024 * 1024);
    expect(statSync(`${log}.1`).size).toBeLessThan(1.2 * 1024 * 1024);
    expect(exit!.isError).toBe(true);
    expect(exit!.text).toMatch(/the server exited with code 5 during this call/);
    expect(exit!.text).toMatch(/exiting in the middle of a call/);
    expect(exit!.text).not.toMatch(/start-up/);
  }, 30_000);
});

describe("mcp: a package runner on a cold cache (a local simulation of a slow first npx install)", () => {
  /**
   * A fake `npx` on PATH: its first run "downloads" for `secs` seconds into its cache, then runs the
   * server. Killed mid-download, it leaves the cache half-written and every later run fails the way a
   * broken ~/.npm/_npx does; so does a warning it cannot write (SIGPIPE) once the reader of its stderr is gone.
   */
  function fakeNpx(markers: string, secs: number): { bin: string; cache: string } {
    const bin = join(markers, "bin");
    const cache = join(markers, "cache");
    mkdirSync(bin);
    mkdirSync(cache);
    writeFileSync(
      join(bin, "npx"),
      `#!/bin/sh
if [ ! -f ${cache}/installed ]; then
  if [ -f ${cache}/partial ]; then echo "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'faulty-server'" >&2; exit 1; fi
  touch ${cache}/partial
  echo "npm warn exec The following package was not found and will be installed: faulty-server" >&2
  sleep ${secs}
  echo "npm warn deprecated some-dependency@1.0.0: no longer supported" >&2
  rm ${cache}/partial
  touch ${cache}/installed
fi
exec ${node} ${FAULTY} ${markers}
`,
    );
    chmodSync(join(bin, "npx"), 0o755);
    return { bin, cache };
  }

  it("MCP_TIMEOUT is honoured; a runner still installing is not killed: it finishes, connects late with a notice, and its tools work", async () => {
    const markers = tempDir({}, "coil-mcp-markers-");
    const { bin, cache } = fakeNpx(markers, 3);
    const dir = project(
      {
        slow: { command: "npx", args: ["-y", "faulty-server"] },
        fx: {
          command: node,
          args: [join(ROOT, "test", "fixtures", "mcp", "server.mjs"), markers],
          startupTimeout: 20_000,
        },
      },
      `${call("mcp__fx__sleep", { ms: 4500 })}${call("mcp__slow__echo", { text: "late" })}- text: done\n`,
    );
    const r = await coil(dir, [...SCRIPTED, "--mode", "json", "go"], {
      env: { PATH: `${bin}:${process.env.PATH}`, MCP_TIMEOUT: "1000" },
    });
    expect(r.code).toBe(0);
    const said = diagnostics(r);
    expect(said).toContainEqual(
      expect.stringMatching(
        /'slow' did not finish start-up within 1 s \(MCP_TIMEOUT\); it may still be downloading \(npx\)/,
      ),
    );
    expect(said).toContainEqual(
      expect.stringMatching(/MCP server 'slow' connected after \d+(\.\d)? s: its 7 tools join/),
    );
    expect(results(r.stdout)[1]).toEqual({ tool: "mcp__slow__echo", isError: false, text: "echo: late" });
    expect(existsSync(join(cache, "installed"))).toBe(true);
    expect(existsSync(join(cache, "partial"))).toBe(false);
  }, 30_000);

  it("coil exiting while the runner installs leaves it to finish (the cache is whole), and it then ends by itself", async () => {
    const markers = tempDir({}, "coil-mcp-markers-");
    const { bin, cache } = fakeNpx(markers, 2);
    const dir = project({ slow: { command: "npx", args: ["-y", "faulty-server"] } }, "- text: bye\n");
    const env = { PATH: `${bin}:${process.env.PATH}`, MCP_TIMEOUT: "300" };
    const r = await coil(dir, [...SCRIPTED, "-p", "hi"], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/may still be downloading \(npx\)/);
    expect(existsSync(join(cache, "partial"))).toBe(true);
    await until(() => existsSync(join(cache, "installed")), 10_000);
    await until(() => processesWith(basename(markers)).length === 0, 10_000);
    // What it printed after coil had gone still reached its log.
    await until(() =>
      readFileSync(join(dir, "home", "logs", "mcp", "slow.log"), "utf8").includes("npm warn deprecated"),
    );
    // The next run starts it from the finished cache.
    writeFileSync(join(dir, "s.yaml"), `${call("mcp__slow__echo", { text: "warm" })}- text: done\n`);
    const warm = await coil(dir, [...SCRIPTED, "--mode", "json", "go"], { env: { ...env, MCP_TIMEOUT: "5000" } });
    expect(results(warm.stdout)[0]).toEqual({ tool: "mcp__slow__echo", isError: false, text: "echo: warm" });
  }, 40_000);

  it("coil doctor shows each server's start-up time: 60 s for a package runner, 10 s otherwise", async () => {
    const dir = project(
      { runner: { command: "npx", args: ["-y", "some-server"] }, plain: { command: node, args: [FAULTY] } },
      "",
    );
    const r = await coil(dir, ["doctor"]);
    expect(r.stdout).toMatch(
      /runner {2}stdio {2}npx -y some-server .*start-up up to 60 s \(the default for npx, a package runner\)/,
    );
    expect(r.stdout).toMatch(/plain {2}stdio .*start-up up to 10 s \(the default\)/);
    const env = await coil(dir, ["doctor"], { env: { MCP_TIMEOUT: "45000" } });
    expect(env.stdout).toMatch(/runner {2}stdio .*start-up up to 45 s \(MCP_TIMEOUT\)/);
  }, 30_000);
});

describe("mcp: prompts and resources", () => {
  it("a missing required prompt argument exits 2; a server's -32602 is said once; mcp_read_resource only with a server that has resources", async () => {
    const markers = tempDir({}, "coil-mcp-markers-");
    const preset =
      "extends: default\nprovider: scripted\nplugins:\n  - provider-scripted: { script: ./s.yaml, recordTo: ./requests.jsonl }\n";
    const dir = project({ f: { command: node, args: [FAULTY, markers] } }, "- text: hello\n- text: hello\n", {
      "preset.yaml": preset,
    });
    let r = await coil(dir, ["--preset", "./preset.yaml", "-p", "/mcp__f__greet"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\/mcp__f__greet needs who/);
    r = await coil(dir, ["--preset", "./preset.yaml", "-p", "/mcp__f__greet who=Ann tone=rude"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("MCP error -32602: Invalid arguments for prompt greet");
    expect(r.stderr).not.toMatch(/MCP error -32602: MCP error -32602/);
    r = await coil(dir, ["--preset", "./preset.yaml", "-p", "/mcp__f__greet who=Ann"]);
    expect(r.code).toBe(0);
    const tools = () =>
      readFileSync(join(dir, "requests.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { tools: { name: string; description: string }[] }).tools)
        .at(-1)!;
    expect(tools().map((t) => t.name)).toContain("mcp__f__echo");
    expect(tools().map((t) => t.name)).not.toContain("mcp_read_resource");
    // With resources, the tool is offered, naming the server that has them.
    writeFileSync(
      join(dir, "home", "mcp.json"),
      JSON.stringify({ mcpServers: { f: { command: node, args: [FAULTY, markers, "--resources"] } } }),
    );
    r = await coil(dir, ["--preset", "./preset.yaml", "-p", "hi"]);
    expect(r.code).toBe(0);
    expect(tools().find((t) => t.name === "mcp_read_resource")?.description).toMatch(/Servers: f\./);
  }, 40_000);
});
