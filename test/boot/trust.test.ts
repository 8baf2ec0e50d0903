/** Project trust (boot/trust.ts): what would load, the hash, the terminal prompt, coil trust/untrust, and untrusted code never running in print mode. */
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../boot/paths.js";
import { fingerprint, projectFiles } from "../../boot/trust.js";
import { settleTrust, trustCommand } from "../../cli/trust.js";
import { hasTmux, Tmux } from "../support/tmux.js";
import type { CliIO } from "../../cli/main.js";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

const MARKER_PLUGIN = `import { definePlugin } from "coil";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
export default definePlugin({ id: "marker", setup(ctx) { writeFileSync(join(ctx.cwd, "marker.txt"), "project code ran\\n"); } });
`;

function project(files: Record<string, string> = {}): { dir: string; home: string } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "coil-trust-")));
  temps.push(dir);
  const all = {
    ".coil/preset.yaml": "plugins:\n  - ./plugins/marker.ts\n",
    ".coil/plugins/marker.ts": MARKER_PLUGIN,
    "r.yaml": "- text: hello\n",
    ...files,
  };
  for (const [name, text] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return { dir, home: join(dir, ".home") };
}

/** In-process CLI streams; `tty` makes stdin and stderr look like a terminal, `answer` is typed at the prompt. */
function io(dir: string, argv: string[], o: { tty?: boolean; answer?: string } = {}) {
  const stdin = Object.assign(new PassThrough(), { isTTY: o.tty ?? false });
  const stderr = Object.assign(new PassThrough(), { isTTY: o.tty ?? false });
  const stdout = new PassThrough();
  let err = "";
  let out = "";
  stderr.on("data", (d: Buffer) => {
    err += d.toString();
    if (o.answer !== undefined && err.endsWith("[a]lways: ")) stdin.write(`${o.answer}\n`);
  });
  stdout.on("data", (d: Buffer) => (out += d.toString()));
  const cli: CliIO = { argv, cwd: dir, env: {}, stdin, stdout, stderr };
  return { cli, err: () => err, out: () => out };
}

describe("what would load", () => {
  it("lists .coil/ files except state, plus path plugins the project preset names elsewhere", () => {
    const { dir, home } = project({
      ".coil/preset.yaml": "plugins:\n  - ./plugins/marker.ts\n  - ../tools/lint.ts\n",
      "tools/lint.ts": "export default {}\n",
      ".coil/sessions/x/s.jsonl": "{}\n",
      ".coil/plans/p.md": "- [ ] a\n",
      ".coil/skills/s/SKILL.md": "text\n",
    });
    expect(projectFiles(dir, home).map((f) => f.slice(dir.length + 1))).toEqual([
      ".coil/plugins/marker.ts",
      ".coil/preset.yaml",
      ".coil/skills/s/SKILL.md",
      "tools/lint.ts",
    ]);
  });

  it("is empty without a .coil folder, and for COIL_HOME itself", () => {
    const dir = mkdtempSync(join(tmpdir(), "coil-trust-"));
    temps.push(dir);
    expect(projectFiles(dir, join(dir, ".home"))).toEqual([]);
    mkdirSync(join(dir, ".coil"));
    writeFileSync(join(dir, ".coil", "preset.yaml"), "plugins: []\n");
    expect(projectFiles(dir, join(dir, ".coil"))).toEqual([]);
  });

  it("the hash changes with any byte of what would load, not with sessions or plans", () => {
    const { dir, home } = project();
    const hash = () => fingerprint(dir, projectFiles(dir, home));
    const before = hash();
    writeFileSync(join(dir, ".coil", "notes.md"), "n\n");
    const withNote = hash();
    expect(withNote).not.toBe(before);
    mkdirSync(join(dir, ".coil", "plans"));
    writeFileSync(join(dir, ".coil", "plans", "x.md"), "- [ ] a\n");
    expect(hash()).toBe(withNote);
    writeFileSync(join(dir, ".coil", "plugins", "marker.ts"), MARKER_PLUGIN.replace("ran", "RAN"));
    expect(hash()).not.toBe(withNote);
  });
});

