/**
 * #13.3 probes: the safe preset's rules hold for every tool, in every permission mode. Real tools
 * (tools-coding, tools-search) on real files, symlinks into a temporary home directory, the gate
 * configured with the rules of presets/safe.yaml as shipped.
 */
import { spawn } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf, type Plugin, type ToolResultMessage } from "../../../api/index.js";
import { packageRoot } from "../../../boot/paths.js";
import gate from "../../../plugins/permission-gate/index.js";
import codingTools from "../../../plugins/tools-coding/index.js";
import searchTools from "../../../plugins/tools-search/index.js";
import { agentIn } from "../../support/tools.js";

const SSH_KEY = "SSH-PRIVATE-KEY-probe-4d1c";
const DOTENV = "DOTENV-SECRET-probe-77aa";
const AUTH = "sk-auth-json-probe-91b3";
const ENV_KEY = "sk-env-probe-5e02";
const NETRC = "NETRC-PASSWORD-probe-a7";
const HISTORY = "HISTORY-probe-0c";
const MARKERS = [SSH_KEY, DOTENV, AUTH, ENV_KEY, NETRC, HISTORY];

const saved = { HOME: process.env.HOME, COIL_HOME: process.env.COIL_HOME, PROBE_API_KEY: process.env.PROBE_API_KEY };
let root = "";
let home = "";
let proj = "";
let outside = "";

function write(path: string, text: string) {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "coil-probes-")));
  home = join(root, "home");
  proj = join(root, "proj");
  outside = join(root, "outside");
  write(join(home, ".ssh", "id_rsa"), `${SSH_KEY}\n`);
  write(join(home, ".netrc"), `machine x login u password ${NETRC}\n`);
  write(join(home, ".bash_history"), `export TOKEN=${HISTORY}\n`);
  write(join(home, ".coil", "auth.json"), JSON.stringify({ anthropic: { type: "api_key", key: AUTH } }));
  write(join(proj, ".env"), `API_SECRET=${DOTENV}\n`);
  write(join(proj, "src", "a.ts"), "export const a = 1;\n");
  write(join(outside, "target.txt"), "outside original\n");
  symlinkSync(join(home, ".ssh", "id_rsa"), join(proj, "key_link"));
  symlinkSync(join(home, ".ssh"), join(proj, "ssh_dir"));
  symlinkSync(".env", join(proj, "env_link"));
  symlinkSync(join(outside, "target.txt"), join(proj, "out_link"));
  symlinkSync(outside, join(proj, "out_dir"));
  symlinkSync(join(outside, "new.txt"), join(proj, "dangling_link"));
  symlinkSync(join(proj, "src"), join(outside, "into_proj"));
  process.env.HOME = home;
  process.env.COIL_HOME = join(home, ".coil");
  process.env.PROBE_API_KEY = ENV_KEY;
});

afterAll(() => {
  for (const [k, v] of Object.entries(saved))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  rmSync(root, { recursive: true, force: true });
});

/** The permission-gate options of presets/safe.yaml. */
function safeGate(): Record<string, unknown> {
  const preset = parse(readFileSync(join(packageRoot(), "presets", "safe.yaml"), "utf8")) as {
    plugins: (string | Record<string, unknown>)[];
  };
  const entry = preset.plugins.find((p) => typeof p === "object" && p !== null && "permission-gate" in p) as Record<
    string,
    Record<string, unknown>
  >;
  return entry["permission-gate"]!;
}

type Call = { name: string; arguments: Record<string, unknown> };

async function probe(gateOptions: Record<string, unknown>, calls: Call[], ripgrep = false) {
  const { agent } = agentIn(
    proj,
    [
      [codingTools as Plugin, {}],
      [searchTools as Plugin, { ripgrep }],
      [gate as Plugin, gateOptions],
    ],
    [{ toolCalls: calls }, { text: "done" }],
  );
  const result = await agent.prompt("go");
  const results = result.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
  return { results, texts: results.map((r) => textOf(r)), all: JSON.stringify(result.messages) };
}

const c = (name: string, args: Record<string, unknown>): Call => ({ name, arguments: args });

