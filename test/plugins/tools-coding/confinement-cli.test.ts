/**
 * Honesty about confinement, through the built CLI: without a sandbox, a run that uses bash says once
 * on stderr that commands run unconfined and how to confine them (never on JSON mode's stdout), and
 * `coil doctor` answers in every built-in preset.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { childEnv } from "../../support/env.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
const dir = mkdtempSync(join(tmpdir(), "coil-confinement-"));
const NOTICE =
  /bash runs commands WITHOUT a sandbox, with the rights of .*to confine them: coil --preset safe, or add sandbox-bwrap to your preset/;

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\``);
  const call = (command: string) => `    - name: bash\n      arguments: { command: ${JSON.stringify(command)} }\n`;
  writeFileSync(
    join(dir, "two-bash.yaml"),
    `- toolCalls:\n${call("echo one")}- toolCalls:\n${call("echo two")}- text: done\n`,
  );
  writeFileSync(join(dir, "no-bash.yaml"), `- text: nothing to run\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function coil(args: string[]) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: dir,
      env: childEnv({ COIL_HOME: join(dir, "coil-home") }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const count = (text: string, re: RegExp) => text.split("\n").filter((l) => re.test(l)).length;

describe("the unconfined notice", () => {
  it("print mode: once on stderr for a run with two bash calls", async () => {
    const r = await coil(["--provider", "scripted", "--script", "two-bash.yaml", "-p", "go"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("done\n");
    expect(count(r.stderr, NOTICE)).toBe(1);
  });

  it("json mode: once on stderr, not in the event stream on stdout", async () => {
    const r = await coil(["--provider", "scripted", "--script", "two-bash.yaml", "--mode", "json", "-p", "go"]);
    expect(r.code).toBe(0);
    expect(count(r.stderr, NOTICE)).toBe(1);
    expect(r.stdout).not.toMatch(/WITHOUT a sandbox/);
    for (const line of r.stdout.trim().split("\n")) expect(() => JSON.parse(line)).not.toThrow();
  });

  it("says nothing when no command runs, or when commands run in the sandbox", async () => {
    const none = await coil(["--provider", "scripted", "--script", "no-bash.yaml", "-p", "go"]);
    expect(none.stderr).not.toMatch(/WITHOUT a sandbox/);
    const boxed = await coil([
      "--plugin",
      "sandbox-bwrap",
      "--provider",
      "scripted",
      "--script",
      "two-bash.yaml",
      "-p",
      "go",
    ]);
    expect(boxed.code).toBe(0);
    expect(boxed.stderr).not.toMatch(/WITHOUT a sandbox/);
  });
});

describe("coil doctor in every built-in preset", () => {
  it("default and print: no sandbox, said plainly, with how to get one", async () => {
    for (const preset of ["default", "print"]) {
      const r = await coil(["--preset", preset, "doctor"]);
      expect(r.code, preset).toBe(0);
      expect(r.stdout, preset).toMatch(
        /^sandbox: none\n {2}bash runs commands WITHOUT a sandbox, with the rights of \S+ \(uid \d+\)/m,
      );
      expect(r.stdout, preset).toContain("to confine them: coil --preset safe, or add sandbox-bwrap to your preset");
    }
  });

  it("readonly: no tool runs commands", async () => {
    const r = await coil(["--preset", "readonly", "doctor"]);
    expect(r.code).toBe(0);
    // Versions and the project first, then the sandbox status; sections other plugins add (skills, context files) follow it.
    expect(r.stdout).toMatch(/^coil .*\nproject: .*\nbash: not in this preset; no tool here runs commands\.\n/);
    expect(r.stdout).toContain("\nskills:\n");
  });

  it("safe: the sandbox's own report, capabilities checked inside", async () => {
    const r = await coil(["--preset", "safe", "doctor"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^sandbox-bwrap: ok \(bubblewrap [\d.]+\)/m);
    expect(r.stdout).toContain("capabilities inside: none (CapEff 0)");
  });
});