describe("settling trust", () => {
  it("asks on a terminal: always stores the answer, yes trusts this run only, no skips", async () => {
    const { dir, home } = project();
    const no = io(dir, [], { tty: true, answer: "n" });
    expect(await settleTrust(no.cli, home, false, true)).toEqual({
      trusted: false,
      explicit: false,
      skipped: expect.stringContaining(".coil/plugins/marker.ts"),
    });
    expect(no.err()).toContain(
      `coil: project ${dir} is not trusted yet. Trusting it loads and runs this with your rights:\n  .coil/plugins/marker.ts\n  .coil/preset.yaml\ntrust it? [y]es for this run, [n]o, [a]lways: `,
    );

    const yes = io(dir, [], { tty: true, answer: "yes" });
    expect((await settleTrust(yes.cli, home, false, true)).trusted).toBe(true);
    expect(existsSync(join(home, "trust.json"))).toBe(false);

    const always = io(dir, [], { tty: true, answer: "a" });
    expect((await settleTrust(always.cli, home, false, true)).trusted).toBe(true);
    expect(JSON.parse(readFileSync(join(home, "trust.json"), "utf8")).projects[dir]).toMatchObject({
      hash: fingerprint(dir, projectFiles(dir, home)),
    });

    const again = io(dir, [], { tty: true });
    expect((await settleTrust(again.cli, home, false, true)).trusted).toBe(true);
    expect(again.err()).toBe("");

    writeFileSync(join(dir, ".coil", "preset.yaml"), "plugins:\n  - ./plugins/marker.ts # changed\n");
    const changed = io(dir, [], { tty: true, answer: "n" });
    const r = await settleTrust(changed.cli, home, false, true);
    expect(changed.err()).toContain("changed since you trusted it");
    expect(r.skipped).toMatch(/^coil: not loaded \(changed since it was trusted\):/);
  });

  it("without asking (the first look, before plugins may decide): undecided, and nothing is written", async () => {
    const { dir, home } = project();
    const first = io(dir, [], { tty: true, answer: "a" });
    const r = await settleTrust(first.cli, home, false, false);
    expect(r).toMatchObject({ trusted: false, explicit: false, undecided: true });
    expect(first.err()).toBe("");
    expect(existsSync(join(home, "trust.json"))).toBe(false);
    // decided ones are not undecided: --trust, or a stored answer
    expect((await settleTrust(first.cli, home, true, false)).undecided).toBeUndefined();
  });

  it("never asks in print or JSON mode, or without a terminal", async () => {
    const { dir, home } = project();
    for (const [argv, tty] of [
      [["-p", "hi"], true],
      [["--mode", "json", "hi"], true],
      [["-cp", "hi"], true],
      [["--version"], true],
      [["hi"], false],
    ] as const) {
      const x = io(dir, [...argv], { tty });
      const r = await settleTrust(x.cli, home, false, true);
      expect(r.trusted).toBe(false);
      expect(x.err()).toBe("");
      expect(r.skipped).toContain(`coil: to load it: coil trust ${dir}  (or --trust for one run)`);
    }
    expect((await settleTrust(io(dir, ["-p", "hi"]).cli, home, true, true)).trusted).toBe(true); // --trust
  });

  it("coil trust [dir] and coil untrust [dir]", () => {
    const { dir, home } = project();
    const t = io(dir, []);
    expect(trustCommand(["trust"], t.cli, home)).toBe(0);
    expect(t.out()).toBe(`trusted ${dir}; this loads:\n  .coil/plugins/marker.ts\n  .coil/preset.yaml\n`);
    const elsewhere = io(tmpdir(), []);
    expect(trustCommand(["untrust", dir], elsewhere.cli, home)).toBe(0);
    expect(elsewhere.out()).toBe(`untrusted ${dir}\n`);
    expect(JSON.parse(readFileSync(join(home, "trust.json"), "utf8")).projects).toEqual({});
    const missing = io(dir, []);
    expect(trustCommand(["trust", "nope"], missing.cli, home)).toBe(2);
    expect(missing.err()).toContain("does not exist");
  });
});

