/**
 * The lsp plugin's run-time side, imported on the first read or edit of a file of a configured language
 * (with vscode-jsonrpc): one server per configured server and root, started once and reused; documents
 * synced from disk; the diagnostics an edit introduced; definition, references and hover for the tool.
 */
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { DiagnosticItem, DiagnosticsDetails, ServerState } from "./api.js";
import { describeSource, findRoot, missingMessage, resolveCommand, serversFor, type ServerConfig } from "./config.js";
import { introduced, resolvedCount, sortItems, toItem } from "./format.js";
import { LanguageServer, uriOf, type Diagnostic, type Doc } from "./server.js";

export interface RuntimeOptions {
  servers: readonly ServerConfig[];
  cwd: string;
  projectRoot: string;
  env: NodeJS.ProcessEnv;
  /** Whether project-local binaries (`node_modules/.bin`, virtualenvs) may run. */
  trusted: boolean;
  logDir: string;
  version: string;
  /** ms an edit waits for diagnostics. */
  wait: number;
  maxDiagnostics: number;
  /** Also report what an edit broke in other open files. */
  otherFiles: boolean;
  report(level: "info" | "warn" | "error", message: string): void;
}

/** The other open files checked after an edit, most recently used first. */
const OTHER_FILES = 8;

const readText = async (file: string): Promise<string | undefined> => {
  try {
    return await readFile(file, "utf8");
  } catch {
    return undefined;
  }
};

