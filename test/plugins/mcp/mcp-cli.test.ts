/**
 * mcp plugin through the built CLI (dist/bin/coil.js) as a child process: `coil mcp ...`, trust of
 * `.mcp.json`, print/JSON modes, the SDK loading only when a server is configured, and no server
 * process outliving coil (normal exit, SIGTERM).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { until } from "../../support/harness.js";
import { childEnv } from "../../support/env.js";
import { cleanTemps, processesWith, tempDir } from "../../support/tools.js";
import { loadedPackage } from "../../support/loads.js";

const ROOT = packageRoot();
const BIN = join(ROOT, "dist", "bin", "coil.js");
const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const FIXTURES = join(ROOT, "test", "fixtures", "mcp");
const node = process.execPath;

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\``);
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
  home: string,
  args: string[],
  o: {
    nodeArgs?: string[];
    env?: Record<string, string>;
    stdin?: string;
    onStart?: (child: ReturnType<typeof spawn>) => void;
  } = {},
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(node, [...(o.nodeArgs ?? []), BIN, ...args], {
      cwd,
      env: childEnv({ COIL_HOME: home, ...o.env }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdin.end(o.stdin ?? "");
    o.onStart?.(child);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const project = (files: Record<string, string> = {}) => realpathSync(tempDir(files, "coil-mcp-cli-"));

describe("coil mcp", () => {
  it("add (command and url), list, get and remove edit $COIL_HOME/mcp.json, or .coil/mcp.json with --project", async () => {
    const dir = project();
    const home = join(dir, "home");
    let r = await coil(dir, home, ["mcp", "add", "everything", "--env", "DEBUG=1", "--", node, EVERYTHING]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(`added MCP server 'everything' in ${join(home, "mcp.json")}\n`);
    r = await coil(dir, home, [
      "mcp",
      "add",
      "remote",
      "--url",
      "https://mcp.example.com/mcp",
      "--header",
      "Authorization: Bearer ${TOKEN}",
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(home, "mcp.json"), "utf8"))).toEqual({
      mcpServers: {
        everything: { command: node, args: [EVERYTHING], env: { DEBUG: "1" } },
        remote: { type: "http", url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer ${TOKEN}" } },
      },
    });
    r = await coil(dir, home, ["mcp", "add", "local", "--project", "--", "npx", "-y", "some-server"]);
    expect(JSON.parse(readFileSync(join(dir, ".coil", "mcp.json"), "utf8"))).toEqual({
      mcpServers: { local: { command: "npx", args: ["-y", "some-server"] } },
    });
    r = await coil(dir, home, ["--trust", "mcp", "list"]);
    expect(r.stdout).toContain(`everything  stdio  ${node} ${EVERYTHING}  (${join(home, "mcp.json")})`);
    expect(r.stdout).toContain(`remote  http  https://mcp.example.com/mcp  (${join(home, "mcp.json")})`);
    expect(r.stdout).toContain(`local  stdio  npx -y some-server  (${join(dir, ".coil", "mcp.json")})`);
    r = await coil(dir, home, ["mcp", "get", "remote"]);
    expect(JSON.parse(r.stdout)).toMatchObject({
      name: "remote",
      transport: { type: "http", headers: { Authorization: "Bearer ${TOKEN}" } },
    });
    r = await coil(dir, home, ["mcp", "remove", "remote"]);
    expect(r.stdout).toBe(`removed MCP server 'remote' from ${join(home, "mcp.json")}\n`);
    r = await coil(dir, home, ["mcp", "remove", "remote"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no MCP server named 'remote'/);
    r = await coil(dir, home, ["mcp", "add", "bad", "--url", "ftp://x"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/mcpServers\.bad\.url: must be an http:\/\/ or https:\/\/ URL/);
  });
});

describe("coil with MCP servers", () => {
  it("/mcp in print mode shows the servers; -p runs their tools; the JSON stream shows progress updates", async () => {
    const dir = project({
      "s.yaml":
        "- toolCalls:\n    - name: mcp__everything__trigger-long-running-operation\n      arguments: { duration: 0.6, steps: 3 }\n- text: done\n",
    });
    const home = join(dir, "home");
    mkdirSync(home);
    writeFileSync(
      join(home, "mcp.json"),
      JSON.stringify({ mcpServers: { everything: { command: node, args: [EVERYTHING] } } }),
    );
    const status = await coil(dir, home, ["--provider", "scripted", "--script", "s.yaml", "-p", "/mcp"]);
    expect(status.stdout).toMatch(/everything {2}connected {2}stdio {2}\d+ tools, 4 prompts/);
    const json = await coil(dir, home, ["--provider", "scripted", "--script", "s.yaml", "--mode", "json", "go"]);
    expect(json.code).toBe(0);
    const events = json.stdout
      .trim()
      .split("\n")
      .map(
        (l) =>
          JSON.parse(l) as {
            type: string;
            partial?: { content: { text: string }[] };
            result?: { content: { text: string }[] };
          },
      );
    const updates = events.filter((e) => e.type === "tool_execution_update").map((e) => e.partial!.content[0]!.text);
    // The SDK may drop the last notification when the result overtakes it.
    expect(updates.slice(0, 2)).toEqual(["progress 1/3", "progress 2/3"]);
    expect(events.find((e) => e.type === "tool_execution_end")!.result!.content[0]!.text).toMatch(
      /Long running operation completed/,
    );
  }, 30_000);

  it("RPC mode: /mcp answers, the servers' tools run, and list_commands lists the prompts", async () => {
    const dir = project({
      "s.yaml":
        "- toolCalls:\n    - name: mcp__everything__echo\n      arguments: { message: from rpc }\n- text: done\n",
    });
    const home = join(dir, "home");
    mkdirSync(home);
    writeFileSync(
      join(home, "mcp.json"),
      JSON.stringify({ mcpServers: { everything: { command: node, args: [EVERYTHING] } } }),
    );
    const lines = [
      { id: 1, type: "prompt", message: "/mcp" },
      { id: 2, type: "list_commands" },
      { id: 3, type: "prompt", message: "go" },
    ];
    const r = await coil(
      dir,
      home,
      ["--plugin", "ui-rpc", "--provider", "scripted", "--script", "s.yaml", "--mode", "rpc", "-"],
      { stdin: lines.map((l) => JSON.stringify(l)).join("\n") + "\n" },
    );
    const out = r.stdout
      .trim()
      .split("\n")
      .map(
        (l) =>
          JSON.parse(l) as {
            type: string;
            id?: number;
            data?: { output?: string; commands?: { name: string }[] };
            event?: { type: string; result?: { content: { text: string }[] } };
          },
      );
    expect(out.find((o) => o.id === 1)!.data!.output).toMatch(/everything {2}connected {2}stdio/);
    expect(out.find((o) => o.id === 2)!.data!.commands!.map((c) => c.name)).toEqual(
      expect.arrayContaining(["mcp", "mcp__everything__args-prompt"]),
    );
    const end = out.find((o) => o.type === "event" && o.event!.type === "tool_execution_end")!;
    expect(end.event!.result!.content[0]!.text).toBe("Echo: from rpc");
  }, 30_000);

  it("a run with no servers never imports the MCP SDK; a run with one does", async () => {
    const dir = project({ "s.yaml": "- text: hi\n" });
    const home = join(dir, "home");
    const loads = join(dir, "loads.txt");
    const record = ["--import", join(ROOT, "bench", "record-loads.mjs")];
    writeFileSync(loads, "");
    await coil(dir, home, ["--provider", "scripted", "--script", "s.yaml", "-p", "hi"], {
      nodeArgs: record,
      env: { COIL_BENCH_LOADS: loads },
    });
    const without = readFileSync(loads, "utf8");
    expect(without).toContain("/dist/plugins/mcp/index.js");
    expect(loadedPackage(without, "@modelcontextprotocol/sdk")).toBe(false);
    mkdirSync(home, { recursive: true });
    writeFileSync(
      join(home, "mcp.json"),
      JSON.stringify({ mcpServers: { everything: { command: node, args: [EVERYTHING] } } }),
    );
    writeFileSync(loads, "");
    await coil(dir, home, ["--provider", "scripted", "--script", "s.yaml", "-p", "hi"], {
      nodeArgs: record,
      env: { COIL_BENCH_LOADS: loads },
    });
    // The SDK is bundled into a chunk (scripts/build.mjs): that chunk is what loads.
    expect(loadedPackage(readFileSync(loads, "utf8"), "@modelcontextprotocol/sdk")).toBe(true);
  }, 30_000);

  it("an untrusted project's .mcp.json starts nothing (marker file) until the project is trusted; a change asks again", async () => {
    const dir = project({ "s.yaml": "- text: hi\n- text: again\n- text: third\n" });
    const home = join(dir, "home");
    const marker = join(dir, "started.txt");
    const config = (extra = "") =>
      JSON.stringify({ mcpServers: { m: { command: node, args: [join(FIXTURES, "marker.mjs"), marker] } }, extra });
    writeFileSync(join(dir, ".mcp.json"), config());
    let r = await coil(dir, home, ["--provider", "scripted", "--script", "s.yaml", "-p", "hi"]);
    expect(r.code).toBe(0);
    expect(existsSync(marker)).toBe(false);
    expect(r.stderr).toContain(".mcp.json");
    expect(r.stderr).toMatch(/not trusted/);
    expect((await coil(dir, home, ["trust"])).stdout).toContain(".mcp.json");
    r = await coil(dir, home, ["--provider", "scripted", "--script", "s.yaml", "-p", "hi"]);
    await until(() => existsSync(marker), 5000);
    // The trust hash covers .mcp.json: editing it revokes trust until the user trusts it again.
    const { rmSync } = await import("node:fs");
    rmSync(marker);
    writeFileSync(join(dir, ".mcp.json"), config("changed"));
    r = await coil(dir, home, ["--provider", "scripted", "--script", "s.yaml", "-p", "hi"]);
    expect(r.stderr).toMatch(/\.mcp\.json were not started: this project is not trusted/);
    expect(existsSync(marker)).toBe(false);
  }, 30_000);

  it("no server process (nor its children) is left after coil exits", async () => {
    const dir = project({
      "s.yaml": "- toolCalls:\n    - name: mcp__fx__sleep\n      arguments: { ms: 10 }\n- text: done\n",
    });
    const markers = tempDir({}, "coil-mcp-markers-");
    const home = join(dir, "home");
    mkdirSync(home);
    writeFileSync(
      join(home, "mcp.json"),
      JSON.stringify({
        mcpServers: { fx: { command: node, args: [join(FIXTURES, "server.mjs"), markers, "--grandchild"] } },
      }),
    );
    const r = await coil(dir, home, ["--provider", "scripted", "--script", "s.yaml", "-p", "go"]);
    expect(r.stdout).toContain("done");
    expect(readdirSync(markers).some((f) => f.startsWith("started-"))).toBe(true);
    expect(readFileSync(join(markers, "grandchild.pid"), "utf8")).toMatch(/^\d+$/);
    await until(() => processesWith(basename(markers)).length === 0, 3000);
  }, 30_000);

  it("nor after coil is killed with SIGTERM in the middle of a call", async () => {
    const dir = project({
      "s.yaml": "- toolCalls:\n    - name: mcp__fx__wait_for_cancel\n      arguments: {}\n- text: done\n",
    });
    const markers = tempDir({}, "coil-mcp-markers-");
    const home = join(dir, "home");
    mkdirSync(home);
    writeFileSync(
      join(home, "mcp.json"),
      JSON.stringify({
        mcpServers: { fx: { command: node, args: [join(FIXTURES, "server.mjs"), markers, "--grandchild"] } },
      }),
    );
    let aliveAtKill: string[] = [];
    const r = await coil(dir, home, ["--provider", "scripted", "--script", "s.yaml", "--mode", "json", "go"], {
      onStart: (child) => {
        let out = "";
        child.stdout!.on("data", (d: Buffer) => {
          out += d.toString();
          if (out.includes('"tool_execution_update"') && !child.killed) {
            aliveAtKill = processesWith(basename(markers));
            child.kill("SIGTERM");
          }
        });
      },
    });
    // Print/JSON mode turns SIGTERM into an abort and exits 1; either way coil ends.
    expect([r.code, r.signal]).toEqual([1, null]);
    expect(r.stdout).toContain('"stopReason":"aborted"');
    // The server and its grandchild were running when coil was killed ...
    expect(aliveAtKill.some((l) => l.includes("server.mjs"))).toBe(true);
    expect(aliveAtKill.some((l) => l.includes("coil-mcp-grandchild-"))).toBe(true);
    // ... and neither outlives it.
    await until(() => processesWith(basename(markers)).length === 0, 3000);
  }, 30_000);
});
