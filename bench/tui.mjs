// TUI benchmarks (docs/tui.md, docs/decisions.md). Three parts, figures only, no assertions:
//  1. the library comparison: @mariozechner/pi-tui vs ink+react, each in a fresh process: time to import,
//     time to the first frame of an editor-like screen (transcript, bordered editor, footer) on a fake
//     80x24 TTY, and what a streaming redraw writes (bytes per frame, synchronized output, full clears);
//  2. `coil` (ui-tui) start-up to an editor ready for input, polled in a real tmux pane;
//  3. CPU per frame while a bash tool streams 5,000 lines (the child's utime+stime from /proc/<pid>/stat).
// `node bench/tui.mjs --quick` runs fewer repetitions. Needs `npm run build` for parts 2 and 3, and tmux.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Writable } from "node:stream";

const root = new URL("..", import.meta.url).pathname;
const quick = process.argv.includes("--quick");

// ───────────── probe mode: one library, one fresh process ─────────────
const probe = process.argv[process.argv.indexOf("--probe") + 1];
if (process.argv.includes("--probe")) {
  const t0 = performance.now();
  const frames = [];
  let current = "";
  const out = new Writable({
    write(chunk, _enc, cb) {
      current += chunk.toString();
      cb();
    },
  });
  Object.assign(out, { isTTY: true, columns: 80, rows: 24 });
  const flush = () => {
    if (current) frames.push(current);
    current = "";
  };
  const transcript = ["Welcome to coil", ""];
  const STREAM = 150;
  let tImport, tFirst;
  const tick = () => new Promise((r) => setTimeout(r, 0));
  if (probe === "pi-tui") {
    const tui = await import("@mariozechner/pi-tui");
    tImport = performance.now() - t0;
    const terminal = {
      start() {},
      stop() {},
      async drainInput() {},
      write: (d) => out.write(d),
      get columns() {
        return 80;
      },
      get rows() {
        return 24;
      },
      get kittyProtocolActive() {
        return false;
      },
      moveBy() {},
      hideCursor() {},
      showCursor() {},
      clearLine() {},
      clearFromCursor() {},
      clearScreen() {},
      setTitle() {},
      setProgress() {},
    };
    const ui = new tui.TUI(terminal);
    const body = new tui.Text(transcript.join("\n"), 0, 0);
    const select = {
      selectedPrefix: (s) => s,
      selectedText: (s) => s,
      description: (s) => s,
      scrollInfo: (s) => s,
      noMatch: (s) => s,
    };
    const editor = new tui.Editor(ui, { borderColor: (s) => s, selectList: select });
    editor.setText("write a test for the parser");
    const footer = new tui.TruncatedText("scripted · 3% of 200k · ↑1.2k ↓340 · $0.004", 0, 0);
    ui.addChild(body);
    ui.addChild(editor);
    ui.addChild(footer);
    ui.setFocus(editor);
    ui.start();
    ui.requestRender(true);
    await new Promise((r) => setTimeout(r, 20));
    tFirst = performance.now() - t0;
    flush();
    const c0 = process.cpuUsage();
    for (let i = 0; i < STREAM; i++) {
      transcript.push(`line ${i} of streamed output from a long running command`);
      body.setText(transcript.join("\n"));
      ui.requestRender();
      await new Promise((r) => setTimeout(r, 17)); // pi-tui renders at most every 16 ms
      flush();
    }
    const cpu = process.cpuUsage(c0);
    report(cpu);
    ui.stop();
  } else {
    const React = (await import("react")).default;
    const ink = await import("ink");
    tImport = performance.now() - t0;
    const h = React.createElement;
    const view = () =>
      h(
        ink.Box,
        { flexDirection: "column" },
        h(ink.Text, null, transcript.join("\n")),
        h(ink.Box, { borderStyle: "single" }, h(ink.Text, null, "write a test for the parser")),
        h(ink.Text, null, "scripted · 3% of 200k · ↑1.2k ↓340 · $0.004"),
      );
    const app = ink.render(view(), {
      stdout: out,
      stdin: process.stdin,
      patchConsole: false,
      exitOnCtrlC: false,
      maxFps: 60,
    });
    await tick();
    tFirst = performance.now() - t0;
    flush();
    const c0 = process.cpuUsage();
    for (let i = 0; i < STREAM; i++) {
      transcript.push(`line ${i} of streamed output from a long running command`);
      app.rerender(view());
      await new Promise((r) => setTimeout(r, 17));
      flush();
    }
    const cpu = process.cpuUsage(c0);
    report(cpu);
    app.unmount();
  }
  function report(cpu) {
    const tail = frames.slice(-100); // steady state: the transcript is taller than the screen
    const bytes = tail.reduce((n, f) => n + f.length, 0) / tail.length;
    const synced = tail.filter((f) => f.includes("\x1b[?2026h") && f.includes("\x1b[?2026l")).length;
    const clears = tail.filter((f) => f.includes("\x1b[2J") || f.includes("\x1b[3J") || f.includes("\x1bc")).length;
    process.stdout.write(
      JSON.stringify({
        tImport,
        tFirst,
        frames: frames.length,
        bytesPerFrame: bytes,
        syncedFrames: synced,
        fullClears: clears,
        sample: tail.length,
        cpuMsPerFrame: (cpu.user + cpu.system) / 1000 / STREAM,
      }) + "\n",
    );
  }
  process.exit(0);
}

