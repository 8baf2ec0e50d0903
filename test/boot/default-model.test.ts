/**
 * The model a run starts with when nothing names one: boot picks the balanced default of the first
 * configured provider (or models.yaml's `default:`) and tells the front ends why, through the
 * `model-choice` service boot provides (lib/models.ts; the TUI's start line shows it).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createAgent } from "../../sdk/index.js";
import type { ModelChoiceService } from "../../lib/models.js";

const dir = mkdtempSync(join(tmpdir(), "coil-default-model-"));
const saved = {
  COIL_HOME: process.env.COIL_HOME,
  ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY,
  PI: process.env.PI_CODING_AGENT_DIR,
};
process.env.COIL_HOME = dir;
process.env.PI_CODING_AGENT_DIR = join(dir, "no-pi");
afterAll(() => {
  for (const [k, v] of Object.entries({
    COIL_HOME: saved.COIL_HOME,
    ANTHROPIC_API_KEY: saved.ANTHROPIC_API_KEY,
    PI_CODING_AGENT_DIR: saved.PI,
  })) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  rmSync(dir, { recursive: true, force: true });
});

const preset = join(dir, "p.yaml");
writeFileSync(preset, "plugins: [provider-anthropic, provider-openai, models]\n");

async function start(o: { model?: string; yaml?: string } = {}) {
  writeFileSync(join(dir, "models.yaml"), o.yaml ?? "");
  process.env.ANTHROPIC_API_KEY = "sk-ant-test-default";
  const coil = await createAgent({ cwd: dir, home: dir, preset, model: o.model, stderr: process.stderr });
  const chosen = (coil.host.services.get("model-choice") as ModelChoiceService | undefined)?.chosen;
  const state = `${coil.agent.state.provider}/${coil.agent.state.model.id}`;
  await coil.close();
  return { chosen, state };
}

describe("the start model when none is named", () => {
  it("is Sonnet for an Anthropic key, and the models service says why", async () => {
    expect(await start()).toEqual({
      state: "anthropic/claude-sonnet-5-5",
      chosen: { model: "anthropic/claude-sonnet-5-5", why: "default: anthropic is the first provider with a key" },
    });
  });

  it("is models.yaml's default: when it sets one", async () => {
    expect(await start({ yaml: "default: anthropic/claude-haiku-4-5\n" })).toEqual({
      state: "anthropic/claude-haiku-4-5",
      chosen: { model: "anthropic/claude-haiku-4-5", why: "default: in models.yaml" },
    });
  });

  it("a named model is not explained", async () => {
    expect(await start({ model: "anthropic/opus-4-8" })).toEqual({
      state: "anthropic/claude-opus-4-8",
      chosen: undefined,
    });
  });
});