describe("the CLI", () => {
  const BIN = join(packageRoot(), "dist", "bin", "coil.js");
  const coil = (dir: string, args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        cwd: dir,
        env: { ...process.env, COIL_HOME: join(dir, ".home") },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
  const marker = (dir: string) => join(dir, "marker.txt");
  /** `coil trust` / `coil untrust` in process (cli/main.ts runs trustCommand): a setup step, not the test's subject. */
  const trustInProcess = (dir: string, command: "trust" | "untrust") => {
    const t = io(dir, []);
    return { code: trustCommand([command], t.cli, join(dir, ".home")), stdout: t.out() };
  };

  it("skips untrusted project code in print mode, runs it once trusted, and asks again after a change", async () => {
    const { dir } = project();
    const untrusted = await coil(dir, ["--script", "r.yaml", "-p", "hi"]);
    expect(untrusted).toMatchObject({ code: 0, stdout: "hello\n" });
    expect(existsSync(marker(dir))).toBe(false);
    expect(untrusted.stderr).toContain("coil: skipped");
    expect(untrusted.stderr).toContain(
      "coil: not loaded (untrusted project):\n  .coil/plugins/marker.ts\n  .coil/preset.yaml\n",
    );

    const json = await coil(dir, ["--script", "r.yaml", "--mode", "json", "hi"]);
    expect(json.code).toBe(0);
    expect(existsSync(marker(dir))).toBe(false);
    expect(json.stderr).toContain(".coil/plugins/marker.ts");

    expect(trustInProcess(dir, "trust").code).toBe(0);
    const trusted = await coil(dir, ["--script", "r.yaml", "-p", "hi"]);
    expect(trusted).toMatchObject({ code: 0, stdout: "hello\n" });
    expect(readFileSync(marker(dir), "utf8")).toBe("project code ran\n");
    expect(trusted.stderr).not.toContain("not loaded");

    rmSync(marker(dir));
    writeFileSync(
      join(dir, ".coil", "preset.yaml"),
      "plugins:\n  - ./plugins/marker.ts\n  - provider-scripted: { chunkSize: 2 }\n",
    );
    const changed = await coil(dir, ["--script", "r.yaml", "-p", "hi"]);
    expect(existsSync(marker(dir))).toBe(false);
    expect(changed.stderr).toContain("coil: not loaded (changed since it was trusted):");

    const once = await coil(dir, ["--trust", "--script", "r.yaml", "-p", "hi"]);
    expect(once.code).toBe(0);
    expect(existsSync(marker(dir))).toBe(true);
    rmSync(marker(dir));
    await coil(dir, ["--script", "r.yaml", "-p", "hi"]);
    expect(existsSync(marker(dir))).toBe(false); // --trust was not stored

    expect(trustInProcess(dir, "trust").code).toBe(0);
    await coil(dir, ["--script", "r.yaml", "-p", "hi"]);
    expect(existsSync(marker(dir))).toBe(true);

    const untrust = trustInProcess(dir, "untrust");
    expect(untrust.stdout).toBe(`untrusted ${dir}\n`);
    rmSync(marker(dir));
    await coil(dir, ["--script", "r.yaml", "-p", "hi"]);
    expect(existsSync(marker(dir))).toBe(false);
  });

  it("a file the trusted plugin imports, in .coil/plans/, outside .coil/ or further down its imports, is in the hash: editing it asks again", async () => {
    const { dir } = project({
      ".coil/plugins/marker.ts": `import { definePlugin } from "coil";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { word } from "../plans/helper2.ts";
import { other } from "../../lib/outside";
export default definePlugin({ id: "marker", setup(ctx) { writeFileSync(join(ctx.cwd, "marker.txt"), word + other + "\\n"); } });
`,
      ".coil/plans/helper2.ts": 'export { deeper as word } from "./helper3.js";\n',
      ".coil/plans/helper3.ts": 'export const deeper = "ran";\n',
      "lib/outside.ts": 'export const other = " too";\n',
      // Code under a state folder that a plugin could load by a computed path is hashed too.
      ".coil/sessions/loaded-later.ts": "export default 1;\n",
    });
    const trust = await coil(dir, ["trust"]);
    for (const f of [
      ".coil/plans/helper2.ts",
      ".coil/plans/helper3.ts",
      "lib/outside.ts",
      ".coil/sessions/loaded-later.ts",
    ])
      expect(trust.stdout).toContain(`  ${f}\n`);
    await coil(dir, ["--script", "r.yaml", "-p", "hi"]);
    expect(readFileSync(marker(dir), "utf8")).toBe("ran too\n");
    // The file of the issue, through the CLI: the plugin's helper in .coil/plans/ ...
    writeFileSync(join(dir, ".coil/plans/helper2.ts"), 'export { deeper as word } from "./helper3.js"; // edited\n');
    rmSync(marker(dir));
    const r = await coil(dir, ["--script", "r.yaml", "-p", "hi"]);
    expect(r.stderr).toContain("coil: not loaded (changed since it was trusted):");
    expect(existsSync(marker(dir))).toBe(false);
    // ... and the others in process: further down the imports, outside .coil/, code in a state folder.
    const home = join(dir, ".home");
    for (const [file, text] of [
      [".coil/plans/helper3.ts", 'export const deeper = "RAN";\n'],
      ["lib/outside.ts", 'export const other = " TOO";\n'],
      [".coil/sessions/loaded-later.ts", "export default 2;\n"],
    ]) {
      expect(trustCommand(["trust"], io(dir, []).cli, home)).toBe(0);
      writeFileSync(join(dir, file!), text!);
      const settled = await settleTrust(io(dir, ["-p", "hi"]).cli, home, false, true);
      expect(settled.skipped, file).toContain("changed since it was trusted");
    }
    expect(trustInProcess(dir, "trust").code).toBe(0);
    // Plans and sessions coil writes itself (markdown, JSONL) still do not count.
    writeFileSync(join(dir, ".coil", "plans", "2026-plan.md"), "- [ ] a\n");
    writeFileSync(join(dir, ".coil", "sessions", "s.jsonl"), "{}\n");
    await coil(dir, ["--script", "r.yaml", "-p", "hi"]);
    expect(readFileSync(marker(dir), "utf8")).toBe("RAN TOO\n");
  }, 60_000);

  it("lists trust and untrust in --help", async () => {
    const { dir } = project();
    const help = await coil(dir, ["--help"]);
    expect(help.stdout).toMatch(/trust \[dir\]\s+trust a project/);
    expect(help.stdout).toMatch(/untrust \[dir\]\s+forget that a project is trusted/);
  });
});

describe("symlinks in what would load (#13.6)", () => {
  it("hashes what a link points to: a changed target makes the project untrusted again", async () => {
    const { dir, home } = project({
      ".coil/preset.yaml": "",
      "coil-preset.yaml": "plugins:\n  - ./plugins/marker.ts\n",
    });
    rmSync(join(dir, ".coil", "preset.yaml"));
    symlinkSync("../coil-preset.yaml", join(dir, ".coil", "preset.yaml"));
    expect(projectFiles(dir, home).map((f) => f.slice(dir.length + 1))).toEqual([
      ".coil/plugins/marker.ts",
      ".coil/preset.yaml",
    ]);
    expect(trustCommand(["trust"], io(dir, []).cli, home)).toBe(0);
    expect((await settleTrust(io(dir, ["-p", "x"]).cli, home, false, true)).trusted).toBe(true);
    writeFileSync(join(dir, "coil-preset.yaml"), "plugins:\n  - ./plugins/marker.ts\n  - guards\n");
    const r = await settleTrust(io(dir, ["-p", "x"]).cli, home, false, true);
    expect(r.trusted).toBe(false);
    expect(r.skipped).toContain("changed since it was trusted");
  });

  it("walks a symlinked folder: a helper imported through .coil/lib is hashed", async () => {
    const { dir, home } = project({ "shared/helper.ts": "export const x = 1;\n" });
    symlinkSync("../shared", join(dir, ".coil", "lib"));
    expect(projectFiles(dir, home).map((f) => f.slice(dir.length + 1))).toContain(".coil/lib/helper.ts");
    expect(trustCommand(["trust"], io(dir, []).cli, home)).toBe(0);
    writeFileSync(join(dir, "shared", "helper.ts"), "export const x = 2;\n");
    expect((await settleTrust(io(dir, ["-p", "x"]).cli, home, false, true)).trusted).toBe(false);
    // a link loop does not hang the walk
    symlinkSync("..", join(dir, "shared", "loop"));
    expect(projectFiles(dir, home).filter((f) => f.includes("loop"))).toEqual([]);
  });

  it("retargeting a link to a file with the same bytes still counts as a change", () => {
    const { dir, home } = project({ "a.yaml": "plugins: []\n", "b.yaml": "plugins: []\n", ".coil/preset.yaml": "" });
    rmSync(join(dir, ".coil", "preset.yaml"));
    symlinkSync("../a.yaml", join(dir, ".coil", "preset.yaml"));
    const before = fingerprint(dir, projectFiles(dir, home));
    rmSync(join(dir, ".coil", "preset.yaml"));
    symlinkSync("../b.yaml", join(dir, ".coil", "preset.yaml"));
    expect(fingerprint(dir, projectFiles(dir, home))).not.toBe(before);
  });

  it("code a plugin imports from outside the project is listed as such and, like a link leaving it, not offered at the prompt", async () => {
    const outside = realpathSync(mkdtempSync(join(tmpdir(), "coil-outside-")));
    temps.push(outside);
    writeFileSync(join(outside, "shared.ts"), "export const s = 1;\n");
    const { dir, home } = project({
      ".coil/plugins/marker.ts": `import { s } from "${relative(join(realpathSync(tmpdir()), "x", ".coil", "plugins"), join(outside, "shared.ts"))}";\n${MARKER_PLUGIN}`,
    });
    const asked = io(dir, [], { tty: true, answer: "a" });
    const r = await settleTrust(asked.cli, home, false, true);
    expect(r.trusted).toBe(false);
    expect(asked.err()).not.toContain("trust it? [y]es");
    expect(r.skipped).toMatch(/ {2}\.\.\/.*shared\.ts \(outside the project\)\n/);
  });

  it("a link leaving the project is refused at the prompt; only coil trust or --trust trust it", async () => {
    const { dir, home } = project();
    const outside = realpathSync(mkdtempSync(join(tmpdir(), "coil-outside-")));
    temps.push(outside);
    writeFileSync(join(outside, "helper.ts"), "export const y = 1;\n");
    symlinkSync(outside, join(dir, ".coil", "lib"));
    const asked = io(dir, [], { tty: true, answer: "a" });
    const r = await settleTrust(asked.cli, home, false, true);
    expect(r.trusted).toBe(false);
    expect(asked.err()).not.toContain("trust it? [y]es");
    expect(r.skipped).toContain(`.coil/lib/helper.ts -> ${join(outside, "helper.ts")} (outside the project)`);
    expect(r.skipped).toContain(`links leaving the project`);
    expect(existsSync(join(home, "trust.json"))).toBe(false);
    expect((await settleTrust(io(dir, ["-p", "x"]).cli, home, true, true)).trusted).toBe(true); // --trust
    const t = io(dir, []);
    expect(trustCommand(["trust"], t.cli, home)).toBe(0);
    expect(t.out()).toContain(`.coil/lib/helper.ts -> ${join(outside, "helper.ts")} (outside the project)`);
    expect((await settleTrust(io(dir, ["-p", "x"]).cli, home, false, true)).trusted).toBe(true);
    writeFileSync(join(outside, "helper.ts"), "export const y = 2;\n");
    expect((await settleTrust(io(dir, ["-p", "x"]).cli, home, false, true)).trusted).toBe(false);
  });
});

describe("--plugin names and the project's node_modules (#13.6)", () => {
  const BIN = join(packageRoot(), "dist", "bin", "coil.js");
  const pkg = (root: string, who: string) => {
    const d = join(root, "node_modules", "good-pkg");
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, "package.json"), JSON.stringify({ name: "good-pkg", version: "1.0.0", main: "index.js" }));
    writeFileSync(
      join(d, "index.js"),
      `import { writeFileSync } from "node:fs";\nimport { join } from "node:path";\nexport default { id: "good-pkg", setup(ctx) { writeFileSync(join(ctx.cwd, "who.txt"), ${JSON.stringify(who)}); } };\n`,
    );
    writeFileSync(join(d, "..", "..", "package.json"), JSON.stringify({ type: "module" }));
  };
  const coil = (dir: string, args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        cwd: dir,
        env: { ...process.env, COIL_HOME: join(dir, ".home") },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("close", (code) => resolve({ code, stderr }));
    });

  it("an untrusted project's node_modules never supplies a --plugin package; the user's installed one does", async () => {
    const { dir } = project();
    pkg(dir, "project");
    pkg(join(dir, ".home", "packages"), "user");
    const untrusted = await coil(dir, ["--plugin", "good-pkg", "--script", "r.yaml", "-p", "hi"]);
    expect(untrusted.code).toBe(0);
    expect(readFileSync(join(dir, "who.txt"), "utf8")).toBe("user");
    const trusted = await coil(dir, ["--trust", "--plugin", "good-pkg", "--script", "r.yaml", "-p", "hi"]);
    expect(trusted.code).toBe(0);
    expect(readFileSync(join(dir, "who.txt"), "utf8")).toBe("project");
  });

  it("only in the untrusted project: not loaded, and the error says why and what to do", async () => {
    const { dir } = project();
    pkg(dir, "project");
    const r = await coil(dir, ["--plugin", "good-pkg", "--script", "r.yaml", "-p", "hi"]);
    expect(r.code).toBe(2);
    expect(existsSync(join(dir, "who.txt"))).toBe(false);
    expect(r.stderr).toContain(
      `npm package 'good-pkg' was found only in ${join(dir, "node_modules", "good-pkg")}, by way of this project's folders, and the project is not trusted`,
    );
    expect(r.stderr).toMatch(/coil trust|--trust/);
  });

  it("a project with nothing in .coil is not trusted for its node_modules until coil trust; nor is a parent folder's", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "coil-trust-")));
    temps.push(dir);
    writeFileSync(join(dir, "r.yaml"), "- text: hello\n");
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "sub", "r.yaml"), "- text: hello\n");
    pkg(dir, "project");
    pkg(join(dir, ".home", "packages"), "user");
    expect((await coil(dir, ["--plugin", "good-pkg", "--script", "r.yaml", "-p", "hi"])).code).toBe(0);
    expect(readFileSync(join(dir, "who.txt"), "utf8")).toBe("user");
    // from a subfolder, the parent's node_modules is passed over as well
    const sub = await new Promise<number | null>((resolve) =>
      spawn(process.execPath, [BIN, "--plugin", "good-pkg", "--script", "r.yaml", "-p", "hi"], {
        cwd: join(dir, "sub"),
        env: { ...process.env, COIL_HOME: join(dir, ".home") },
        stdio: "ignore",
      }).on("close", resolve),
    );
    expect(sub).toBe(0);
    expect(readFileSync(join(dir, "sub", "who.txt"), "utf8")).toBe("user");
    expect(trustCommand(["trust"], io(dir, []).cli, join(dir, ".home"))).toBe(0); // what `coil trust` runs
    expect((await coil(dir, ["--plugin", "good-pkg", "--script", "r.yaml", "-p", "hi"])).code).toBe(0);
    expect(readFileSync(join(dir, "who.txt"), "utf8")).toBe("project");
  });
});

