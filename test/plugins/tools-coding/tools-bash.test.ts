/** tools-coding: the bash tool with real processes (no mocks of child_process). */
import { createReadStream, readFileSync, rmSync, statSync } from "node:fs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import toolsCoding, {
  DEFAULT_BASH_TIMEOUT_S,
  formatSize,
  MAX_BASH_TIMEOUT_S,
  MAX_BYTES,
  MAX_LINES,
} from "../../../plugins/tools-coding/index.js";
import { definePlugin, type ToolOutput } from "../../../api/index.js";
import type { ExecOptions } from "../../../plugins/tools-coding/index.js";
import { sleep, until } from "../../support/harness.js";
import { cleanTemps, killAllWith, processesWith, tempDir, textOf, toolHost } from "../../support/tools.js";

afterAll(cleanTemps);

function bash(options: Record<string, unknown> = {}) {
  const dir = tempDir();
  return { dir, ...toolHost(dir, [[toolsCoding, { bash: { killGraceMs: 300, ...options } }]]) };
}

async function countLines(file: string): Promise<{ lines: number; first: string }> {
  let lines = 0;
  let first = "";
  for await (const chunk of createReadStream(file)) {
    const buf = chunk as Buffer;
    if (!first) first = buf.subarray(0, buf.indexOf(10)).toString();
    for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, i + 1)) lines++;
  }
  return { lines, first };
}