const SECRET_READS = (): Call[] => [
  c("read", { path: "/proc/self/environ" }),
  c("read", { path: "/proc/thread-self/environ" }),
  c("read", { path: join(home, ".coil", "auth.json") }),
  c("read", { path: "~/.ssh/id_rsa" }),
  c("read", { path: "key_link" }),
  c("read", { path: "ssh_dir/id_rsa" }),
  c("read", { path: "env_link" }),
  c("read", { path: ".env" }),
  c("read", { path: "~/.netrc" }),
  c("read", { path: "~/.bash_history" }),
  c("grep", { pattern: "probe", path: "." }),
  c("grep", { pattern: "SECRET", path: ".", glob: ".env" }),
  c("grep", { pattern: "probe", path: "key_link" }),
  c("grep", { pattern: "probe", path: "ssh_dir" }),
  c("grep", { pattern: "probe", path: "~" }),
  c("find", { pattern: "*", path: "ssh_dir" }),
  c("find", { pattern: "*", path: "~/.ssh" }),
  c("find", { pattern: "*", path: "." }),
  c("ls", { path: "ssh_dir" }),
  c("ls", { path: "~/.ssh" }),
  c("ls", { path: "." }),
  c("edit", { path: "env_link", oldText: "API_SECRET", newText: "X" }),
  c("edit", { path: "key_link", oldText: "SSH", newText: "X" }),
  c("write", { path: "key_link", content: "overwritten" }),
  c("write", { path: join(home, ".coil", "trust.json"), content: "{}" }),
  c("bash", { command: "cat ~/.ssh/id_rsa" }),
  c("bash", { command: "cat /proc/self/environ" }),
];

describe("the built-in presets' deny lists", () => {
  it("safe denies everything default denies (an array replaces its parent's, so safe repeats the list)", () => {
    const gateOf = (name: string) => {
      const preset = parse(readFileSync(join(packageRoot(), "presets", `${name}.yaml`), "utf8")) as {
        plugins: (string | Record<string, Record<string, unknown>>)[];
      };
      const entry = preset.plugins.find((p) => typeof p === "object" && "permission-gate" in p) as Record<
        string,
        { deny: string[]; mode: string }
      >;
      return entry["permission-gate"]!;
    };
    const def = gateOf("default");
    expect(def.mode).toBe("project");
    expect(def.deny).toContain("*(~/.ssh/**)");
    expect(def.deny.filter((r) => !gateOf("safe").deny.includes(r))).toEqual([]);
  });
});

describe("the safe preset's rules hold for every tool (#13.3)", () => {
  const cases = [
    ["default", false],
    ["accept-edits", false],
    ["plan", false],
    ["yolo", false],
    ["default", true],
    ["yolo", true],
  ] as const;
  for (const [mode, ripgrep] of cases) {
    it(`nothing secret comes back in ${mode} mode (grep ${ripgrep ? "with ripgrep" : "built in"})`, async () => {
      const { results, texts, all } = await probe({ ...safeGate(), mode }, SECRET_READS(), ripgrep);
      if (process.env.PROBE_DEBUG) console.log(texts.map((t, i) => `#${i} ${t}`).join("\n"));
      for (const m of MARKERS) expect(all, `marker ${m} leaked`).not.toContain(m);
      // every direct read of a secret is blocked by a rule, naming it
      for (const i of [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 15, 16, 18, 19, 21, 22, 23, 24]) {
        expect(results[i]!.isError, `${i}: ${texts[i]}`).toBe(true);
      }
      expect(texts[0]).toContain("denied by the rule *(/proc/**/environ)");
      expect(texts[2]).toContain("denied by the rule *($COIL_HOME/auth.json)");
      expect(texts[4]).toContain("denied by the rule *(~/.ssh/**)");
      expect(texts[6]).toContain("denied by the rule read(**/.env)");
      expect(texts[21]).toContain("denied by the rule read(**/.env)");
      expect(texts[24]).toContain("denied by the rule {write,edit}($COIL_HOME/**)");
      // searches run but withhold what the rules cover, and say so
      expect(texts[10]).toMatch(/withheld: .*read\(\*\*\/\.env\)/);
      expect(texts[11]).toMatch(/withheld/);
      expect(texts[17]).not.toMatch(/^\.env$|^env_link$|^key_link$/m);
      expect(texts[17]).toContain("src/a.ts");
      expect(texts[20]).not.toMatch(/^\.env$|^env_link$|^key_link$|^ssh_dir\/$/m);
      expect(texts[20]).toContain("src/");
      // commands naming a secret path are denied too (best effort; the sandbox hides them as well)
      expect(texts[25]).toContain("denied by the rule *(~/.ssh/**)");
      expect(texts[26]).toContain("denied by the rule *(/proc/**/environ)");
      expect(readFileSync(join(home, ".ssh", "id_rsa"), "utf8")).toBe(`${SSH_KEY}\n`);
      expect(readFileSync(join(proj, ".env"), "utf8")).toBe(`API_SECRET=${DOTENV}\n`);
    });
  }
});

