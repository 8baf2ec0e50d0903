/**
 * The stdio transport, coil's own: the server runs in its own process group so the whole tree (an `npx`
 * wrapper and the server it starts, or a shell script's children) can be killed at once, and stderr goes
 * to a log file, never to the terminal. Framing reuses the SDK's newline-delimited JSON-RPC helpers.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdirSync, renameSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { StdioServer } from "./config.js";

const LOG_LIMIT = 1024 * 1024;

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

export interface StdioOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** File that receives the server's stderr. */
  logFile: string;
  /** Called with each stderr chunk (for the tail shown when start-up fails). */
  onStderr(text: string): void;
}

export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  private child?: ChildProcess;
  private readonly buffer = new ReadBuffer();
  private exited?: Promise<void>;
  /** `exited with code 3` or `was killed by SIGKILL`, once the process has ended. */
  ended?: string;

  constructor(
    private readonly server: StdioServer,
    private readonly options: StdioOptions,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    const { server, options } = this;
    mkdirSync(dirname(options.logFile), { recursive: true });
    try {
      // Keep one older log beside the current one, not an ever-growing file.
      if (statSync(options.logFile).size > LOG_LIMIT) renameSync(options.logFile, `${options.logFile}.1`);
    } catch {
      // no log yet
    }
    const log = (text: string) => {
      try {
        appendFileSync(options.logFile, text);
      } catch {
        // a log that cannot be written must not break the server
      }
    };
    log(`\n--- ${new Date().toISOString()} ${server.command} ${server.args.join(" ")}\n`);
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
        if (child.pid) groups.add(child.pid);
        guardExit();
        resolveStart();
      });
      child.once("exit", (code, signal) => {
        this.ended = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        log(`--- ${this.ended}\n`);
        if (child.pid) {
          killGroup(child.pid, "SIGKILL"); // children it left behind
          groups.delete(child.pid);
        }
      });
      child.once("close", () => this.onclose?.());
      child.stdin!.on("error", (error) => this.onerror?.(error));
      child.stdout!.on("data", (chunk: Buffer) => {
        this.buffer.append(chunk);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (error) {
            this.onerror?.(error as Error);
            continue;
          }
          if (!message) break;
          this.onmessage?.(message);
        }
      });
      child.stderr!.on("data", (chunk: Buffer) => {
        const text = chunk.toString("utf8");
        log(text);
        options.onStderr(text);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((done, fail) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) return fail(new Error("the server process is not running"));
      if (stdin.write(serializeMessage(message))) done();
      else stdin.once("drain", done);
    });
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
    this.buffer.clear();
  }
}
