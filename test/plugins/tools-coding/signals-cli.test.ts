/**
 * Signals to coil end every process its bash calls started, in every front end: the built CLI runs a
 * scripted model whose bash calls leave a marker-named process tree (a background process from an
 * earlier call, and a running call with children, one of them in its own session); after SIGHUP,
 * SIGTERM or SIGINT to coil, or SIGKILL, no process with the marker is left.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../../boot/paths.js";
import { childEnv } from "../../support/env.js";
import { until } from "../../support/harness.js";
import { hasTmux, Tmux } from "../../support/tmux.js";
import { killAllWith, processesWith } from "../../support/tools.js";

const BIN = join(packageRoot(), "dist", "bin", "coil.js");
const temps: string[] = [];
const markers: string[] = [];
let panes: Tmux[] = [];

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\``);
});
afterEach(() => {
  for (const m of markers.splice(0)) killAllWith(m);
  for (const p of panes) p.kill();
  panes = [];
});
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** A project whose script makes two bash calls: one leaves `sleep <m>0` in the background, one runs a tree and waits. */
function project(setsid: boolean) {
  const m = `7${Math.floor(Math.random() * 1e7)}.`;
  markers.push(m);
  const dir = mkdtempSync(join(tmpdir(), "coil-signals-"));
  temps.push(dir);
  const background = `sleep ${m}0 >/dev/null 2>&1 &`;
  const tree = `sleep ${m}1 & ${setsid ? `setsid sleep ${m}2 & ` : ""}bash -c 'sleep ${m}3' & sleep ${m}4`;
  writeFileSync(
    join(dir, "replies.yaml"),
    `- toolCalls:\n    - name: bash\n      arguments: { command: ${JSON.stringify(background)} }\n- toolCalls:\n    - name: bash\n      arguments: { command: ${JSON.stringify(tree)} }\n- text: never\n`,
  );
  const sleeps = () => processesWith(m).filter((l) => /^\s*\d+\s+\S+\s+sleep /.test(l));
  return { dir, m, sleeps, expected: setsid ? 5 : 4 };
}

function start(dir: string, args: string[]): ChildProcess {
  return spawn(process.execPath, [BIN, "--provider", "scripted", "--script", "replies.yaml", ...args], {
    cwd: dir,
    env: childEnv({ COIL_HOME: join(dir, "coil-home") }),
    // rpc mode reads its commands from stdin; a print run given an open pipe would wait for the prompt's
    // input until it ends (issue 27.5), so it gets none, as from a terminal script with </dev/null.
    stdio: [args.includes("rpc") ? "pipe" : "ignore", "pipe", "pipe"],
  });
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve()),
  );

async function noSurvivors(p: ReturnType<typeof project>) {
  await until(() => p.sleeps().length === 0, 6000).catch(() => undefined);
  expect(p.sleeps()).toEqual([]);
}

const MODES: [string, string[], ((child: ChildProcess) => void)?][] = [
  ["print", ["-p", "go"]],
  ["json", ["--mode", "json", "-p", "go"]],
  [
    "rpc",
    ["--mode", "rpc"],
    (child) => child.stdin!.write(`${JSON.stringify({ id: "1", type: "prompt", message: "go" })}\n`),
  ],
];

describe.each(MODES)("%s mode", (_mode, args, begin) => {
  it.each(["SIGHUP", "SIGTERM", "SIGINT"] as const)(
    "%s ends every process the run started",
    { timeout: 20_000 },
    async (signal) => {
      const p = project(true);
      const child = start(p.dir, args);
      let stderr = "";
      child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
      begin?.(child);
      await until(() => p.sleeps().length === p.expected, 8000).catch(() => {
        throw new Error(`the process tree did not start: ${p.sleeps().join("\n")}\n${stderr}`);
      });
      child.kill(signal);
      await exited(child);
      await noSurvivors(p);
    },
  );
});

describe("kill -9 of coil", () => {
  it("without a sandbox, its commands' process groups end with it (background ones too)", {
    timeout: 20_000,
  }, async () => {
    const p = project(false);
    const child = start(p.dir, ["-p", "go"]);
    await until(() => p.sleeps().length === p.expected, 8000);
    child.kill("SIGKILL");
    await exited(child);
    await noSurvivors(p);
  });

  it("inside bwrap, the whole tree ends with it (a new session too)", { timeout: 20_000 }, async () => {
    const p = project(true);
    const child = start(p.dir, ["--plugin", "sandbox-bwrap", "-p", "go"]);
    // in the sandbox the first call's background process ends with that call (PID namespace)
    await until(() => p.sleeps().length === p.expected - 1, 8000);
    child.kill("SIGKILL");
    await exited(child);
    await noSurvivors(p);
  });
});

describe.skipIf(!hasTmux)("TUI mode (tmux)", () => {
  it.each(["SIGHUP", "SIGTERM", "SIGINT"] as const)(
    "%s ends every process the run started",
    { timeout: 30_000 },
    async (signal) => {
      const p = project(true);
      const pane = new Tmux({
        dir: p.dir,
        cwd: p.dir,
        env: { COIL_HOME: join(p.dir, "coil-home") },
        command: `${process.execPath} ${BIN} --plugin ui-tui --provider scripted --script ${join(p.dir, "replies.yaml")}`,
      });
      panes.push(pane);
      pane.start();
      await pane.waitFor("coil");
      pane.type("go");
      pane.keys("Enter");
      await until(() => p.sleeps().length === p.expected, 10_000);
      // coil itself: the node process whose arguments name this project's script
      const coilPid = processesWith(join(p.dir, "replies.yaml"))
        .map((l) => l.trim().split(/\s+/))
        .find((f) => f[2]?.endsWith("node") || f[2] === process.execPath)?.[0];
      expect(coilPid).toBeDefined();
      process.kill(Number(coilPid), signal);
      await pane.waitFor(/\[exited \d+\]/, 10_000);
      await noSurvivors(p);
    },
  );
});
