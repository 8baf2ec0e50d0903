/**
 * One language server process: spawned in its own process group (ended with coil, `kill -9` included,
 * through lib/shell/reaper.ts), spoken to over stdio with vscode-jsonrpc, restarted with backoff when it
 * dies. It keeps the documents coil opened in sync (full text) and reads their diagnostics the most exact
 * way the server offers: a pull request (LSP 3.17 `textDocument/diagnostic`), the TypeScript server's own
 * diagnostics requests (`typescript.tsserverRequest`), or the pushed `publishDiagnostics`.
 *
 * Longer than ~350 lines on purpose: one class owns the process's whole life (start, crash, restart,
 * stop) over state the document sync and the three ways of reading diagnostics share.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdirSync, renameSync, statSync } from "node:fs";
import { basename, dirname } from "node:path";
import { pathToFileURL } from "node:url";
import {
  createMessageConnection,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from "vscode-jsonrpc/node.js";
import type {
  Diagnostic,
  DocumentDiagnosticReport,
  InitializeResult,
  PublishDiagnosticsParams,
  ServerCapabilities,
} from "vscode-languageserver-protocol";
import { endWithCoil } from "../../lib/shell/reaper.js";
import type { ServerState } from "./api.js";
import type { ServerConfig } from "./config.js";

export type { Diagnostic } from "vscode-languageserver-protocol";

export interface ServerOptions {
  config: ServerConfig;
  root: string;
  command: { command: string; args: string[] };
  env: NodeJS.ProcessEnv;
  logFile: string;
  version: string;
  /** Reported once per event: a crash, a restart, giving up. */
  report(level: "info" | "warn" | "error", message: string): void;
}

export interface Doc {
  uri: string;
  path: string;
  languageId: string;
  version: number;
  text: string;
  /** False after the server restarted: the next sync opens it again. */
  open: boolean;
  /** The newest diagnostics known (any version). */
  last?: Diagnostic[];
  /** Diagnostics of one version, being read or read. */
  pending?: { version: number; promise: Promise<Diagnostic[] | undefined> };
}

const LOG_LIMIT = 1024 * 1024;
const STDERR_TAIL = 2000;
/** How long pushed diagnostics must stay quiet before they count as complete (servers that send no version). */
const SETTLE_MS = 150;
/** Documents kept open per server; the least recently used is closed beyond it. */
const MAX_OPEN = 64;
const TSSERVER_REQUEST = "typescript.tsserverRequest";

/** Process groups of running servers, killed when coil exits. */
const groups = new Set<number>();
let guarded = false;
const killGroup = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
};
function guardExit(): void {
  if (guarded) return;
  guarded = true;
  process.on("exit", () => {
    for (const pid of groups) killGroup(pid, "SIGKILL");
  });
}

export const uriOf = (path: string) => pathToFileURL(path).href;

const CAPABILITIES = {
  general: { positionEncodings: ["utf-16"] },
  window: { workDoneProgress: true },
  workspace: {
    configuration: true,
    workspaceFolders: true,
    didChangeConfiguration: { dynamicRegistration: false },
  },
  textDocument: {
    synchronization: { dynamicRegistration: false, didSave: false, willSave: false, willSaveWaitUntil: false },
    publishDiagnostics: { relatedInformation: false, versionSupport: true, codeDescriptionSupport: true },
    diagnostic: { dynamicRegistration: false, relatedDocumentSupport: false },
    definition: { dynamicRegistration: false, linkSupport: true },
    references: { dynamicRegistration: false },
    hover: { dynamicRegistration: false, contentFormat: ["markdown", "plaintext"] },
  },
};

type Waiter = { uri: string; after: number; done(d: Diagnostic[] | undefined): void; settle?: NodeJS.Timeout };

export class LanguageServer {
  state: ServerState["state"] = "starting";
  restarts = 0;
  error?: string;
  mode?: "pull" | "tsserver" | "push";
  readonly docs = new Map<string, Doc>();
  private child?: ChildProcess;
  private conn?: MessageConnection;
  private ready: Promise<void>;
  private capabilities: ServerCapabilities = {};
  private stderr = "";
  private startedAt = 0;
  /** Publishes received, numbered, so a wait can ask for one that came after its change. */
  private seq = 0;
  private readonly published = new Map<string, { seq: number; version?: number; diagnostics: Diagnostic[] }>();
  private readonly waiters = new Set<Waiter>();
  /** Whether the server puts a version on its publishes (then a wait needs no settling). */
  private versioned = false;

