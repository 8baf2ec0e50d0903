// Checkpoint snapshot cost on a 10,000-file tree (figures, not assertions): the first snapshot, an
// unchanged tree, and a tree with 10 files changed. Uses the compiled plugin in dist/.
//   node bench/checkpoints.mjs      (after `npm run build`)
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const root = new URL("..", import.meta.url).pathname;
const shadowFile = join(root, "dist", "plugins", "checkpoints", "index.js");
if (!existsSync(shadowFile)) throw new Error("run `npm run build` first");
const { ShadowRepo } = await import(pathToFileURL(shadowFile).href);

const FILES = 10_000;
const work = mkdtempSync(join(tmpdir(), "coil-bench-checkpoints-"));
const project = join(work, "project");
try {
  for (let i = 0; i < FILES; i++) {
    const dir = join(project, "src", `d${i % 100}`);
    if (i < 100) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${i}.ts`), `export const v${i} = ${i};\n`.repeat(20));
  }
  mkdirSync(join(project, "node_modules", "dep"), { recursive: true });
  writeFileSync(join(project, "node_modules", "dep", "index.js"), "module.exports = 1;\n");
  writeFileSync(join(project, ".gitignore"), "node_modules/\n");
  const repo = new ShadowRepo(project, join(work, "home"), 5 * 1024 * 1024);
  const snap = async () => {
    const t0 = performance.now();
    await repo.snapshot({ session: "bench", kind: "before" });
    return performance.now() - t0;
  };
  const first = await snap();
  const unchanged = [];
  for (let i = 0; i < 7; i++) unchanged.push(await snap());
  const changed = [];
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < 10; i++)
      writeFileSync(join(project, "src", `d${i}`, `f${i}.ts`), `export const v = ${round};\n`);
    changed.push(await snap());
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`## Checkpoint snapshots of a ${FILES.toLocaleString("en")}-file tree (node_modules ignored)\n`);
  console.log("| snapshot | ms |\n|---|---:|");
  console.log(`| first (hashes every file) | ${first.toFixed(0)} |`);
  console.log(`| unchanged tree (median of ${unchanged.length}; goal < 200) | ${median(unchanged).toFixed(0)} |`);
  console.log(`| 10 files changed (median of ${changed.length}) | ${median(changed).toFixed(0)} |`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
