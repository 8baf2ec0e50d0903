/**
 * ui-acp: `coil --mode acp` speaks the Agent Client Protocol (v1) on stdin/stdout, so editors (Zed,
 * JetBrains, Neovim clients) host coil as their agent. The SDK loads only in this mode (server.ts).
 * stdout carries protocol messages only; diagnostics go to stderr. See docs/editors.md.
 */
import { format } from "node:util";
import { definePlugin, type AgentView, type FrontEndContext, type UiService } from "../../kernel/index.js";
import { coilVersion } from "../../lib/paths.js";
import { onTermination } from "../../lib/signals.js";
import type { Operations } from "../tools-coding/api.js";
import type { AcpServer } from "./server.js";

/**
 * ── What this front end serves while ACP runs ──
 * The `ui` service is the client's dialogs, and (when the client offers them and no plugin provides
 * `operations`, such as a sandbox) the `operations` service is the client's files and terminals: both are
 * this front end's registration, which the host serves while it runs. Returns the undo.
 */
function attach(
  view: AgentView,
  server: AcpServer,
  served: { ui?: UiService; operations?: Partial<Operations> },
): { ui(ui: UiService): void; operations(ops: Partial<Operations> | undefined): void; detach(): void } {
  const previousUi = served.ui;
  return {
    ui(ui) {
      served.ui = ui;
    },
    operations(ops) {
      if (!ops) return;
      const owner = view.services.owner("operations");
      if (owner) {
        // A sandbox (or another backend) owns files and processes: it keeps them, the client's are not used.
        server.note(
          `plugin ${owner} provides the operations service, so the client's files and terminals are not used`,
        );
        return;
      }
      served.operations = ops;
    },
    detach() {
      served.ui = previousUi;
      served.operations = undefined;
    },
  };
}

const version = coilVersion;

export default definePlugin({
  id: "ui-acp",
  description: "Agent Client Protocol front end for editors: Zed, JetBrains, Neovim (--mode acp)",
  setup(ctx) {
    let active: AcpServer | undefined;
    /** The client's dialogs and files while ACP runs: this front end's `ui` and `operations` (the host serves them while acp runs). */
    const served: { ui?: UiService; operations?: Partial<Operations> } = {};
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
        return served.ui;
      },
      get services() {
        return served.operations ? { operations: served.operations } : undefined;
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
        const hookup = attach(fe.agent.view, server, served);
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
