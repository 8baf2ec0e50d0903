/** `--api-key`, `coil models`, `coil auth` and `/model` belong to the `models` plugin a preset lists, not to whichever provider loads first. */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../boot/paths.js";
import { childEnv } from "../support/env.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function help(preset: string): string {
  const dir = mkdtempSync(join(tmpdir(), "coil-models-"));
  dirs.push(dir);
  writeFileSync(join(dir, "p.yaml"), preset);
  const ran = spawnSync(process.execPath, [BIN, "--preset", "p.yaml", "--help"], {
    cwd: dir,
    // wide enough that each entry stays on one line
    env: childEnv({ COIL_HOME: join(dir, ".home"), COLUMNS: "200" }),
    encoding: "utf8",
  });
  expect(ran.status).toBe(0);
  return ran.stdout;
}

describe("the models plugin", () => {
  it("owns --api-key, coil models and coil auth when the preset lists it, whatever the provider order", () => {
    const out = help("plugins: [provider-openai, provider-anthropic, models]\n");
    expect(out).toMatch(/--api-key <key>.*\[models\]/);
    expect(out).toMatch(/^\s+models \[search\.\.\.\]\s.*\[models\]$/m);
    expect(out).toMatch(/^\s+auth .*\[models\]$/m);
  });

  it("a preset without it has providers but none of those commands", () => {
    const out = help("plugins: [provider-openai]\n");
    expect(out).not.toContain("--api-key");
    expect(out).not.toMatch(/^\s+models \[search/m);
  });
});