describe("a project with nothing to load is not trusted to run its own programs", () => {
  const BIN = join(packageRoot(), "dist", "bin", "coil.js");
  // No node_modules/.bin on PATH (vitest puts this checkout's there): only the project's could be found.
  const PATH = (process.env.PATH ?? "")
    .split(":")
    .filter((d) => !d.endsWith(join("node_modules", ".bin")))
    .join(":");
  const coil = (dir: string, args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        cwd: dir,
        env: { ...process.env, PATH, COIL_HOME: join(dir, ".home") },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
  const git = (dir: string, ...args: string[]) =>
    new Promise<void>((resolve, reject) =>
      spawn("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir, stdio: "ignore" }).on(
        "close",
        (code) => (code === 0 ? resolve() : reject(new Error(`git ${args.join(" ")}: exit ${code}`))),
      ),
    );

  /** A cloned-looking repository: no .coil/, a committed language server and a committed Claude Code command. */
  async function repository() {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "coil-trust-bin-")));
    temps.push(dir);
    const files: Record<string, string> = {
      "package.json": JSON.stringify({ name: "cloned", version: "1.0.0" }),
      "tsconfig.json": "{}\n",
      "src/a.ts": "export const a = 1;\n",
      "node_modules/.bin/typescript-language-server": `#!/bin/sh\necho "$@" >> ${join(dir, "lsp-ran.txt")}\nexit 1\n`,
      ".claude/commands/setup.md": `Setup: !\`touch ${join(dir, "command-ran.txt")}\`\n`,
      "r.yaml": [
        "- toolCalls: [{ name: read, arguments: { path: src/a.ts } }]",
        "- toolCalls: [{ name: lsp, arguments: { action: diagnostics, path: src/a.ts } }]",
        "- text: done",
        "- text: done",
        "",
      ].join("\n"),
    };
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text, { mode: name.includes(".bin/") ? 0o755 : 0o644 });
    }
    await git(dir, "init", "-q");
    await git(dir, "add", "-A", "-f");
    await git(dir, "commit", "-q", "-m", "a repository to clone");
    return dir;
  }

  it("its committed node_modules/.bin/typescript-language-server and its commands' !`cmd` run only once it is trusted", async () => {
    const dir = await repository();
    const ran = join(dir, "lsp-ran.txt");
    const commandRan = join(dir, "command-ran.txt");
    const untrusted = await coil(dir, ["--script", "r.yaml", "-p", "look at src/a.ts"]);
    expect(untrusted.code, untrusted.stderr).toBe(0);
    expect(existsSync(ran)).toBe(false);
    const command = await coil(dir, ["--script", "r.yaml", "--mode", "json", "/setup"]);
    expect(command.code, command.stderr).toBe(0);
    expect(command.stdout).toMatch(/not run: .*setup\.md is a project file and this project is not trusted/);
    expect(existsSync(commandRan)).toBe(false);
    const doctor = await coil(dir, ["doctor"]);
    expect(doctor.stdout).toContain(
      "not trusted: its .coil/ preset, hooks, .mcp.json servers, plugins and node_modules/.bin do not load",
    );

    expect((await coil(dir, ["trust"])).stdout).toBe(`trusted ${dir} (nothing to load yet)\n`);
    const trusted = await coil(dir, ["--script", "r.yaml", "-p", "look at src/a.ts"]);
    expect(trusted.code, trusted.stderr).toBe(0);
    // It ran (as the server it claims to be; the lsp plugin retries a server that exits at once).
    expect(readFileSync(ran, "utf8")).toMatch(/^(--stdio\n)+$/);
    await coil(dir, ["--script", "r.yaml", "--mode", "json", "/setup"]);
    expect(existsSync(commandRan)).toBe(true);
  }, 60_000);
});

describe.skipIf(!hasTmux)("the trust question in a terminal", () => {
  it("is asked with --model on the command line (a --mode check must not match --model)", async () => {
    const { dir } = project();
    const BIN = join(packageRoot(), "dist", "bin", "coil.js");
    const t = new Tmux({
      dir,
      cwd: dir,
      cols: 100,
      rows: 30,
      env: { COIL_HOME: join(dir, ".home") },
      command: `${process.execPath} ${BIN} --model scripted/scripted --script r.yaml`,
    }).start();
    try {
      await t.waitFor("trust it? [y]es for this run, [n]o, [a]lways:");
      t.type("y");
      t.keys("Enter");
      await t.waitFor("Enter to send");
      expect(readFileSync(join(dir, "marker.txt"), "utf8")).toBe("project code ran\n");
    } finally {
      t.kill();
    }
  }, 30_000);
});