describe("bash: results", () => {
  it("runs in the working directory and returns stdout and stderr", async () => {
    const { dir, call } = bash();
    const out = await call("bash", { command: "pwd; echo to-stderr 1>&2" });
    expect(out.isError).toBeFalsy();
    expect(textOf(out)).toBe(`${dir}\nto-stderr`);
    expect(out.details).toMatchObject({ exitCode: 0, signal: null, timedOut: false, aborted: false });
  });

  it("makes a non-zero exit an error result with the code and the output", async () => {
    const { call } = bash();
    const out = await call("bash", { command: "echo partial work; exit 3" });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toBe("partial work\n\nCommand exited with code 3.");
    expect(out.details.exitCode).toBe(3);
  });

  it("reports a shell killed by a signal", async () => {
    const { call } = bash();
    const out = await call("bash", { command: "echo before; kill -KILL $$" });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toBe("before\n\nCommand was terminated by signal SIGKILL.");
  });

  it("closes stdin, so a command that reads it does not hang", async () => {
    const { call } = bash();
    const started = Date.now();
    const out = await call("bash", { command: "cat; read line || echo no-input" });
    expect(textOf(out)).toBe("no-input");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("says when there is no output, and strips terminal escapes and progress rewrites", async () => {
    const { call } = bash();
    expect(textOf(await call("bash", { command: "true" }))).toBe("(no output)");
    const out = await call("bash", {
      command: "printf '\\033[31mred\\033[0m\\n'; printf '10%%\\r50%%\\r100%%\\n'; printf 'a\\r\\nb\\n'",
    });
    expect(textOf(out)).toBe("red\n100%\na\nb");
  });

  it("streams output as tool updates while the command runs", async () => {
    const { call } = bash();
    const updates: ToolOutput[] = [];
    const out = await call("bash", { command: "echo one; sleep 0.5; echo two; sleep 0.5; echo three" }, { updates });
    expect(textOf(out)).toBe("one\ntwo\nthree");
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(textOf(updates[0]!)).toBe("one");
    expect(updates.map((u) => textOf(u))).toContain("one\ntwo");
  });

  it("sends output that came right after an update once the interval is up, while the command goes quiet", async () => {
    const { call } = bash();
    const updates: ToolOutput[] = [];
    // "two" arrives within the 200 ms after "one" was sent; then the command is silent for 3 s
    const running = call("bash", { command: "echo one; sleep 0.05; echo two; sleep 3; echo three" }, { updates });
    await until(() => updates.some((u) => textOf(u) === "one\ntwo"), 2000);
    expect(textOf(await running)).toBe("one\ntwo\nthree");
  });

  it(`keeps the last ${MAX_LINES} lines and saves the full output to a file`, async () => {
    const { call } = bash();
    const out = await call("bash", { command: "seq 1 3000" });
    const path = out.details.fullOutputPath as string;
    expect(textOf(out)).toBe(
      `${Array.from({ length: 2000 }, (_, i) => i + 1001).join("\n")}\n\n[Showing lines 1001-3000 of 3000. Full output: ${path}]`,
    );
    expect(readFileSync(path, "utf8")).toBe(Array.from({ length: 3000 }, (_, i) => i + 1).join("\n") + "\n");
    rmSync(path);
  });

  it("prints 1,000,000 lines (100 MB) with bounded memory: the tail for the model, every line in the file", async () => {
    const { call } = bash();
    const base = process.memoryUsage().rss;
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
    const out = await call("bash", { command: `awk 'BEGIN { for (i = 1; i <= 1000000; i++) printf "%099d\\n", i }'` });
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    const path = out.details.fullOutputPath as string;
    const shown = 1 + Math.floor((MAX_BYTES - 99) / 100); // whole 99-character lines within the byte limit
    const text = textOf(out);
    expect(
      text.endsWith(
        `\n\n[Showing lines ${1_000_000 - shown + 1}-1000000 of 1000000 (${formatSize(MAX_BYTES)} limit). Full output: ${path}]`,
      ),
    ).toBe(true);
    const body = text.slice(0, text.indexOf("\n\n["));
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_BYTES);
    expect(body.split("\n").at(-1)).toBe(String(1_000_000).padStart(99, "0"));
    expect(body.split("\n")[0]).toBe(String(1_000_000 - shown + 1).padStart(99, "0"));
    expect(out.details).toMatchObject({ bytes: 100_000_000, lines: 1_000_000, exitCode: 0 });
    expect(statSync(path).size).toBe(100_000_000);
    expect(await countLines(path)).toEqual({ lines: 1_000_000, first: "1".padStart(99, "0") });
    expect(peak - base).toBeLessThan(60 * 1024 * 1024);
    rmSync(path);
  });

  it("refuses to run in a working directory that no longer exists", async () => {
    const { dir, call } = bash();
    rmSync(dir, { recursive: true });
    const out = await call("bash", { command: "echo should-not-run > /tmp/coil-should-not-exist" });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toContain(`The working directory ${dir} does not exist`);
    expect(() => statSync("/tmp/coil-should-not-exist")).toThrow();
  });

  it("runs the user's shell ($SHELL when POSIX-compatible), or the one in the options", async () => {
    const shell = process.env.SHELL;
    process.env.SHELL = "/bin/sh";
    try {
      expect(textOf(await bash().call("bash", { command: "echo $0" }))).toBe("/bin/sh");
    } finally {
      process.env.SHELL = shell;
    }
    expect(textOf(await bash({ shell: "/bin/bash" }).call("bash", { command: "echo $0" }))).toBe("/bin/bash");
    const missing = await bash({ shell: "/nonexistent/zsh" }).call("bash", { command: "true" });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(
      /^Cannot start \/nonexistent\/zsh \(\/nonexistent\/zsh was not found; set the tools-coding option bash\.shell\)/,
    );
  });

  it("runs commands through an operations backend a plugin provides (a sandbox's exec)", async () => {
    const dir = tempDir({ "f.txt": "local file\n" });
    const seen: { command: string; cwd: string }[] = [];
    const sandbox = definePlugin({
      id: "fake-sandbox",
      setup(ctx) {
        ctx.services.provide("operations", {
          async exec(command: string, o: ExecOptions) {
            seen.push({ command, cwd: o.cwd });
            o.onData(Buffer.from(`sandboxed: ${command}\n`), "stdout");
            return { exitCode: 0, signal: null };
          },
        });
      },
    });
    const { call } = toolHost(dir, [[toolsCoding, {}], [sandbox]]);
    expect(textOf(await call("bash", { command: "make test" }))).toBe("sandboxed: make test");
    expect(seen).toEqual([{ command: "make test", cwd: dir }]);
    expect(textOf(await call("read", { path: "f.txt" }))).toBe("local file"); // methods it does not provide stay local
  });

  it("states its limits and timeouts in the description", () => {
    const { tool } = bash({ defaultTimeout: 30, maxTimeout: 90 });
    const text = tool("bash").description;
    expect(text).toContain(`last ${MAX_LINES} lines or ${formatSize(MAX_BYTES)}`);
    expect(text).toContain("(default 30, at most 90)");
    expect(tool("bash").executionMode).toBe("sequential");
    const defaults = bash().tool("bash");
    expect(defaults.description).toContain(`(default ${DEFAULT_BASH_TIMEOUT_S}, at most ${MAX_BASH_TIMEOUT_S})`);
    expect(bash({ sequential: false }).tool("bash").executionMode).toBe("parallel");
  });
});

describe("bash: timeouts and aborts end the whole process tree", () => {
  // A shell that ignores SIGTERM, with children that inherit that, one of them in its own session.
  const tree = (marker: string) =>
    `trap '' TERM; echo started; (trap '' TERM; sleep ${marker}1) & setsid sleep ${marker}2 & sleep ${marker}3 & wait`;
  const markers: string[] = [];
  const unique = () => {
    const marker = `31${Math.floor(Math.random() * 1e6)}.`;
    markers.push(marker);
    return marker;
  };
  afterEach(() => markers.splice(0).forEach(killAllWith)); // only matters when a test failed

  it("terminates a command at its timeout", async () => {
    const { call } = bash();
    const started = Date.now();
    const out = await call("bash", { command: "echo waiting; sleep 30", timeout: 0.5 });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toMatch(/^waiting\n\nCommand timed out after 0\.5 s; its process tree was terminated\./);
    expect(out.details.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("applies the default timeout from the options, and caps a call's timeout at the maximum", async () => {
    const { call } = bash({ defaultTimeout: 0.4 });
    const out = await call("bash", { command: "sleep 30" });
    expect(textOf(out)).toContain("timed out after 0.4 s");
    const capped = await bash({ maxTimeout: 0.4 }).call("bash", { command: "sleep 30", timeout: 1000 });
    expect(textOf(capped)).toContain("timed out after 0.4 s");
  });

  it("on abort, leaves no process of the tree behind, even ones ignoring SIGTERM or in another session", async () => {
    const marker = unique();
    const { call } = bash();
    const controller = new AbortController();
    const updates: ToolOutput[] = [];
    const running = call("bash", { command: tree(marker) }, { signal: controller.signal, updates });
    await until(() => updates.length > 0, 5000);
    // the three sleeps are up (the shells' own command lines contain the marker too)
    await until(() => processesWith(marker).filter((line) => /^\s*\d+\s+\S+\s+sleep /.test(line)).length === 3, 5000);
    controller.abort();
    const out = await running;
    expect(out.isError).toBe(true);
    expect(textOf(out)).toBe("started\n\nCommand aborted; its process tree was terminated.");
    await until(() => processesWith(marker).length === 0, 5000);
    expect(processesWith(marker)).toEqual([]);
  });

  it("on timeout, leaves no process of the tree behind", async () => {
    const marker = unique();
    const { call } = bash();
    const out = await call("bash", { command: tree(marker), timeout: 1 });
    expect(out.details.timedOut).toBe(true);
    await until(() => processesWith(marker).length === 0, 5000);
    await sleep(100);
    expect(processesWith(marker)).toEqual([]);
  });
});
