// grep on a 50 MB single-line file (figures, not assertions): time and peak memory of one grep call
// with ripgrep and with the built-in search, each in a fresh process, with that process's peak memory
// before the call. Uses the compiled plugin in dist/.
//   node bench/grep.mjs            (after `npm run build`)
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const root = new URL("..", import.meta.url).pathname;
const pluginFile = join(root, "dist", "plugins", "tools-search", "index.js");
const kernelFile = join(root, "dist", "sdk", "index.js"); // the SDK's host
if (!existsSync(pluginFile)) throw new Error("run `npm run build` first");

// ─── child mode: one grep call in a fresh process ───
if (process.argv[2] === "--child") {
  const [, , , dir, engine] = process.argv;
  const { PluginHost } = await import(pathToFileURL(kernelFile).href);
  const plugin = (await import(pathToFileURL(pluginFile).href)).default;
  const host = new PluginHost({ cwd: dir });
  host.install(plugin, { ripgrep: engine === "ripgrep" });
  const baseline = process.resourceUsage().maxRSS;
  const t0 = performance.now();
  const out = await host.tools
    .get("grep")
    .execute({ pattern: "NEEDLE" }, { toolCallId: "b", signal: new AbortController().signal, update() {} });
  const ms = performance.now() - t0;
  const chars = out.content.map((c) => c.text ?? "").join("").length;
  process.stdout.write(
    JSON.stringify({ ms, chars, maxRssMB: process.resourceUsage().maxRSS / 1024, baselineRssMB: baseline / 1024 }),
  );
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), "coil-bench-grep-"));
try {
  const line = Buffer.alloc(50 * 1024 * 1024, "abcdefghij");
  line.write("NEEDLE", 25 * 1024 * 1024, "latin1");
  writeFileSync(join(work, "big.json"), Buffer.concat([line, Buffer.from("\n")]));
  console.log("grep NEEDLE in a 50 MB single-line file, match at 25 MB");
  console.log("engine     ms     result chars   peak RSS MB   (process before the call)");
  for (const engine of ["ripgrep", "builtin"]) {
    const run = spawnSync(process.execPath, [new URL(import.meta.url).pathname, "--child", work, engine], {
      encoding: "utf8",
    });
    if (run.status !== 0) throw new Error(run.stderr);
    const r = JSON.parse(run.stdout);
    console.log(
      `${engine.padEnd(9)} ${r.ms.toFixed(0).padStart(5)}  ${String(r.chars).padStart(12)}  ${r.maxRssMB.toFixed(0).padStart(12)}   (${r.baselineRssMB.toFixed(0)})`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
