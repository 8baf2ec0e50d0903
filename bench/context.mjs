// Context economy at scale (issue #30): bytes of system prompt + tool definitions a request carries, as
// the Anthropic provider puts them on the wire, with 0, 2 and 6 real MCP servers from npm and with 20
// and 130 installed skills; whether a scripted model that searches and then calls
// mcp__memory__create_entities succeeds in two requests; and MaxListenersExceededWarning after 200 MCP
// calls in one run. Runs the built CLI against the Anthropic mock (test/support/mock-anthropic.ts).
// Figures next to their goals, not assertions.   node bench/context.mjs   (after `npm run build`)
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const bin = join(root, "dist", "bin", "coil.js");
if (!existsSync(bin)) throw new Error("run `npm run build` first (npm run bench does)");
const nm = join(root, "node_modules");
const SERVERS = {
  everything: [join(nm, "@modelcontextprotocol", "server-everything", "dist", "index.js")],
  filesystem: [join(nm, "@modelcontextprotocol", "server-filesystem", "dist", "index.js"), "."],
  memory: [join(nm, "@modelcontextprotocol", "server-memory", "dist", "index.js")],
  thinking: [join(nm, "@modelcontextprotocol", "server-sequential-thinking", "dist", "index.js")],
  github: [join(nm, "@modelcontextprotocol", "server-github", "dist", "index.js")],
  notion: [join(nm, "@notionhq", "notion-mcp-server", "bin", "cli.mjs")],
};
const missing = Object.entries(SERVERS).filter(([, [file]]) => !existsSync(file));
if (missing.length) {
  console.log(
    `## Context economy\n\nskipped: MCP servers not installed (devDependencies): ${missing.map(([n]) => n).join(", ")}`,
  );
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), "coil-bench-context-"));
const KEY = "sk-ant-bench-0123456789";
const mockFile = join(work, "mock-anthropic.mjs");
await build({
  entryPoints: [join(root, "test", "support", "mock-anthropic.ts")],
  outfile: mockFile,
  bundle: true,
  format: "esm",
  platform: "node",
  logLevel: "warning",
});
const { startMockAnthropic, text, reply } = await import(pathToFileURL(mockFile).href);
const mock = await startMockAnthropic({ key: KEY });
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(ANTHROPIC_|OPENAI_|COIL_)/.test(k)));
Object.assign(baseEnv, {
  ANTHROPIC_API_KEY: KEY,
  ANTHROPIC_BASE_URL: mock.url,
  MEMORY_FILE_PATH: join(work, "memory.jsonl"),
});
const MODEL = ["--model", "anthropic/claude-sonnet-5-5", "--no-session"];
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
const verdict = (ok) => (ok ? "met" : "**not met**");

function run(cwd, home, args) {
  return new Promise((resolve, reject) => {
    // No stdin: an open pipe is a print run's input, and coil -p would wait for its end.
    const child = spawn(process.execPath, [bin, ...MODEL, ...args], {
      cwd,
      env: { ...baseEnv, COIL_HOME: home },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) =>
      code === 0 ? resolve({ out, err }) : reject(new Error(`coil ${args.join(" ")} exited ${code}: ${err}`)),
    );
  });
}

/** Bytes of the system blocks' text and of the tool definitions (each as its JSON), as sent. */
function sizes(body) {
  const system = (body.system ?? []).reduce((n, b) => n + Buffer.byteLength(b.text), 0);
  const tools = (body.tools ?? []).reduce((n, t) => n + Buffer.byteLength(JSON.stringify(t)), 0);
  return { system, tools, total: system + tools, count: (body.tools ?? []).length };
}
const lastToolResult = (body) =>
  body.messages
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b) => b.type === "tool_result")
    .at(-1);
const resultText = (r) => (typeof r.content === "string" ? r.content : r.content.map((c) => c.text ?? "").join(""));

/**
 * The scripted model: it wants mcp__memory__create_entities. It calls it when its schema is in `tools`,
 * searches for it with the search tool when that is offered, and otherwise gives up.
 */
