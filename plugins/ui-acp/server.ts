/**
 * The ACP agent: `coil --mode acp` on stdin/stdout through the official SDK (loaded only here, only in
 * this mode). One coil agent serves the connection; ACP sessions are coil sessions (session-jsonl), one
 * running at a time. See docs/editors.md.
 *
 * Longer than ~350 lines on purpose: one class holds the connection's state (the client's capabilities,
 * the open ACP session, the running prompt, pending permission requests), and every handler reads and
 * updates it; split across files, each part would need that whole state passed in.
 */
import { randomUUID } from "node:crypto";
import { realpathSync } from "node:fs";
import { open, readFile, type FileHandle } from "node:fs/promises";
import { resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import {
  messageOf,
  type Agent,
  type AgentEvent,
  type AgentMessage,
  type FrontEndContext,
  type ModelInfo,
  type PromptInput,
  type ToolCallInfo,
  type ToolResult,
  type UiService,
} from "../../api/index.js";
import { findCommand } from "../../lib/front-end.js";
import type { ExecOptions, ExecResult, Operations } from "../tools-coding/api.js";
import type { SessionService } from "../session-jsonl/api.js";
import type { McpService } from "../mcp/api.js";
import {
  absolute,
  commandsOf,
  planEntries,
  promptParts,
  promptText,
  replay,
  resultContent,
  stopReasonOf,
  toolKind,
  toolLocations,
  toolTitle,
} from "./map.js";

/** The part of the `session` service (plugins/session-jsonl) this front end uses. */
/** What the plugin hands the server: late lookups of other plugins' services, and where to hook `ui`/`operations`. */
export interface ServerDeps {
  session(): SessionService | undefined;
  mcp(): McpService | undefined;
  version: string;
}

/** The permission gate's choices (plugins/permission-gate CHOICES), mapped to ACP option kinds. */
const GATE: Record<string, acp.PermissionOptionKind> = {
  "Allow once": "allow_once",
  "Allow for this session": "allow_always",
  Deny: "reject_once",
};

const MODE_INFO: Record<string, string> = {
  default: "Default: ask before edits and commands",
  project: "Project: edits and commands go ahead inside the project, writing outside it asks",
  "accept-edits": "Accept edits: edits in the project go ahead, commands still ask",
  plan: "Plan: read-only tools until you approve a plan",
  yolo: "Yolo: everything is allowed without asking",
};

/** One ACP connection over the front end's stdin/stdout. */
export class AcpServer {
  private conn!: acp.AgentConnection;
  private caps: acp.ClientCapabilities = {};
  private sessionId?: string;
  /** The in-memory session id when no session plugin is in the preset. */
  private memoryId = randomUUID();
  private running?: { sessionId: string; open: Set<string>; cancelled: boolean };
  /**
   * The latest tool call that started and has not ended: the one a dialog is about. Gates decide one call at
   * a time, in order, so while a gate asks this is the call it decides.
   */
  private current?: { id: string; title: string };
  /** Arguments of the calls that started and have not ended (their final locations use them). */
  private readonly started = new Map<string, Record<string, unknown>>();
  /** The editor's terminal a running bash call uses: its card shows the terminal instead of text updates. */
  private readonly terminals = new Map<string, string>();
  private readonly snapshots = new Map<string, { path: string; old: string | undefined }>();
  private readonly diffs = new Map<string, acp.Diff>();
  private outbox: Promise<void> = Promise.resolve();
  private mode?: string;
  private nextUi = 1;
  /** Called once the client said what it offers (its capabilities). */
  onInitialized?: () => void;

  constructor(
    private readonly fe: FrontEndContext,
    private readonly deps: ServerDeps,
  ) {}

  get agent(): Agent {
    return this.fe.agent;
  }

  /** Serve until the client closes stdin (or a signal ends coil); resolves to the exit code. */
  async serve(): Promise<number> {
    const input = Readable.toWeb(this.fe.stdin as Readable) as unknown as ReadableStream<Uint8Array>;
    const output = Writable.toWeb(this.fe.stdout as Writable) as WritableStream<Uint8Array>;
    const app = acp
      .agent({ name: "coil" })
      .onRequest(acp.methods.agent.initialize, ({ params }) => this.initialize(params))
      .onRequest(acp.methods.agent.authenticate, () => ({}))
      .onRequest(acp.methods.agent.session.new, ({ params }) => this.newSession(params))
      .onRequest(acp.methods.agent.session.load, ({ params }) => this.loadSession(params))
      .onRequest(acp.methods.agent.session.list, ({ params }) => this.listSessions(params))
      .onRequest(acp.methods.agent.session.prompt, ({ params, signal }) => this.prompt(params, signal))
      .onRequest(acp.methods.agent.session.setMode, ({ params }) => this.setMode(params))
      .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) => this.setConfigOption(params))
      .onNotification(acp.methods.agent.session.cancel, ({ params }) => this.cancel(params));
    this.conn = app.connect(answeringInvalid(acp.ndJsonStream(output, input)));
    const unsubscribe = this.agent.subscribe((event) => this.onEvent(event));
    try {
      await this.conn.closed;
    } catch (error) {
      this.note(`the connection ended: ${messageOf(error)}`);
    } finally {
      unsubscribe();
    }
    this.agent.abort();
    await this.agent.waitForIdle();
    return 0;
  }

  /** A line for the user on stderr (stdout is the protocol's). */
  note(message: string): void {
    this.fe.stderr.write(`coil: [ui-acp] ${message}\n`);
  }

  close(): void {
    this.conn?.close();
  }

  // ───────────────────────────── requests ─────────────────────────────

  private initialize(params: acp.InitializeRequest): acp.InitializeResponse {
    this.caps = params.clientCapabilities ?? {};
    this.onInitialized?.();
    return {
      // v1 is the only version this agent speaks: a client asking for another gets v1 and decides.
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: this.deps.session() !== undefined,
        ...(this.deps.session()?.list ? { sessionCapabilities: { list: {} } } : {}),
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        ...(this.deps.mcp()?.addServers ? { mcpCapabilities: { http: true, sse: true } } : {}),
      },
      agentInfo: { name: "coil", title: "coil", version: this.deps.version },
      authMethods: [],
    };
  }

  private checkCwd(cwd: string): void {
    const real = (path: string) => {
      try {
        return realpathSync(resolve(path));
      } catch {
        return resolve(path);
      }
    };
    if (real(cwd) !== real(this.fe.cwd)) {
      throw acp.RequestError.invalidParams(
        { cwd, served: this.fe.cwd },
        `coil serves one project per process: it was started in ${this.fe.cwd}, and the session asks for ${cwd}. Start coil with the project directory as its working directory`,
      );
    }
  }

  private idle(what: string): void {
    if (this.agent.isRunning)
      throw acp.RequestError.invalidRequest(
        undefined,
        `cannot ${what} while a prompt is running in session ${this.running?.sessionId ?? ""}; cancel it first`,
      );
  }

  private async newSession(params: acp.NewSessionRequest): Promise<acp.NewSessionResponse> {
    this.checkCwd(params.cwd);
    this.idle("start a new session");
    const session = this.deps.session();
    if (session) this.sessionId = session.newSession().id;
    else {
      this.agent.replaceMessages([]);
      this.sessionId = this.memoryId = randomUUID();
    }
    await this.addMcpServers(params.mcpServers);
    const response = { sessionId: this.sessionId, ...(await this.sessionState()) };
    this.afterResponse(() => this.sendCommands());
    return response;
  }

  private async loadSession(params: acp.LoadSessionRequest): Promise<acp.LoadSessionResponse> {
    this.checkCwd(params.cwd);
    this.idle("load a session");
    const session = this.deps.session();
    if (!session)
      throw acp.RequestError.invalidRequest(undefined, "loading sessions needs the session-jsonl plugin in the preset");
    try {
      this.sessionId = session.open(params.sessionId).id;
    } catch (error) {
      throw new acp.RequestError(-32002, `session ${params.sessionId} was not found: ${messageOf(error)}`, {
        sessionId: params.sessionId,
      });
    }
    await this.addMcpServers(params.mcpServers);
    // The history comes first, as updates, then the response.
    for (const update of replay(this.agent.state.messages, this.fe.cwd)) this.update(update);
    this.sendCommands();
    await this.outbox;
    return this.sessionState();
  }

  /** Sessions of the project, newest first, titled by their name or first message. */
  private listSessions(params: acp.ListSessionsRequest): acp.ListSessionsResponse {
    const session = this.deps.session();
    if (!session?.list)
      throw acp.RequestError.invalidRequest(undefined, "listing sessions needs the session-jsonl plugin in the preset");
    const cwd = params.cwd ?? this.fe.cwd;
    return {
      sessions: session.list({ cwd }).map((s) => ({
        sessionId: s.id,
        cwd: s.cwd,
        title: s.name ?? s.firstMessage ?? null,
        updatedAt: new Date(s.modified).toISOString(),
      })),
    };
  }

  /** Switch coil to the session a request names (a client may keep several open). */
  private use(sessionId: string): void {
    if (sessionId === this.sessionId) return;
    const session = this.deps.session();
    if (!session) {
      if (sessionId !== this.memoryId) throw acp.RequestError.sessionNotFound(sessionId);
      this.sessionId = sessionId;
      return;
    }
    this.idle(`switch to session ${sessionId}`);
    try {
      this.sessionId = session.open(sessionId).id;
    } catch (error) {
      throw new acp.RequestError(-32002, `session ${sessionId} was not found: ${messageOf(error)}`, { sessionId });
    }
  }

  private async prompt(params: acp.PromptRequest, signal?: AbortSignal): Promise<acp.PromptResponse> {
    this.use(params.sessionId);
    this.idle("start another prompt");
    const { cwd, agent } = this.fe;
    const run = { sessionId: params.sessionId, open: new Set<string>(), cancelled: false };
    this.running = run;
    // `$/cancel_request` of the prompt itself means what session/cancel means: the answer is `cancelled`.
    const onCancel = () => this.cancel({ sessionId: params.sessionId });
    signal?.addEventListener("abort", onCancel, { once: true });
    try {
      const text = promptText(params.prompt);
      let input: PromptInput | undefined;
      const slash = text !== undefined ? findCommand(agent.view, text) : undefined;
      if (slash) {
        const out = await slash.command.run(slash.args, this.agent);
        if (out === undefined || typeof out === "string") {
          if (out) this.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: out } });
          await this.afterCommand();
          await this.outbox;
          return { stopReason: "end_turn" };
        }
        input = out.prompt;
      } else {
        const parts = promptParts(params.prompt, cwd);
        input = parts.every((p) => p.type === "text")
          ? parts.map((p) => (p as { text: string }).text).join("\n")
          : ({ role: "user", content: parts, timestamp: Date.now() } satisfies AgentMessage);
      }
      const result = await this.agent.prompt(input);
      this.closeOpenCalls(run.open, result.stopReason === "aborted" ? "aborted" : "ended without a result");
      await this.outbox;
      if (run.cancelled) return { stopReason: "cancelled" };
      const stopReason = stopReasonOf(result.stopReason);
      if (!stopReason)
        throw acp.RequestError.internalError(
          { stopReason: result.stopReason },
          `the model request failed: ${result.error ?? result.reason ?? "unknown error"}`,
        );
      return { stopReason };
    } finally {
      signal?.removeEventListener("abort", onCancel);
      this.running = undefined;
      this.current = undefined;
    }
  }

  private cancel(params: acp.CancelNotification): void {
    if (!this.running || this.running.sessionId !== params.sessionId) return;
    this.running.cancelled = true;
    this.agent.abort();
  }

  // ───────────────────────────── events → session/update ─────────────────────────────

  private update(update: acp.SessionUpdate): void {
    const sessionId = this.running?.sessionId ?? this.sessionId;
    if (!sessionId) return;
    const send = this.conn.client.notify(acp.methods.client.session.update, { sessionId, update });
    this.outbox = this.outbox
      .then(() => send)
      .catch((error) => void this.fe.stderr.write(`coil: [ui-acp] could not send an update: ${messageOf(error)}\n`));
  }

  private afterResponse(fn: () => void): void {
    setTimeout(fn, 0);
  }

  private onEvent(event: AgentEvent): void {
    const run = this.running;
    if (!run) return;
    const cwd = this.fe.cwd;
    switch (event.type) {
      case "message_update": {
        const e = event.event;
        if (e.type === "text_delta")
          this.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: e.delta } });
        else if (e.type === "thinking_delta")
          this.update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: e.delta } });
        break;
      }
      case "tool_execution_start": {
        const title = toolTitle(event.toolName, event.args, cwd);
        run.open.add(event.toolCallId);
        this.started.set(event.toolCallId, event.args);
        this.current = { id: event.toolCallId, title };
        this.update({
          sessionUpdate: "tool_call",
          toolCallId: event.toolCallId,
          title,
          kind: toolKind(event.toolName),
          status: "pending",
          rawInput: event.args,
          locations: toolLocations(event.toolName, event.args, cwd),
        });
        if (event.toolName === "write_plan" && typeof event.args.plan === "string")
          this.update({ sessionUpdate: "plan", entries: planEntries(event.args.plan) });
        break;
      }
      case "tool_execution_update": {
        if (this.terminals.has(event.toolCallId)) break;
        const text = event.partial.content.map((c) => (c.type === "text" ? c.text : "")).join("");
        this.update({
          sessionUpdate: "tool_call_update",
          toolCallId: event.toolCallId,
          status: "in_progress",
          ...(text ? { content: [{ type: "content", content: { type: "text", text } }] } : {}),
        });
        break;
      }
      case "tool_execution_end": {
        const r = event.result;
        run.open.delete(event.toolCallId);
        if (this.current?.id === event.toolCallId) this.current = undefined;
        const terminalId = this.terminals.get(event.toolCallId);
        this.terminals.delete(event.toolCallId);
        const diff = this.diffs.get(event.toolCallId);
        this.diffs.delete(event.toolCallId);
        this.snapshots.delete(event.toolCallId);
        const call = this.started.get(event.toolCallId);
        this.started.delete(event.toolCallId);
        this.update({
          sessionUpdate: "tool_call_update",
          toolCallId: event.toolCallId,
          status: r.isError ? "failed" : "completed",
          content: [
            ...(terminalId ? [{ type: "terminal" as const, terminalId }] : []),
            ...(diff && !r.isError ? [{ type: "diff" as const, ...diff }] : []),
            ...resultContent(r),
          ],
          ...(call ? { locations: toolLocations(event.toolName, call, cwd, r.details) } : {}),
          ...(r.details !== undefined ? { rawOutput: r.details } : {}),
        });
        break;
      }
    }
  }

  /** A call the client saw start must not stay open: mark those without an end as failed. */
  private closeOpenCalls(open: Set<string>, why: string): void {
    for (const id of open) this.started.delete(id);
    for (const id of open)
      this.update({
        sessionUpdate: "tool_call_update",
        toolCallId: id,
        status: "failed",
        content: [{ type: "content", content: { type: "text", text: `Not finished: the run ${why}.` } }],
      });
    open.clear();
  }

  // ───────────────────────────── diffs for edit/write ─────────────────────────────

  /** `tool_call` tap (after the gate): remember the file as it was before an edit or write. */
  async beforeTool(info: ToolCallInfo): Promise<void> {
    if (!this.running || (info.call.name !== "edit" && info.call.name !== "write")) return;
    const path = typeof info.args.path === "string" ? info.args.path : undefined;
    if (!path) return;
    const abs = absolute(path, this.fe.cwd);
    this.snapshots.set(info.call.id, { path: abs, old: await this.readText(abs).catch(() => undefined) });
  }

  /** `tool_result` tap: the diff (old and new text) the editor shows for an edit or write. */
  async afterTool(result: ToolResult, info: ToolCallInfo): Promise<void> {
    const snap = this.snapshots.get(info.call.id);
    if (!snap || result.isError) return;
    const now = await this.readText(snap.path).catch(() => undefined);
    if (now !== undefined) this.diffs.set(info.call.id, { path: snap.path, oldText: snap.old ?? null, newText: now });
  }

  // ───────────────────────────── ui service ─────────────────────────────

  /** The `ui` service while ACP runs: dialogs become permission requests; free text is not offered by ACP v1. */
  ui(): UiService {
    return {
      confirm: async (title, message, signal) => {
        const choice = await this.ask(
          title,
          message,
          [
            { optionId: "yes", name: "Yes", kind: "allow_once" },
            { optionId: "no", name: "No", kind: "reject_once" },
          ],
          signal,
        );
        return choice === "yes";
      },
      select: async (title, options, signal) => {
        if (options.some((o) => o === "Allow once") && options.some((o) => o === "Deny")) {
          // The permission gate asking about the call it is deciding.
          const offered = options.filter((o) => GATE[o]).map((o) => ({ optionId: o, name: o, kind: GATE[o]! }));
          const choice = await this.ask(title, undefined, offered, signal);
          return choice !== undefined && options.includes(choice) ? choice : undefined;
        }
        const choice = await this.ask(
          title,
          undefined,
          options.map((o, i) => ({ optionId: String(i), name: o, kind: "allow_once" as const })),
          signal,
        );
        return choice === undefined ? undefined : options[Number(choice)];
      },
      // ACP v1 has no free-text dialog: the question is dismissed, which the asking plugin treats as no answer.
      input: async (title) => {
        this.note(`"${title}" needs free text, which ACP clients cannot answer; dismissed`);
        return undefined;
      },
      notify: (message, level = "info") => {
        if (this.caps.session?.notices && this.sessionId)
          this.update({ sessionUpdate: "notice", severity: level === "warn" ? "warning" : level, title: message });
        else this.fe.stderr.write(`coil: ${level}: ${message}\n`);
      },
    };
  }

  /** session/request_permission about the call being decided (or run); resolves to the chosen option id, or undefined. */
  private async ask(
    title: string,
    message: string | undefined,
    options: acp.PermissionOption[],
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    const sessionId = this.running?.sessionId ?? this.sessionId;
    if (!sessionId || signal?.aborted) return undefined;
    // The card of the call in question, with the question (and its details) as content.
    const call = this.current;
    const toolCall: acp.ToolCallUpdate = {
      toolCallId: call?.id ?? `ui_${this.nextUi++}`,
      title: call?.title ?? title,
      ...(message || call
        ? {
            content: [
              {
                type: "content" as const,
                content: { type: "text" as const, text: message ? (call ? `${title}\n\n${message}` : message) : title },
              },
            ],
          }
        : {}),
    };
    // On abort the client is sent $/cancel_request and the asking plugin is told "no answer" at once.
    const r = await this.conn.client
      .request(
        acp.methods.client.session.requestPermission,
        { sessionId, toolCall, options },
        { cancellationSignal: signal, stopWaitingOnCancel: true },
      )
      .catch((error) => {
        if (!signal?.aborted) this.note(`the permission request failed: ${messageOf(error)}`);
        return undefined;
      });
    return r?.outcome.outcome === "selected" ? r.outcome.optionId : undefined;
  }

  // ───────────────────────────── client fs and terminals ─────────────────────────────

  /** File and process operations through the client, for what it offers; undefined when it offers nothing. */
  operations(): Partial<Operations> | undefined {
    const fs = this.caps.fs ?? {};
    const ops: Partial<Operations> = {};
    if (fs.readTextFile) {
      ops.readFile = async (path) =>
        (await this.viaClient(path)) ? Buffer.from(await this.clientRead(path)) : readFile(path);
      ops.readStream = (path, range = {}) => this.readRange(path, range);
    }
    if (fs.writeTextFile) {
      ops.writeFile = async (path, data) => {
        const content = typeof data === "string" ? data : new TextDecoder("utf-8", { fatal: true }).decode(data);
        await this.conn.client.request(acp.methods.client.fs.writeTextFile, {
          sessionId: this.sessionOrFail(),
          path,
          content,
        });
      };
    }
    if (this.caps.terminal) ops.exec = (command, options) => this.terminalExec(command, options);
    return Object.keys(ops).length ? ops : undefined;
  }

  private sessionOrFail(): string {
    const id = this.running?.sessionId ?? this.sessionId;
    if (!id) throw Object.assign(new Error("[ui-acp] no ACP session is open"), { code: "EIO" });
    return id;
  }

  /** Text files go through the editor (its unsaved buffer); binary files (a NUL in the first 8 KB) are read from disk. */
  private async viaClient(path: string): Promise<boolean> {
    let handle: FileHandle;
    try {
      handle = await open(path, "r");
    } catch {
      return true;
    }
    try {
      const buf = Buffer.alloc(8192);
      const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
      return !buf.subarray(0, bytesRead).includes(0);
    } finally {
      await handle.close();
    }
  }

  private async clientRead(path: string): Promise<string> {
    try {
      const r = await this.conn.client.request(acp.methods.client.fs.readTextFile, {
        sessionId: this.sessionOrFail(),
        path,
      });
      return r.content;
    } catch (error) {
      // The editor could not read it: the file on disk is the answer (and its errno, e.g. ENOENT).
      this.note(`the client could not read ${path} (${messageOf(error)}); reading it from disk`);
      return readFile(path, "utf8");
    }
  }

  private async *readRange(path: string, range: { start?: number; end?: number }): AsyncIterable<Uint8Array> {
    const bytes = (await this.viaClient(path)) ? Buffer.from(await this.clientRead(path)) : await readFile(path);
    yield bytes.subarray(range.start ?? 0, range.end === undefined ? undefined : range.end + 1);
  }

  /** Read a file's text as the tools see it (through the client when it offers reads). */
  private async readText(path: string): Promise<string> {
    return this.caps.fs?.readTextFile && (await this.viaClient(path)) ? this.clientRead(path) : readFile(path, "utf8");
  }

  /** Run a command in a terminal the client creates: its output streams back as the tool's output. */
  private async terminalExec(command: string, o: ExecOptions): Promise<ExecResult> {
    const env = Object.entries(o.env ?? {})
      .filter(([name, value]) => value !== undefined && process.env[name] !== value)
      .map(([name, value]) => ({ name, value: value! }));
    const terminal = await this.conn.client.createTerminal({
      sessionId: this.sessionOrFail(),
      command: o.shell ?? "/bin/sh",
      args: ["-c", command],
      cwd: o.cwd,
      env,
      outputByteLimit: 8_000_000,
    });
    // The bash call running this command (calls run in parallel, so match the command) shows the terminal live.
    const callId = [...this.started].find(([id, args]) => args.command === command && !this.terminals.has(id))?.[0];
    if (callId) {
      this.terminals.set(callId, terminal.id);
      this.update({
        sessionUpdate: "tool_call_update",
        toolCallId: callId,
        status: "in_progress",
        content: [{ type: "terminal", terminalId: terminal.id }],
      });
    }
    let sent = 0;
    const pull = async () => {
      const out = await terminal.currentOutput();
      const bytes = Buffer.from(out.output);
      if (bytes.length > sent) o.onData(bytes.subarray(sent), "stdout");
      sent = Math.max(sent, bytes.length);
    };
    const kill = () => void terminal.kill().catch(() => undefined);
    o.signal?.addEventListener("abort", kill, { once: true });
    const timer = setInterval(() => void pull().catch(() => undefined), 250);
    try {
      const exit = await terminal.waitForExit();
      clearInterval(timer);
      await pull().catch(() => undefined);
      return { exitCode: exit.exitCode ?? null, signal: exit.signal ?? null };
    } finally {
      clearInterval(timer);
      o.signal?.removeEventListener("abort", kill);
      await terminal.release().catch(() => undefined);
    }
  }

  // ───────────────────────────── MCP servers from the client ─────────────────────────────

  private async addMcpServers(servers: readonly acp.McpServer[]): Promise<void> {
    if (!servers.length) return;
    const mcp = this.deps.mcp();
    if (!mcp?.addServers) {
      this.note(
        `the client passed ${servers.length} MCP server(s), but the mcp plugin is not in the preset; they are not used`,
      );
      return;
    }
    await mcp.addServers(
      servers.map((s) =>
        "command" in s
          ? {
              name: s.name,
              command: s.command,
              args: s.args,
              env: Object.fromEntries(s.env.map((e) => [e.name, e.value])),
            }
          : {
              name: s.name,
              url: s.url,
              headers: Object.fromEntries(s.headers.map((h) => [h.name, h.value])),
              ...("type" in s && s.type === "sse" ? { transport: "sse" as const } : {}),
            },
      ),
      "the ACP client",
    );
  }

  // ───────────────────────────── modes, models, commands ─────────────────────────────

  private sendCommands(): void {
    if (!this.sessionId) return;
    this.update({
      sessionUpdate: "available_commands_update",
      availableCommands: commandsOf(this.fe.agent.view.commands.values()),
    });
  }

  private async sessionState(): Promise<{ modes?: acp.SessionModeState; configOptions?: acp.SessionConfigOption[] }> {
    const modes = await this.modes();
    const configOptions = this.configOptions();
    return { ...(modes ? { modes } : {}), ...(configOptions.length ? { configOptions } : {}) };
  }

  /** Modes: the permission gate's, with plan mode's `plan` when the plan-mode plugin is there. */
  private async modes(): Promise<acp.SessionModeState | undefined> {
    const view = this.fe.agent.view;
    const gate = view.commands.get("permissions");
    const plan = view.tools.get("write_plan") ? view.commands.get("plan") : undefined;
    if (!gate && !plan) return undefined;
    const ids = gate ? ["default", "project", "accept-edits", "plan", "yolo"] : ["default", "plan"];
    let current = "default";
    if (gate) current = /permission mode: (\S+)/.exec(String((await gate.run("", this.agent)) ?? ""))?.[1] ?? "default";
    if (plan && /plan mode: on/.test(String((await plan.run("status", this.agent)) ?? ""))) current = "plan";
    this.mode = current;
    return {
      currentModeId: current,
      availableModes: ids.map((id) => ({
        id,
        name: id === "accept-edits" ? "Accept edits" : id[0]!.toUpperCase() + id.slice(1),
        description: MODE_INFO[id],
      })),
    };
  }

  private async setMode(params: acp.SetSessionModeRequest): Promise<acp.SetSessionModeResponse> {
    this.use(params.sessionId);
    const state = await this.modes();
    if (!state)
      throw acp.RequestError.invalidRequest(
        undefined,
        "this preset has no modes: add permission-gate or plan-mode to it",
      );
    if (!state.availableModes.some((m) => m.id === params.modeId)) {
      throw acp.RequestError.invalidParams(
        { modeId: params.modeId },
        `unknown mode '${params.modeId}'; modes: ${state.availableModes.map((m) => m.id).join(", ")}`,
      );
    }
    const view = this.fe.agent.view;
    const gate = view.commands.get("permissions");
    const plan = view.tools.get("write_plan") ? view.commands.get("plan") : undefined;
    const planWasOn = this.mode === "plan" && plan;
    if (params.modeId === "plan" && plan) await plan.run("", this.agent);
    else {
      if (planWasOn) await plan.run("off", this.agent);
      if (gate) await gate.run(`mode ${params.modeId}`, this.agent);
    }
    this.mode = params.modeId;
    this.update({ sessionUpdate: "current_mode_update", currentModeId: params.modeId });
    return {};
  }

  /** A slash command may have changed the mode: tell the client. */
  private async afterCommand(): Promise<void> {
    const before = this.mode;
    const state = await this.modes();
    if (state && state.currentModeId !== before)
      this.update({ sessionUpdate: "current_mode_update", currentModeId: state.currentModeId });
  }

  private models(): { value: string; model: ModelInfo; provider: string }[] {
    const out: { value: string; model: ModelInfo; provider: string }[] = [];
    for (const p of this.fe.agent.view.providers.values()) {
      if (p.isConfigured && !p.isConfigured()) continue;
      for (const m of p.models ?? []) out.push({ value: `${p.id}/${m.id}`, model: m, provider: p.id });
    }
    const s = this.agent.state;
    if (!out.some((o) => o.value === `${s.provider}/${s.model.id}`))
      out.unshift({ value: `${s.provider}/${s.model.id}`, model: s.model, provider: s.provider });
    return out;
  }

  private configOptions(): acp.SessionConfigOption[] {
    const s = this.agent.state;
    const models = this.models();
    return [
      {
        id: "model",
        name: "Model",
        category: "model",
        type: "select",
        currentValue: `${s.provider}/${s.model.id}`,
        options: models.map((m) => ({ value: m.value, name: m.model.name ?? m.model.id, description: m.provider })),
      },
    ];
  }

  private async setConfigOption(
    params: acp.SetSessionConfigOptionRequest,
  ): Promise<acp.SetSessionConfigOptionResponse> {
    this.use(params.sessionId);
    if (params.configId !== "model")
      throw acp.RequestError.invalidParams(
        { configId: params.configId },
        `unknown option '${params.configId}'; options: model`,
      );
    const chosen = this.models().find((m) => m.value === params.value);
    if (!chosen)
      throw acp.RequestError.invalidParams(
        { value: params.value },
        `unknown model '${String(params.value)}'; models: ${this.models()
          .map((m) => m.value)
          .join(", ")}`,
      );
    this.agent.setModel(chosen.provider, chosen.model);
    this.deps.session()?.appendModelChange?.(chosen.provider, chosen.model.id);
    return { configOptions: this.configOptions() };
  }
}