  constructor(private readonly o: ServerOptions) {
    this.ready = this.boot();
    this.ready.catch(() => undefined);
  }

  get name(): string {
    return this.o.config.name;
  }
  get root(): string {
    return this.o.root;
  }
  get pid(): number | undefined {
    return this.child?.pid;
  }

  status(): ServerState {
    return {
      name: this.name,
      root: this.root,
      state: this.state,
      pid: this.state === "running" || this.state === "starting" ? this.child?.pid : undefined,
      restarts: this.restarts,
      documents: [...this.docs.values()].filter((d) => d.open).length,
      error: this.error,
      diagnostics: this.mode,
    };
  }

  /** Resolves once the server is initialized (after a restart too); rejects when it failed for good. */
  whenReady(): Promise<void> {
    return this.ready;
  }

  private log(text: string): void {
    try {
      appendFileSync(this.o.logFile, text);
    } catch {
      // a log that cannot be written must not break the server
    }
  }

  private async launch(): Promise<void> {
    const { config, command, root } = this.o;
    this.state = this.restarts > 0 ? "restarting" : "starting";
    mkdirSync(dirname(this.o.logFile), { recursive: true });
    try {
      if (statSync(this.o.logFile).size > LOG_LIMIT) renameSync(this.o.logFile, `${this.o.logFile}.1`);
    } catch {
      // no log yet
    }
    this.log(`\n--- ${new Date().toISOString()} ${command.command} ${command.args.join(" ")} (in ${root})\n`);
    this.stderr = "";
    this.published.clear();
    const child = spawn(command.command, command.args, {
      cwd: root,
      env: { ...this.o.env, ...config.env },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    this.child = child;
    const spawned = new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", (error) => reject(new Error(`cannot start '${command.command}': ${error.message}`)));
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      this.log(text);
      this.stderr = (this.stderr + text).slice(-STDERR_TAIL);
    });
    child.stdin!.on("error", () => undefined);
    child.once("exit", (code, signal) => this.exited(child, code, signal));
    const died = new Promise<never>((_, reject) => child.once("exit", () => reject(new Error(this.exitText()))));
    died.catch(() => undefined);
    await Promise.race([spawned, died]);
    if (child.pid) {
      groups.add(child.pid);
      guardExit();
      endWithCoil(child.pid);
    }
    if (this.stopped()) {
      this.kill();
      throw new Error("the server was stopped");
    }
    // A write to a server that just died fails with EPIPE; vscode-jsonrpc then leaves a request's
    // rejection unhandled. The exit is handled where it is noticed (exited()), so writes never reject.
    const writer = new StreamMessageWriter(child.stdin!);
    const write = writer.write.bind(writer);
    writer.write = (message) => write(message).catch(() => undefined);
    const conn = createMessageConnection(new StreamMessageReader(child.stdout!), writer);
    this.conn = conn;
    conn.onNotification("textDocument/publishDiagnostics", (p: PublishDiagnosticsParams) => this.onPublish(p));
    conn.onNotification((method, params) => {
      if (method === "window/logMessage" || method === "window/showMessage")
        this.log(`[${method}] ${(params as { message?: string } | undefined)?.message ?? ""}\n`);
    });
    conn.onRequest((method, params) => this.onServerRequest(method, params));
    conn.onError(() => undefined);
    conn.listen();
    const rootUri = uriOf(root);
    const init = conn.sendRequest<InitializeResult>("initialize", {
      processId: process.pid,
      clientInfo: { name: "coil", version: this.o.version },
      rootUri,
      rootPath: root,
      workspaceFolders: [{ uri: rootUri, name: basename(root) }],
      capabilities: CAPABILITIES,
      initializationOptions: config.initializationOptions,
    });
    // The race below may settle first (the process died, the time ran out): then nobody awaits this.
    init.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `did not answer initialize within ${config.startupTimeout / 1000} s (raise its startupTimeout if it is just slow)`,
            ),
          ),
        config.startupTimeout,
      );
    });
    try {
      const result = await Promise.race([init, timeout, died]);
      this.capabilities = result.capabilities ?? {};
    } catch (error) {
      this.kill();
      throw new Error(`${(error as Error).message}${this.stderrTail()}`);
    } finally {
      clearTimeout(timer);
    }
    notify(conn, "initialized", {});
    if (config.settings !== undefined) notify(conn, "workspace/didChangeConfiguration", { settings: config.settings });
    const commands = this.capabilities.executeCommandProvider?.commands ?? [];
    this.mode =
      config.diagnostics === "pull" || (config.diagnostics === "auto" && this.capabilities.diagnosticProvider)
        ? "pull"
        : config.diagnostics === "auto" && commands.includes(TSSERVER_REQUEST)
          ? "tsserver"
          : "push";
    this.state = "running";
    this.startedAt = Date.now();
    this.error = undefined;
  }

  private exitText(): string {
    const c = this.child;
    return c?.signalCode ? `was killed by ${c.signalCode}` : `exited with code ${c?.exitCode ?? "?"}`;
  }

  private stderrTail(): string {
    const lines = this.stderr.trim().split("\n").filter(Boolean).slice(-5);
    return lines.length ? `; its last stderr lines: ${lines.join(" | ")} (log: ${this.o.logFile})` : "";
  }

  private exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (child.pid) {
      killGroup(child.pid, "SIGKILL"); // what it left behind (tsserver, workers)
      groups.delete(child.pid);
    }
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    this.log(`--- ${how}\n`);
    if (child !== this.child) return;
    this.conn?.dispose();
    this.conn = undefined;
    for (const w of this.waiters) this.finish(w, undefined);
    for (const d of this.docs.values()) {
      d.open = false;
      d.pending = undefined;
    }
    // Only a running server is restarted from here; a start-up that fails is retried by boot().
    if (this.state !== "running") return;
    this.error = `the server ${how}${this.stderrTail()}`;
    // A server that ran for two minutes gets its restarts back.
    if (Date.now() - this.startedAt > 120_000) this.restarts = 0;
    this.ready = this.retry();
    this.ready.catch(() => undefined);
  }

  private stopped(): boolean {
    return this.state === "stopped";
  }

  /** Start, and on failure retry with backoff until `maxRestarts`; rejects when the server failed for good. */
  private async boot(): Promise<void> {
    try {
      await this.launch();
    } catch (error) {
      if (this.state === "stopped") throw error;
      this.error = (error as Error).message;
      return this.retry();
    }
  }

  private async retry(): Promise<void> {
    const { config } = this.o;
    if (this.restarts >= config.maxRestarts) {
      this.state = "failed";
      this.o.report(
        "error",
        `language server '${this.name}' (${this.root}): ${this.error}; not started again after ${this.restarts} restart${this.restarts === 1 ? "" : "s"} (maxRestarts ${config.maxRestarts}). Diagnostics for its files are off for this session.`,
      );
      throw new Error(this.error);
    }
    const delay = Math.min(30_000, 500 * 2 ** this.restarts);
    this.restarts++;
    this.state = "restarting";
    this.o.report("warn", `language server '${this.name}': ${this.error}; restarting in ${delay / 1000} s`);
    await new Promise<void>((resolve) => setTimeout(resolve, delay).unref());
    if (this.stopped()) throw new Error("the server was stopped");
    return this.boot();
  }

  private onServerRequest(method: string, params: unknown): unknown {
    switch (method) {
      case "workspace/configuration": {
        const items = (params as { items?: { section?: string }[] } | undefined)?.items ?? [];
        return items.map((i) => sectionOf(this.o.config.settings, i.section));
      }
      case "workspace/workspaceFolders":
        return [{ uri: uriOf(this.root), name: basename(this.root) }];
      case "workspace/applyEdit":
        return { applied: false, failureReason: "coil's language client only reads" };
      case "client/registerCapability":
      case "client/unregisterCapability":
      case "window/workDoneProgress/create":
      case "window/showMessageRequest":
      case "window/showDocument":
      case "workspace/diagnostic/refresh":
      case "workspace/semanticTokens/refresh":
      case "workspace/inlayHint/refresh":
      case "workspace/codeLens/refresh":
        return null;
      default:
        return new ResponseError(-32601, `coil's language client does not handle ${method}`);
    }
  }

  private onPublish(p: PublishDiagnosticsParams): void {
    const seq = ++this.seq;
    if (typeof p.version === "number") this.versioned = true;
    this.published.set(p.uri, { seq, version: p.version ?? undefined, diagnostics: p.diagnostics });
    const doc = this.docs.get(p.uri);
    if (doc && (p.version === undefined || p.version === null || p.version === doc.version)) doc.last = p.diagnostics;
    for (const w of this.waiters) {
      if (w.uri !== p.uri || seq <= w.after || !doc) continue;
      if (typeof p.version === "number") {
        if (p.version >= doc.version) this.finish(w, p.diagnostics);
        continue;
      }
      // No version: take the newest publish once the server has been quiet for a moment.
      clearTimeout(w.settle);
      w.settle = setTimeout(() => this.finish(w, this.published.get(w.uri)?.diagnostics), SETTLE_MS);
    }
  }

  private finish(w: Waiter, d: Diagnostic[] | undefined): void {
    clearTimeout(w.settle);
    if (!this.waiters.delete(w)) return;
    w.done(d);
  }

  /** Diagnostics the server pushed for files coil has not opened (a workspace-wide check). */
  pushedElsewhere(): { uri: string; diagnostics: Diagnostic[] }[] {
    return [...this.published.entries()]
      .filter(([uri]) => !this.docs.get(uri)?.open)
      .map(([uri, p]) => ({ uri, diagnostics: p.diagnostics }));
  }

  /** Open `path` with `text`, or bring the open document up to it; resolves to the document. */
  async sync(path: string, text: string, languageId: string): Promise<Doc> {
    await this.ready;
    const conn = this.conn;
    if (!conn) throw new Error(`language server '${this.name}' is not running`);
    const uri = uriOf(path);
    let doc = this.docs.get(uri);
    if (doc?.open && doc.text === text) {
      this.touch(doc);
      return doc;
    }
    if (!doc) {
      doc = { uri, path, languageId, version: 0, text, open: false };
      this.docs.set(uri, doc);
    }
    doc.version++;
    doc.text = text;
    doc.pending = undefined;
    this.touch(doc);
    if (this.mode === "push") {
      // A server that sends no version may send nothing when nothing changed; reopening makes it publish.
      const reopen = doc.open && !this.versioned;
      if (reopen) {
        notify(conn, "textDocument/didClose", { textDocument: { uri } });
        // A request the server must refuse: its answer comes after what the close made it publish.
        await conn.sendRequest("$/coil/barrier").catch(() => undefined);
        doc.open = false;
      }
      const waiter = this.waitPublish(doc);
      doc.pending = { version: doc.version, promise: waiter };
    }
    if (doc.open) {
      notify(conn, "textDocument/didChange", {
        textDocument: { uri, version: doc.version },
        contentChanges: [{ text }],
      });
    } else {
      notify(conn, "textDocument/didOpen", {
        textDocument: { uri, languageId: doc.languageId, version: doc.version, text },
      });
      doc.open = true;
    }
    return doc;
  }

  /** Most recently used last; beyond MAX_OPEN the oldest open document is closed. */
  private touch(doc: Doc): void {
    this.docs.delete(doc.uri);
    this.docs.set(doc.uri, doc);
    const open = [...this.docs.values()].filter((d) => d.open);
    for (const old of open.slice(0, Math.max(0, open.length - MAX_OPEN))) this.close(old);
  }

  private close(doc: Doc): void {
    if (doc.open && this.conn) notify(this.conn, "textDocument/didClose", { textDocument: { uri: doc.uri } });
    this.docs.delete(doc.uri);
  }

  private waitPublish(doc: Doc): Promise<Diagnostic[] | undefined> {
    return new Promise((done) => {
      this.waiters.add({ uri: doc.uri, after: this.seq, done });
    });
  }

  /** The diagnostics of the document's current version (undefined when the server cannot say). */
  diagnostics(doc: Doc): Promise<Diagnostic[] | undefined> {
    if (doc.pending?.version === doc.version) return doc.pending.promise;
    const version = doc.version;
    const promise = this.read(doc).then((d) => {
      if (d && doc.version === version) doc.last = d;
      return d;
    });
    doc.pending = { version, promise };
    return promise;
  }

  /** Read the document's diagnostics again (another file changed what they are; the version did not). */
  refresh(doc: Doc): Promise<Diagnostic[] | undefined> {
    doc.pending = undefined;
    return this.diagnostics(doc);
  }

  private async read(doc: Doc): Promise<Diagnostic[] | undefined> {
    const conn = this.conn;
    if (!conn || !doc.open) return undefined;
    try {
      if (this.mode === "pull") {
        for (let attempt = 0; attempt < 3; attempt++) {
          try {
            const r = await conn.sendRequest<DocumentDiagnosticReport>("textDocument/diagnostic", {
              textDocument: { uri: doc.uri },
            });
            return r.kind === "full" ? r.items : doc.last;
          } catch (error) {
            // ServerCancelled with retriggerRequest: the document changed under the request; ask again.
            if (!(error instanceof ResponseError) || error.code !== -32802) throw error;
          }
        }
        return undefined;
      }
      if (this.mode === "tsserver") {
        const ask = (command: string) =>
          conn.sendRequest<{ body?: TsDiagnostic[] } | null>("workspace/executeCommand", {
            command: TSSERVER_REQUEST,
            arguments: [command, { file: doc.uri, includeLinePosition: false }],
          });
        const [syntactic, semantic] = await Promise.all([
          ask("syntacticDiagnosticsSync"),
          ask("semanticDiagnosticsSync"),
        ]);
        return [...(syntactic?.body ?? []), ...(semantic?.body ?? [])].map(fromTsserver);
      }
      const waiter = this.waitPublish(doc);
      // Publishes already in for this version (a versioned server that was quick).
      const p = this.published.get(doc.uri);
      if (p && p.version === doc.version) {
        for (const w of this.waiters) if (w.uri === doc.uri) this.finish(w, p.diagnostics);
        return p.diagnostics;
      }
      return waiter;
    } catch (error) {
      this.log(`--- diagnostics of ${doc.path} failed: ${(error as Error).message}\n`);
      return undefined;
    }
  }

  /** A request about a document (definition, references, hover); rejects with the server's error. */
  request<T>(method: string, params: unknown): Promise<T> {
    const conn = this.conn;
    if (!conn) return Promise.reject(new Error(`language server '${this.name}' is not running`));
    return conn.sendRequest<T>(method, params);
  }

  /** Kill the process group now. */
  kill(): void {
    const pid = this.child?.pid;
    if (pid) {
      killGroup(pid, "SIGKILL");
      groups.delete(pid);
    }
  }

  /** Ask the server to shut down, then end its process group. */
  async stop(): Promise<void> {
    const previous = this.state;
    this.state = "stopped";
    const child = this.child;
    const conn = this.conn;
    for (const w of this.waiters) this.finish(w, undefined);
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    if (conn && previous === "running") {
      const late = new Promise<void>((resolve) => setTimeout(resolve, 300).unref());
      await Promise.race([conn.sendRequest("shutdown").catch(() => undefined), late]);
      notify(conn, "exit");
      await Promise.race([exited, new Promise<void>((resolve) => setTimeout(resolve, 300).unref())]);
    }
    this.kill();
    conn?.dispose();
  }
}

