/**
 * lsp: language servers (TypeScript, Python, and any configured one) for the agent. After an edit or a
 * write (and, with `afterBash`, a command that changed an open file) the errors and warnings the change
 * introduced are appended to the tool's result; the `lsp` tool asks for a file's diagnostics,
 * definitions, references and hover. Lazy: no server starts, and no LSP code loads, until a file of its
 * language is read or edited; the `lsp` tool joins the model's tools only in a project of a configured
 * language. `coil doctor` and `/lsp` list the servers. See docs/lsp.md.
 */
import { existsSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { definePlugin, Stage, Type, type Static, type ToolResultMessage } from "../../api/index.js";
import { addDoctorSection } from "../../lib/doctor.js";
import { coilVersion } from "../../lib/paths.js";
import { foldersUpToRoot } from "../../lib/locations.js";
import { resolveTypedPath } from "../../lib/typed-path.js";
import type { DiagnosticsDetails, LspService, ServerState } from "./api.js";
import {
  describeSource,
  findRoot,
  loadServers,
  missingMessage,
  resolveCommand,
  serversFor,
  type LoadedConfig,
} from "./config.js";
import { resultText } from "./format.js";
import type { LspRuntime } from "./runtime.js";
import { createLspTool } from "./tool.js";
import { locationsOf } from "../../lib/locations.js";

export type { DiagnosticItem, DiagnosticsDetails, LspService, ServerState } from "./api.js";

export const LspOptions = Type.Object({
  /** Servers by name: Claude Code `.lsp.json` entries, opencode `lsp` entries, or `false` to turn a built-in off. */
  servers: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
  /** ms an edit or write waits for the diagnostics of the changed file. */
  wait: Type.Number({ minimum: 0, default: 3000 }),
  /** Also check open files a bash command changed. */
  afterBash: Type.Boolean({ default: false }),
  /** New problems listed in one result at most. */
  maxDiagnostics: Type.Integer({ minimum: 1, default: 20 }),
  /** Also report new problems in other open files of the same server (what an edit broke elsewhere). */
  otherFiles: Type.Boolean({ default: true }),
  /** Read the language servers of installed Claude Code plugins. */
  claudePlugins: Type.Boolean({ default: true }),
  /** ms one `lsp` tool call may wait (a server's start-up included). */
  toolTimeout: Type.Number({ minimum: 1, default: 20_000 }),
});
export type LspOptions = Static<typeof LspOptions>;

const lookup = {
  stat: (p: string) => stat(p),
  readdir: (p: string) => readdir(p, { withFileTypes: true }),
};

export default definePlugin({
  id: "lsp",
  description:
    "Language servers: new errors after edits, and the lsp tool (diagnostics, definition, references, hover)",
  options: LspOptions,
  setup(ctx) {
    const o = ctx.options;
    const { coilHome: home, projectRoot: root } = locationsOf(ctx);
    const config: LoadedConfig = loadServers({
      preset: o.servers,
      baseDir: ctx.baseDir,
      home,
      cwd: ctx.cwd,
      trusted: ctx.projectTrusted,
      claudePlugins: o.claudePlugins,
    });
    for (const p of config.problems)
      ctx.log.warn(`${p.where}${p.server ? ` (server '${p.server}')` : ""}: ${p.message}`);
    const servers = config.servers;
    const handles = (file: string) => serversFor(servers, file).length > 0;

    let runtime: Promise<LspRuntime> | undefined;
    let loaded: LspRuntime | undefined;
    const getRuntime = () => {
      runtime ??= import("./runtime.js").then(({ LspRuntime }) => {
        loaded = new LspRuntime({
          servers,
          cwd: ctx.cwd,
          projectRoot: root,
          env: process.env,
          trusted: ctx.projectTrusted,
          logDir: join(home, "logs", "lsp"),
          version: coilVersion(),
          wait: o.wait,
          maxDiagnostics: o.maxDiagnostics,
          otherFiles: o.otherFiles,
          report: (level, message) => ctx.log[level](message),
        });
        return loaded;
      });
      return runtime;
    };

    const tool = createLspTool({
      cwd: ctx.cwd,
      runtime: getRuntime,
      timeout: o.toolTimeout,
      languages: () => [...new Set(servers.flatMap((s) => Object.keys(s.extensions)))],
    });
    // The tool is there from the first request in a project of a configured language (a root marker and
    // an installed server, looked up now: a few stats). Elsewhere it joins at the request after a file of
    // such a language started a server (registered tools show from the next request; a sub-agent's
    // requests come from its own registry, so nothing is added to a request here).
    let offered = servers.length > 0 && detect(config, ctx.cwd, root, ctx.projectTrusted);
    if (offered) ctx.tools.register(tool);
    if (servers.length > 0) {
      ctx.tap(
        "before_request",
        () => {
          if (!offered && loaded?.servers().some((x) => x.state !== "failed")) {
            offered = true;
            ctx.tools.sync([tool]);
          }
          return undefined;
        },
        { stage: Stage.EARLY },
      );

      // read: open the file in its server, so a later edit has a baseline.
      ctx.tap(
        "tool_result",
        async (result) => {
          const path = pathOf(result);
          if (!result.isError && path && handles(path)) (await getRuntime()).touch(path);
          return undefined;
        },
        { tools: ["read"] },
      );

      // edit/write about to run (after every gate): remember the file as it is.
      const watched = o.afterBash ? ["edit", "write", "bash"] : ["edit", "write"];
      const bashBefore = new Map<string, Map<string, string | undefined>>();
      ctx.tap(
        "tool_call",
        async (info) => {
          try {
            if (info.tool.name === "bash") {
              if (o.afterBash && loaded) {
                const { fingerprint } = await import("./runtime.js");
                const files = loaded.openFiles();
                const prints = await Promise.all(files.map(async (f) => [f, await fingerprint(f)] as const));
                bashBefore.set(info.call.id, new Map(prints));
              }
              return undefined;
            }
            const typed = typeof info.args.path === "string" ? info.args.path : undefined;
            if (!typed) return undefined;
            const file = await resolveTypedPath(typed, ctx.cwd, lookup);
            if (handles(file)) await (await getRuntime()).before(file);
          } catch {
            // never block a call: the check is best effort
          }
          return undefined;
        },
        { stage: Stage.FALLBACK, tools: watched },
      );

      ctx.tap(
        "tool_result",
        async (result, info) => {
          const started = Date.now();
          let files: string[] = [];
          if (info.tool.name === "bash") {
            const before = bashBefore.get(info.call.id);
            bashBefore.delete(info.call.id);
            if (!before || !loaded) return undefined;
            const { fingerprint } = await import("./runtime.js");
            for (const [f, print] of before) {
              const now = await fingerprint(f);
              if (now !== undefined && now !== print) files.push(f);
            }
          } else {
            const path = pathOf(result);
            if (result.isError || !path || !handles(path)) return undefined;
            files = [path];
          }
          if (files.length === 0) return undefined;
          const d = await (await getRuntime()).after(files, started);
          return d ? withDiagnostics(result, d) : undefined;
        },
        { tools: watched },
      );
    }

    const status = (): ServerState[] => loaded?.status() ?? [];
    const service: LspService = { status };
    ctx.services.provide("lsp", service);
    ctx.onStop(async () => {
      await loaded?.stop();
    });

    ctx.commands.register({
      name: "lsp",
      description: "Language servers: which are configured, which run, their state and last error",
      run: () => statusText(config, status(), root, ctx.cwd, ctx.projectTrusted),
    });

    addDoctorSection(ctx, {
      title: "Language servers",
      report: () => doctorText(config, root, ctx.cwd, ctx.projectTrusted),
    });
  },
});

/** The file a read, edit or write result names (`details.path`, absolute). */
function pathOf(result: ToolResultMessage): string | undefined {
  const p = (result.details as { path?: unknown } | undefined)?.path;
  return typeof p === "string" ? p : undefined;
}

/** The result with the new problems appended to its text and put in `details.diagnostics`. */
function withDiagnostics(result: ToolResultMessage, d: DiagnosticsDetails): ToolResultMessage | undefined {
  const text = resultText(d);
  const details = result.details && typeof result.details === "object" ? result.details : {};
  return {
    ...result,
    content: text ? [...result.content, { type: "text", text: `\n${text}` }] : result.content,
    details: { ...details, diagnostics: d },
  };
}

/**
 * Whether the project has a language a server handles, from root markers in the folders from the
 * working directory up to the project root (a few `stat`s, once): then the `lsp` tool is offered from
 * the first request on. Otherwise it joins after a file of such a language was read or edited.
 */
function detect(config: LoadedConfig, cwd: string, root: string, trusted: boolean): boolean {
  const folders = foldersUpToRoot(cwd);
  for (const s of config.servers) {
    const dir = folders.find((d) => s.rootMarkers.some((m) => existsSync(join(d, m))));
    if (dir && resolveCommand(s, dir, root, process.env, trusted)) return true;
  }
  return false;
}

function configuredLines(config: LoadedConfig, root: string, cwd: string, trusted: boolean): string[] {
  const lines: string[] = [];
  for (const s of config.servers) {
    const dir = findRoot(s, join(cwd, "x"), root);
    const found = resolveCommand(s, dir, root, process.env, trusted);
    const exts = Object.keys(s.extensions).join(" ");
    lines.push(
      `${s.name}  ${exts}  ${found ? `${[found.command, ...found.args].join(" ")}` : `missing: ${missingMessage(s, dir, trusted)}`}  (${describeSource(s.source)})`,
    );
  }
  for (const d of config.disabled) lines.push(`${d.name}  turned off (${describeSource(d.source)})`);
  for (const p of config.problems)
    lines.push(`problem: ${p.where}${p.server ? ` (server '${p.server}')` : ""}: ${p.message}`);
  return lines;
}

/** `coil doctor`: what is configured, where, and whether its binary is installed (doctor starts no server). */
function doctorText(config: LoadedConfig, root: string, cwd: string, trusted: boolean): string {
  const lines = configuredLines(config, root, cwd, trusted);
  if (config.servers.length === 0) lines.unshift("none configured (docs/lsp.md)");
  lines.push("servers start when a file of their language is read or edited; /lsp shows them running");
  return lines.join("\n");
}

/** `/lsp`: the live servers, then the configuration. */
function statusText(config: LoadedConfig, live: ServerState[], root: string, cwd: string, trusted: boolean): string {
  const lines: string[] = [];
  if (live.length === 0)
    lines.push(
      "No language server has started in this session (one starts when a file of its language is read or edited).",
    );
  else lines.push(`Language servers (${live.length}):`);
  for (const s of live) {
    const parts = [
      s.name,
      s.state,
      s.pid ? `pid ${s.pid}` : "",
      `root ${s.root}`,
      `${s.documents} open`,
      s.diagnostics ? `diagnostics by ${s.diagnostics}` : "",
      s.restarts ? `${s.restarts} restart${s.restarts === 1 ? "" : "s"}` : "",
    ].filter(Boolean);
    lines.push(`  ${parts.join("  ")}`);
    if (s.error) lines.push(`    last error: ${s.error}`);
  }
  lines.push("Configured:");
  for (const l of configuredLines(config, root, cwd, trusted)) lines.push(`  ${l}`);
  return lines.join("\n");
}
