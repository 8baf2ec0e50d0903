/**
 * ui-acp: `coil --mode acp` speaks the Agent Client Protocol (v1) on stdin/stdout, so editors (Zed,
 * JetBrains, Neovim clients) host coil as their agent. The SDK loads only in this mode (server.ts).
 * stdout carries protocol messages only; diagnostics go to stderr. See docs/editors.md.
 */
import { format } from "node:util";
import { definePlugin, type FrontEndContext, type PluginContext, type UiService } from "../../api/index.js";
import { coilVersion } from "../../lib/paths.js";
import { onTermination } from "../../lib/signals.js";
import type { Operations } from "../tools-coding/api.js";
import type { AcpServer } from "./server.js";

/**
 * ── The one place this front end hooks into coil ──
 * While ACP runs, the `ui` service is the client's dialogs, and (when the client offers them) the
 * `operations` service is the client's files and terminals: this plugin provides `operations` as a
 * fallback (a sandbox that provides it keeps it), filled in once the client says what it offers. Returns the undo.
 */
function attach(
  ctx: PluginContext,
  server: AcpServer,
  dialogs: { current?: UiService },
  clientOps: Partial<Operations>,
): { ui(ui: UiService): void; operations(ops: Partial<Operations> | undefined): void; detach(): void } {
  const previousUi = dialogs.current;
  return {
    ui(ui) {
      dialogs.current = ui; // served as this front end's registered `ui` while it runs
    },
    operations(ops) {
      if (!ops) return;
      const owner = ctx.services.owner("operations");
      if (owner !== ctx.id) {
        // A sandbox (or another backend) owns files and processes: it keeps them, the client's are not used.
        server.note(
          `plugin ${owner} provides the operations service, so the client's files and terminals are not used`,
        );
        return;
      }
      Object.assign(clientOps, ops);
    },
    detach() {
      dialogs.current = previousUi;
      for (const key of Object.keys(clientOps) as (keyof Operations)[]) delete clientOps[key];
    },
  };
}

const version = coilVersion;

export default definePlugin({
  id: "ui-acp",
  description: "Agent Client Protocol front end for editors: Zed, JetBrains, Neovim (--mode acp)",
  setup(ctx) {
    let active: AcpServer | undefined;
    /** The client's dialogs while ACP runs: this front end's `ui` (the host serves it while acp runs). */
    const dialogs: { current?: UiService } = {};
    /** The client's files and terminals while a client that offers them is connected; empty otherwise. */
    const clientOps: Partial<Operations> = {};
    ctx.services.provide("operations", clientOps, { fallback: true });
    // Diffs for the editor: the file before an edit or write (after the gate allowed it), and after.
    ctx.tap("tool_call", async (info) => void (await active?.beforeTool(info)), {
      stage: "LATE",
      tools: ["edit", "write"],
    });
    ctx.tap("tool_result", async (result, info) => void (await active?.afterTool(result, info)), {
      stage: "LATE",
      tools: ["edit", "write"],
    });

    ctx.frontEnds.register({
      id: "acp",
      modes: ["acp"],
      get ui() {
        return dialogs.current;
      },
      async run(fe: FrontEndContext) {
        if (fe.prompt) {
          fe.stderr.write("coil: acp mode reads the Agent Client Protocol on stdin; do not pass a prompt\n");
          return 2;
        }
        const { AcpServer } = await import("./server.js");
        const server = new AcpServer(fe, {
          session: () => ctx.services.get("session"),
          mcp: () => ctx.services.get("mcp"),
          version: version(),
        });
        const hookup = attach(ctx, server, dialogs, clientOps);
        hookup.ui(server.ui());
        server.onInitialized = () => hookup.operations(server.operations());
        active = server;
        // The client going away (SIGTERM/SIGHUP) or Ctrl-C ends the connection like the end of stdin.
        const onSignal = () => server.close();
        const offSignals = onTermination(onSignal);
        // stdout carries protocol lines only: a plugin's console output goes to stderr while ACP runs.
        const consoleOut = { log: console.log, info: console.info, debug: console.debug };
        const toStderr = (...args: unknown[]) => void fe.stderr.write(`${format(...args)}\n`);
        Object.assign(console, { log: toStderr, info: toStderr, debug: toStderr });
        try {
          return await server.serve();
        } finally {
          Object.assign(console, consoleOut);
          offSignals();
          active = undefined;
          hookup.detach();
        }
      },
    });
  },
});
