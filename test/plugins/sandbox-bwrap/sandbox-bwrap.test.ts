/** sandbox-bwrap: real bwrap runs. Writes outside the project, ~/.ssh, the network and API keys are out of reach; project commands work. */
import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { dirname, join } from "node:path";
import { createTestKit } from "../../../sdk/testing/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent, textOf, type AgentEvent, type Plugin, type ToolResultMessage } from "../../../api/index.js";
import { testHost } from "../../support/host.js";
import { packageRoot } from "../../../boot/paths.js";
import sandbox, { isSecretEnv, isSecretValue, SandboxOptions, scrubEnv } from "../../../plugins/sandbox-bwrap/index.js";
import scriptedPlugin from "../../../plugins/provider-scripted/index.js";
import toolsCoding from "../../../plugins/tools-coding/index.js";
import { startPlugins } from "../../../boot/lifecycle.js";

// Outside /tmp on purpose: the sandbox's /tmp is private, which would hide these paths for the wrong reason.
const root = mkdtempSync("/var/tmp/coil-sandbox-");
const cwd = join(root, "project");
const home = join(root, "home");
const outside = join(root, "outside");
const extra = join(root, "extra");
for (const d of [cwd, join(home, ".ssh"), outside, extra]) mkdirSync(d, { recursive: true });
writeFileSync(join(home, ".ssh", "id_ed25519"), "PRIVATE-KEY-MATERIAL\n");
writeFileSync(join(home, ".netrc"), "machine example.com password hunter2\n");
writeFileSync(join(cwd, "input.txt"), "project data\n");
const ENV = {
  PATH: process.env.PATH!,
  HOME: home,
  LANG: "C",
  OPENAI_API_KEY: "sk-openai-secret",
  ANTHROPIC_API_KEY: "sk-ant-secret",
  GITHUB_TOKEN: "ghp_secret",
  MY_SERVICE_PASSWORD: "pw",
  ANTHROPIC_BASE_URL: "http://x",
};

afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeAll(() => {
  // These tests run the real bwrap; CI installs it (.ci/run). Fail with the fix rather than a puzzle.
  const found = (process.env.PATH ?? "").split(":").some((d) => existsSync(join(d, "bwrap")));
  if (!found)
    throw new Error("bwrap is not installed: apt-get install bubblewrap (the sandbox-bwrap tests run it for real)");
});

interface Ops {
  exec(
    command: string,
    o: {
      cwd: string;
      env?: Record<string, string>;
      signal?: AbortSignal;
      killGraceMs?: number;
      onData(c: Uint8Array): void;
    },
  ): Promise<{ exitCode: number | null; signal: string | null }>;
}

function host(options: Record<string, unknown> = {}) {
  const h = testHost({ cwd });
  const events: AgentEvent[] = [];
  h.subscribe("*", (e) => void events.push(e));
  h.install(sandbox as Plugin, options);
  return { h, events, ops: h.services.get("operations") as unknown as Ops };
}

async function sh(command: string, options: Record<string, unknown> = {}, signal?: AbortSignal) {
  const { ops, events } = host(options);
  let out = "";
  const r = await ops.exec(command, {
    cwd,
    env: ENV,
    signal,
    killGraceMs: 200,
    onData: (c) => (out += Buffer.from(c).toString()),
  });
  return { ...r, out, events };
}

