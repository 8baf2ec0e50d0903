/**
 * ui-rpc: `coil --mode rpc`. JSON lines over stdin/stdout with LF framing (our own splitting, not
 * readline): commands with an id get one response each, every agent event is streamed, and dialogs
 * asked through the `ui` service become ui_request/ui_response pairs. See docs/rpc.md.
 */
import {
  definePlugin,
  messageOf,
  type Agent,
  type AgentMessage,
  type FrontEndContext,
  type ModelInfo,
  type PluginLog,
  type UiService,
} from "../../api/index.js";
import {
  filterInput,
  findCommand,
  guardSession,
  type InputService,
  type SessionChange,
  type SessionGuardService,
} from "../../lib/front-end.js";
import type {} from "../../lib/ui.js"; // the plugin UI contract (setStatus, setWidget, ...)
import { resolveModel } from "../../lib/models.js";
import {
  RPC_COMMANDS,
  splitLines,
  type RpcCommandName,
  type RpcOutbound,
  type RpcSession,
  type RpcState,
} from "./protocol.js";
import { onTermination } from "../../lib/signals.js";
import type { SessionService } from "../session-jsonl/api.js";

type Pending = { resolve(value: unknown): void; signal?: AbortSignal; onAbort?: () => void };

/** One running RPC connection. */
class RpcServer {
  private buffer = "";
  private nextUi = 1;
  private readonly pending = new Map<string, Pending>();
  private queue: Promise<void> = Promise.resolve();
  /** stdin ended: nobody can answer a dialog any more. */
  private closed = false;
  /** How the latest run ended, for get_state. */
  lastRun?: RpcState["lastRun"];

  constructor(
    private readonly ctx: FrontEndContext,
    private readonly session: () => SessionService | undefined,
    private readonly log: PluginLog,
    private readonly input: () => InputService | undefined = () => undefined,
    private readonly guard: () => SessionGuardService | undefined = () => undefined,
  ) {}

  send(message: RpcOutbound): void {
    this.ctx.stdout.write(JSON.stringify(message) + "\n");
  }

  /** A dialog for the client; resolves to its answer, or undefined when cancelled or the client left. */
  ask(method: "confirm" | "select" | "input", params: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    if (signal?.aborted || this.closed) return Promise.resolve(undefined);
    const id = `ui_${this.nextUi++}`;
    return new Promise((resolve) => {
      const entry: Pending = { resolve, signal };
      entry.onAbort = () => {
        this.pending.delete(id);
        this.send({ type: "ui_cancel", id });
        resolve(undefined);
      };
      signal?.addEventListener("abort", entry.onAbort, { once: true });
      this.pending.set(id, entry);
      this.send({ type: "ui_request", id, method, params });
    });
  }

  notify(message: string, level: string): void {
    this.tell("notify", { message, level });
  }

  /** A fire-and-forget `ui_request` (notify, setStatus, setWidget, setTitle, setEditorText): no answer is read. */
  tell(
    method: "notify" | "setStatus" | "setWidget" | "setTitle" | "setEditorText",
    params: Record<string, unknown>,
  ): void {
    if (!this.closed) this.send({ type: "ui_request", id: `ui_${this.nextUi++}`, method, params });
  }

  /** Feed raw stdin text; complete lines are handled in order. */
  feed(chunk: string): void {
    const { lines, rest } = splitLines(this.buffer + chunk);
    this.buffer = rest;
    for (const line of lines) this.queue = this.queue.then(() => this.line(line));
  }

  /** stdin ended: handle an unterminated last line, answer open dialogs with "no answer", finish queued work. */
  async end(): Promise<void> {
    if (this.buffer.trim()) this.feed("\n");
    await this.queue;
    this.closed = true;
    this.closeDialogs();
  }

  closeDialogs(): void {
    for (const [id, p] of this.pending) {
      p.signal?.removeEventListener("abort", p.onAbort!);
      p.resolve(undefined);
      this.pending.delete(id);
    }
  }

