// Counts the kernel's code lines the way docs/kernel.md states the bar: every line of kernel/**/*.ts
// that is neither blank nor a comment (`//` lines, and lines inside or opening/closing a `/* */` block).
// `node scripts/kernel-lines.mjs` prints the count per file and the total; test/kernel/layout.test.ts
// imports countCodeLines() and fails when the total is over KERNEL_LINE_BAR.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

// A ratchet, not the goal: 1,914 is the kernel as Biome formats it (width 120) on 2026-12-02. The old
// 1,400 bar was met by packing lines; issue 29 sets the target at 1,500 formatted lines, reached by moving
// content out of the kernel. Lower this figure as content leaves; never raise it.
export const KERNEL_LINE_BAR = 1914;

/** Non-blank, non-comment lines of one TypeScript source. */
export function countCodeLines(text) {
  let inBlock = false;
  let count = 0;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (inBlock) {
      if (line.includes("*/")) {
        inBlock = false;
        if (line.slice(line.indexOf("*/") + 2).trim()) count++;
      }
      continue;
    }
    if (!line || line.startsWith("//")) continue;
    if (line.startsWith("/*")) {
      if (!line.includes("*/", 2)) inBlock = true;
      else if (line.slice(line.indexOf("*/", 2) + 2).trim()) count++;
      continue;
    }
    count++;
  }
  return count;
}

/** `{ file: lines }` for every .ts file under `dir`, relative paths. */
export function countDir(dir, root = dir) {
  const out = {};
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, d.name);
    if (d.isDirectory()) Object.assign(out, countDir(path, root));
    else if (d.name.endsWith(".ts")) out[relative(root, path)] = countCodeLines(readFileSync(path, "utf8"));
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const counts = countDir(new URL("../kernel", import.meta.url).pathname);
  for (const [file, n] of Object.entries(counts).sort()) console.log(`${String(n).padStart(5)}  kernel/${file}`);
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  console.log(`${String(total).padStart(5)}  total (bar: ${KERNEL_LINE_BAR})`);
  process.exitCode = total > KERNEL_LINE_BAR ? 1 : 0;
}