/** Send a notification; a server that died meanwhile (EPIPE) is handled where its exit is. */
function notify(conn: MessageConnection, method: string, params?: unknown): void {
  conn.sendNotification(method, params).catch(() => undefined);
}

interface TsDiagnostic {
  start: { line: number; offset: number };
  end: { line: number; offset: number };
  text: string;
  code?: number;
  category?: string;
  source?: string;
}

/** tsserver's diagnostic (1-based line and offset, a category) as an LSP one. */
function fromTsserver(d: TsDiagnostic): Diagnostic {
  const severity = d.category === "error" ? 1 : d.category === "warning" ? 2 : d.category === "suggestion" ? 4 : 3;
  return {
    range: {
      start: { line: d.start.line - 1, character: d.start.offset - 1 },
      end: { line: d.end.line - 1, character: d.end.offset - 1 },
    },
    severity: severity as Diagnostic["severity"],
    message: d.text,
    code: d.code,
    source: d.source ?? "typescript",
  };
}

/** `workspace/configuration`: the section (a dotted path) of the configured settings, or null. */
export function sectionOf(settings: unknown, section: string | undefined): unknown {
  if (!section) return settings ?? null;
  let v: unknown = settings;
  for (const key of section.split(".")) {
    if (!v || typeof v !== "object") return null;
    v = (v as Record<string, unknown>)[key];
  }
  return v ?? null;
}
