/**
 * The stdio transport, coil's own: the server runs in its own process group so the whole tree (an `npx`
 * wrapper and the server it starts, or a shell script's children) can be killed at once, a watcher ends
 * that group if coil dies without cleaning up (kill -9: lib/shell/reaper), and stderr goes to a log file
 * (rotated while it grows), never to the terminal.
 *
 * Reading is coil's own too, because what a server sends must never take coil down: a line longer than
 * `maxMessageBytes` (10 MB) or a reply that is not JSON-RPC stops the server with the reason kept in
 * `failure` (pending calls then fail with it); a stray line that is not JSON at all (a log line printed on
 * stdout) is skipped with a warning. Messages are checked with the SDK's own JSON-RPC schema.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, closeSync, mkdirSync, openSync, renameSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { type GroupWatch, watchGroup } from "../../lib/shell/reaper.js";
import type { StdioServer } from "./config.js";

/** A log file is rotated (one older copy kept as `.1`) when it passes this size. */
export const LOG_LIMIT = 1024 * 1024;
/** The largest message coil takes from a server (the SDK's own limit for its stdio reader). */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** Process group ids of running servers, killed on exit and on a terminating signal. */
const groups = new Set<number>();
let guarded = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** Kill every server's process group now (synchronous: safe in an `exit` handler). */
export function killAllServers(): void {
  for (const pid of groups) killGroup(pid, "SIGKILL");
  groups.clear();
}

