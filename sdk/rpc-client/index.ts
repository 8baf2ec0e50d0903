/**
 * `coil/rpc-client`: a typed Node client for `coil --mode rpc`. It spawns coil, frames JSON lines
 * itself, matches responses to commands by id, and emits every agent event. See docs/rpc.md.
 *
 *   const client = await RpcClient.start({ cwd, args: ["--provider", "scripted", "--script", "replies.yaml"] });
 *   client.on("event", (e) => ...);
 *   const end = await client.run("fix the failing test");   // resolves with the agent_end event
 *   await client.close();
 */
import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { join } from "node:path";
import type { AgentEvent } from "../../api/index.js";
import { packageRoot } from "../../lib/paths.js";
import { splitLines, type RpcCommandName, type RpcCommands, type RpcOutbound } from "../../plugins/ui-rpc/protocol.js";

export * from "../../plugins/ui-rpc/protocol.js";

export interface RpcClientOptions {
  /** Working directory of the coil process. */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Extra coil arguments (`--preset`, `--provider`, `--model`, plugin flags ...). */
  args?: string[];
  /** The coil entry script; default: this package's dist/bin/coil.js. */
  bin?: string;
  /** Node binary; default: the current one. */
  node?: string;
  /** Reject a command whose response takes longer (ms). Default 60 s; 0 waits for ever. */
  timeoutMs?: number;
}

/** A ui_request dialog as coil sends it (docs/rpc.md, "Dialogs"). */
export type UiDialog =
  | { method: "confirm"; params: { title: string; message: string } }
  | { method: "select"; params: { title: string; options: string[] } }
  | { method: "input"; params: { title: string; placeholder?: string } }
  | { method: "notify"; params: { message: string; level: string } }
  | { method: "setStatus"; params: { key: string; text: string | null } }
  | { method: "setWidget"; params: { key: string; lines: string[] | null; placement: string } }
  | { method: "setTitle"; params: { title: string } }
  | { method: "setEditorText"; params: { text: string } };

/** Answers ui_request dialogs: return a boolean (confirm), one of the options (select), text (input), or undefined. */
export type UiHandler = (request: UiDialog) => unknown;

export class RpcError extends Error {
  constructor(
    readonly command: string,
    message: string,
  ) {
    super(`${command}: ${message}`);
  }
}

type AgentEndEvent = Extract<AgentEvent, { type: "agent_end" }>;

function defaultBin(): string {
  let root: string;
  try {
    root = packageRoot();
  } catch {
    throw new Error("coil/rpc-client: cannot find coil's dist/bin/coil.js; pass { bin }");
  }
  return join(root, "dist", "bin", "coil.js");
}

/**
 * Events: `event` (every AgentEvent), and each event's own type (`agent_end`, `tool_execution_start`, ...);
 * `ui_request`, `ui_cancel`, `stderr` (text), `exit` (code).
 */
export class RpcClient extends EventEmitter {
  private buffer = "";
  private nextId = 1;
  private readonly waiting = new Map<
    string,
    { command: string; resolve(data: unknown): void; reject(error: Error): void; timer?: NodeJS.Timeout }
  >();
  private uiHandler?: UiHandler;
  private exited?: Promise<number>;
  /** Everything coil wrote on stderr. */
  stderr = "";

