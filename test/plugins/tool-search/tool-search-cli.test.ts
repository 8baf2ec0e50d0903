/**
 * Deferred tools and the skills index through the built CLI, against the Anthropic mock (the requests
 * as the provider puts them on the wire) with real MCP servers from npm (server-everything,
 * server-memory, server-filesystem): the first request leaves MCP tools out behind tool_search, a
 * search loads what it finds into the next request, tools used stay loaded when the session is
 * continued, `/cost` names the search as the cause of the tools change, pins and `alwaysLoad` keep tools
 * in, plan mode and a sub-agent's tool list narrow what can be found, and 130 skills all have their
 * name in a bounded index that the same search reaches.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { childEnv } from "../../support/env.js";
import { reply, startMockAnthropic, text, type MockAnthropic, type Step } from "../../support/mock-anthropic.js";
import { cleanTemps, tempDir } from "../../support/tools.js";

const ROOT = packageRoot();
const BIN = join(ROOT, "dist", "bin", "coil.js");
const MCP = join(ROOT, "node_modules", "@modelcontextprotocol");
const SERVERS: Record<string, string[]> = {
  everything: [join(MCP, "server-everything", "dist", "index.js")],
  memory: [join(MCP, "server-memory", "dist", "index.js")],
  filesystem: [join(MCP, "server-filesystem", "dist", "index.js"), "."],
};
const KEY = "sk-ant-test-tool-search-0123";

let mock: MockAnthropic;
beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\``);
  mock = await startMockAnthropic({ key: KEY });
});
afterEach(() => mock.clear());
afterAll(async () => {
  await mock.close();
  cleanTemps();
});

type Body = Record<string, any>;
interface Setup {
  cwd: string;
  home: string;
}

/** A project folder and COIL_HOME with the given MCP servers (extra keys per server) and preset. */
function setup(servers: Record<string, Record<string, unknown>>, preset?: string): Setup {
  const cwd = realpathSync(tempDir({}, "coil-tool-search-"));
  const home = join(cwd, ".home");
  mkdirSync(home);
  const mcpServers = Object.fromEntries(
    Object.entries(servers).map(([name, extra]) => [
      name,
      { command: process.execPath, args: SERVERS[name]!.map((a) => (a === "." ? cwd : a)), ...extra },
    ]),
  );
  writeFileSync(join(home, "mcp.json"), JSON.stringify({ mcpServers }));
  if (preset) writeFileSync(join(cwd, "preset.yaml"), `extends: default\nplugins:\n${preset}`);
  return { cwd, home };
}

