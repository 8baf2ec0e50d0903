import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

/**
 * Files that run alone, one after another, after the others: the TUI in tmux (a frame is read against the
 * clock) and files asserting elapsed time (`Date.now() - t` against a bound). The rest run on
 * COIL_TEST_WORKERS forks (default 2, or 1 on a 1-core machine: two halve the wait for spawned processes
 * and servers). docs/decisions.md, "The test suite", has the figures.
 */
const SERIAL = /support\/tmux\.js|Date\.now\(\) - |performance\.now\(\)/;

const testFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "fixtures" ? [] : testFiles(path);
    return e.name.endsWith(".test.ts") ? [path] : [];
  });

const serial = testFiles("test").filter((file) => SERIAL.test(readFileSync(file, "utf8")));
const workers = Number(process.env.COIL_TEST_WORKERS ?? Math.min(2, availableParallelism()));
if (!Number.isInteger(workers) || workers < 1)
  throw new Error(
    `vitest.config.ts: COIL_TEST_WORKERS must be a whole number ≥ 1, not '${process.env.COIL_TEST_WORKERS}'`,
  );

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
    // The built CLI and SDK (dist/) load as Node loads them for a user, not through the test runner's transform.
    server: { deps: { external: [/\/dist\//] } },
    projects: [
      {
        extends: true,
        test: {
          name: "parallel",
          include: ["test/**/*.test.ts"],
          exclude: serial,
          maxWorkers: workers,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "serial",
          include: serial,
          maxWorkers: 1,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
