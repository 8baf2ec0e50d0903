/**
 * checkpoints: what counts as mutating (no snapshot for read-only tools, read-only bash or a tool marked
 * read-only such as a read-only MCP tool), automatic pruning by count, and conflicts refused over RPC.
 * Real files, real git, the shipped CLI.
 */
import { execFileSync, spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { RpcClient } from "../../../sdk/rpc-client/index.js";
import { ShadowRepo, parseRewindArgs } from "../../../plugins/checkpoints/index.js";
import { childEnv } from "../../support/env.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});
beforeAll(() => {
  if (!existsSync(join(packageRoot(), "dist", "plugins", "checkpoints", "index.js")))
    throw new Error("dist/ has no checkpoints plugin: run `npm run build`");
});

const TOOLS = `import { definePlugin, Type } from "coil";
export default definePlugin({
  id: "probe-tools",
  setup(ctx) {
    ctx.tools.register({ name: "lookup", description: "read-only lookup", readOnly: true, parameters: Type.Object({}),
      async execute() { return { content: [{ type: "text", text: "looked" }] }; } });
    ctx.tools.register({ name: "stamp", description: "writes stamp.txt", parameters: Type.Object({}),
      async execute() { (await import("node:fs")).writeFileSync("stamp.txt", "stamped\\n"); return { content: [{ type: "text", text: "ok" }] }; } });
  },
});
`;

function rig() {
  const root = mkdtempSync(join(tmpdir(), "coil-checkpoints-unit-"));
  temps.push(root);
  const dir = join(root, "project");
  mkdirSync(dir);
  writeFileSync(join(dir, "a.txt"), "alpha\n");
  writeFileSync(join(root, "tools.ts"), TOOLS);
  const home = join(root, "home");
  const script = (name: string, yaml: string) => {
    writeFileSync(join(root, name), yaml);
    return join(root, name);
  };
  const coil = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, "--plugin", join(root, "tools.ts"), ...args], {
        cwd: dir,
        env: childEnv({ COIL_HOME: home }),
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.stdin.end();
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
  const checkpoints = async () => new ShadowRepo(dir, home, 1e9).list();
  return { root, dir, home, script, coil, checkpoints };
}

describe("checkpoints: when a snapshot is taken", () => {
  it("read, grep, ls, read-only bash and a tool marked read-only take none; the first mutating call takes one per prompt", async () => {
    const r = rig();
    const quiet = r.script(
      "quiet.yaml",
      `- toolCalls:
    - { name: read, arguments: { path: a.txt } }
    - { name: grep, arguments: { pattern: alpha } }
    - { name: bash, arguments: { command: "ls -la && cat a.txt | wc -l && git status 2>/dev/null; echo done" } }
    - { name: lookup, arguments: {} }
- text: nothing changed
`,
    );
    const ran = await r.coil(["--provider", "scripted", "--script", quiet, "-p", "look around"]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(await r.checkpoints()).toEqual([]);
    const busy = r.script(
      "busy.yaml",
      `- toolCalls:
    - { name: stamp, arguments: {} }
- toolCalls:
    - { name: bash, arguments: { command: "echo more >> a.txt" } }
- text: changed
`,
    );
    const ran2 = await r.coil(["--provider", "scripted", "--script", busy, "-c", "-p", "change things"]);
    expect(ran2.code, ran2.stderr).toBe(0);
    const kinds = (await r.checkpoints()).map((c) => c.kind);
    // one snapshot before the prompt's first change; one after each turn that changed something
    expect(kinds).toEqual(["before", "after", "after"]);
    const list = await r.coil(["--provider", "scripted", "--script", busy, "-c", "-p", "/rewind"]);
    expect(list.stdout).toMatch(/1 .*"look around"\n\s+changed after it: no file changes/);
    expect(list.stdout).toMatch(/2 .*"change things"\n\s+changed after it: bash: a.txt, stamp.txt/);
    const back = await r.coil(["--provider", "scripted", "--script", busy, "-c", "-p", "/rewind 1 --code"]);
    expect(back.code, back.stderr).toBe(0);
    expect(readFileSync(join(r.dir, "a.txt"), "utf8")).toBe("alpha\n");
    expect(existsSync(join(r.dir, "stamp.txt"))).toBe(false);
  });

  it("prunes to maxCount at the first snapshot of a run", async () => {
    const r = rig();
    writeFileSync(join(r.root, "p.yaml"), "extends: default\nplugins:\n  - checkpoints: { maxCount: 3 }\n");
    const s = r.script(
      "s.yaml",
      `- toolCalls: [{ name: bash, arguments: { command: "echo x >> a.txt" } }]\n- text: ok\n`,
    );
    for (let i = 0; i < 3; i++) {
      const ran = await r.coil([
        "--preset",
        join(r.root, "p.yaml"),
        "--provider",
        "scripted",
        "--script",
        s,
        ...(i ? ["-c"] : []),
        "-p",
        `run ${i}`,
      ]);
      expect(ran.code, ran.stderr).toBe(0);
    }
    const left = await r.checkpoints();
    // the third run pruned to 3 right after its "before" snapshot, then added its "after"
    expect(left.map((c) => c.kind)).toEqual(["before", "after", "before", "after"]);
    expect(left.some((c) => c.prompt === "run 0")).toBe(false);
  });
});

describe("checkpoints: a folder that is a git repository of its own", () => {
  it("is left out and listed, and the rest of the project is still restored", async () => {
    const r = rig();
    mkdirSync(join(r.dir, "sub"));
    execFileSync("git", ["init", "-q"], { cwd: join(r.dir, "sub") }); // no commit yet: git cannot even link it
    writeFileSync(join(r.dir, "sub", "s.txt"), "inner\n");
    const s = r.script(
      "s.yaml",
      `- toolCalls: [{ name: bash, arguments: { command: "echo more >> a.txt && echo changed > sub/s.txt" } }]\n- text: ok\n`,
    );
    const ran = await r.coil(["--provider", "scripted", "--script", s, "-p", "change both"]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).not.toContain("no checkpoint");
    const list = await r.coil(["--provider", "scripted", "--script", s, "-c", "-p", "/rewind"]);
    expect(list.stdout).toContain("sub/ (a git repository of its own)");
    const back = await r.coil(["--provider", "scripted", "--script", s, "-c", "-p", "/rewind 1"]);
    expect(back.code, back.stderr).toBe(0);
    expect(readFileSync(join(r.dir, "a.txt"), "utf8")).toBe("alpha\n");
    expect(readFileSync(join(r.dir, "sub", "s.txt"), "utf8")).toBe("changed\n");
  });
});

describe("checkpoints without git", () => {
  it("says once that git is missing, and the tools still run", async () => {
    const r = rig();
    const bin = join(r.root, "bin");
    mkdirSync(bin);
    for (const p of ["bash", "sh", "cat"]) {
      const real = execFileSync("sh", ["-c", `command -v ${p}`], { encoding: "utf8" }).trim();
      symlinkSync(real, join(bin, p));
    }
    const s = r.script(
      "s.yaml",
      `- toolCalls: [{ name: bash, arguments: { command: "echo one >> a.txt" } }]\n- toolCalls: [{ name: write, arguments: { path: b.txt, content: "two" } }]\n- text: ok\n`,
    );
    const ran = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, "--provider", "scripted", "--script", s, "-p", "go"], {
        cwd: r.dir,
        env: { ...childEnv({ COIL_HOME: r.home }), PATH: bin },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("close", (code) => resolve({ code, stderr }));
    });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr.match(/the git program was not found on PATH/g)).toHaveLength(1);
    expect(readFileSync(join(r.dir, "a.txt"), "utf8")).toBe("alpha\none\n");
    expect(readFileSync(join(r.dir, "b.txt"), "utf8")).toBe("two");
  });
});

