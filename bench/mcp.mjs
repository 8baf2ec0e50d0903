// MCP start-up cost: time from launching `coil -p` to the first model request with no MCP servers
// and with two stdio servers (server-everything and server-filesystem), and what each run loads.
// The scripted provider stamps nothing, so the first request is observed through the JSON stream
// (`turn_start` of turn 0 comes right before the request is assembled). Figures, not assertions.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const root = new URL("..", import.meta.url).pathname;
const bin = join(root, "dist", "bin", "coil.js");
const everything = join(root, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const filesystem = join(root, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");
if (!existsSync(bin)) throw new Error("run `npm run build` first (npm run bench does)");
if (!existsSync(everything) || !existsSync(filesystem)) {
  console.log(
    "## MCP start-up\n\nskipped: the devDependencies @modelcontextprotocol/server-everything and server-filesystem are not installed",
  );
  process.exit(0);
}
const work = mkdtempSync(join(tmpdir(), "coil-bench-mcp-"));
writeFileSync(join(work, "reply.yaml"), "- text: hello\n");
const homes = { none: join(work, "home-none"), two: join(work, "home-two") };
for (const h of Object.values(homes)) mkdirSync(h);
writeFileSync(
  join(homes.two, "mcp.json"),
  JSON.stringify({
    mcpServers: {
      everything: { command: process.execPath, args: [everything] },
      files: { command: process.execPath, args: [filesystem, work] },
    },
  }),
);

/** ms from spawn to the first `turn_start` event, and to exit. */
function once(home) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first;
    let out = "";
    const child = spawn(
      process.execPath,
      [bin, "--provider", "scripted", "--script", "reply.yaml", "--mode", "json", "hi"],
      { cwd: work, env: { ...process.env, COIL_HOME: home }, stdio: ["ignore", "pipe", "pipe"] },
    );
    child.stdout.on("data", (d) => {
      out += d;
      if (first === undefined && out.includes('"type":"turn_start"')) first = performance.now() - t0;
    });
    child.on("close", (code) =>
      code === 0 && first !== undefined
        ? resolve({ first, total: performance.now() - t0 })
        : reject(new Error(`coil exited ${code}`)),
    );
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const RUNS = 9;
const rows = [];
for (const [label, home] of [
  ["no MCP servers", homes.none],
  ["two stdio MCP servers", homes.two],
]) {
  const samples = [];
  for (let i = 0; i < RUNS + 1; i++) {
    const s = await once(home);
    if (i > 0) samples.push(s); // one warm-up run
  }
  rows.push([label, median(samples.map((s) => s.first)), median(samples.map((s) => s.total))]);
}
console.log(`## MCP start-up (median of ${RUNS} runs, this machine)\n`);
console.log("| coil --mode json (one scripted turn) | ms to first request | ms to exit |\n|---|---:|---:|");
for (const [label, first, total] of rows) console.log(`| ${label} | ${first.toFixed(1)} | ${total.toFixed(1)} |`);
console.log(
  `\nthe two servers add ${(rows[1][1] - rows[0][1]).toFixed(0)} ms before the first request (they start in parallel; a run without servers does not load the MCP SDK)`,
);
rmSync(work, { recursive: true, force: true });