  private async line(line: string): Promise<void> {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(line) as Record<string, unknown>;
      if (!msg || typeof msg !== "object" || Array.isArray(msg)) throw new Error("a command must be a JSON object");
    } catch (error) {
      return this.send({
        type: "response",
        command: "parse",
        success: false,
        error: `invalid JSON line: ${messageOf(error)}`,
      });
    }
    const id = msg.id as string | number | undefined;
    const type = String(msg.type ?? "");
    if (type === "ui_response") {
      const p = this.pending.get(String(id));
      if (!p) return;
      this.pending.delete(String(id));
      p.signal?.removeEventListener("abort", p.onAbort!);
      return p.resolve(msg.result);
    }
    if (!RPC_COMMANDS.includes(type as RpcCommandName)) {
      return this.send({
        type: "response",
        id,
        command: type,
        success: false,
        error: `unknown command '${type}'; commands: ${RPC_COMMANDS.join(", ")}`,
      });
    }
    try {
      const data = await this.command(type as RpcCommandName, msg);
      this.send({ type: "response", id, command: type, success: true, ...(data === undefined ? {} : { data }) });
    } catch (error) {
      this.send({ type: "response", id, command: type, success: false, error: messageOf(error) });
    }
  }

  private text(msg: Record<string, unknown>, command: string): string {
    if (typeof msg.message !== "string") throw new Error(`${command} needs "message": a string`);
    return msg.message;
  }

  private sessionOrFail(command: string): SessionService {
    const s = this.session();
    if (!s) throw new Error(`${command} needs a session plugin (session-jsonl) in the preset`);
    return s;
  }

  private async command(type: RpcCommandName, msg: Record<string, unknown>): Promise<unknown> {
    const { agent } = this.ctx;
    switch (type) {
      case "prompt": {
        const text = this.text(msg, type);
        if (agent.isRunning) throw new Error("a run is going: send steer or follow_up, or abort it first");
        const slash = findCommand(agent.view, text);
        let input: Parameters<Agent["prompt"]>[0] = text;
        if (slash) {
          const out = await slash.command.run(slash.args, agent);
          if (out === undefined || typeof out === "string") return { started: false, output: out ?? "" };
          input = out.prompt;
        } else {
          // A plugin's `input` service (Pi extensions' input event) may rewrite the prompt, or consume it.
          const verdict = await filterInput(this.input(), text, "rpc");
          if ("handled" in verdict) return { started: false, output: verdict.output ?? "" };
          input = verdict.text;
        }
        const images = Array.isArray(msg.images) ? (msg.images as never[]) : [];
        if (images.length && typeof input === "string")
          input = { role: "user", content: [{ type: "text", text: input }, ...images], timestamp: Date.now() };
        // The response says the run started; the run's events follow, ending with agent_end.
        agent.prompt(input).catch((error) => this.log.error(`prompt failed: ${messageOf(error)}`));
        return { started: true };
      }
      case "steer":
        agent.steer(this.text(msg, type));
        return { queued: agent.state.queued.steering.length };
      case "follow_up":
        agent.followUp(this.text(msg, type));
        return { queued: agent.state.queued.followUp.length };
      case "abort": {
        const unsent: AgentMessage[] = agent.abort();
        await agent.waitForIdle();
        return { unsent };
      }
      case "get_state":
        return this.state(agent);
      case "get_messages":
        return { messages: agent.state.messages };
      case "set_model":
        return this.setModel(agent, msg);
      case "compact": {
        const result = await agent.compact(typeof msg.instructions === "string" ? msg.instructions : undefined);
        return { compacted: Boolean(result), tokensAfter: result?.tokensAfter };
      }
      case "new_session": {
        this.idle(agent, type);
        const s = this.sessionOrFail(type);
        return { session: info(await this.guarded({ kind: "new" }, s, () => s.newSession())) };
      }
      case "fork": {
        this.idle(agent, type);
        const entryId =
          msg.entryId === null || typeof msg.entryId === "string" ? (msg.entryId as string | null) : undefined;
        if (entryId === undefined)
          throw new Error('fork needs "entryId": a session entry id (or null for an empty fork)');
        const s = this.sessionOrFail(type);
        const change = { kind: "fork", entryId, position: "at" } as const;
        return { session: info(await this.guarded(change, s, () => s.fork(entryId, { switch: true }))) };
      }
      case "switch_session": {
        this.idle(agent, type);
        if (typeof msg.session !== "string" || !msg.session)
          throw new Error('switch_session needs "session": a session file or id prefix');
        const s = this.sessionOrFail(type);
        const target = msg.session;
        return { session: info(await this.guarded({ kind: "resume", target }, s, () => s.open(target))) };
      }
      case "list_commands":
        return {
          commands: agent.view.commands
            .values()
            .map((c) => ({ name: c.name, description: c.description, argumentHint: c.argumentHint })),
        };
    }
  }

  /** A session change a plugin may refuse (the `session-guard` service): the refusal is the command's error. */
  private async guarded<T>(change: SessionChange, s: SessionService, run: () => T): Promise<T> {
    const verdict = await guardSession(this.guard(), change);
    if (verdict.cancelled) throw new Error(verdict.cancelled);
    const previous = s.file;
    const result = run();
    await this.guard()?.after(change, previous);
    return result;
  }

  private idle(agent: Agent, command: string): void {
    if (agent.isRunning) throw new Error(`cannot ${command} while a run is going; abort it or wait for agent_end`);
  }

  private state(agent: Agent): RpcState {
    const s = agent.state;
    const session = this.session();
    return {
      provider: s.provider,
      model: s.model,
      isRunning: s.isRunning,
      messageCount: s.messages.length,
      pendingToolCalls: s.pendingToolCalls,
      queued: { steering: s.queued.steering.length, followUp: s.queued.followUp.length },
      ...(session ? { session: info(session) } : {}),
      ...(this.lastRun ? { lastRun: this.lastRun } : {}),
    };
  }

  private setModel(agent: Agent, msg: Record<string, unknown>): { provider: string; model: ModelInfo } {
    const modelId = typeof msg.model === "string" ? msg.model : "";
    const providerId = typeof msg.provider === "string" ? msg.provider : undefined;
    if (!modelId) throw new Error('set_model needs "model": an id, or provider/id');
    const { provider, model } = resolveModel(agent.view.providers.values(), modelId, providerId);
    agent.setModel(provider.id, model);
    this.session()?.appendModelChange?.(provider.id, model.id);
    return { provider: provider.id, model };
  }
}