describe("inside the sandbox", () => {
  it("runs normal project commands: read, write and run in the working directory", async () => {
    const r = await sh(
      `cat input.txt && echo built > out.txt && mkdir -p dist && cp out.txt dist/ && ${process.execPath} -e "console.log(require('fs').readFileSync('dist/out.txt','utf8').trim())" && pwd && echo "tmp=$TMPDIR"`,
    );
    expect(r.out).toBe(`project data\nbuilt\n${cwd}\ntmp=/tmp\n`);
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(cwd, "dist", "out.txt"), "utf8")).toBe("built\n");
  });

  it("cannot write outside the working directory; configured paths are writable; /tmp is private", async () => {
    const r = await sh(
      `echo x > ${outside}/escape.txt; echo "code=$?"; echo y > ${extra}/ok.txt; echo z > /tmp/coil-sandbox-private-$$ && echo tmp-ok`,
      { writable: [extra] },
    );
    expect(r.out).toMatch(/Read-only file system\ncode=1\ntmp-ok\n$/);
    expect(existsSync(join(outside, "escape.txt"))).toBe(false);
    expect(readFileSync(join(extra, "ok.txt"), "utf8")).toBe("y\n");
    expect(readdirSync("/tmp").some((n) => n.startsWith("coil-sandbox-private-"))).toBe(false);
  });

  it("cannot read ~/.ssh or other hidden credentials", async () => {
    const r = await sh(`ls -A ~/.ssh; cat ~/.ssh/id_ed25519; echo "netrc=[$(cat ~/.netrc)]"`);
    expect(r.out).not.toContain("PRIVATE-KEY-MATERIAL");
    expect(r.out).toContain("No such file or directory");
    expect(r.out).toContain("netrc=[]");
    // Outside the sandbox the same command sees the key: the test is about the sandbox.
    expect(readFileSync(join(home, ".ssh", "id_ed25519"), "utf8")).toContain("PRIVATE-KEY-MATERIAL");
  });

  it("sees no API keys or tokens in its environment", async () => {
    const r = await sh("env");
    expect(r.out).toContain(`HOME=${home}`);
    for (const name of [
      "OPENAI_API_KEY",
      "ANTHROPIC_API_KEY",
      "GITHUB_TOKEN",
      "MY_SERVICE_PASSWORD",
      "ANTHROPIC_BASE_URL",
    ])
      expect(r.out).not.toContain(name);
    expect(r.out).not.toContain("secret");
    const kept = await sh("echo $GITHUB_TOKEN", { keepEnv: ["GITHUB_TOKEN"] });
    expect(kept.out).toBe("ghp_secret\n");
  });

  describe("network", () => {
    let server: Server;
    let port = 0;
    beforeAll(async () => {
      server = createServer((s) => s.end("hello from the host\n"));
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));
    const probe = () =>
      `${process.execPath} -e "require('net').connect(${port}, '127.0.0.1').on('data', (d) => { process.stdout.write(String(d)); process.exit(0) }).on('error', (e) => { console.log('error ' + e.code); process.exit(1) })"`;

    it("cannot reach a server on the host's loopback", async () => {
      const r = await sh(probe());
      expect(r.out).toMatch(/^error E(CONNREFUSED|NETUNREACH)/);
      expect(r.exitCode).toBe(1);
    });

    it("reaches it when the preset allows the network", async () => {
      const r = await sh(probe(), { network: true });
      expect(r.out).toBe("hello from the host\n");
    });
  });

  it("abort ends the command and everything it started", async () => {
    const controller = new AbortController();
    const marker = 400000 + Math.floor(Math.random() * 99999);
    const running = sh(`sleep ${marker} & setsid sleep ${marker + 1} & sleep ${marker + 2}`, {}, controller.signal);
    const alive = () =>
      readdirSync("/proc")
        .filter((p) => /^\d+$/.test(p))
        .some((p) => {
          try {
            const cmd = readFileSync(`/proc/${p}/cmdline`, "utf8");
            return [marker, marker + 1, marker + 2].some((m) => cmd.includes(`sleep\0${m}`));
          } catch {
            return false;
          }
        });
    for (let i = 0; i < 100 && !alive(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(alive()).toBe(true);
    controller.abort();
    const r = await running;
    expect(r.exitCode === null || r.exitCode !== 0).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(alive()).toBe(false);
  });
});