function coil(s: Setup, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const preset = existsSync(join(s.cwd, "preset.yaml")) ? ["--preset", "./preset.yaml"] : [];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "--model", "anthropic/claude-sonnet-4-5", ...preset, ...args], {
      cwd: s.cwd,
      env: childEnv({
        COIL_HOME: s.home,
        HOME: s.home,
        ANTHROPIC_API_KEY: KEY,
        ANTHROPIC_BASE_URL: mock.url,
        MEMORY_FILE_PATH: join(s.cwd, "memory.jsonl"),
        ENABLE_TOOL_SEARCH: "",
      }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A step that keeps the request body it answers. */
const seen =
  (into: Body[], then: Step): Step =>
  (body) => {
    into.push(body);
    return then;
  };
const names = (body: Body): string[] => (body.tools ?? []).map((t: { name: string }) => t.name);
const bytes = (body: Body) =>
  (body.system ?? []).reduce((n: number, b: { text: string }) => n + Buffer.byteLength(b.text), 0) +
  (body.tools ?? []).reduce((n: number, t: unknown) => n + Buffer.byteLength(JSON.stringify(t)), 0);
const toolResults = (body: Body) =>
  body.messages
    .flatMap((m: Body) => (Array.isArray(m.content) ? m.content : []))
    .filter((b: Body) => b.type === "tool_result");
const resultText = (r: Body): string =>
  typeof r.content === "string" ? r.content : r.content.map((c: Body) => c.text ?? "").join("");
const call = (id: string, name: string, input: unknown) => reply([{ tool: { id, name, input } }], { stop: "tool_use" });

describe("deferred tools with real MCP servers", () => {
  it("defers MCP tools past the threshold, a search loads create_entities for the next request, it stays loaded on -c, and /cost names the cause", async () => {
    const s = setup({ everything: {}, memory: {}, filesystem: {} }, "  - tool-search: { thresholdBytes: 10000 }\n");
    const bodies: Body[] = [];
    mock.push(
      seen(bodies, call("toolu_s", "tool_search", { query: "memory create entities" })),
      seen(
        bodies,
        call("toolu_c", "mcp__memory__create_entities", {
          entities: [{ name: "coil", entityType: "project", observations: ["a coding agent"] }],
        }),
      ),
      seen(bodies, text("remembered")),
    );
    const r = await coil(s, ["-p", "remember that coil is a coding agent"]);
    expect(r.stderr).not.toContain("MaxListenersExceededWarning");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("remembered");
    expect(bodies).toHaveLength(3);

    // Request 1: no MCP definitions, the search tool naming what waits behind it; small.
    const first = bodies[0]!;
    expect(names(first)).toContain("tool_search");
    expect(names(first).filter((n) => n.startsWith("mcp__"))).toEqual([]);
    expect(bytes(first)).toBeLessThanOrEqual(12 * 1024);
    const search = first.tools.find((t: { name: string }) => t.name === "tool_search");
    expect(search.description).toMatch(/memory: create_entities, create_relations/);
    expect(search.description).toMatch(/everything: echo/);

    // Request 2: the search's matches in full, create_entities among them; the others still deferred.
    const second = bodies[1]!;
    const loaded = names(second).filter((n) => n.startsWith("mcp__"));
    expect(loaded).toContain("mcp__memory__create_entities");
    expect(loaded.length).toBeLessThanOrEqual(5);
    expect(names(second)).not.toContain("mcp__filesystem__write_file");
    const schema = second.tools.find((t: { name: string }) => t.name === "mcp__memory__create_entities");
    expect(schema.input_schema.properties.entities).toBeDefined();
    expect(resultText(toolResults(second).at(-1)!)).toMatch(/Loaded \d tools?: call/);

    // Request 3: the call worked against the real server.
    const done = toolResults(bodies[2]!).at(-1)!;
    expect(done.is_error).toBeFalsy();
    expect(readFileSync(join(s.cwd, "memory.jsonl"), "utf8")).toContain('"name":"coil"');

    // Continued: what was used is loaded from the first request on (from the session), the rest waits ...
    const again: Body[] = [];
    mock.push(seen(again, text("still here")));
    const c = await coil(s, ["-c", "-p", "and now?"]);
    expect(c.code).toBe(0);
    expect(names(again[0]!)).toContain("mcp__memory__create_entities");
    expect(names(again[0]!)).toContain("tool_search");
    // ... with the others the search loaded before (the same tools as request 2: no cache miss), not more.
    expect(names(again[0]!).filter((n) => n.startsWith("mcp__"))).toEqual(loaded);

    // /tools before a request: the first request decides, and the MCP tools that will join it.
    const tools = await coil(s, ["-c", "-p", "/tools"]);
    expect(tools.stdout).toContain("tool search: off (auto) — no request yet");
    expect(tools.stdout).toMatch(/the first request decides: \d+ MCP tools join the tool list then — .*memory \(9\)/);

    // /cost: the tools change of request 2 is put down to the search.
    const cost = await coil(s, ["-c", "-p", "/cost"]);
    expect(cost.code).toBe(0);
    expect(cost.stdout).toMatch(/tools changed \(tool_search loaded mcp__memory__create_entities/);
  }, 90_000);

  it("below the threshold nothing is deferred and tool_search is not offered", async () => {
    const s = setup({ memory: {} });
    const bodies: Body[] = [];
    mock.push(seen(bodies, text("ok")));
    const r = await coil(s, ["--no-session", "-p", "hi"]);
    expect(r.code).toBe(0);
    expect(names(bodies[0]!)).toContain("mcp__memory__create_entities");
    expect(names(bodies[0]!).filter((n) => n.startsWith("mcp__memory__"))).toHaveLength(9);
    expect(names(bodies[0]!)).not.toContain("tool_search");
  }, 60_000);

  it("a pinned tool and an alwaysLoad server are sent in full; a regular expression loads what it matches", async () => {
    const s = setup(
      { everything: {}, memory: {}, filesystem: { alwaysLoad: true } },
      "  - tool-search: { mode: always, pin: [mcp__memory__read_graph] }\n",
    );
    const bodies: Body[] = [];
    mock.push(
      seen(bodies, call("toolu_p", "tool_search", { pattern: "^mcp__everything__get-(sum|env)$" })),
      seen(bodies, text("found")),
    );
    const r = await coil(s, ["--no-session", "-p", "find"]);
    expect(r.code).toBe(0);
    const first = names(bodies[0]!);
    expect(first).toContain("mcp__memory__read_graph");
    expect(first).not.toContain("mcp__memory__create_entities");
    expect(first.filter((n) => n.startsWith("mcp__filesystem__")).length).toBeGreaterThan(5);
    expect(first.filter((n) => n.startsWith("mcp__everything__"))).toEqual([]);
    const second = names(bodies[1]!);
    expect(second.filter((n) => n.startsWith("mcp__everything__")).sort()).toEqual([
      "mcp__everything__get-env",
      "mcp__everything__get-sum",
    ]);
  }, 60_000);

  it("plan mode: a search finds only read-only tools and says what it left out", async () => {
    const s = setup({ memory: {} }, "  - tool-search: { mode: always }\n");
    writeFileSync(join(s.cwd, "preset.yaml"), "extends: safe\nplugins:\n  - tool-search: { mode: always }\n");
    const bodies: Body[] = [];
    mock.push(
      seen(bodies, call("toolu_q", "tool_search", { query: "entities nodes graph" })),
      seen(bodies, text("planned")),
    );
    const r = await coil(s, ["--no-session", "--plan", "-p", "plan it"]);
    expect(r.code).toBe(0);
    expect(names(bodies[0]!)).toContain("tool_search");
    const loaded = names(bodies[1]!).filter((n) => n.startsWith("mcp__"));
    expect(loaded.length).toBeGreaterThan(0);
    expect(loaded.every((n) => ["read_graph", "search_nodes", "open_nodes"].includes(n.slice(13)))).toBe(true);
    expect(resultText(toolResults(bodies[1]!).at(-1)!)).toMatch(/more tools? match.* not available here \(plan mode/);
  }, 60_000);

  it("a command's allowed-tools: a search finds only the tools it allows and says that others match", async () => {
    const s = setup({ memory: {} }, "  - tool-search: { mode: always }\n");
    mkdirSync(join(s.home, "prompt-templates"));
    writeFileSync(
      join(s.home, "prompt-templates", "recall.md"),
      "---\ndescription: Look something up in memory\nallowed-tools: tool_search, mcp__memory__read_graph, mcp__memory__search_nodes\n---\nRecall $ARGUMENTS\n",
    );
    const bodies: Body[] = [];
    mock.push(
      seen(bodies, call("toolu_r", "tool_search", { query: "entities nodes graph" })),
      seen(bodies, text("recalled")),
    );
    const r = await coil(s, ["--no-session", "-p", "/recall coil"]);
    expect(r.code).toBe(0);
    expect(names(bodies[0]!)).toEqual(["tool_search"]);
    expect(names(bodies[1]!).sort()).toEqual(["mcp__memory__read_graph", "mcp__memory__search_nodes", "tool_search"]);
    expect(resultText(toolResults(bodies[1]!).at(-1)!)).toMatch(/more tools match that are not available here/);
  }, 60_000);

  it("a sub-agent whose type lists an MCP tool gets it in full, and no search tool", async () => {
    const s = setup({ everything: {}, memory: {}, filesystem: {} }, "  - tool-search: { mode: always }\n");
    mkdirSync(join(s.home, "agents"));
    writeFileSync(
      join(s.home, "agents", "memo.md"),
      "---\nname: memo\ndescription: Writes to the memory graph\ntools: read, mcp__memory__create_entities\n---\nYou write memories.\n",
    );
    const bodies: Body[] = [];
    mock.push(
      seen(bodies, call("toolu_t", "task", { description: "remember", prompt: "remember coil", agent: "memo" })),
      seen(bodies, text("child done")),
      seen(bodies, text("parent done")),
    );
    const r = await coil(s, ["--no-session", "-p", "delegate"]);
    expect(r.code).toBe(0);
    expect(names(bodies[0]!)).toContain("tool_search");
    expect(names(bodies[0]!).filter((n) => n.startsWith("mcp__"))).toEqual([]);
    expect(names(bodies[1]!).sort()).toEqual(["mcp__memory__create_entities", "read"]);
  }, 60_000);
});

describe("the skills index at scale", () => {
  it("130 skills: every name is in an index of at most 10 KB, and tool_search gives a skill's full description", async () => {
    const s = setup({});
    const skills = join(s.home, "skills");
    for (let i = 0; i < 130; i++) {
      const name = `skill-${String(i).padStart(3, "0")}`;
      mkdirSync(join(skills, name), { recursive: true });
      const description = `Use for task number ${i} of the corpus. ${"It explains the setup, the checks and the pitfalls at length. ".repeat(4)}${i === 77 ? "Handles zebra migrations." : ""}`;
      writeFileSync(join(skills, name, "SKILL.md"), `---\nname: ${name}\ndescription: ${description}\n---\n\nSteps.\n`);
    }
    const bodies: Body[] = [];
    mock.push(seen(bodies, call("toolu_k", "tool_search", { query: "zebra migrations" })), seen(bodies, text("ok")));
    const r = await coil(s, ["--no-session", "-p", "hi"]);
    expect(r.code).toBe(0);
    const system: string = bodies[0]!.system.map((b: { text: string }) => b.text).join("\n\n");
    const start = system.indexOf("Skills are folders");
    expect(start).toBeGreaterThanOrEqual(0);
    const index = system.slice(start).split(/\n\n(?=Project instructions|Current date|Working directory)/)[0]!;
    for (let i = 0; i < 130; i++) expect(index).toContain(`skill-${String(i).padStart(3, "0")}`);
    expect(Buffer.byteLength(index)).toBeLessThanOrEqual(10 * 1024);
    expect(index).not.toMatch(/more skills? (is|are) installed but not listed/);
    expect(index).toContain("tool_search");
    expect(names(bodies[0]!)).toContain("tool_search");
    const found = resultText(toolResults(bodies[1]!).at(-1)!);
    expect(found).toContain("skill-077: Use for task number 77");
    expect(found).toContain("Handles zebra migrations.");
    expect(found).toContain(join(skills, "skill-077", "SKILL.md"));
  }, 60_000);
});
