/**
 * Print mode as a user runs it from a shell (the shipped CLI, dist/bin/coil.js): `--image` on the wire
 * for Anthropic and OpenAI, a closed pipe, a mistyped subcommand, and each documented exit code.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN } from "../support/ecosystem.js";
import { text } from "../support/mock-anthropic.js";
import { chat, responses } from "../support/mock-openai.js";
import { useProviderMocks } from "../support/provider-mocks.js";
import { PNG } from "../support/provider-tools.js";

const mocks = useProviderMocks("print");
const { project, coil } = mocks;
const AKEY = mocks.keys.anthropic;
const OKEY = mocks.keys.openai;

/** A real PNG file's bytes. */
const png = (): Buffer => Buffer.from(PNG, "base64");

describe("--image attaches image files to a -p prompt", () => {
  it("sends an Anthropic image block after the prompt's text", async () => {
    const dir = project({ "shot.png": png() });
    mocks.anthropic.requests.length = 0;
    mocks.anthropic.push(text("a red and blue square"));
    const r = await coil(
      dir,
      ["--model", "anthropic/sonnet", "--image", "shot.png", "-p", "what is in this picture?"],
      { ANTHROPIC_API_KEY: AKEY, ANTHROPIC_BASE_URL: mocks.anthropic.url },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("a red and blue square");
    expect(mocks.anthropic.rejected()).toEqual([]);
    const content = mocks.anthropic.requests[0]!.body.messages[0].content;
    expect(content[0]).toMatchObject({ type: "text", text: "what is in this picture?" });
    expect(content.at(-1)).toMatchObject({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: PNG },
    });
  });

  it("sends an OpenAI Responses input_image and a Chat Completions image_url", async () => {
    const dir = project({ "a.png": png(), "b.png": png() });
    mocks.openai.requests.length = 0;
    mocks.openai.push(responses([{ text: "two squares" }]));
    const r = await coil(dir, ["--model", "openai/gpt-5.4", "--image", "a.png,b.png", "-p", "compare"], {
      OPENAI_API_KEY: OKEY,
      OPENAI_BASE_URL: mocks.openai.url,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const parts = mocks.openai.requests[0]!.body.input.find((i: { role?: string }) => i.role === "user").content;
    expect(parts.filter((p: { type: string }) => p.type === "input_image")).toHaveLength(2);
    expect(parts.find((p: { type: string }) => p.type === "input_image").image_url).toBe(
      `data:image/png;base64,${PNG}`,
    );

    mocks.openai.push(chat({ text: "a square" }));
    const c = await coil(dir, ["--model", "openai/llama3.3-local", "--image", "a.png", "-p", "describe"], {
      OPENAI_API_KEY: OKEY,
      OPENAI_BASE_URL: mocks.openai.url,
    });
    expect(c.code).toBe(0);
    const user = mocks.openai.requests.at(-1)!.body.messages.find((m: { role: string }) => m.role === "user");
    expect(user.content.find((p: { type: string }) => p.type === "image_url").image_url.url).toMatch(
      /^data:image\/png;base64,/,
    );
    expect(mocks.openai.rejected()).toEqual([]);
  });

  it("refuses a file that is not an image, and a model without image input, before any request (exit 2)", async () => {
    const dir = project({ "notes.txt": "plain text", "shot.png": png() });
    writeFileSync(
      join(dir, ".home", "models.yaml"),
      `providers:\n  local:\n    api: openai-completions\n    baseUrl: ${mocks.openai.url}\n    models:\n      - id: text-only\n        input: [text]\n`,
    );
    mocks.openai.requests.length = 0;
    const notImage = await coil(dir, ["--model", "local/text-only", "--image", "notes.txt", "-p", "look"]);
    expect(notImage.code).toBe(2);
    expect(notImage.stderr).toContain("--image: notes.txt is not a PNG, JPEG, GIF or WebP image");
    const textOnly = await coil(dir, ["--model", "local/text-only", "--image", "shot.png", "-p", "look"]);
    expect(textOnly.code).toBe(2);
    expect(textOnly.stderr).toContain("local/text-only does not take images");
    const missing = await coil(dir, ["--model", "local/text-only", "--image", "nope.png", "-p", "look"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("cannot read nope.png: ENOENT");
    expect(mocks.openai.requests).toHaveLength(0);
  });
});

describe("exit codes, as README documents them", () => {
  const steps = (n: number) =>
    JSON.stringify([
      ...Array.from({ length: n }, (_, i) => ({ text: `step ${i}`, toolCalls: [{ name: "ls", arguments: {} }] })),
      { text: "done" },
    ]);

  it("0 success, 1 an error, 2 usage, 3 a stop rule", async () => {
    const dir = project({
      "ok.yaml": "- text: fine\n",
      "fail.yaml": "- error: the server broke\n",
      "long.json": steps(5),
      "two.yaml": "extends: default\nplugins:\n  - guards: { maxTurns: 2 }\n",
    });
    const ok = await coil(dir, ["--provider", "scripted", "--script", "ok.yaml", "-p", "hi"]);
    expect([ok.code, ok.stdout.trim()]).toEqual([0, "fine"]);
    const failed = await coil(dir, ["--provider", "scripted", "--script", "fail.yaml", "-p", "hi"]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("the server broke");
    const usage = await coil(dir, ["--mode", "bogus", "-p", "hi"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("bogus");
    const halted = await coil(dir, [
      "--provider",
      "scripted",
      "--script",
      "long.json",
      "--preset",
      "./two.yaml",
      "-p",
      "go",
    ]);
    expect(halted.code).toBe(3);
    expect(halted.stderr).toMatch(/coil: stopped: .*2 turns/);
  });

  it("a closed pipe (coil --mode json | head -1) ends quietly with exit 0", async () => {
    const dir = project({
      "long.json": steps(150),
      "many.yaml": "extends: default\nplugins:\n  - guards: { maxTurns: 500 }\n",
    });
    const r = await new Promise<{ code: number | null; stderr: string; first: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [BIN, "--provider", "scripted", "--script", "long.json", "--preset", "./many.yaml", "--mode", "json", "go"],
        {
          cwd: dir,
          env: { ...process.env, COIL_HOME: join(dir, ".home") },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let first = "";
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      // what `head -1` does: read the first line, then close the pipe
      child.stdout.once("data", (d: Buffer) => {
        first = d.toString().split("\n")[0]!;
        child.stdout.destroy();
      });
      child.on("close", (code) => resolve({ code, stderr, first }));
    });
    expect(JSON.parse(r.first)).toEqual({ type: "agent_start" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("a mistyped subcommand asks 'did you mean' instead of going to the model; `--` sends it anyway", async () => {
    const dir = project({ "ok.yaml": "- text: sent as a prompt\n" });
    const typo = await coil(dir, ["--provider", "scripted", "--script", "ok.yaml", "doctr"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("unknown command 'doctr'. Did you mean: coil doctor?");
    expect(typo.stdout).toBe("");
    const swapped = await coil(dir, ["--provider", "scripted", "--script", "ok.yaml", "modles"]);
    expect(swapped.stderr).toContain("Did you mean: coil models?");
    const forced = await coil(dir, ["--provider", "scripted", "--script", "ok.yaml", "--", "doctr"]);
    expect([forced.code, forced.stdout.trim()]).toEqual([0, "sent as a prompt"]);
    // -p says the words are a prompt; and ordinary one-word prompts are not commands
    const printed = await coil(dir, ["--provider", "scripted", "--script", "ok.yaml", "-p", "doctr"]);
    expect([printed.code, printed.stdout.trim()]).toEqual([0, "sent as a prompt"]);
    for (const word of ["first", "refactor", "test", "lint"]) {
      const r = await coil(dir, ["--provider", "scripted", "--script", "ok.yaml", word]);
      expect([word, r.code, r.stdout.trim()]).toEqual([word, 0, "sent as a prompt"]);
    }
  });
});