describe("checkpoints: the shadow index lock", () => {
  it("waits for another process's lock, and removes one left by a process that died", async () => {
    const r = rig();
    const repo = new ShadowRepo(r.dir, r.home, 1e9);
    await repo.snapshot({ session: "s", kind: "before" });
    const lock = join(repo.dir, "index.lock");
    writeFileSync(lock, "");
    const old = new Date(Date.now() - 120_000);
    utimesSync(lock, old, old);
    writeFileSync(join(r.dir, "a.txt"), "stale lock\n");
    const second = await repo.snapshot({ session: "s", kind: "after" });
    expect(await repo.git(["show", `${second.commit}:a.txt`])).toBe("stale lock\n");
    writeFileSync(lock, "");
    setTimeout(() => rmSync(lock, { force: true }), 400);
    writeFileSync(join(r.dir, "a.txt"), "busy lock\n");
    const third = await repo.snapshot({ session: "s", kind: "after" });
    expect(await repo.git(["show", `${third.commit}:a.txt`])).toBe("busy lock\n");
  });
});

describe("checkpoints over RPC", () => {
  it("refuses a rewind over the user's later edit, listing it; --force goes ahead", async () => {
    const r = rig();
    const s = r.script(
      "s.yaml",
      `- toolCalls: [{ name: write, arguments: { path: a.txt, content: "agent\\n" } }]\n- text: ok\n`,
    );
    const client = await RpcClient.start({
      bin: BIN,
      cwd: r.dir,
      env: childEnv({ COIL_HOME: r.home }),
      args: ["--plugin", join(r.root, "tools.ts"), "--provider", "scripted", "--script", s],
      timeoutMs: 20_000,
    });
    try {
      client.onUi(() => true); // a dialog would say yes: RPC must still refuse without asking
      await client.run("write it");
      writeFileSync(join(r.dir, "a.txt"), "mine\n");
      await expect(client.prompt("/rewind 1")).rejects.toThrow(/CHECKPOINT_CONFLICT[\s\S]*a.txt/);
      expect(readFileSync(join(r.dir, "a.txt"), "utf8")).toBe("mine\n");
      const out = (await client.prompt("/rewind 1 --force")) as { output: string };
      expect(out.output).toContain("Files back to before prompt 1");
      expect(readFileSync(join(r.dir, "a.txt"), "utf8")).toBe("alpha\n");
    } finally {
      await client.close();
    }
  });
});

describe("parseRewindArgs", () => {
  it("reads the point and the options, and names a wrong one", () => {
    expect(parseRewindArgs("3 --code")).toMatchObject({ point: 3, code: true, conversation: false, force: false });
    expect(parseRewindArgs("2 --conversation --force")).toMatchObject({
      point: 2,
      code: false,
      conversation: true,
      force: true,
    });
    expect(parseRewindArgs("")).toMatchObject({ point: undefined, code: true, conversation: true });
    expect(() => parseRewindArgs("2 --cod")).toThrow(/unknown option --cod/);
    expect(() => parseRewindArgs("two")).toThrow(/expected a point number/);
  });
});