function model(trace) {
  let n = 0;
  const step = (body) => {
    n++;
    const names = (body.tools ?? []).map((t) => t.name);
    const last = lastToolResult(body);
    if (last && trace.called && !trace.done) {
      trace.done = true;
      trace.ok = !last.is_error;
      trace.result = resultText(last).slice(0, 120);
      return text("done");
    }
    if (names.includes("mcp__memory__create_entities")) {
      trace.called = n;
      return reply([
        {
          tool: {
            id: `toolu_create_${n}`,
            name: "mcp__memory__create_entities",
            input: { entities: [{ name: "coil", entityType: "project", observations: ["a coding agent"] }] },
          },
        },
      ]);
    }
    if (names.includes("tool_search") && !trace.searched) {
      trace.searched = n;
      return reply([
        { tool: { id: `toolu_search_${n}`, name: "tool_search", input: { query: "memory create entities" } } },
      ]);
    }
    return text("no memory tool available");
  };
  return step;
}

async function scenario(label, servers, preset) {
  const cwd = join(work, label.replace(/\W+/g, "-"));
  const home = join(cwd, ".home");
  mkdirSync(home, { recursive: true });
  writeFileSync(join(cwd, "notes.txt"), "some notes\n");
  const mcpServers = Object.fromEntries(
    servers.map((s) => [s, { command: process.execPath, args: SERVERS[s].map((a) => (a === "." ? cwd : a)) }]),
  );
  writeFileSync(join(home, "mcp.json"), JSON.stringify({ mcpServers }));
  const args = [];
  if (preset) {
    writeFileSync(join(cwd, "preset.yaml"), preset);
    args.push("--preset", "./preset.yaml");
  }
  const trace = {};
  const step = model(trace);
  const seen = mock.requests.length;
  for (let i = 0; i < 4; i++) mock.push(step);
  await run(cwd, home, [...args, "-p", "remember that coil is a coding agent"]);
  mock.clear();
  const requests = mock.requests.slice(seen).map((r) => r.body);
  const first = sizes(requests[0]);
  const after = trace.searched ? sizes(requests[trace.searched]) : undefined;
  return { label, servers: servers.length, first, after, trace, requests: requests.length };
}

// ───────────────────────── MCP servers ─────────────────────────
const rows = [];
rows.push(await scenario("0 servers", []));
rows.push(await scenario("2 servers (everything, filesystem)", ["everything", "filesystem"]));
const hasToolSearch = existsSync(join(root, "dist", "plugins", "tool-search", "index.js"));
if (hasToolSearch)
  rows.push(
    await scenario(
      "2 servers, tool search always on",
      ["everything", "filesystem"],
      "extends: default\nplugins:\n  - tool-search: { mode: always }\n",
    ),
  );
rows.push(await scenario("6 servers (+ memory, sequential-thinking, github, notion)", Object.keys(SERVERS)));
if (hasToolSearch)
  rows.push(
    await scenario(
      "6 servers, tool search off",
      Object.keys(SERVERS),
      "extends: default\nplugins:\n  - tool-search: { mode: never }\n",
    ),
  );

console.log("## Context economy: system prompt + tools per request (Anthropic wire format)\n");
console.log(
  "| MCP servers | tools on the 1st request | 1st request: system + tools | after a search | create_entities |",
);
console.log("|---|---:|---:|---:|---|");
for (const r of rows) {
  const outcome = r.trace.called
    ? `${r.trace.ok ? "succeeded" : "failed"}, called in request ${r.trace.called}`
    : "not available";
  console.log(
    `| ${r.label} | ${r.first.count} | ${kb(r.first.total)} (system ${kb(r.first.system)} + tools ${kb(r.first.tools)}) | ${r.after ? `${kb(r.after.total)} (${r.after.count} tools)` : "–"} | ${outcome} |`,
  );
}
const six = rows.find((r) => r.servers === 6);
console.log(
  `\ngoal: six servers → first request's system + tools ≤ 12 KB: ${kb(six.first.total)} — ${verdict(six.first.total <= 12 * 1024)}; search, then mcp__memory__create_entities, in two requests: ${six.trace.called ? `called in request ${six.trace.called}, ${six.trace.ok ? "succeeded" : "failed"}` : "not called"} — ${verdict(six.trace.called === 2 && six.trace.ok)}`,
);
const task = (mock.requests.at(-1)?.body.tools ?? []).find((t) => t.name === "task");
if (task) console.log(`\nthe \`task\` tool's definition: ${Buffer.byteLength(JSON.stringify(task))} bytes`);

