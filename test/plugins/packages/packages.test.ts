/** coil install/remove/list/update with the real npm (offline), the lock file, presets from packages, project trust. */
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanTemps, coil, requireBuild, ROOT, run, sandboxEnv, tempDir, writeFiles } from "../../support/ecosystem.js";

const REPLIES = `- text: Measuring.
  toolCalls: [{ name: word_stats, arguments: { text: "one two three" } }]
- text: It has 3 words.
`;
const EXPECTED = "word stats: 1 lines, 3 words, 13 characters";

let tarball: string;
let tarballIntegrity: string;

beforeAll(async () => {
  requireBuild();
  const packDir = tempDir("coil-pack-");
  const packed = await run("npm", ["pack", join(ROOT, "examples", "coil-bundle-demo"), "--pack-destination", packDir], {
    cwd: packDir,
    env: sandboxEnv(packDir),
  });
  expect(packed.code, packed.stderr).toBe(0);
  tarball = join(packDir, packed.stdout.trim().split("\n").at(-1)!);
  tarballIntegrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
}, 30_000);
afterAll(cleanTemps);

function sandbox() {
  const base = tempDir("coil-pkg-");
  const project = writeFiles(join(base, "project"), { "replies.yaml": REPLIES });
  const env = sandboxEnv(base);
  const packages = join(base, "coil-home", "packages");
  const lock = () => JSON.parse(readFileSync(join(packages, "coil-lock.json"), "utf8"));
  const toolText = (stdout: string) =>
    stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((e) => e.type === "tool_execution_end")?.result;
  return { base, project, env, packages, lock, toolText };
}