/** `p`, or undefined once `deadline` (ms since the epoch) has passed. */
export function bounded<T>(p: Promise<T>, deadline: number): Promise<T | undefined> {
  // A rejection after the deadline has nobody waiting for it.
  p.catch(() => undefined);
  const ms = deadline - Date.now();
  if (ms <= 0) return Promise.race([p, Promise.resolve(undefined)]);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

interface Check {
  server: LanguageServer;
  file: string;
  items: DiagnosticItem[];
  others: DiagnosticItem[];
  resolved: number;
  /** Why nothing could be said for this file. */
  note?: string;
}

export class LspRuntime {
  private readonly instances = new Map<string, LanguageServer>();
  /** Servers whose binary is missing, by name and root: reported once. */
  private readonly missing = new Map<string, { server: ServerConfig; root: string; message: string }>();
  private readonly locks = new Map<string, Promise<unknown>>();
  /** Files an edit or write is about to create: everything in them is new. */
  private readonly creating = new Set<string>();

  constructor(private readonly o: RuntimeOptions) {}

  /** Whether a configured server handles this file. */
  handles(file: string): boolean {
    return serversFor(this.o.servers, file).length > 0;
  }

  /** The running (or starting) servers for a file, started here on first use. */
  private serversOf(file: string): { server: LanguageServer; languageId: string }[] {
    const out: { server: LanguageServer; languageId: string }[] = [];
    for (const config of serversFor(this.o.servers, file)) {
      const root = findRoot(config, file, this.o.projectRoot);
      const key = `${config.name}\u0000${root}`;
      let server = this.instances.get(key);
      if (!server) {
        if (this.missing.has(key)) continue;
        const command = resolveCommand(config, root, this.o.projectRoot, this.o.env, this.o.trusted);
        if (!command) {
          const message = missingMessage(config, root, this.o.trusted);
          this.missing.set(key, { server: config, root, message });
          this.o.report(
            "warn",
            `no diagnostics for ${extOf(file)} files: language server '${config.name}' (${describeSource(config.source)}): ${message}`,
          );
          continue;
        }
        server = new LanguageServer({
          config,
          root,
          command,
          env: this.o.env,
          logFile: join(this.o.logDir, `${config.name.replace(/[^A-Za-z0-9._-]/g, "_")}.log`),
          version: this.o.version,
          report: this.o.report,
        });
        this.instances.set(key, server);
      }
      if (server.state === "failed" || server.state === "stopped") continue;
      out.push({ server, languageId: config.extensions[extOf(file)] ?? "plaintext" });
    }
    return out;
  }

  /** Run `fn` after earlier work on the same server and file. */
  private lock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.locks.set(key, tail);
    void tail.then(() => {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    });
    return next;
  }

  private key = (s: LanguageServer, file: string) => `${s.name}\u0000${s.root}\u0000${file}`;

  /** A file was read: open it in its servers, and read its diagnostics in the background (the baseline of a later edit). */
  touch(file: string): void {
    for (const { server, languageId } of this.serversOf(file))
      void this.lock(this.key(server, file), async () => {
        const text = await readText(file);
        if (text === undefined) return;
        const doc = await server.sync(file, text, languageId);
        void server.diagnostics(doc);
      }).catch(() => undefined);
  }

  /** An edit or write is about to run: take the file as it is now as the baseline (read before this returns). */
  async before(file: string): Promise<void> {
    const servers = this.serversOf(file);
    if (servers.length === 0) return;
    const text = await readText(file);
    if (text === undefined) {
      this.creating.add(file);
      return;
    }
    this.creating.delete(file);
    for (const { server, languageId } of servers)
      void this.lock(this.key(server, file), async () => {
        const doc = await server.sync(file, text, languageId);
        void server.diagnostics(doc);
      }).catch(() => undefined);
  }

  /** The open documents' paths (for `afterBash`: which of them a command changed). */
  openFiles(): string[] {
    const paths = new Set<string>();
    for (const s of this.instances.values()) for (const d of s.docs.values()) if (d.open) paths.add(d.path);
    return [...paths];
  }

  /** After files changed: the errors and warnings the change introduced, waiting at most `wait` ms from `started`. */
  async after(files: readonly string[], started = Date.now()): Promise<DiagnosticsDetails | undefined> {
    const deadline = started + this.o.wait;
    const jobs = files.flatMap((file) => this.serversOf(file).map((s) => ({ file, ...s })));
    if (jobs.length === 0) return undefined;
    const checks = await Promise.all(jobs.map((j) => this.check(j.server, j.file, j.languageId, deadline)));
    for (const f of files) this.creating.delete(f);
    const main = checks.flatMap((c) => c.items);
    const seen = new Set(main.map((i) => `${i.file}:${i.line}:${i.column}:${i.message}`));
    const others = checks
      .flatMap((c) => c.others)
      .filter((i) => {
        const k = `${i.file}:${i.line}:${i.column}:${i.message}`;
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      });
    const all = [...sortItems(main), ...sortItems(others)];
    const notes = [...new Set(checks.map((c) => c.note).filter((n): n is string => !!n))];
    return {
      items: all.slice(0, this.o.maxDiagnostics),
      omitted: Math.max(0, all.length - this.o.maxDiagnostics),
      resolved: checks.reduce((n, c) => n + c.resolved, 0),
      note: notes.length ? notes.join("; ") : undefined,
      waitedMs: Date.now() - started,
    };
  }

  private async check(server: LanguageServer, file: string, languageId: string, deadline: number): Promise<Check> {
    const wasStarting = server.state !== "running";
    const work = this.lock(this.key(server, file), async (): Promise<Check> => {
      const uri = uriOf(file);
      const prev = server.docs.get(uri);
      const baseline = prev?.open
        ? await bounded(server.diagnostics(prev), deadline)
        : this.creating.has(file)
          ? []
          : undefined;
      const otherDocs = this.o.otherFiles
        ? [...server.docs.values()].filter((d) => d.open && d.uri !== uri).slice(-OTHER_FILES)
        : [];
      const before = new Map(otherDocs.map((d) => [d.uri, d.last]));
      const text = await readText(file);
      if (text === undefined) return { server, file, items: [], others: [], resolved: 0 };
      const doc = await server.sync(file, text, languageId);
      const fresh = await bounded(server.diagnostics(doc), deadline);
      if (!fresh) return { server, file, items: [], others: [], resolved: 0, note: this.lateNote(server, wasStarting) };
      const items = introduced(baseline ?? [], fresh).map((d) => toItem(d, file, this.o.cwd, server.name));
      const others = await this.otherFiles(server, otherDocs, before, deadline);
      return {
        server,
        file,
        items,
        others,
        resolved: baseline ? resolvedCount(baseline, fresh) : 0,
        note:
          baseline === undefined && items.length > 0
            ? `${server.name} had no earlier diagnostics of ${shown(file, this.o.cwd)} to compare with, so all its errors and warnings are listed`
            : undefined,
      };
    });
    const r = await bounded(work, deadline).catch(() => undefined);
    return r ?? { server, file, items: [], others: [], resolved: 0, note: this.lateNote(server, wasStarting) };
  }

  /** New problems in other open files of the same server (what an edit broke elsewhere). */
  private async otherFiles(
    server: LanguageServer,
    docs: readonly Doc[],
    before: Map<string, Diagnostic[] | undefined>,
    deadline: number,
  ): Promise<DiagnosticItem[]> {
    const results = await Promise.all(
      docs.map(async (d) => {
        const old = before.get(d.uri);
        if (!old) return [];
        // Pushed diagnostics arrive by themselves; the others are asked for again (the version did not change).
        const now = server.mode === "push" ? d.last : await bounded(server.refresh(d), deadline);
        return now ? introduced(old, now).map((x) => toItem(x, d.path, this.o.cwd, server.name)) : [];
      }),
    );
    return results.flat();
  }

  private lateNote(server: LanguageServer, wasStarting: boolean): string {
    const s = this.o.wait / 1000;
    if (server.state === "failed") return `${server.name} failed: ${server.error ?? "unknown error"}`;
    if (wasStarting || server.state !== "running")
      return `the ${server.name} server was still starting after ${s} s, so this change was not checked; the lsp tool can check the file later`;
    return `${server.name} gave no diagnostics within ${s} s; the lsp tool can check the file later`;
  }

  /** Every diagnostic of one file (all severities but hints), fresh. */
  async fileDiagnostics(file: string, deadline: number): Promise<{ items: DiagnosticItem[]; notes: string[] }> {
    const servers = this.serversOf(file);
    const notes: string[] = [];
    const items: DiagnosticItem[] = [];
    if (servers.length === 0) notes.push(this.whyNone(file));
    await Promise.all(
      servers.map(async ({ server, languageId }) => {
        const wasStarting = server.state !== "running";
        const got = await bounded(
          this.lock(this.key(server, file), async () => {
            const text = await readText(file);
            if (text === undefined) throw new Error(`${shown(file, this.o.cwd)} does not exist`);
            const doc = await server.sync(file, text, languageId);
            return server.diagnostics(doc);
          }),
          deadline,
        ).catch((error: Error) => {
          notes.push(error.message);
          return null;
        });
        if (got === null) return;
        if (!got) notes.push(this.lateNote(server, wasStarting));
        else for (const d of got) if ((d.severity ?? 1) <= 3) items.push(toItem(d, file, this.o.cwd, server.name));
      }),
    );
    return { items: sortItems(items), notes };
  }

  /** What every started server knows: its open files, refreshed, and what it pushed for others. */
  async workspaceDiagnostics(deadline: number): Promise<{ items: DiagnosticItem[]; files: number; notes: string[] }> {
    const items: DiagnosticItem[] = [];
    const files = new Set<string>();
    const notes: string[] = [];
    for (const server of this.instances.values()) {
      if (server.state !== "running") {
        notes.push(`${server.name} (${server.root}) is ${server.state}${server.error ? `: ${server.error}` : ""}`);
        continue;
      }
      const docs = [...server.docs.values()].filter((d) => d.open);
      const got = await Promise.all(
        docs.map(async (d) => {
          const diags = await bounded(
            this.lock(this.key(server, d.path), async () => {
              const text = await readText(d.path);
              if (text === undefined) return undefined;
              return server.diagnostics(await server.sync(d.path, text, d.languageId));
            }),
            deadline,
          ).catch(() => undefined);
          return { d, diags };
        }),
      );
      for (const { d, diags } of got) {
        files.add(d.path);
        for (const x of diags ?? []) if ((x.severity ?? 1) <= 3) items.push(toItem(x, d.path, this.o.cwd, server.name));
      }
      for (const p of server.pushedElsewhere()) {
        const path = fileOf(p.uri);
        if (!path) continue;
        files.add(path);
        for (const x of p.diagnostics) if ((x.severity ?? 1) <= 3) items.push(toItem(x, path, this.o.cwd, server.name));
      }
    }
    return { items: sortItems(items), files: files.size, notes };
  }

  /** Ask the first server of a file that answers (definition, references, hover), with the document synced. */
  async ask<T>(
    file: string,
    method: string,
    params: (uri: string) => unknown,
    deadline: number,
  ): Promise<{ result?: T; server?: string; notes: string[] }> {
    const servers = this.serversOf(file);
    const notes: string[] = [];
    if (servers.length === 0) return { notes: [this.whyNone(file)] };
    for (const { server, languageId } of servers) {
      const wasStarting = server.state !== "running";
      let failed: string | undefined;
      const result = await bounded(
        this.lock(this.key(server, file), async () => {
          const text = await readText(file);
          if (text === undefined) throw new Error(`${shown(file, this.o.cwd)} does not exist`);
          const doc = await server.sync(file, text, languageId);
          return server.request<T>(method, params(doc.uri));
        }),
        deadline,
      ).catch((error: Error) => {
        failed = error.message;
        return undefined;
      });
      if (failed) notes.push(`${server.name}: ${failed}`);
      else if (result === undefined) notes.push(this.lateNote(server, wasStarting));
      else if (result !== null && !(Array.isArray(result) && result.length === 0))
        return { result, server: server.name, notes };
    }
    return { notes };
  }

  private whyNone(file: string): string {
    const configs = serversFor(this.o.servers, file);
    if (configs.length === 0)
      return `no language server is configured for ${extOf(file) || "files without an extension"}`;
    const missing = [...this.missing.values()].find((m) => configs.includes(m.server));
    if (missing) return `language server '${missing.server.name}': ${missing.message}`;
    const failed = [...this.instances.values()].find((s) => configs.some((c) => c.name === s.name) && s.error);
    return failed
      ? `language server '${failed.name}' ${failed.state}: ${failed.error}`
      : "its language server is not running";
  }

  status(): ServerState[] {
    const out = [...this.instances.values()].map((s) => s.status());
    for (const m of this.missing.values())
      out.push({ name: m.server.name, root: m.root, state: "failed", restarts: 0, documents: 0, error: m.message });
    return out;
  }

  /** Stop every server (shutdown, then the process group is killed). */
  async stop(): Promise<void> {
    await Promise.all([...this.instances.values()].map((s) => s.stop().catch(() => undefined)));
  }

  /** For tests: the live servers. */
  servers(): LanguageServer[] {
    return [...this.instances.values()];
  }
}

const extOf = (file: string) => {
  const m = /\.[^./\\]+$/.exec(file);
  return m ? m[0].toLowerCase() : "";
};
const shown = (file: string, cwd: string) => (file.startsWith(`${cwd}/`) ? file.slice(cwd.length + 1) : file);
const fileOf = (uri: string): string | undefined => {
  try {
    return uri.startsWith("file:") ? decodeURIComponent(new URL(uri).pathname) : undefined;
  } catch {
    return undefined;
  }
};

/** Stat of a file, to tell whether a command changed it. */
export async function fingerprint(file: string): Promise<string | undefined> {
  try {
    const s = await stat(file);
    return `${s.mtimeMs}:${s.size}`;
  } catch {
    return undefined;
  }
}
