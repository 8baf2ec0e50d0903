/**
 * sandbox-bwrap escape probes through the built CLI (dist/bin/coil.js): a scripted model runs each
 * probe as a bash call, coil runs as root and as nobody (uid 65534). Every probe prints `ok` when the
 * sandbox held and `ESCAPE ...` when it did not; the run must end with zero escapes, and the host
 * files must be unchanged.
 */
import { spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
const NOBODY = 65534;
const UID = process.getuid!();
/** As root the probes run twice, as root and as nobody; as another user (not CI) as that user only. */
const USERS: [string, number][] =
  UID === 0
    ? [
        ["root", 0],
        ["nobody", NOBODY],
      ]
    : [[`uid ${UID}`, UID]];

/** Files that hold secrets in a home directory; each gets a unique marker. */
const SECRET_FILES = [
  ".ssh/id_rsa",
  ".claude/.credentials.json",
  ".pgpass",
  ".bash_history",
  ".zsh_history",
  ".netrc",
  ".docker/config.json",
  ".kube/config",
  ".config/gh/hosts.yml",
  ".aws/credentials",
  ".config/gcloud/credentials.db",
  ".git-credentials",
];

let server: Server;
let sockServer: Server;
let port = 0;
// Under /run/user, which the sandbox hides: the session bus lives there.
const sockDir = UID === 0 ? "/run/user" : `/run/user/${UID}`;
const sock = join(sockDir, `coil-probe-${process.pid}.sock`);
beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\``);
  server = createServer((s) => s.end("host\n"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as { port: number }).port;
  // A local service's socket (as the session bus or docker.sock would be), open to everyone on the host.
  mkdirSync(sockDir, { recursive: true });
  sockServer = createServer((s) => s.end("service\n"));
  await new Promise<void>((r) => sockServer.listen(sock, r));
  chmodSync(sock, 0o777);
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await new Promise<void>((r) => sockServer.close(() => r()));
  rmSync(sock, { force: true });
});

function world(uid: number) {
  const root = mkdtempSync("/var/tmp/coil-escape-");
  chmodSync(root, 0o755);
  const dirs = {
    cwd: join(root, "project"),
    home: join(root, "home"),
    outside: join(root, "outside"),
    coilHome: join(root, "coil-home"),
  };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  for (const f of SECRET_FILES) {
    mkdirSync(dirname(join(dirs.home, f)), { recursive: true });
    writeFileSync(join(dirs.home, f), `S3CRET-${f}\n`, { mode: 0o600 });
  }
  writeFileSync(join(dirs.home, ".bashrc"), "# rc\n");
  writeFileSync(join(dirs.coilHome, "auth.json"), `{"anthropic":{"key":"S3CRET-auth"}}\n`, { mode: 0o600 });
  const chownAll = (p: string) => {
    chownSync(p, uid, uid);
    for (const e of readdirSync(p, { withFileTypes: true })) {
      if (e.isDirectory()) chownAll(join(p, e.name));
      else chownSync(join(p, e.name), uid, uid);
    }
  };
  for (const d of Object.values(dirs)) chownAll(d);
  return { root, ...dirs };
}

