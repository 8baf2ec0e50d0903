/**
 * bash: run a command through the user's shell, stream its output, keep the tail. Output past the
 * limits goes to a temporary file as it arrives, so memory stays bounded however much is printed.
 */
import { randomBytes } from "node:crypto";
import { closeSync, openSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "typebox";
import { defineTool, messageOf, type ToolDefinition, type ToolOutput } from "../../api/index.js";
import type { ExecResult } from "./api.js";
import { formatSize, MAX_BYTES, MAX_LINES } from "./limits.js";
import type { ToolEnv } from "./options.js";
import { codeOf } from "./paths.js";
import { sanitizeOutput, truncateTail } from "./truncate.js";

export const BashParams = Type.Object({
  command: Type.String(),
  timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
});

export interface BashDetails {
  exitCode: number | null;
  /** Signal that ended the shell, when one did. */
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  /** Whole output in bytes and lines (before cutting). */
  bytes: number;
  lines: number;
  /** Set when the output was cut: every byte the command printed is in this file. */
  fullOutputPath?: string;
  durationMs: number;
}

/** Bytes of the newest output kept in memory once the output is over the limit. */
const KEEP_BYTES = 2 * MAX_BYTES;
/** How often streamed updates are sent while a command runs. */
const UPDATE_EVERY_MS = 200;

/** Full-output files hold raw output (secrets included): they last until coil exits, then go. */
const fullOutputFiles = new Set<string>();
function removeAtExit(path: string): void {
  if (fullOutputFiles.size === 0)
    process.once("exit", () =>
      fullOutputFiles.forEach((f) => {
        try {
          unlinkSync(f);
        } catch {
          /* already gone */
        }
      }),
    );
  fullOutputFiles.add(path);
}

/** Collects a command's output: everything until the limits, then a rolling tail plus the full-output file. */
export class OutputSink {
  private chunks: Buffer[] = [];
  private kept = 0;
  private fd: number | undefined;
  private droppedFront = false;
  bytes = 0;
  private newlines = 0;
  private lastByte = -1;
  fullOutputPath: string | undefined;

  push(chunk: Uint8Array): void {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    if (buf.length === 0) return;
    this.bytes += buf.length;
    for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, i + 1)) this.newlines++;
    this.lastByte = buf[buf.length - 1]!;
    if (this.fd !== undefined) writeSync(this.fd, buf);
    this.chunks.push(buf);
    this.kept += buf.length;
    if (this.fd === undefined && (this.bytes > MAX_BYTES || this.newlines > MAX_LINES)) {
      this.fullOutputPath = join(tmpdir(), `coil-bash-${randomBytes(6).toString("hex")}.log`);
      this.fd = openSync(this.fullOutputPath, "w", 0o600);
      removeAtExit(this.fullOutputPath);
      for (const c of this.chunks) writeSync(this.fd, c);
    }
    if (this.fd !== undefined) {
      while (this.chunks.length > 1 && this.kept - this.chunks[0]!.length >= KEEP_BYTES) {
        this.kept -= this.chunks.shift()!.length;
        this.droppedFront = true;
      }
    }
  }

  get lines(): number {
    return this.newlines + (this.bytes > 0 && this.lastByte !== 10 ? 1 : 0);
  }

  get truncated(): boolean {
    return this.fullOutputPath !== undefined;
  }

  /** The tail as the model sees it, and a notice when it was cut. */
  view(): { text: string; notice?: string } {
    let text = Buffer.concat(this.chunks).toString("utf8");
    if (this.droppedFront) {
      const nl = text.indexOf("\n");
      // the first kept line is partial; drop it unless it is all there is
      if (nl >= 0 && nl < text.length - 1) text = text.slice(nl + 1);
    }
    const cut = truncateTail(sanitizeOutput(text), MAX_LINES, MAX_BYTES);
    if (!this.truncated && !cut.truncated) return { text: cut.text };
    const total = this.lines;
    const where = this.fullOutputPath ? ` Full output: ${this.fullOutputPath}` : "";
    if (cut.partialLine)
      return {
        text: cut.text,
        notice: `[Showing the last ${formatSize(MAX_BYTES)} of line ${total} (of ${total}).${where}]`,
      };
    const from = Math.max(1, total - cut.lines + 1);
    const why = cut.by === "bytes" ? ` (${formatSize(MAX_BYTES)} limit)` : "";
    return { text: cut.text, notice: `[Showing lines ${from}-${total} of ${total}${why}.${where}]` };
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

const fail = (text: string, details?: BashDetails): ToolOutput<BashDetails> => ({
  content: [{ type: "text", text }],
  details,
  isError: true,
});

export function createBashTool(env: ToolEnv): ToolDefinition<typeof BashParams, BashDetails> {
  const o = env.options.bash;
  const defaultTimeout = Math.min(o.defaultTimeout, o.maxTimeout);
  return defineTool({
    name: "bash",
    label: "Bash",
    description:
      `Run a command in a fresh shell in the working directory (cd and variables do not carry over; stdin is closed). ` +
      `Returns stdout and stderr; only the last ${MAX_LINES} lines or ${formatSize(MAX_BYTES)} are shown, the full output is saved to a file the result names. ` +
      `timeout is in seconds (default ${defaultTimeout}, at most ${o.maxTimeout}) and kills the process tree. A non-zero exit is an error result. ` +
      `Output of background jobs (cmd &) is not captured: redirect it to a file.`,
    parameters: BashParams,
    // Esc keeps what the command printed: the kernel puts the last update in the aborted result
    partialIsOutput: true,
    executionMode: o.sequential ? "sequential" : "parallel",
    promptSnippet: "bash: run a shell command (tests, builds, git, package managers)",
    promptGuidelines: ["Use bash for builds, tests, git and other programs; give long-running commands a timeout."],
    async execute(args, run) {
      const ops = env.ops();
      try {
        const where = await ops.stat(env.cwd);
        if (where.kind !== "directory")
          return fail(`The working directory ${env.cwd} is not a directory; the command was not run.`);
      } catch {
        return fail(
          `The working directory ${env.cwd} does not exist (it may have been deleted or moved); the command was not run. Ask the user to restart coil in an existing directory.`,
        );
      }
      env.unconfined?.();
      const timeoutS = Math.min(args.timeout ?? defaultTimeout, o.maxTimeout);
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeoutS * 1000);
      const sink = new OutputSink();
      const streamView = () => {
        const view = sink.view();
        run.update({ content: [{ type: "text", text: view.notice ? `${view.text}\n\n${view.notice}` : view.text }] });
      };
      // On abort the kernel keeps the last streamed output for the model: send what came since the last update.
      const onAbort = () => {
        if (sink.bytes > 0) streamView();
        controller.abort();
      };
      if (run.signal.aborted) controller.abort();
      else run.signal.addEventListener("abort", onAbort, { once: true });

      let lastUpdate = 0;
      // Output that came within UPDATE_EVERY_MS of the last update is sent when the interval is up, so a
      // command that prints and then goes quiet (a build's last line, then a long wait) shows all it printed.
      let trailing: NodeJS.Timeout | undefined;
      const flush = () => {
        trailing = undefined;
        lastUpdate = Date.now();
        streamView();
      };
      const started = Date.now();
      let result: ExecResult;
      const extra = env.shellEnv?.();
      try {
        result = await ops.exec(args.command, {
          cwd: env.cwd,
          shell: o.shell,
          ...(extra ? { env: { ...process.env, ...extra } } : {}),
          signal: controller.signal,
          killGraceMs: o.killGraceMs,
          onData: (chunk) => {
            sink.push(chunk);
            const wait = UPDATE_EVERY_MS - (Date.now() - lastUpdate);
            if (wait <= 0) {
              clearTimeout(trailing);
              flush();
            } else trailing ??= setTimeout(flush, wait);
          },
        });
      } catch (error) {
        const shell = o.shell ?? "the default shell";
        const missing =
          codeOf(error) === "ENOENT" ? ` (${shell} was not found; set the tools-coding option bash.shell)` : "";
        return fail(`Cannot start ${shell}${missing}: ${messageOf(error)}`);
      } finally {
        clearTimeout(timer);
        clearTimeout(trailing);
        run.signal.removeEventListener("abort", onAbort);
        sink.close();
      }

      const aborted = run.signal.aborted && !timedOut;
      const details: BashDetails = {
        exitCode: result.exitCode,
        signal: result.signal,
        timedOut,
        aborted,
        bytes: sink.bytes,
        lines: sink.lines,
        fullOutputPath: sink.fullOutputPath,
        durationMs: Date.now() - started,
      };
      const view = sink.view();
      let text = view.text === "" ? "(no output)" : view.text;
      if (view.notice) text += `\n\n${view.notice}`;
      if (timedOut) {
        return fail(
          `${text}\n\nCommand timed out after ${timeoutS} s; its process tree was terminated. If it needs longer, pass a larger timeout (at most ${o.maxTimeout}) or run it in the background with its output redirected to a file.`,
          details,
        );
      }
      if (aborted) return fail(`${text}\n\nCommand aborted; its process tree was terminated.`, details);
      if (result.exitCode === null)
        return fail(`${text}\n\nCommand was terminated by signal ${result.signal ?? "unknown"}.`, details);
      if (result.exitCode !== 0) return fail(`${text}\n\nCommand exited with code ${result.exitCode}.`, details);
      return { content: [{ type: "text", text }], details };
    },
  });
}