// ───────────── part 1: library comparison ─────────────
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
const runs = quick ? 3 : 7;
function nodeBase() {
  const samples = [];
  for (let i = 0; i < runs + 1; i++) {
    const t0 = performance.now();
    spawnSync(process.execPath, ["-e", "0"]);
    if (i > 0) samples.push(performance.now() - t0);
  }
  return median(samples);
}
const noCi = { ...process.env };
delete noCi.CI; // ink writes only the final frame when it thinks it runs in CI
function probeLib(lib) {
  const results = [];
  for (let i = 0; i < runs + 1; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [new URL(import.meta.url).pathname, "--probe", lib], {
      cwd: root,
      encoding: "utf8",
      env: noCi,
    });
    const wall = performance.now() - t0;
    if (r.status !== 0) throw new Error(`probe ${lib} failed: ${r.stderr}`);
    if (i > 0) results.push({ ...JSON.parse(r.stdout.trim().split("\n").at(-1)), wall });
  }
  const pick = (k) => median(results.map((x) => x[k]));
  return {
    tImport: pick("tImport"),
    tFirst: pick("tFirst"),
    bytesPerFrame: pick("bytesPerFrame"),
    syncedFrames: pick("syncedFrames"),
    fullClears: pick("fullClears"),
    sample: pick("sample"),
    cpuMsPerFrame: pick("cpuMsPerFrame"),
  };
}
const base = nodeBase();
console.log(`## TUI libraries (fresh process each, median of ${runs}; node -e 0 = ${base.toFixed(1)} ms)\n`);
console.log(
  "| library | import ms | first frame ms (from process start of script) | bytes per streamed frame | frames with synchronized output | frames that clear the screen | CPU ms per frame |",
);
console.log("|---|---:|---:|---:|---:|---:|---:|");
// ink is not a dependency (the decision is recorded in docs/decisions.md); it is measured only when
// installed for the comparison: npm install --no-save ink react
const hasInk = existsSync(join(root, "node_modules", "ink")) && existsSync(join(root, "node_modules", "react"));
if (!hasInk) console.log("(ink + react not installed: `npm install --no-save ink@6 react@19` to measure them too)\n");
for (const lib of hasInk ? ["pi-tui", "ink"] : ["pi-tui"]) {
  const r = probeLib(lib);
  console.log(
    `| ${lib === "ink" ? "ink 6 + react 19" : "@mariozechner/pi-tui 0.73"} | ${r.tImport.toFixed(1)} | ${r.tFirst.toFixed(1)} | ${r.bytesPerFrame.toFixed(0)} | ${r.syncedFrames}/${r.sample} | ${r.fullClears}/${r.sample} | ${r.cpuMsPerFrame.toFixed(3)} |`,
  );
}