/** The probes, each a bash command printing `ok` or `ESCAPE <what>`. */
function probes(w: ReturnType<typeof world>): [string, string][] {
  const esc = (name: string) => `|| echo "ESCAPE ${name}"`;
  const found = (cmd: string, name: string) =>
    `if { ${cmd}; } 2>/dev/null | grep -q S3CRET; then echo "ESCAPE ${name}"; else echo ok; fi`;
  return [
    [
      "capabilities",
      `grep -Eq '^CapEff:\\s*0+$' /proc/self/status && echo ok ${esc("CapEff $(grep CapEff /proc/self/status)")}`,
    ],
    [
      "remount rw",
      `mount -o remount,bind,rw / 2>/dev/null; if echo x >> ${w.home}/.bashrc 2>/dev/null; then echo "ESCAPE remount"; else echo ok; fi`,
    ],
    ["umount hidden dir", found(`umount ${w.home}/.ssh 2>/dev/null; cat ${w.home}/.ssh/id_rsa`, "umount")],
    [
      "nested user namespace",
      found(`unshare -Urm sh -c 'umount ${w.home}/.ssh; cat ${w.home}/.ssh/id_rsa'`, "nested userns"),
    ],
    [
      "write outside the project",
      `if echo x > ${w.outside}/escape 2>/dev/null; then echo "ESCAPE write outside"; else echo ok; fi`,
    ],
    ["write /etc", `if echo x > /etc/coil-escape-probe 2>/dev/null; then echo "ESCAPE write /etc"; else echo ok; fi`],
    [
      "write /proc/sys",
      `if echo 0 > /proc/sys/kernel/sysrq 2>/dev/null; then echo "ESCAPE /proc/sys"; else echo ok; fi`,
    ],
    ["make a device", `if mknod /tmp/disk b 8 0 2>/dev/null; then echo "ESCAPE mknod"; else echo ok; fi`],
    ["secret files", found(SECRET_FILES.map((f) => `cat ${w.home}/${f}`).join("; "), "secret files")],
    [
      "secret files through a link",
      found(
        `ln -s ${w.home}/.pgpass pg 2>/dev/null; cat pg; cat ${w.home}/../home/.claude/.credentials.json`,
        "via link",
      ),
    ],
    ["coil home", found(`cat ${w.coilHome}/auth.json`, "auth.json")],
    ["environment", found("env", "environment")],
    ["other processes' environment", found(`cat /proc/*/environ | tr '\\0' '\\n'`, "/proc/*/environ")],
    [
      "signal the host",
      `if kill -0 ${process.pid} 2>/dev/null; then echo "ESCAPE kill host process"; else echo ok; fi`,
    ],
    ["network", `if (echo > /dev/tcp/127.0.0.1/${port}) 2>/dev/null; then echo "ESCAPE network"; else echo ok; fi`],
    [
      "local service socket",
      `${process.execPath} -e "require('net').connect('${sock}').on('data', () => { console.log('ESCAPE socket'); process.exit(0) }).on('error', () => console.log('ok'))"`,
    ],
    ["host /tmp", `echo x > /tmp/coil-escape-probe-${process.pid} && echo ok`],
    [
      "ptrace coil",
      `if cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n' | grep -q S3CRET; then echo "ESCAPE ptrace"; else echo ok; fi`,
    ],
    ["chown to another user", `touch own; if chown 12345 own 2>/dev/null; then echo "ESCAPE chown"; else echo ok; fi`],
    [
      "capabilities through a setuid binary",
      `if su root -c "grep CapEff /proc/self/status" </dev/null 2>/dev/null | grep -Eqv ':\\s*0+$'; then echo "ESCAPE setuid"; else echo ok; fi`,
    ],
    ["write .bashrc", `if echo x >> ${w.home}/.bashrc 2>/dev/null; then echo "ESCAPE .bashrc"; else echo ok; fi`],
  ];
}

function runCoil(w: ReturnType<typeof world>, uid: number, list: [string, string][]) {
  const script = `- toolCalls:\n${list.map(([, command]) => `    - name: bash\n      arguments: { command: ${JSON.stringify(`{ ${command}; } 2>/dev/null`)} }\n`).join("")}- text: done\n`;
  writeFileSync(join(w.cwd, "replies.yaml"), script);
  chownSync(join(w.cwd, "replies.yaml"), uid, uid);
  // The sandbox alone: without the default preset's permission gate, which would refuse most probes first.
  writeFileSync(
    join(w.cwd, "sandbox-only.yaml"),
    "extends: default\nplugins:\n  - permission-gate: false\n  - sandbox-bwrap\n",
  );
  chownSync(join(w.cwd, "sandbox-only.yaml"), uid, uid);
  const env: Record<string, string> = {
    PATH: process.env
      .PATH!.split(":")
      .filter((d) => !d.startsWith("/root"))
      .join(":"),
    HOME: w.home,
    LANG: "C",
    COIL_HOME: w.coilHome,
    OPENAI_API_KEY: "sk-S3CRET-openai-000000000000",
    DATABASE_URL: "postgres://app:S3CRET-db@db.internal/app",
    PLAIN_LOOKING: "sk-ant-S3CRET-0000000000000000",
  };
  return new Promise<{ code: number | null; results: string[]; stderr: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      [
        BIN,
        "--preset",
        "sandbox-only.yaml",
        "--provider",
        "scripted",
        "--script",
        "replies.yaml",
        "--mode",
        "json",
        "-p",
        "probe",
      ],
      { cwd: w.cwd, env, uid, gid: uid, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", (code) => {
      const results = stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((e) => e.type === "tool_execution_end")
        .map((e) => e.result.content.map((c: { text?: string }) => c.text ?? "").join(""));
      resolve({ code, results, stderr });
    });
  });
}

describe.each(USERS)("escape probes under bwrap, coil running as %s", (_who, uid) => {
  it("no probe escapes, and the host is unchanged", { timeout: 60_000 }, async () => {
    const w = world(uid);
    try {
      const list = probes(w);
      const ran = await runCoil(w, uid, list);
      expect(ran.stderr).not.toMatch(/sandbox-bwrap.*(error|NOT AVAILABLE)/);
      expect(ran.results, ran.stderr).toHaveLength(list.length);
      const report = list.map(([name], i) => `${name}: ${ran.results[i]!.trim()}`);
      expect(report).toEqual(list.map(([name]) => `${name}: ok`));
      expect(readFileSync(join(w.home, ".bashrc"), "utf8")).toBe("# rc\n");
      expect(existsSync(join(w.outside, "escape"))).toBe(false);
      expect(existsSync("/etc/coil-escape-probe")).toBe(false);
      expect(existsSync(`/tmp/coil-escape-probe-${process.pid}`)).toBe(false);
    } finally {
      rmSync(w.root, { recursive: true, force: true });
    }
  });
});