describe("outside the project is judged on the real path (#13.3)", () => {
  it("accept-edits: writes and edits through links leading outside ask; inside they run", async () => {
    const { results, texts } = await probe({ mode: "accept-edits" }, [
      c("write", { path: "out_link", content: "changed" }),
      c("edit", { path: "out_dir/target.txt", oldText: "original", newText: "changed" }),
      c("write", { path: "dangling_link", content: "created" }),
      c("write", { path: "out_dir/fresh.txt", content: "created" }),
      c("write", { path: "src/b.ts", content: "export const b = 2;\n" }),
      c("edit", { path: "src/a.ts", oldText: "1", newText: "3" }),
    ]);
    for (const i of [0, 1, 2, 3])
      expect(texts[i], texts[i]).toMatch(
        /needs approval \(accept-edits mode asks before (writing|editing) .*outside the project/,
      );
    expect(readFileSync(join(outside, "target.txt"), "utf8")).toBe("outside original\n");
    expect(() => readFileSync(join(outside, "new.txt"))).toThrow();
    expect(() => readFileSync(join(outside, "fresh.txt"))).toThrow();
    expect(results[4]!.isError).toBe(false);
    expect(results[5]!.isError).toBe(false);
    expect(readFileSync(join(proj, "src", "a.ts"), "utf8")).toBe("export const a = 3;\n");
  });

  it("a rule on a path inside the project also covers a link to it, and a link from outside into it", async () => {
    const { texts } = await probe({ mode: "yolo", deny: ["read(src/**)"] }, [
      c("read", { path: "src/a.ts" }),
      c("read", { path: join(outside, "into_proj", "a.ts") }),
    ]);
    expect(texts[0]).toContain("denied by the rule read(src/**)");
    expect(texts[1]).toContain("denied by the rule read(src/**)");
  });
});

describe("through the CLI (#13.3, #13.4)", () => {
  const BIN = join(packageRoot(), "dist", "bin", "coil.js");
  const SCRIPT = `- toolCalls:
    - { name: read, arguments: { path: /proc/self/environ } }
    - { name: read, arguments: { path: ~/.coil/auth.json } }
    - { name: grep, arguments: { pattern: probe, path: ~/.coil } }
- text: done
`;
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, PROBE_API_KEY: ENV_KEY };
      delete env.COIL_HOME;
      const child = spawn(process.execPath, [BIN, ...args], { cwd: proj, env, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
  const ends = (stdout: string) =>
    stdout
      .split("\n")
      .filter((l) => l.includes('"tool_execution_end"'))
      .map((l) => JSON.parse(l) as { toolCallId: string; result: Parameters<typeof textOf>[0] })
      // parallel calls end in any order: put them back in call order
      .sort((a, b) => a.toolCallId.localeCompare(b.toolCallId))
      .map((e) => textOf(e.result));

  it("safe and default: /proc/self/environ and the stored keys are denied to every tool; a printed key is redacted", async () => {
    writeFileSync(join(proj, "probe.yaml"), SCRIPT);
    const safe = await run([
      "--preset",
      "safe",
      "--provider",
      "scripted",
      "--script",
      "probe.yaml",
      "--mode",
      "json",
      "-p",
      "go",
    ]);
    expect(safe.code).toBe(0);
    const s = ends(safe.stdout);
    expect(s[0]).toContain("denied by the rule *(/proc/**/environ)");
    expect(s[1]).toContain("denied by the rule *($COIL_HOME/auth.json)");
    // grep runs (ripgrep goes through the sandbox, which hides $COIL_HOME); nothing of auth.json comes back
    expect(s[2]).not.toContain(AUTH);

    // The default preset denies them to every tool as well (issue 36.4); a key a command prints is redacted.
    writeFileSync(
      join(proj, "plain.yaml"),
      `- toolCalls:
    - { name: read, arguments: { path: /proc/self/environ } }
    - { name: read, arguments: { path: ~/.coil/auth.json } }
    - { name: bash, arguments: { command: "env | grep PROBE_API_KEY" } }
- text: done
`,
    );
    const plain = await run(["--provider", "scripted", "--script", "plain.yaml", "--mode", "json", "-p", "go"]);
    expect(plain.code).toBe(0);
    const d = ends(plain.stdout);
    expect(d[0]).toContain("denied by the rule *(/proc/**/environ)");
    expect(d[1]).toContain("denied by the rule *($COIL_HOME/auth.json)");
    expect(d[2]).toContain("PROBE_API_KEY=[redacted]");
    // (updates streamed while a command runs show its output as printed: docs/safety.md#redact-secrets)
    const stored = (out: string) =>
      out
        .split("\n")
        .filter((l) => !l.includes('"tool_execution_update"'))
        .join("\n");
    for (const out of [safe.stdout, plain.stdout])
      for (const m of [ENV_KEY, AUTH]) expect(stored(out)).not.toContain(m);
    const sessions = join(home, ".coil", "sessions");
    const files = (readdirSync(sessions, { recursive: true }) as string[]).filter((f) => f.endsWith(".jsonl"));
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const f of files)
      for (const m of [ENV_KEY, AUTH]) expect(readFileSync(join(sessions, f), "utf8")).not.toContain(m);
  });
});