// ───────────────────────── 200 MCP calls ─────────────────────────
{
  const cwd = join(work, "calls");
  const home = join(cwd, ".home");
  mkdirSync(home, { recursive: true });
  writeFileSync(
    join(home, "mcp.json"),
    JSON.stringify({ mcpServers: { memory: { command: process.execPath, args: SERVERS.memory } } }),
  );
  const CALLS = 200;
  const PER_REPLY = 8; // the loop itself holds one listener per running call while it runs
  for (let i = 0; i < CALLS / PER_REPLY; i++)
    mock.push(
      reply(
        Array.from({ length: PER_REPLY }, (_, j) => ({
          tool: { id: `toolu_read_${i}_${j}`, name: "mcp__memory__read_graph", input: {} },
        })),
      ),
    );
  mock.push(text("done"));
  const { err } = await run(cwd, home, ["-p", "read the graph 200 times"]);
  mock.clear();
  const warnings = (err.match(/MaxListenersExceededWarning/g) ?? []).length;
  console.log(
    `\n## ${CALLS} MCP calls in one run (${CALLS / PER_REPLY} replies of ${PER_REPLY} parallel calls)\n\nMaxListenersExceededWarning printed: ${warnings} — goal 0 — ${verdict(warnings === 0)}`,
  );
}

// ───────────────────────── skills ─────────────────────────
const WORDS = [
  "pdf",
  "docx",
  "xlsx",
  "pptx",
  "brainstorming",
  "debugging",
  "testing",
  "review",
  "frontend",
  "backend",
  "security",
  "audit",
  "deploy",
  "release",
  "changelog",
  "migration",
  "refactor",
  "docs",
  "api",
  "design",
  "canvas",
  "theme",
  "mcp",
  "builder",
  "webapp",
  "artifacts",
  "slack",
  "gif",
  "brand",
  "guidelines",
];
function writeSkills(dir, count) {
  const names = [];
  for (let i = 0; i < count; i++) {
    const name = `${WORDS[i % WORDS.length]}-${WORDS[(i * 7 + 3) % WORDS.length]}-${i}`;
    names.push(name);
    const words = 12 + ((i * 37) % 80); // 80 to 600 characters, like public collections
    const description = `Use when working on ${name.replace(/-/g, " ")} tasks: ${"covers setup, checks, common mistakes and the steps to verify the result ".repeat(6).split(" ").slice(0, words).join(" ")}.`;
    mkdirSync(join(dir, name), { recursive: true });
    writeFileSync(
      join(dir, name, "SKILL.md"),
      `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nSteps.\n`,
    );
  }
  return names;
}
console.log("\n## Skills index (generated skills in $COIL_HOME/skills, plus coil's built-in ones)\n");
console.log("| skills | index bytes | names in the index | descriptions | system + tools |\n|---|---:|---:|---|---:|");
const skillRows = [];
for (const count of [20, 130]) {
  const cwd = join(work, `skills-${count}`);
  const home = join(cwd, ".home");
  mkdirSync(home, { recursive: true });
  const names = writeSkills(join(home, "skills"), count);
  mock.push(text("ok"));
  const seen = mock.requests.length;
  await run(cwd, home, ["-p", "hi"]);
  const body = mock.requests[seen].body;
  const blocks = (body.system ?? []).map((b) => b.text);
  const index =
    blocks
      .flatMap((t) => t.split(/\n\n(?=Project instructions|Current date|Working directory)/))
      .find((t) => t.includes("Skills are folders")) ?? "";
  const listed = names.filter((n) => index.includes(n)).length;
  const full = (index.match(/<description>/g) ?? []).length;
  const desc = full ? `${full} with their description` : /\n\S+: /.test(index) ? "shortened" : "none";
  const s = sizes(body);
  skillRows.push({ count, bytes: Buffer.byteLength(index), listed });
  console.log(`| ${count} | ${kb(Buffer.byteLength(index))} | ${listed} of ${count} | ${desc} | ${kb(s.total)} |`);
}
const big = skillRows[1];
console.log(
  `\ngoal: 130 skills → every name reachable, index ≤ 10 KB: ${big.listed} of 130 names, ${kb(big.bytes)} — ${verdict(big.listed === 130 && big.bytes <= 10 * 1024)}`,
);

await mock.close();
rmSync(work, { recursive: true, force: true });