// ───────────── parts 2 and 3: coil in tmux ─────────────
const bin = join(root, "dist", "bin", "coil.js");
const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
if (!existsSync(bin) || !hasTmux) {
  console.log(
    `\n(coil start-up and streaming figures skipped: ${!existsSync(bin) ? "run `npm run build` first" : "tmux is not installed"})`,
  );
  process.exit(0);
}
const work = mkdtempSync(join(tmpdir(), "coil-bench-tui-"));
const socket = join(work, "tmux.sock");
const tmux = (...args) => execFileSync("tmux", ["-S", socket, ...args], { encoding: "utf8" });
const env = { COIL_HOME: join(work, "home"), TERM: "xterm-256color" };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function waitFor(pane, test, timeoutMs = 10_000, everyMs = 5) {
  const t0 = performance.now();
  for (;;) {
    const screen = tmux("capture-pane", "-p", "-t", pane);
    if (test(screen)) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) throw new Error(`timed out; screen:\n${screen}`);
    await sleep(everyMs);
  }
}
const envArgs = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
writeFileSync(join(work, "idle.yaml"), "- text: hello\n");
tmux("new-session", "-d", "-s", "bench", "-x", "80", "-y", "24", ...envArgs, "sh");
const startSamples = [];
const inside = { run: [], loaded: [], first: [] };
for (let i = 0; i < (quick ? 3 : 7) + 1; i++) {
  const name = `s${i}`;
  const stats = join(work, `start-${i}.jsonl`);
  const t0 = performance.now();
  tmux(
    "new-window",
    "-d",
    "-t",
    "bench",
    "-n",
    name,
    ...envArgs,
    "-e",
    `COIL_TUI_STATS=${stats}`,
    "-c",
    work,
    `${process.execPath} ${bin} --plugin ui-tui --no-session --provider scripted --script idle.yaml`,
  );
  await waitFor(`bench:${name}`, (s) => s.includes("Enter to send"));
  const ms = performance.now() - t0;
  if (i > 0) {
    startSamples.push(ms);
    const marks = Object.fromEntries(
      readFileSync(stats, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .map((m) => [m.mark, m.at]),
    );
    inside.run.push(marks.run);
    inside.loaded.push(marks.loaded);
    inside.first.push(marks["first-frame"]);
  }
  tmux("kill-window", "-t", `bench:${name}`);
}
const versionSamples = [];
for (let i = 0; i < 4; i++) {
  const t0 = performance.now();
  tmux(
    "new-window",
    "-d",
    "-t",
    "bench",
    "-n",
    `v${i}`,
    ...envArgs,
    "-c",
    work,
    `${process.execPath} ${bin} --version; sleep 5`,
  );
  await waitFor(`bench:v${i}`, (s) => /\d+\.\d+\.\d+/.test(s));
  if (i > 0) versionSamples.push(performance.now() - t0);
  tmux("kill-window", "-t", `bench:v${i}`);
}
const tmuxBase = [];
for (let i = 0; i < 4; i++) {
  const t0 = performance.now();
  tmux(
    "new-window",
    "-d",
    "-t",
    "bench",
    "-n",
    `b${i}`,
    `${process.execPath} -e "console.log('ready'); setTimeout(() => {}, 5000)"`,
  );
  await waitFor(`bench:b${i}`, (s) => s.includes("ready"));
  if (i > 0) tmuxBase.push(performance.now() - t0);
  tmux("kill-window", "-t", `bench:b${i}`);
}
console.log(`\n## coil start-up to an editor ready for input (tmux 80x24, median of ${startSamples.length})\n`);
console.log("| what | ms | × node printing one line in tmux |\n|---|---:|---:|");
console.log(`| node -e "console.log('ready')" in tmux (baseline) | ${median(tmuxBase).toFixed(1)} | 1.00 |`);
console.log(
  `| coil --version in tmux | ${median(versionSamples).toFixed(1)} | ${(median(versionSamples) / median(tmuxBase)).toFixed(2)} |`,
);
console.log(
  `| coil --plugin ui-tui (editor drawn) | ${median(startSamples).toFixed(1)} | ${(median(startSamples) / median(tmuxBase)).toFixed(2)} |`,
);
console.log(
  `\nInside that coil process (ms since it started, median): front end's run called ${median(inside.run).toFixed(1)}, pi-tui and the app imported ${median(inside.loaded).toFixed(1)}, first frame written ${median(inside.first).toFixed(1)}.`,
);

// CPU per frame while 5,000 lines of bash output stream in.
const LINES = 5000;
// the shell prints in bursts of 50 lines with a 10 ms pause, so the output arrives over about a second
writeFileSync(
  join(work, "stream.yaml"),
  `- toolCalls: [{ name: bash, arguments: { command: "i=0; while [ $i -lt ${LINES} ]; do echo line $i of the streamed output; i=$((i+1)); if [ $((i % 50)) -eq 0 ]; then sleep 0.01; fi; done" } }]\n- text: finished streaming\n`,
);
const statsFile = join(work, "frames.jsonl");
tmux(
  "new-window",
  "-d",
  "-t",
  "bench",
  "-n",
  "stream",
  ...envArgs,
  "-e",
  `COIL_TUI_STATS=${statsFile}`,
  "-c",
  work,
  `${process.execPath} ${bin} --plugin ui-tui --no-session --provider scripted --script stream.yaml`,
);
await waitFor("bench:stream", (s) => s.includes("Enter to send"));
const pid = Number(tmux("display-message", "-p", "-t", "bench:stream", "#{pane_pid}").trim());
const hz = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
const ticks = () => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return Number(f[11]) + Number(f[12]); // utime + stime of the coil process, in clock ticks
};
const c0 = ticks();
const t0 = performance.now();
tmux("send-keys", "-t", "bench:stream", "stream", "Enter");
await waitFor("bench:stream", (s) => s.includes("finished streaming") && s.includes("Enter to send"), 120_000, 50);
const wall = performance.now() - t0;
const procMs = ((ticks() - c0) * 1000) / hz;
const marks = readFileSync(statsFile, "utf8")
  .trim()
  .split("\n")
  .map((l) => JSON.parse(l));
const from = marks.find((m) => m.mark === "agent_start");
const to = marks.find((m) => m.mark === "agent_end");
const frames = to.frames - from.frames;
const cpuMs = (to.cpuUs - from.cpuUs) / 1000;
tmux("send-keys", "-t", "bench:stream", "C-c", "C-c");
console.log(
  `\n## Streaming ${LINES.toLocaleString("en")} lines of bash output (tmux 80x24; the run from Enter to the final answer)\n`,
);
console.log(
  "| wall ms | frames drawn | coil CPU ms (process.cpuUsage) | CPU ms per frame | CPU ms from /proc (utime+stime) | CPU % of one core |\n|---:|---:|---:|---:|---:|---:|",
);
console.log(
  `| ${wall.toFixed(0)} | ${frames} | ${cpuMs.toFixed(0)} | ${(cpuMs / Math.max(1, frames)).toFixed(2)} | ${procMs.toFixed(0)} | ${((procMs / wall) * 100).toFixed(0)} |`,
);
tmux("kill-server");
rmSync(work, { recursive: true, force: true });