describe("when bwrap is unusable", () => {
  const fake = join(root, "fake-bwrap");
  writeFileSync(
    fake,
    "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'bubblewrap 0.0-fake'; exit 0; fi\necho 'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces' >&2\nexit 1\n",
  );
  chmodSync(fake, 0o755);

  it("refuses commands and says why: bwrap missing", async () => {
    await expect(sh("echo hi > ran.txt", { bwrap: join(root, "no-such-bwrap") })).rejects.toThrow(
      /\[sandbox-bwrap\] the sandbox is not available, so the command was not run: bwrap is not installed .*apt-get install bubblewrap/,
    );
    expect(existsSync(join(cwd, "ran.txt"))).toBe(false);
  });

  it("refuses commands and says why: no namespaces", async () => {
    await expect(sh("echo hi", { bwrap: fake })).rejects.toThrow(
      /bwrap cannot create the sandbox \(bwrap: No permissions to create new namespace.*User namespaces may be disabled/,
    );
  });

  it("with allowUnsandboxed, runs directly and warns loudly", async () => {
    const r = await sh("echo unsandboxed; echo $OPENAI_API_KEY", { bwrap: fake, allowUnsandboxed: true });
    expect(r.out).toBe("unsandboxed\nsk-openai-secret\n");
    expect(
      r.events.some(
        (e) => e.type === "diagnostic" && e.level === "warn" && /running WITHOUT a sandbox/.test(e.message),
      ),
    ).toBe(true);
  });

  it("says so at start-up", async () => {
    const { h } = host({ bwrap: join(root, "no-such-bwrap") });
    h.install(scriptedPlugin, {});
    const seen: string[] = [];
    h.subscribe("diagnostic", (e) => void seen.push(e.type === "diagnostic" ? `${e.level}: ${e.message}` : ""));
    const agent = new Agent(h, {
      provider: "scripted",
      model: { id: "m", provider: "scripted", contextWindow: 1000, maxOutput: 100 },
    });
    await startPlugins(
      h,
      agent,
      { cwd, env: {}, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
      { mode: "text", modelFromCli: false },
    );
    expect(seen).toEqual([
      expect.stringMatching(
        /^error: bwrap is not installed .* bash commands will be refused; fix the sandbox, remove sandbox-bwrap from the preset, or set allowUnsandboxed: true/,
      ),
    ]);
  });
});

describe("with tools-coding", () => {
  function agentWith(options: Record<string, unknown>, command: string, timeout?: number) {
    return createTestKit({
      cwd,
      // sandbox-bwrap after tools-coding: the service is looked up at each call
      plugins: [
        [toolsCoding, { bash: { killGraceMs: 200 } }],
        [sandbox as Plugin, options],
      ],
      replies: [{ toolCalls: [{ name: "bash", arguments: { command, timeout } }] }, { text: "ok" }],
      agent: { model: { id: "m", provider: "scripted", contextWindow: 100_000, maxOutput: 1000 } },
    }).agent;
  }
  const bashResult = async (agent: Agent) =>
    (await agent.prompt("go")).messages.find((m): m is ToolResultMessage => m.role === "toolResult")!;

  it("bash runs inside the sandbox", async () => {
    const r = await bashResult(agentWith({}, `touch /etc/coil-sandbox-test; echo done > made.txt; cat made.txt`));
    expect(textOf(r)).toMatch(/touch: cannot touch '\/etc\/coil-sandbox-test': Read-only file system\ndone/);
    expect(existsSync("/etc/coil-sandbox-test")).toBe(false);
  });

  it("a bash timeout still ends the command and what it started", async () => {
    const started = Date.now();
    const r = await bashResult(agentWith({}, "sleep 30 & sleep 31", 0.5));
    expect(textOf(r)).toContain("Command timed out after 0.5 s");
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("a refused command becomes an error result naming the problem", async () => {
    const r = await bashResult(agentWith({ bwrap: join(root, "no-such-bwrap") }, "echo hi"));
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain(
      "[sandbox-bwrap] the sandbox is not available, so the command was not run: bwrap is not installed",
    );
  });
});

describe("environment scrubbing", () => {
  it("recognises credentials and provider variables by name", () => {
    for (const name of [
      "OPENAI_API_KEY",
      "ANTHROPIC_API_KEY",
      "ANTHROPIC_AUTH_TOKEN",
      "OPENAI_BASE_URL",
      "GH_TOKEN",
      "NPM_TOKEN",
      "AWS_SECRET_ACCESS_KEY",
      "AWS_ACCESS_KEY_ID",
      "DB_PASSWORD",
      "SSH_AUTH_SOCK",
      "STRIPE_APIKEY",
      "HF_TOKEN",
      "GEMINI_API_KEY",
    ]) {
      expect(isSecretEnv(name), name).toBe(true);
    }
    for (const name of [
      "PATH",
      "HOME",
      "LANG",
      "TERM",
      "GIT_AUTHOR_NAME",
      "XAUTHORITY",
      "KEYBOARD",
      "NODE_ENV",
      "TOKENIZERS_PARALLELISM",
    ])
      expect(isSecretEnv(name), name).toBe(false);
  });

  it("recognises secrets by value: URLs with a password, private keys, token shapes", () => {
    for (const value of [
      "postgres://app:pw@db.internal:5432/app",
      "https://user:hunter2@proxy.example.com:3128",
      "-----BEGIN OPENSSH PRIVATE KEY-----\nabc",
      "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
      "sk-proj-abcdefghijklmnop1234",
      "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
      "github_pat_11ABCDEFG0123456789abcdef",
      "AKIAIOSFODNN7EXAMPLE",
      "xoxb-1234567890-abcdef",
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc",
    ]) {
      expect(isSecretValue(value), value).toBe(true);
    }
    for (const value of [
      "/usr/bin:/bin",
      "en_US.UTF-8",
      "https://registry.npmjs.org/",
      "postgres://localhost/app",
      "http://user@host/",
      "xterm-256color",
      "sk-short",
    ])
      expect(isSecretValue(value), value).toBe(false);
  });

  it("passes only allowlisted variables, never a secret-looking value; passEnv adds names, keepEnv passes anything", () => {
    const env = {
      PATH: "/bin",
      HOME: "/h",
      LC_ALL: "C",
      OPENAI_API_KEY: "x",
      DATABASE_URL: "postgres://u:pw@db/app",
      UNKNOWN_SETTING: "1",
      EDITOR: "sk-ant-api03-abcdefghijklmnopqrstuv",
      MY_TOOL_DIR: "/opt/t",
    };
    expect(scrubEnv(env)).toEqual({
      env: { PATH: "/bin", HOME: "/h", LC_ALL: "C", TMPDIR: "/tmp" },
      dropped: ["DATABASE_URL", "EDITOR", "MY_TOOL_DIR", "OPENAI_API_KEY", "UNKNOWN_SETTING"],
    });
    const more = scrubEnv(env, { pass: ["MY_TOOL_*", "DATABASE_URL"], keep: ["OPENAI_API_KEY"] });
    expect(more.env).toEqual({
      PATH: "/bin",
      HOME: "/h",
      LC_ALL: "C",
      MY_TOOL_DIR: "/opt/t",
      OPENAI_API_KEY: "x",
      TMPDIR: "/tmp",
    });
    expect(more.dropped).toEqual(["DATABASE_URL", "EDITOR", "UNKNOWN_SETTING"]);
  });
});

describe("what is hidden", () => {
  it("hides the common secrets by default and local service sockets; unhide shows one again", async () => {
    const files = [
      ".claude/.credentials.json",
      ".pgpass",
      ".bash_history",
      ".zsh_history",
      ".docker/config.json",
      ".kube/config",
      ".config/gh/hosts.yml",
      ".config/gcloud/creds.json",
      ".aws/credentials",
      ".git-credentials",
    ];
    for (const f of files) {
      mkdirSync(dirname(join(home, f)), { recursive: true });
      writeFileSync(join(home, f), `SECRET ${f}\n`);
    }
    const reads = files.map((f) => `cat ~/${f}`).join("; ");
    const hidden = await sh(`{ ${reads}; } 2>/dev/null; echo end`);
    expect(hidden.out).toBe("end\n");
    const shown = await sh(`cat ~/.docker/config.json ~/.pgpass 2>/dev/null`, { unhide: ["~/.docker"] });
    expect(shown.out).toBe("SECRET .docker/config.json\n");
    for (const p of ["/run/user", "/run/dbus", "/run/docker.sock", "/run/systemd/private"])
      expect((SandboxOptions.properties.hide as unknown as { default: string[] }).default).toContain(p);
  });

  it("hides the target of a link too", async () => {
    const real = join(root, "keys");
    mkdirSync(real, { recursive: true });
    writeFileSync(join(real, "id_rsa"), "LINKED-KEY\n");
    const linkedHome = join(root, "linked-home");
    mkdirSync(linkedHome, { recursive: true });
    symlinkSync(real, join(linkedHome, ".ssh"));
    const { ops } = host();
    let out = "";
    await ops.exec(`cat ${real}/id_rsa ~/.ssh/id_rsa 2>/dev/null; echo end`, {
      cwd,
      env: { ...ENV, HOME: linkedHome },
      onData: (c) => (out += Buffer.from(c).toString()),
    });
    expect(out).toBe("end\n");
  });
});

describe("coil doctor", () => {
  const BIN = join(packageRoot(), "dist", "bin", "coil.js");
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        cwd,
        env: { ...ENV, COIL_HOME: join(root, "coil-home") },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });

  it("reports the sandbox status (exit 0 when usable, 1 when not)", async () => {
    const ok = await run(["--plugin", "sandbox-bwrap", "doctor"]);
    expect(ok.stdout).toMatch(/^sandbox-bwrap: ok \(bubblewrap [\d.]+\)\n {2}root file system: read-only/m);
    expect(ok.stdout).toContain("capabilities inside: none (CapEff 0)");
    expect(ok.stdout).toMatch(/user namespace: new/);
    expect(ok.stdout).toContain(`writable: ${cwd}`);
    expect(ok.stdout).toContain("network: none");
    expect(ok.stdout).toContain(`${join(home, ".ssh")}, `);
    expect(ok.stdout).toContain(join(home, ".netrc"));
    expect(ok.stdout).toMatch(
      /environment: an allowlist .* left out: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, COIL_HOME, GITHUB_TOKEN, MY_SERVICE_PASSWORD, OPENAI_API_KEY\n/,
    );
    expect(ok.code).toBe(0);
    writeFileSync(
      join(root, "broken.yaml"),
      `extends: default\nplugins:\n  - sandbox-bwrap: { bwrap: ${join(root, "no-such-bwrap")} }\n`,
    );
    const bad = await run(["--preset", join(root, "broken.yaml"), "doctor"]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/^sandbox-bwrap: NOT AVAILABLE, bash is refused: bwrap is not installed/m);
  });

  it("refuses a bwrap whose commands keep capabilities (says so, exit 1)", async () => {
    // A bwrap that ignores --cap-drop: every run inside reports full capabilities, as bwrap as root did before.
    const leaky = join(root, "leaky-bwrap");
    writeFileSync(
      leaky,
      `#!/bin/sh\nif [ "$1" = --version ]; then echo 'bubblewrap 0.0-leaky'; exit 0; fi\nprintf 'Name:\\tcat\\nCapEff:\\t000001fffeffffff\\n'\n`,
    );
    chmodSync(leaky, 0o755);
    writeFileSync(join(root, "leaky.yaml"), `extends: default\nplugins:\n  - sandbox-bwrap: { bwrap: ${leaky} }\n`);
    const bad = await run(["--preset", join(root, "leaky.yaml"), "doctor"]);
    expect(bad.stdout).toMatch(
      /^sandbox-bwrap: NOT AVAILABLE, bash is refused: a command inside the sandbox keeps capabilities \(CapEff 000001fffeffffff\)/m,
    );
    expect(bad.stdout).toContain("capabilities inside: KEPT (CapEff 000001fffeffffff)");
    expect(bad.code).toBe(1);
  });
});