/** Once: make sure no server outlives coil, whether it exits normally or is killed by a signal. */
function guardExit(): void {
  if (guarded) return;
  guarded = true;
  process.on("exit", killAllServers);
  for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"] as const) {
    const onSignal = () => {
      killAllServers();
      // When nobody else handles the signal, keep its default meaning: end the process.
      if (process.listenerCount(signal) === 1) {
        process.off(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

const megabytes = (n: number) => `${Math.round(n / (1024 * 1024))} MB`;

export interface StdioOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** File that receives the server's stderr. */
  logFile: string;
  /** Called with each stderr chunk (for the tail shown when start-up fails). */
  onStderr(text: string): void;
  /** Something the user should hear about once, that does not stop the server (a stray line on stdout). */
  onWarning(message: string): void;
  /** Seconds the group may go on after coil dies before the watcher stops it (a package runner still installing). */
  graceSeconds?: number;
  /** The longest line taken from the server (default 10 MB). */
  maxMessageBytes?: number;
}

export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  private child?: ChildProcess;
  private exited?: Promise<void>;
  private watch?: GroupWatch;
  /** The current line so far (stdout chunks without a newline yet). */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private logBytes = 0;
  private warned = false;
  /** `exited with code 3` or `was killed by SIGKILL`, once the process has ended. */
  ended?: string;
  /** Why coil stopped the server (an oversized or malformed message), once it did. */
  failure?: string;

  constructor(
    private readonly server: StdioServer,
    private readonly options: StdioOptions,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  private log(text: string): void {
    const file = this.options.logFile;
    try {
      appendFileSync(file, text);
      this.logBytes += Buffer.byteLength(text);
      // Rotated while the server runs, not only at start: a chatty server keeps at most two files' worth.
      if (this.logBytes > LOG_LIMIT) {
        renameSync(file, `${file}.1`);
        this.logBytes = 0;
      }
    } catch {
      // a log that cannot be written must not break the server
    }
  }

  start(): Promise<void> {
    const { server, options } = this;
    mkdirSync(dirname(options.logFile), { recursive: true });
    try {
      this.logBytes = statSync(options.logFile).size;
    } catch {
      // no log yet
    }
    this.log(`\n--- ${new Date().toISOString()} ${server.command} ${server.args.join(" ")}\n`);
    return new Promise((resolveStart, rejectStart) => {
      const child = spawn(server.command, server.args, {
        cwd: server.cwd ? resolve(options.cwd, server.cwd) : options.cwd,
        env: { ...options.env, ...server.env },
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      });
      this.child = child;
      this.exited = new Promise((done) => child.once("close", () => done()));
      child.once("error", (error) => {
        const e = new Error(`cannot start '${server.command}': ${error.message}`);
        rejectStart(e);
        this.onerror?.(e);
      });
      child.once("spawn", () => {
        if (child.pid) {
          groups.add(child.pid);
          // However coil ends (kill -9 included), the group does not outlive it.
          this.watch = watchGroup(child.pid, { graceSeconds: options.graceSeconds ?? 0 });
        }
        guardExit();
        resolveStart();
      });
      child.once("exit", (code, signal) => {
        this.ended = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        this.log(`--- ${this.ended}\n`);
        if (child.pid) {
          killGroup(child.pid, "SIGKILL"); // children it left behind
          groups.delete(child.pid);
        }
        this.watch?.release();
      });
      child.once("close", () => this.onclose?.());
      child.stdin!.on("error", (error) => this.onerror?.(error));
      child.stdout!.on("data", (chunk: Buffer) => this.read(chunk));
      child.stderr!.on("data", (chunk: Buffer) => {
        const text = chunk.toString("utf8");
        this.log(text);
        options.onStderr(text);
      });
    });
  }

  /** Split stdout into lines; never throws, whatever the server sends. */
  private read(chunk: Buffer): void {
    const max = this.options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
    let from = 0;
    while (!this.failure) {
      const nl = chunk.indexOf(10, from);
      const piece = chunk.subarray(from, nl < 0 ? undefined : nl);
      this.partialBytes += piece.length;
      if (this.partialBytes > max) {
        this.partial = [];
        this.fail(
          `the server sent a message of more than ${megabytes(max)} (the most coil accepts in one MCP message); the server was stopped`,
        );
        return;
      }
      this.partial.push(piece);
      if (nl < 0) return;
      const line = Buffer.concat(this.partial).toString("utf8");
      this.partial = [];
      this.partialBytes = 0;
      from = nl + 1;
      this.line(line.replace(/\r$/, ""));
    }
  }

  private line(text: string): void {
    if (!text.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.log(`[stdout, not JSON-RPC, skipped] ${text.slice(0, 2000)}\n`);
      if (!this.warned) {
        this.warned = true;
        this.options.onWarning(
          `printed a line that is not JSON-RPC on stdout (skipped; a server must write its logs to stderr): ${JSON.stringify(text.slice(0, 120))}`,
        );
      }
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (parsed.success) {
      this.onmessage?.(parsed.data);
      return;
    }
    const o = (value && typeof value === "object" ? value : {}) as Record<string, unknown>;
    const issue = parsed.error.issues[0];
    const why = issue ? `${issue.path.join(".") || "the message"}: ${issue.message}` : "unknown shape";
    if ((typeof o.id === "number" || typeof o.id === "string") && ("result" in o || "error" in o)) {
      // A broken reply to one of coil's requests: that request fails with the reason, and the server stops.
      const reason = `its reply to request ${o.id} was not a valid JSON-RPC message (${why}); the server was stopped`;
      this.failure = reason;
      this.onmessage?.({ jsonrpc: "2.0", id: o.id, error: { code: -32603, message: reason } });
      void this.close();
      return;
    }
    this.log(`[stdout, not a valid JSON-RPC message, skipped] ${text.slice(0, 2000)}\n`);
    this.options.onWarning(`sent a message that is not valid JSON-RPC (${why}); it was skipped`);
  }

  private fail(reason: string): void {
    this.failure = reason;
    this.log(`--- coil stopped the server: ${reason}\n`);
    void this.close();
  }

  /** The server finished starting: from now on it ends with coil at once (no grace). */
  connected(): void {
    this.watch?.setGrace(0);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((done, fail) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) return fail(new Error("the server process is not running"));
      if (stdin.write(serializeMessage(message))) done();
      else stdin.once("drain", done);
    });
  }

  /**
   * Leave the server to end by itself: close its stdin and stop watching it from this process, so a
   * package runner that is still installing finishes its download (its grace with the watcher bounds how
   * long it may go on after coil has exited); a server that did start sees stdin close and exits.
   */
  release(): void {
    const child = this.child;
    if (!child?.pid) return;
    groups.delete(child.pid);
    const onclose = this.onclose;
    this.onclose = undefined;
    this.onmessage = undefined;
    child.stdin?.end();
    this.drain(child);
    child.stdout?.destroy();
    child.unref();
    onclose?.();
  }

  /**
   * Hand the server's stderr over to a `cat` that appends it to the log: once coil has gone, an installer's
   * warning must not meet a closed pipe (SIGPIPE would end it mid-install, which is what release avoids).
   */
  private drain(child: ChildProcess): void {
    const stderr = child.stderr;
    if (!stderr) return;
    stderr.removeAllListeners("data");
    stderr.pause();
    for (let chunk = stderr.read(); chunk !== null; chunk = stderr.read()) this.log(String(chunk));
    let fd: number | undefined;
    try {
      fd = openSync(this.options.logFile, "a");
      const cat = spawn("cat", [], { stdio: [stderr, fd, "ignore"], detached: true });
      cat.on("error", () => undefined);
      cat.unref();
    } catch {
      // no cat: the installer's later stderr writes fail, as they would have
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    stderr.destroy();
  }

  /** End stdin, ask the group to stop, and kill it if it has not within a second. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child?.pid) return;
    child.stdin?.end();
    killGroup(child.pid, "SIGTERM");
    if (child.exitCode === null && child.signalCode === null) {
      const timer = new Promise<"late">((done) => setTimeout(() => done("late"), 1000).unref());
      if ((await Promise.race([this.exited, timer])) === "late") killGroup(child.pid, "SIGKILL");
    }
    killGroup(child.pid, "SIGKILL");
    groups.delete(child.pid);
    this.watch?.release();
    this.partial = [];
  }
}
