/**
 * checkpoints through the shipped CLI (dist/bin/coil.js, built by `npm run build`): real files, real git,
 * runs continued with `-c`. Tools write and edit, bash changes files (`sed -i`, `rm`, a new folder);
 * `/rewind` puts every byte back, in non-git projects and in git projects whose own index and stash
 * stay exactly as they were.
 */
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { childEnv } from "../../support/env.js";
import { reply, startMockAnthropic, text, type MockAnthropic } from "../../support/mock-anthropic.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});
beforeAll(() => {
  if (!existsSync(join(packageRoot(), "dist", "plugins", "checkpoints", "index.js")))
    throw new Error("dist/ has no checkpoints plugin: run `npm run build`");
});

interface Rig {
  root: string;
  dir: string;
  home: string;
  /** Write a scripted reply file outside the project and return its path. */
  script(name: string, yaml: string): string;
}

function rig(files: Record<string, string | Buffer> = {}): Rig {
  const root = mkdtempSync(join(tmpdir(), "coil-checkpoints-"));
  temps.push(root);
  const dir = join(root, "project");
  mkdirSync(dir);
  for (const [name, body] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), body);
  }
  return {
    root,
    dir,
    home: join(root, "home"),
    script(name, yaml) {
      writeFileSync(join(root, name), yaml);
      return join(root, name);
    },
  };
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function coil(r: Rig, args: string[], env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: r.dir,
      env: childEnv({ COIL_HOME: r.home, ...env }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdin.end();
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Run one scripted prompt (continuing the session when asked). */
async function prompt(r: Rig, script: string, text: string, cont: boolean): Promise<Ran> {
  const ran = await coil(r, ["--provider", "scripted", "--script", script, ...(cont ? ["-c"] : []), "-p", text]);
  expect(ran.code, ran.stderr).toBe(0);
  return ran;
}

/** Every file under `dir` (but `skip`), with its bytes and mode; folders listed too, so an extra empty one shows. */
function tree(dir: string, skip: string[] = [".git"]): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const full = join(d, name);
      const rel = relative(dir, full);
      if (skip.includes(rel)) continue;
      const st = lstatSync(full);
      if (st.isDirectory()) {
        out[`${rel}/`] = "dir";
        walk(full);
      } else
        out[rel] = `${(st.mode & 0o777).toString(8)} ${createHash("sha256").update(readFileSync(full)).digest("hex")}`;
    }
  };
  walk(dir);
  return out;
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@t",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@t",
    },
  });

const BINARY = Buffer.from([0, 1, 2, 255, 254, 10, 13, 0]);

/** Three prompts: tools, then bash (sed -i, rm, a new folder, chmod), then bash and a tool together. */
async function threePrompts(r: Rig, first: boolean) {
  const states: Record<string, string>[] = [tree(r.dir)];
  const s1 = r.script(
    "s1.yaml",
    `- toolCalls:
    - { name: write, arguments: { path: new.txt, content: "brand new\\n" } }
    - { name: edit, arguments: { path: a.txt, edits: [{ oldText: alpha, newText: ALPHA }] } }
- text: done one
`,
  );
  await prompt(r, s1, "one: write and edit", !first);
  states.push(tree(r.dir));
  const s2 = r.script(
    "s2.yaml",
    `- toolCalls:
    - { name: bash, arguments: { command: "sed -i 's/beta/BETA/' a.txt && rm old.txt && mkdir -p gen/sub && printf 'g\\\\n' > gen/sub/g.txt && chmod +x run.sh" } }
- text: done two
`,
  );
  await prompt(r, s2, "two: bash", true);
  states.push(tree(r.dir));
  const s3 = r.script(
    "s3.yaml",
    `- toolCalls:
    - { name: bash, arguments: { command: "printf 'changed' > bin.dat && rm -r gen" } }
    - { name: write, arguments: { path: a.txt, content: "rewritten\\n" } }
- text: done three
`,
  );
  await prompt(r, s3, "three: both", true);
  states.push(tree(r.dir));
  for (let i = 1; i < states.length; i++) expect(states[i], `prompt ${i} changed the files`).not.toEqual(states[i - 1]);
  return { states, script: s3 };
}

const FILES = {
  "a.txt": "alpha\nbeta\n",
  "old.txt": "to be removed\n",
  "run.sh": "#!/bin/sh\necho hi\n",
  "bin.dat": BINARY,
  "keep/deep.txt": "deep\n",
};