/**
 * The SDK answers a message that is not a valid JSON-RPC request with `id: null`, or, when it has an id but
 * no method, takes it for a response ("Got response to unknown request 92"): either way the client's request
 * never gets its answer. This stream answers those itself, `-32600` with their id (JSON-RPC 2.0 uses null only
 * when the id cannot be read), and passes everything else on. A message without a method whose id is one of
 * coil's own outstanding requests is the client's (broken) answer and goes on to the SDK, which rejects it.
 */
function answeringInvalid(inner: acp.Stream): acp.Stream {
  const outstanding = new Set<string | number>();
  let queue: Promise<void> = Promise.resolve();
  const write = (message: acp.AnyMessage): Promise<void> => {
    const m = message as { id?: string | number; method?: unknown };
    if (typeof m.method === "string" && m.id !== undefined) outstanding.add(m.id);
    const next = queue
      .catch(() => undefined)
      .then(async () => {
        const writer = inner.writable.getWriter();
        try {
          await writer.write(message);
        } finally {
          writer.releaseLock();
        }
      });
    queue = next;
    return next;
  };
  const readable = inner.readable.pipeThrough(
    new TransformStream<acp.AnyMessage, acp.AnyMessage>({
      transform(message, controller) {
        const m = message as Record<string, unknown>;
        if ((typeof m.id === "string" || typeof m.id === "number") && ("result" in m || "error" in m))
          outstanding.delete(m.id);
        const problem = invalidRequest(m, outstanding);
        if (!problem) return controller.enqueue(message);
        void write({
          jsonrpc: "2.0",
          id: m.id as string | number,
          error: { code: -32600, message: `Invalid request: ${problem}` },
        }).catch(() => undefined);
      },
    }),
  );
  return { readable, writable: new WritableStream({ write }) };
}

/** Why `m`, a message carrying a usable id, is not a request coil can answer; undefined when it is (or has no id). */
function invalidRequest(m: Record<string, unknown>, outstanding: Set<string | number>): string | undefined {
  const id = m.id;
  if (!(typeof id === "string" || (typeof id === "number" && Number.isFinite(id)))) return undefined;
  if ("result" in m || "error" in m) return undefined;
  if (!("method" in m)) return outstanding.has(id) ? undefined : 'a request needs a "method"';
  if (m.jsonrpc !== "2.0") return '"jsonrpc" must be "2.0"';
  if (typeof m.method !== "string") return '"method" must be a string';
  return undefined;
}