describe("packages", () => {
  it("installs the example bundle from its npm pack tarball, records it in the lock file, and its preset runs the custom tool", async () => {
    const s = sandbox();
    const installed = await coil(s.project, ["--plugin", "packages", "install", tarball], s.env);
    expect(installed.stderr).toBe("");
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain(`installed coil-bundle-demo@1.0.0 into ${s.packages}`);
    expect(existsSync(join(s.packages, "node_modules", "coil-bundle-demo", "plugin.ts"))).toBe(true);

    const entry = s.lock().packages["coil-bundle-demo"];
    expect(entry).toMatchObject({
      version: "1.0.0",
      coilPackage: true,
      integrity: tarballIntegrity,
      coil: { plugins: ["./plugin.ts"], skills: ["skills"], promptTemplates: ["prompts"] },
    });
    expect(entry.resolved).toMatch(/^file:.*coil-bundle-demo-1\.0\.0\.tgz$/);

    const listed = await coil(s.project, ["--plugin", "packages", "list", "--json"], s.env);
    const scopes = JSON.parse(listed.stdout);
    expect(scopes[0]).toMatchObject({
      scope: "user",
      dir: s.packages,
      packages: { "coil-bundle-demo": { version: "1.0.0" } },
    });

    const ran = await coil(
      s.project,
      [
        "--preset",
        "npm:coil-bundle-demo",
        "--provider",
        "scripted",
        "--script",
        "replies.yaml",
        "--mode",
        "json",
        "-p",
        "count",
      ],
      s.env,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const result = s.toolText(ran.stdout);
    expect(result).toMatchObject({
      toolName: "word_stats",
      isError: false,
      content: [{ type: "text", text: EXPECTED }],
    });
  });

  it("install means active: `coil install ./x.tgz` enables the package in $COIL_HOME/preset.yaml (comments kept) and the next run calls its tool; disable, enable and remove round trip", async () => {
    const s = sandbox();
    const requests = join(s.base, "requests.jsonl");
    const userPreset = join(s.base, "coil-home", "preset.yaml");
    writeFiles(join(s.base, "coil-home"), {
      "preset.yaml": `# my own preset: keep this comment\nplugins:\n  - provider-scripted: { recordTo: ${requests} }  # where requests go\n`,
    });
    const args = ["--provider", "scripted", "--script", "replies.yaml", "--mode", "json", "-p", "/stats one two three"];
    const firstRequestOfRun = (ran: { stdout: string }) => {
      const lines = readFileSync(requests, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      return lines.at(-(ran.stdout.includes("It has 3 words.") ? 2 : 1))!;
    };

    const installed = await coil(s.project, ["install", tarball], s.env);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain("enabled coil-bundle-demo@1.0.0; active now:");
    expect(installed.stdout).toContain("  tools: word_stats");
    expect(installed.stdout).toContain("  skills: release-notes");
    expect(installed.stdout).toContain("  prompt templates: /stats");
    expect(installed.stdout).toContain("  presets (not applied; run with --preset <name>): npm:coil-bundle-demo");
    const preset = readFileSync(userPreset, "utf8");
    expect(preset).toBe(
      `# my own preset: keep this comment\nplugins:\n  - provider-scripted: { recordTo: ${requests} } # where requests go\n  - npm:coil-bundle-demo\n`,
    );

    // No further step: the tool, the skill and the template act in the next run (the plugin alone, not the package's preset).
    const ran = await coil(s.project, args, s.env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(s.toolText(ran.stdout)).toMatchObject({
      toolName: "word_stats",
      isError: false,
      content: [{ type: "text", text: "stats: 1 lines, 3 words, 13 characters" }],
    });
    const first = firstRequestOfRun(ran);
    expect(JSON.stringify(first.system)).toContain("release-notes");
    expect(JSON.stringify(first.messages)).toContain(
      "Use the word_stats tool on this text and report the counts: one two three",
    );
    const listed = JSON.parse((await coil(s.project, ["list", "--json"], s.env)).stdout);
    expect(listed[0].packages["coil-bundle-demo"].enabled).toBe(true);
    // A user-level install is the user's own choice: it loads in a project that is not trusted, too.
    const untrusted = writeFiles(join(s.base, "untrusted"), {
      "replies.yaml": REPLIES,
      ".coil/preset.yaml": "plugins:\n  - ./evil.ts\n",
    });
    const there = await coil(
      untrusted,
      ["--provider", "scripted", "--script", "replies.yaml", "--mode", "json", "-p", "count"],
      s.env,
    );
    expect(there.code, there.stderr).toBe(0);
    expect(there.stderr).toContain("untrusted project");
    expect(s.toolText(there.stdout)).toMatchObject({ toolName: "word_stats", isError: false });

    const disabled = await coil(s.project, ["disable", "coil-bundle-demo"], s.env);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stdout).toContain("disabled coil-bundle-demo");
    expect(readFileSync(userPreset, "utf8")).toContain("  - npm:coil-bundle-demo: false\n");
    expect(readFileSync(userPreset, "utf8")).toContain("# my own preset: keep this comment");
    expect(existsSync(join(s.packages, "node_modules", "coil-bundle-demo", "plugin.ts"))).toBe(true);
    // Disabled, the package's template is gone: print mode refuses the unknown /stats (exit 2, issue 27.7)
    // before any request, and a plain prompt runs without the package's tool and skill.
    const sent = () => readFileSync(requests, "utf8").trim().split("\n").length;
    const before = sent();
    const off = await coil(s.project, args, s.env);
    expect(off.code, off.stderr).toBe(2);
    expect(off.stderr).toContain("unknown command /stats");
    expect(sent()).toBe(before);
    const plain = await coil(s.project, [...args.slice(0, -1), "count"], s.env);
    expect(plain.code, plain.stderr).toBe(0);
    expect(s.toolText(plain.stdout)).toMatchObject({ toolName: "word_stats", isError: true });
    expect(JSON.stringify(firstRequestOfRun(plain).system)).not.toContain("release-notes");
    expect((await coil(s.project, ["list"], s.env)).stdout).toContain("    disabled");

    const enabled = await coil(s.project, ["enable", "coil-bundle-demo"], s.env);
    expect(enabled.code, enabled.stderr).toBe(0);
    expect(enabled.stdout).toContain("  tools: word_stats");
    expect(readFileSync(userPreset, "utf8")).toBe(preset);
    // Installing the same tarball again while disabled enables it again.
    expect((await coil(s.project, ["disable", "coil-bundle-demo"], s.env)).code).toBe(0);
    const again = await coil(s.project, ["install", tarball], s.env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("enabled coil-bundle-demo@1.0.0; active now:");
    expect(readFileSync(userPreset, "utf8")).toBe(preset);
    const on = await coil(s.project, args, s.env);
    expect(s.toolText(on.stdout)).toMatchObject({ toolName: "word_stats", isError: false });

    const unknown = await coil(s.project, ["disable", "nope"], s.env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("not installed in");

    const removed = await coil(s.project, ["remove", "coil-bundle-demo"], s.env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(readFileSync(userPreset, "utf8")).toBe(
      `# my own preset: keep this comment\nplugins:\n  - provider-scripted: { recordTo: ${requests} } # where requests go\n`,
    );
    const gone = await coil(s.project, args, s.env);
    expect(gone.code, gone.stderr).toBe(2);
    expect(gone.stderr).toContain("unknown command /stats");
    const plainGone = await coil(s.project, [...args.slice(0, -1), "count"], s.env);
    expect(plainGone.code, plainGone.stderr).toBe(0);
    expect(s.toolText(plainGone.stdout)).toMatchObject({ toolName: "word_stats", isError: true });
    expect(JSON.stringify(firstRequestOfRun(plainGone).system)).not.toContain("release-notes");
  }, 60_000);

  it("a team preset extends npm:<package> installed under $COIL_HOME/packages; a missing one fails with the install hint", async () => {
    const s = sandbox();
    writeFiles(s.project, { "team.yaml": "extends: npm:coil-bundle-demo\n" });
    const before = await coil(
      s.project,
      ["--preset", "./team.yaml", "--provider", "scripted", "--script", "replies.yaml", "-p", "count"],
      s.env,
    );
    expect(before.code).toBe(2);
    expect(before.stderr).toContain('npm package "coil-bundle-demo" with a preset not found');

    expect((await coil(s.project, ["--plugin", "packages", "install", tarball], s.env)).code).toBe(0);
    const ran = await coil(
      s.project,
      [
        "--preset",
        "./team.yaml",
        "--provider",
        "scripted",
        "--script",
        "replies.yaml",
        "--mode",
        "json",
        "-p",
        "count",
      ],
      s.env,
    );
    expect(ran.code, ran.stderr).toBe(0);
    expect(s.toolText(ran.stdout)?.content[0].text).toBe(EXPECTED);
  });

  it("installs from a local folder (linked), removes it, and the lock follows", async () => {
    const s = sandbox();
    const folder = join(ROOT, "examples", "coil-bundle-demo");
    const installed = await coil(s.project, ["--plugin", "packages", "install", folder], s.env);
    expect(installed.code, installed.stderr).toBe(0);
    expect(lstatSync(join(s.packages, "node_modules", "coil-bundle-demo")).isSymbolicLink()).toBe(true);
    expect(s.lock().packages["coil-bundle-demo"]).toMatchObject({ version: "1.0.0", link: true, coilPackage: true });
    expect(s.lock().packages["coil-bundle-demo"].integrity).toBeUndefined();

    const ran = await coil(
      s.project,
      ["--preset", "npm:coil-bundle-demo", "--provider", "scripted", "--script", "replies.yaml", "-p", "count"],
      s.env,
    );
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe("It has 3 words.\n");

    const unknown = await coil(s.project, ["--plugin", "packages", "remove", "nope"], s.env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("not installed in");
    expect(unknown.stderr).toContain("(installed: coil-bundle-demo)");
    const removed = await coil(s.project, ["--plugin", "packages", "remove", "coil-bundle-demo"], s.env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(existsSync(join(s.packages, "node_modules", "coil-bundle-demo"))).toBe(false);
    expect(s.lock().packages).toEqual({});
  });

  it("`coil install` with no spec reinstalls exactly what the lock records, and refuses a lock whose integrity does not match", async () => {
    const s = sandbox();
    expect((await coil(s.project, ["--plugin", "packages", "install", tarball], s.env)).code).toBe(0);
    const lockText = readFileSync(join(s.packages, "coil-lock.json"), "utf8");
    // A teammate's machine: only the lock file and package.json are there.
    rmSync(join(s.packages, "node_modules"), { recursive: true });
    rmSync(join(s.packages, "package-lock.json"));
    // The user preset still enables it: a run goes on without it and says how to restore it.
    const without = await coil(s.project, ["--provider", "scripted", "--script", "replies.yaml", "-p", "count"], s.env);
    expect(without.code, without.stderr).toBe(0);
    expect(without.stderr).toContain(
      `npm package 'coil-bundle-demo' is enabled in ${join(s.base, "coil-home", "preset.yaml")}:4 but not installed, so it is skipped: \`coil install\` restores`,
    );
    const restored = await coil(s.project, ["--plugin", "packages", "install"], s.env);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain("installed 1 package(s) from");
    expect(readFileSync(join(s.packages, "coil-lock.json"), "utf8")).toBe(lockText);

    const tampered = JSON.parse(lockText);
    tampered.packages["coil-bundle-demo"].integrity = "sha512-AAAA";
    writeFileSync(join(s.packages, "coil-lock.json"), JSON.stringify(tampered));
    const refused = await coil(s.project, ["--plugin", "packages", "install"], s.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("does not match the lock's sha512-AAAA");
    expect(
      JSON.parse(readFileSync(join(s.packages, "coil-lock.json"), "utf8")).packages["coil-bundle-demo"].integrity,
    ).toBe("sha512-AAAA");
  });

  it("project packages install under .coil/packages and load only when the project is trusted", async () => {
    const s = sandbox();
    const installed = await coil(s.project, ["--plugin", "packages", "install", "--project", tarball], s.env);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain("project packages load only while the project is trusted");
    const projectPackages = join(s.project, ".coil", "packages");
    expect(
      JSON.parse(readFileSync(join(projectPackages, "coil-lock.json"), "utf8")).packages["coil-bundle-demo"].integrity,
    ).toBe(tarballIntegrity);
    // Enabled in the project's preset, found in .coil/packages once the project is trusted.
    expect(readFileSync(join(s.project, ".coil", "preset.yaml"), "utf8")).toContain(
      "plugins:\n  - npm:coil-bundle-demo\n",
    );
    // The project is not trusted (nothing said so), so its code is not loaded to list the tools.
    expect(installed.stdout).toContain("note: its tools are not listed: this project is not trusted");
    expect(installed.stdout).toContain("  skills: release-notes");
    expect(installed.stdout).toContain("  prompt templates: /stats");
    const args = ["--provider", "scripted", "--script", "replies.yaml", "--mode", "json", "-p", "count"];
    const enabledHere = await coil(s.project, ["--trust", ...args], s.env);
    expect(enabledHere.code, enabledHere.stderr).toBe(0);
    expect(s.toolText(enabledHere.stdout)).toMatchObject({
      toolName: "word_stats",
      isError: false,
      content: [{ type: "text", text: "stats: 1 lines, 3 words, 13 characters" }],
    });
    // The project package's skill and template act in the trusted project too, and not in an untrusted one.
    const requests = join(s.base, "project-requests.jsonl");
    const recorded = [
      "--provider",
      "scripted",
      "--script",
      "replies.yaml",
      "--mode",
      "json",
      "-p",
      "/stats one two three",
    ];
    writeFiles(join(s.base, "coil-home"), {
      "preset.yaml": `plugins:\n  - provider-scripted: { recordTo: ${requests} }\n`,
    });
    const templated = await coil(s.project, ["--trust", ...recorded], s.env);
    expect(templated.code, templated.stderr).toBe(0);
    const firstRequest = JSON.parse(readFileSync(requests, "utf8").trim().split("\n")[0]!);
    expect(JSON.stringify(firstRequest.system)).toContain("release-notes");
    expect(JSON.stringify(firstRequest.messages)).toContain(
      "Use the word_stats tool on this text and report the counts: one two three",
    );
    rmSync(requests);
    // Untrusted, the template does not exist: print mode refuses /stats (exit 2, issue 27.7) and sends nothing;
    // a plain prompt goes without the package's skill.
    const refusedHere = await coil(s.project, recorded, s.env);
    expect(refusedHere.code, refusedHere.stderr).toBe(2);
    expect(refusedHere.stderr).toContain("unknown command /stats");
    expect(existsSync(requests)).toBe(false);
    await coil(s.project, [...recorded.slice(0, -1), "count"], s.env);
    const notTrusted = JSON.parse(readFileSync(requests, "utf8").trim().split("\n")[0]!);
    expect(JSON.stringify(notTrusted.system)).not.toContain("release-notes");
    expect(JSON.stringify(notTrusted.messages)).not.toContain("Use the word_stats tool on this text");
    rmSync(join(s.base, "coil-home", "preset.yaml"));
    writeFiles(s.project, { ".coil/preset.yaml": "extends: ./packages/node_modules/coil-bundle-demo/preset.yaml\n" });

    const untrusted = await coil(s.project, args, s.env);
    expect(untrusted.stderr).toContain("untrusted project");
    expect(s.toolText(untrusted.stdout)).toMatchObject({ toolName: "word_stats", isError: true });
    expect(s.toolText(untrusted.stdout)?.content[0].text).not.toContain("word stats:");

    const listed = await coil(s.project, ["--plugin", "packages", "list"], s.env);
    expect(listed.stdout).toContain("(not loaded: this project is not trusted; coil trust)");
    // Installing what a cloned repository's lock file asks for needs trust first.
    const restore = await coil(s.project, ["--plugin", "packages", "install", "--project"], s.env);
    expect(restore.code).toBe(2);
    expect(restore.stderr).toContain("this project is not trusted");
    const update = await coil(s.project, ["--plugin", "packages", "update", "--project"], s.env);
    expect(update.code).toBe(2);

    const trusted = await coil(s.project, ["--trust", ...args], s.env);
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(s.toolText(trusted.stdout)?.content[0].text).toBe(EXPECTED);
    const updated = await coil(s.project, ["--plugin", "packages", "update", "--project", "--trust"], s.env);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toContain("coil-bundle-demo 1.0.0 (up to date)");
  });

  it("install --from <preset> installs the npm packages a preset needs, pinned by the lock, only with --yes when not on a terminal", async () => {
    const s = sandbox();
    // The team ships a preset and a lock file that pins the package to the tarball.
    expect((await coil(s.project, ["--plugin", "packages", "install", tarball], s.env)).code).toBe(0);
    rmSync(join(s.packages, "node_modules"), { recursive: true });
    writeFiles(s.project, { "team.yaml": "extends: npm:coil-bundle-demo\n" });
    const asked = await coil(s.project, ["--plugin", "packages", "install", "--from", "team.yaml"], s.env);
    expect(asked.code).toBe(2);
    expect(asked.stderr).toContain("needs packages that are not installed");
    expect(asked.stderr).toContain("pass --yes");
    const yes = await coil(s.project, ["--plugin", "packages", "install", "--from", "team.yaml", "--yes"], s.env);
    expect(yes.code, yes.stderr).toBe(0);
    expect(s.lock().packages["coil-bundle-demo"].integrity).toBe(tarballIntegrity);
    const again = await coil(s.project, ["--plugin", "packages", "install", "--from", "team.yaml"], s.env);
    expect(again.stdout).toContain("is installed: coil-bundle-demo");
    const ran = await coil(
      s.project,
      ["--preset", "./team.yaml", "--provider", "scripted", "--script", "replies.yaml", "-p", "count"],
      s.env,
    );
    expect(ran.stdout).toBe("It has 3 words.\n");
  });

  // Offline, the registry cannot serve coil-bundle-demo, so a teammate's lock file pins it to the packed tarball
  // (the lock is how `coil install` pins versions; install on first use honours it the same way).
  const pinnedLock = (s: ReturnType<typeof sandbox>) =>
    writeFiles(s.packages, {
      "coil-lock.json": JSON.stringify({
        lockfileVersion: 1,
        packages: {
          "coil-bundle-demo": { spec: "^1.0.0", version: "1.0.0", resolved: `file:${tarball}`, coilPackage: true },
        },
      }),
    });

  it("a preset extending a missing npm:<package>@<range> installs it on first use: refused off a terminal without --yes, installed and locked with --yes", async () => {
    const s = sandbox();
    pinnedLock(s);
    writeFiles(s.project, { "team.yaml": "extends: npm:coil-bundle-demo@^1\n" });
    const args = [
      "--preset",
      "./team.yaml",
      "--provider",
      "scripted",
      "--script",
      "replies.yaml",
      "--mode",
      "json",
      "-p",
      "count",
    ];

    const refused = await coil(s.project, args, s.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('npm package "coil-bundle-demo" with a preset not found');
    expect(refused.stderr).toContain(`pass --yes to install coil-bundle-demo@^1 into ${s.packages}`);
    expect(refused.stderr).toContain("coil install coil-bundle-demo@^1");
    expect(existsSync(join(s.packages, "node_modules", "coil-bundle-demo"))).toBe(false);

    const ran = await coil(s.project, [...args, "--yes"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toContain(`installed coil-bundle-demo@1.0.0 into ${s.packages}`);
    expect(s.toolText(ran.stdout)).toMatchObject({
      toolName: "word_stats",
      isError: false,
      content: [{ type: "text", text: EXPECTED }],
    });
    // recorded like `coil install`: the lock gains the tarball's integrity, package.json the dependency
    expect(s.lock().packages["coil-bundle-demo"]).toMatchObject({
      version: "1.0.0",
      integrity: tarballIntegrity,
      coilPackage: true,
    });
    expect(JSON.parse(readFileSync(join(s.packages, "package.json"), "utf8")).dependencies["coil-bundle-demo"]).toMatch(
      /^file:.*\.tgz$/,
    );

    const again = await coil(s.project, args, s.env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain("installed");
  });

  it("a missing npm: plugin (from --plugin, with a range) is installed on first use with --yes and loads", async () => {
    const s = sandbox();
    pinnedLock(s);
    const args = [
      "--plugin",
      "npm:coil-bundle-demo@^1",
      "--provider",
      "scripted",
      "--script",
      "replies.yaml",
      "--mode",
      "json",
      "-p",
      "count",
    ];
    const refused = await coil(s.project, args, s.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("PLUGIN_NOT_FOUND npm package 'coil-bundle-demo' is not installed");
    expect(refused.stderr).toContain("pass --yes");
    const ran = await coil(s.project, [...args, "--yes"], s.env);
    expect(ran.code, ran.stderr).toBe(0);
    // the plugin alone, without the bundle's preset (which sets its label to "word stats")
    expect(s.toolText(ran.stdout)).toMatchObject({
      toolName: "word_stats",
      isError: false,
      content: [{ type: "text", text: "stats: 1 lines, 3 words, 13 characters" }],
    });
    expect(s.lock().packages["coil-bundle-demo"].integrity).toBe(tarballIntegrity);
  });

  it("reports npm failures and unknown options with exit codes", async () => {
    const s = sandbox();
    const missing = await coil(s.project, ["--plugin", "packages", "install", "./nope.tgz"], s.env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("nope.tgz does not exist");
    const bad = await coil(s.project, ["--plugin", "packages", "list", "--frobnicate"], s.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("frobnicate");
    const offline = await coil(s.project, ["--plugin", "packages", "install", "coil-no-such-package-xyz"], s.env);
    expect(offline.code).toBe(1);
    expect(offline.stderr).toContain("npm install failed");
  });
});