describe("checkpoints: /rewind through the CLI", () => {
  it("puts every byte back to before each prompt, across -c runs, in a project that is not a git repository", async () => {
    const r = rig(FILES);
    const { states, script } = await threePrompts(r, true);
    expect(existsSync(join(r.dir, ".git"))).toBe(false);

    const list = await coil(r, ["--provider", "scripted", "--script", script, "-c", "-p", "/rewind"]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(
      /1 .*"one: write and edit"[\s\S]*changed after it: (write: new.txt; edit: a.txt|edit: a.txt; write: new.txt)/,
    );
    expect(list.stdout).toMatch(/2 .*"two: bash"\n\s+changed after it: bash: a.txt, gen\/sub\/g.txt, old.txt, run.sh/);
    expect(list.stdout).toMatch(/3 .*"three: both"\n\s+changed after it: write: a.txt; bash: bin.dat, gen\/sub\/g.txt/);

    // Files only, newest point first, then the conversation too: each step is its own `coil -c` run.
    for (const n of [3, 2]) {
      const ran = await coil(r, ["--provider", "scripted", "--script", script, "-c", "-p", `/rewind ${n} --code`]);
      expect(ran.code, ran.stderr).toBe(0);
      expect(tree(r.dir), `files after /rewind ${n} --code`).toEqual(states[n - 1]);
    }
    const ran = await coil(r, ["--provider", "scripted", "--script", script, "-c", "-p", "/rewind 1"]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain("Conversation: back to just before prompt 1");
    expect(tree(r.dir)).toEqual(states[0]);
    // The conversation is back before prompt 1: a continued run lists no points.
    const after = await coil(r, ["--provider", "scripted", "--script", script, "-c", "-p", "/rewind"]);
    expect(after.stdout).toContain("No prompts yet");
  });

  it("rewinds forwards again: a later point after an earlier rewind, and --conversation leaves the files", async () => {
    const r = rig(FILES);
    const { states, script } = await threePrompts(r, true);
    const c = (args: string) => coil(r, ["--provider", "scripted", "--script", script, "-c", "-p", args]);
    expect((await c("/rewind 1 --code")).code).toBe(0);
    expect(tree(r.dir)).toEqual(states[0]);
    expect((await c("/rewind 3 --code")).code).toBe(0);
    expect(tree(r.dir)).toEqual(states[2]);
    const conv = await c("/rewind 2 --conversation");
    expect(conv.code, conv.stderr).toBe(0);
    expect(tree(r.dir)).toEqual(states[2]);
    expect((await c("/rewind")).stdout).not.toContain("two: bash");
  });

  it("leaves a git project's own index, stash, branches and HEAD exactly as they were", async () => {
    const r = rig(FILES);
    git(r.dir, "init", "-q", "-b", "main");
    git(r.dir, "add", "-A");
    git(r.dir, "commit", "-qm", "base");
    writeFileSync(join(r.dir, "keep/deep.txt"), "stashed change\n");
    git(r.dir, "stash", "-q");
    writeFileSync(join(r.dir, "a.txt"), "alpha\nbeta\nstaged\n");
    git(r.dir, "add", "a.txt");
    writeFileSync(join(r.dir, "a.txt"), "alpha\nbeta\nstaged\nunstaged\n");
    const gitState = () => ({
      index: createHash("sha256")
        .update(readFileSync(join(r.dir, ".git", "index")))
        .digest("hex"),
      stash: git(r.dir, "stash", "list", "-p"),
      refs: git(r.dir, "for-each-ref"),
      head: git(r.dir, "rev-parse", "HEAD"),
      cached: git(r.dir, "diff", "--cached"),
      objects: git(r.dir, "count-objects"),
    });
    const before = gitState();
    const { states, script } = await threePrompts(r, true);
    const ran = await coil(r, ["--provider", "scripted", "--script", script, "-c", "-p", "/rewind 1"]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(tree(r.dir)).toEqual(states[0]);
    expect(gitState()).toEqual(before);
  });

  it("skips .gitignore'd folders and files over the size limit, lists them, and leaves them alone", async () => {
    const r = rig({ ...FILES, ".gitignore": "node_modules/\n", "node_modules/dep/index.js": "module.exports = 1;\n" });
    writeFileSync(join(r.dir, "big.bin"), Buffer.alloc(2048, 7));
    writeFileSync(join(r.root, "p.yaml"), "extends: default\nplugins:\n  - checkpoints: { maxFileSize: 1024 }\n");
    const s = r.script(
      "s.yaml",
      `- toolCalls:
    - { name: bash, arguments: { command: "echo 'module.exports = 2;' > node_modules/dep/index.js && echo x >> a.txt && head -c 3000 /dev/zero > big.bin" } }
- text: ok
`,
    );
    const run = (p: string, cont: boolean) =>
      coil(r, [
        "--preset",
        join(r.root, "p.yaml"),
        "--provider",
        "scripted",
        "--script",
        s,
        ...(cont ? ["-c"] : []),
        "-p",
        p,
      ]);
    expect((await run("change things", false)).code).toBe(0);
    const list = await run("/rewind", true);
    expect(list.stdout).toMatch(/not in the checkpoint: big.bin \(over 1024 bytes\), node_modules\/ \(ignored\)/);
    const ran = await run("/rewind 1", true);
    expect(ran.code, ran.stderr).toBe(0);
    expect(readFileSync(join(r.dir, "a.txt"), "utf8")).toBe("alpha\nbeta\n");
    expect(readFileSync(join(r.dir, "node_modules/dep/index.js"), "utf8")).toBe("module.exports = 2;\n");
    expect(statSync(join(r.dir, "big.bin")).size).toBe(3000);
  });

  it("refuses to overwrite a file the user changed after the agent, listing it, unless --force", async () => {
    const r = rig(FILES);
    const { states, script } = await threePrompts(r, true);
    writeFileSync(join(r.dir, "new.txt"), "my own edit\n");
    const edited = tree(r.dir);
    const refused = await coil(r, ["--provider", "scripted", "--script", script, "-c", "-p", "/rewind 1"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("CHECKPOINT_CONFLICT");
    expect(refused.stderr).toMatch(/You changed this file after the agent did[^\n]*\n\s+new.txt\n/);
    expect(refused.stderr).toContain("/rewind 1 --force");
    expect(tree(r.dir)).toEqual(edited);
    // the conversation did not move either
    expect((await coil(r, ["--provider", "scripted", "--script", script, "-c", "-p", "/rewind"])).stdout).toContain(
      "three: both",
    );
    const forced = await coil(r, ["--provider", "scripted", "--script", script, "-c", "-p", "/rewind 1 --force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(tree(r.dir)).toEqual(states[0]);
    // the overwritten edit is kept: the ref and the shadow repository are named, and git gives it back
    const [, ref, gitDir] = /kept as (\S+) in (\S+)\)/.exec(forced.stdout)!;
    expect(execFileSync("git", ["--git-dir", gitDir!, "show", `${ref}:new.txt`], { encoding: "utf8" })).toBe(
      "my own edit\n",
    );
  });

  it("a run killed (SIGKILL) in the middle of its first turn can still be rewound after -c", async () => {
    const r = rig(FILES);
    const before = tree(r.dir);
    const s = r.script(
      "kill.yaml",
      `- toolCalls: [{ name: bash, arguments: { command: "rm old.txt && echo k > k.txt && sleep 5" } }]\n- text: never\n`,
    );
    const child = spawn(process.execPath, [BIN, "--provider", "scripted", "--script", s, "-p", "delete and wait"], {
      cwd: r.dir,
      env: childEnv({ COIL_HOME: r.home }),
      stdio: "ignore",
    });
    const closed = new Promise((resolve) => child.on("close", resolve));
    for (let i = 0; i < 200 && !existsSync(join(r.dir, "k.txt")); i++) await new Promise((res) => setTimeout(res, 50));
    expect(existsSync(join(r.dir, "k.txt"))).toBe(true);
    child.kill("SIGKILL");
    await closed;
    const list = await coil(r, ["--provider", "scripted", "--script", s, "-c", "-p", "/rewind"]);
    expect(list.stdout).toMatch(
      /1 .*"delete and wait"\n\s+changed after it: not recorded: coil stopped before the turn ended/,
    );
    const ran = await coil(r, ["--provider", "scripted", "--script", s, "-c", "-p", "/rewind 1"]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(tree(r.dir)).toEqual(before);
  });

  it("after kill -9 in the middle of a snapshot, its git child does not run on, and an immediate /rewind clears the dead process's index.lock", async () => {
    const r = rig(FILES);
    const before = tree(r.dir);
    // A git that hangs on its second `add` (the snapshot after the first turn) holding the shadow index's
    // lock, as a slow `git add` of a big tree does; its pid goes to a file.
    const realGit = execFileSync("which", ["git"], { encoding: "utf8" }).trim();
    const bin = join(r.root, "fakebin");
    mkdirSync(bin);
    writeFileSync(
      join(bin, "git"),
      `#!/bin/sh
for a in "$@"; do [ "$a" = add ] && adds=$(( $(cat ${r.root}/adds 2>/dev/null || echo 0) + 1 )) && echo $adds > ${r.root}/adds; done
if [ "$adds" = 2 ]; then
  : > "$GIT_INDEX_FILE.lock"
  echo $$ > ${r.root}/hung.pid
  sleep 30
fi
exec ${realGit} "$@"
`,
      { mode: 0o755 },
    );
    const s = r.script(
      "hang.yaml",
      `- toolCalls: [{ name: write, arguments: { path: new.txt, content: "new\\n" } }]\n- text: done\n`,
    );
    const child = spawn(process.execPath, [BIN, "--provider", "scripted", "--script", s, "-p", "write a file"], {
      cwd: r.dir,
      env: childEnv({ COIL_HOME: r.home, PATH: `${bin}:${process.env.PATH}` }),
      stdio: "ignore",
    });
    const closed = new Promise((resolve) => child.on("close", resolve));
    const pidFile = join(r.root, "hung.pid");
    for (let i = 0; i < 300 && !existsSync(pidFile); i++) await new Promise((res) => setTimeout(res, 50));
    const hung = Number(readFileSync(pidFile, "utf8"));
    child.kill("SIGKILL");
    await closed;
    const alive = () => {
      try {
        process.kill(hung, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 100 && alive(); i++) await new Promise((res) => setTimeout(res, 50));
    expect(alive(), "the snapshot's git child outlived coil").toBe(false);
    const ran = await coil(r, ["--provider", "scripted", "--script", s, "-c", "-p", "/rewind 1"]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).not.toMatch(/index\.lock/);
    expect(tree(r.dir)).toEqual(before);
  }, 30_000);

  it("coil checkpoints list and prune", async () => {
    const r = rig(FILES);
    await threePrompts(r, true);
    const list = await coil(r, ["checkpoints", "list"]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.match(/ before /g)).toHaveLength(3);
    expect(list.stdout.match(/ after /g)).toHaveLength(3);
    expect(list.stdout).toContain('"two: bash"');
    const pruned = await coil(r, ["checkpoints", "prune", "--keep", "2"]);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toContain("Pruned 4 checkpoints");
    expect((await coil(r, ["checkpoints", "list"])).stdout.trim().split("\n")).toHaveLength(3);
    const gone = await coil(r, [
      "--provider",
      "scripted",
      "--script",
      join(r.root, "s3.yaml"),
      "-c",
      "-p",
      "/rewind 1 --code",
    ]);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain("CHECKPOINT_PRUNED");
    const byAge = await coil(r, ["checkpoints", "prune", "--older-than", "0"]);
    expect(byAge.stdout).toContain("Pruned 2 checkpoints (older than 0 days");
    expect((await coil(r, ["checkpoints", "list"])).stdout).toContain("No checkpoints for");
    const bad = await coil(r, ["checkpoints", "prune", "--keep", "many"]);
    expect(bad.code).not.toBe(0);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      "coil checkpoints prune: option '--keep <n>' argument 'many' is invalid. 'many' is not a number",
    );
  });
});

describe("checkpoints: the conversation after a rewind, as the Anthropic API sees it", () => {
  let mock: MockAnthropic;
  const KEY = "sk-ant-checkpoints-0123456789";
  beforeAll(async () => {
    mock = await startMockAnthropic({ key: KEY });
  });
  afterAll(() => mock.close());

  it("the next request holds only what came before the rewound prompt, every tool call answered", async () => {
    const r = rig(FILES);
    const run = (p: string, cont = true) =>
      coil(
        r,
        ["--plugin", "provider-anthropic", "--model", "anthropic/claude-sonnet-4-5", ...(cont ? ["-c"] : []), "-p", p],
        { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url },
      );
    mock.push(
      reply([{ tool: { id: "toolu_1", name: "write", input: { path: "one.txt", content: "1\n" } } }]),
      text("wrote one"),
    );
    expect((await run("first prompt", false)).code).toBe(0);
    mock.push(
      reply([
        { text: "on it" },
        { tool: { id: "toolu_2", name: "bash", input: { command: "rm a.txt && echo 2 > two.txt" } } },
      ]),
      text("did two"),
    );
    expect((await run("second prompt")).code).toBe(0);
    expect(existsSync(join(r.dir, "a.txt"))).toBe(false);
    const rew = await run("/rewind 2");
    expect(rew.code, rew.stderr).toBe(0);
    expect(readFileSync(join(r.dir, "a.txt"), "utf8")).toBe("alpha\nbeta\n");
    expect(existsSync(join(r.dir, "two.txt"))).toBe(false);
    expect(readFileSync(join(r.dir, "one.txt"), "utf8")).toBe("1\n");
    mock.push(text("fresh answer"));
    const next = await run("second prompt, again");
    expect(next.code, next.stderr).toBe(0);
    expect(mock.rejected()).toEqual([]);
    const last = mock.requests.at(-1)!.body;
    const seen = JSON.stringify(last.messages);
    expect(seen).toContain("first prompt");
    expect(seen).toContain("toolu_1");
    expect(seen).not.toContain('second prompt"');
    expect(seen).not.toContain("toolu_2");
    expect(last.messages.at(-1)).toMatchObject({ role: "user" });
    expect(JSON.stringify(last.messages.at(-1))).toContain("second prompt, again");
  });
});