  private constructor(
    private readonly child: ChildProcess,
    private readonly timeoutMs: number,
  ) {
    super();
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => this.feed(chunk));
    child.stderr!.on("data", (d: Buffer) => {
      this.stderr += d.toString();
      this.emit("stderr", d.toString());
    });
    this.exited = new Promise((resolve) =>
      child.on("close", (code) => {
        for (const [, w] of this.waiting)
          w.reject(
            new RpcError(
              w.command,
              `coil exited (code ${code}) before answering${this.stderr ? `: ${this.stderr.trim()}` : ""}`,
            ),
          );
        this.waiting.clear();
        this.emit("exit", code ?? 1);
        resolve(code ?? 1);
      }),
    );
  }

  /** Spawn `coil --mode rpc` and wait for its ready line. */
  static async start(options: RpcClientOptions = {}): Promise<RpcClient> {
    const child = spawn(
      options.node ?? process.execPath,
      [options.bin ?? defaultBin(), "--mode", "rpc", ...(options.args ?? [])],
      {
        cwd: options.cwd ?? process.cwd(),
        env: options.env ?? process.env,
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    const client = new RpcClient(child, options.timeoutMs ?? 60_000);
    await new Promise<void>((resolve, reject) => {
      client.once("ready", () => resolve());
      client.once("exit", (code) =>
        reject(new Error(`coil --mode rpc exited with code ${code} before it was ready:\n${client.stderr.trim()}`)),
      );
    });
    return client;
  }

  /** Answer dialogs (confirm/select/input) the agent's plugins ask. Without a handler every dialog is dismissed. */
  onUi(handler: UiHandler): this {
    this.uiHandler = handler;
    return this;
  }

  /** Send a command; resolves with its `data`, rejects with RpcError when coil answers `success: false`. */
  request<C extends RpcCommandName>(command: C, params?: RpcCommands[C]["params"]): Promise<RpcCommands[C]["data"]> {
    const id = `c${this.nextId++}`;
    return new Promise((resolve, reject) => {
      const entry = {
        command,
        resolve: resolve as (d: unknown) => void,
        reject,
        timer: undefined as NodeJS.Timeout | undefined,
      };
      if (this.timeoutMs > 0)
        entry.timer = setTimeout(() => {
          this.waiting.delete(id);
          reject(new RpcError(command, `no response in ${this.timeoutMs} ms`));
        }, this.timeoutMs);
      this.waiting.set(id, entry);
      this.write({ ...(params ?? {}), id, type: command });
    });
  }

  prompt(message: string) {
    return this.request("prompt", { message });
  }
  steer(message: string) {
    return this.request("steer", { message });
  }
  followUp(message: string) {
    return this.request("follow_up", { message });
  }
  abort() {
    return this.request("abort", {});
  }
  getState() {
    return this.request("get_state", {});
  }
  getMessages() {
    return this.request("get_messages", {});
  }
  setModel(model: string, provider?: string) {
    return this.request("set_model", provider ? { model, provider } : { model });
  }
  compact(instructions?: string) {
    return this.request("compact", instructions ? { instructions } : {});
  }
  newSession() {
    return this.request("new_session", {});
  }
  fork(entryId: string | null) {
    return this.request("fork", { entryId });
  }
  switchSession(session: string) {
    return this.request("switch_session", { session });
  }
  listCommands() {
    return this.request("list_commands", {});
  }

  /** Resolves with the next event of this type (and matching `predicate`). */
  waitFor<T extends AgentEvent["type"]>(
    type: T,
    predicate: (e: Extract<AgentEvent, { type: T }>) => boolean = () => true,
  ): Promise<Extract<AgentEvent, { type: T }>> {
    return new Promise((resolve) => {
      const on = (e: Extract<AgentEvent, { type: T }>) => {
        if (!predicate(e)) return;
        this.off(type, on);
        resolve(e);
      };
      this.on(type, on);
    });
  }

  /** Prompt and wait for the run to end. */
  async run(message: string): Promise<AgentEndEvent> {
    const end = this.waitFor("agent_end");
    const started = await this.prompt(message);
    if (!started.started)
      return { type: "agent_end", stopReason: "stop", reason: started.output, messages: [], unsent: [] };
    return end;
  }

  /** Close stdin (coil finishes a running run, then exits) and resolve with the exit code. */
  async close(): Promise<number> {
    this.child.stdin!.end();
    return this.exited!;
  }

  /** Kill the process. */
  kill(signal: NodeJS.Signals = "SIGTERM"): void {
    this.child.kill(signal);
  }

  private write(message: unknown): void {
    if (!this.child.stdin!.writable) return;
    this.child.stdin!.write(JSON.stringify(message) + "\n");
  }

  private feed(chunk: string): void {
    const { lines, rest } = splitLines(this.buffer + chunk);
    this.buffer = rest;
    for (const line of lines) {
      let msg: RpcOutbound;
      try {
        msg = JSON.parse(line) as RpcOutbound;
      } catch {
        this.emit("protocol_error", line);
        continue;
      }
      this.dispatch(msg);
    }
  }

  private dispatch(msg: RpcOutbound): void {
    if (msg.type === "ready") this.emit("ready");
    else if (msg.type === "event") {
      this.emit("event", msg.event);
      this.emit(msg.event.type, msg.event);
    } else if (msg.type === "response") {
      const w = msg.id === undefined ? undefined : this.waiting.get(String(msg.id));
      if (!w) return void this.emit("unmatched_response", msg);
      this.waiting.delete(String(msg.id));
      clearTimeout(w.timer);
      if (msg.success) w.resolve(msg.data);
      else w.reject(new RpcError(msg.command, msg.error));
    } else if (msg.type === "ui_request") {
      this.emit("ui_request", msg);
      // fire-and-forget calls get no answer (docs/rpc.md)
      if (msg.method !== "confirm" && msg.method !== "select" && msg.method !== "input") return;
      Promise.resolve(this.uiHandler?.({ method: msg.method, params: msg.params } as UiDialog))
        .catch(() => undefined)
        .then((result) => this.write({ type: "ui_response", id: msg.id, result }));
    } else if (msg.type === "ui_cancel") this.emit("ui_cancel", msg.id);
  }
}