function info(s: { id: string; file?: string; leafId: string | null }): RpcSession {
  return { id: s.id, file: s.file, leafId: s.leafId };
}

export default definePlugin({
  id: "ui-rpc",
  description: "RPC mode: JSON lines over stdin/stdout for editors and other programs (--mode rpc)",
  setup(ctx) {
    // The client's dialogs while a session runs: this front end's `ui` (the host reads it while rpc runs).
    let dialogs: UiService | undefined;
    ctx.frontEnds.register({
      id: "rpc",
      modes: ["rpc"],
      get ui() {
        return dialogs;
      },
      async run(fe) {
        // Commands come on stdin; `-` is accepted for older clients that passed it.
        if (fe.prompt && fe.prompt !== "-") {
          fe.stderr.write("coil: rpc mode reads commands on stdin; do not pass a prompt (send a prompt command)\n");
          return 2;
        }
        const server = new RpcServer(
          fe,
          () => ctx.services.get("session"),
          ctx.log,
          () => ctx.services.get("input"),
          () => ctx.services.get("session-guard"),
        );
        // While rpc mode runs, dialogs plugins ask through the `ui` service go to the client.
        const ui: UiService = {
          confirm: async (title, message, signal) => (await server.ask("confirm", { title, message }, signal)) === true,
          select: async (title, options, signal) => {
            const r = await server.ask("select", { title, options }, signal);
            return typeof r === "string" && options.includes(r) ? r : undefined;
          },
          input: async (title, placeholder, signal) => {
            const r = await server.ask("input", { title, placeholder }, signal);
            return typeof r === "string" ? r : undefined;
          },
          notify: (message, level = "info") => server.notify(message, level),
          // The plugin UI contract (lib/ui.ts) as events the client may show or ignore; components (widget and
          // footer factories) cannot travel over JSON: a factory widget is sent as no lines, a footer not at all.
          setStatus: (key, text) => server.tell("setStatus", { key, text: text ?? null }),
          setWidget: (key, content, options) =>
            server.tell("setWidget", {
              key,
              lines: content === undefined ? null : Array.isArray(content) ? content : [],
              placement: options?.placement ?? "aboveEditor",
            }),
          setTitle: (title) => server.tell("setTitle", { title }),
          setEditorText: (text) => server.tell("setEditorText", { text }),
        };
        const previousUi = dialogs;
        dialogs = ui;
        const unsubscribe = fe.agent.subscribe((event) => {
          if (event.type === "agent_end")
            server.lastRun = {
              stopReason: event.stopReason,
              ...(event.reason === undefined ? {} : { reason: event.reason }),
            };
          server.send({ type: "event", event });
        });
        const stdin = fe.stdin;
        stdin.setEncoding("utf8");
        const onData = (chunk: string) => server.feed(chunk);
        // SIGTERM, SIGHUP (the client or its terminal went away) and SIGINT end the session like the end of
        // stdin, after aborting the run, so every command's process tree ends with it.
        let stop: () => void = () => undefined;
        const stopped = new Promise<void>((done) => {
          stop = done;
          stdin.once("end", done);
          stdin.once("close", done);
        });
        const onSignal = () => {
          fe.agent.abort();
          stop();
        };
        const offSignals = onTermination(onSignal);
        stdin.on("data", onData);
        server.send({ type: "ready", version: 1 });
        try {
          await stopped;
          await server.end();
          await fe.agent.waitForIdle();
          return 0;
        } finally {
          stdin.off("data", onData);
          offSignals();
          server.closeDialogs();
          unsubscribe();
          dialogs = previousUi;
        }
      },
    });
  },
});
