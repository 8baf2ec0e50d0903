/**
 * ui-tui: the interactive terminal UI (`coil` with no prompt in a terminal). The terminal library
 * (@mariozechner/pi-tui, see docs/decisions.md) and the app are imported lazily: as soon as start-up
 * looks interactive (setup's guess, confirmed in `onStart`), and awaited in the front end's `run`, so a
 * print-mode start does not load them. `/reload` rebuilds coil in process on the session (reload.ts). docs/tui.md is the user guide.
 */
import { appendFileSync } from "node:fs";
import {
  definePlugin,
  Type,
  lastAssistantText,
  type AgentMessage,
  type FrontEndContext,
  type ModelRequest,
  type UiService,
} from "../../api/index.js";
import { exitCodeFor } from "../../lib/front-end.js";
import { registerCommands } from "./commands.js";
import type {} from "../../lib/reload.js"; // types the CLI's `reload` service
import type {} from "../session-jsonl/api.js"; // types the `session` service
import type { Bridge } from "./types.js";
import { theme } from "./theme.js";
import type {} from "../../lib/ui.js"; // the plugin UI contract (types the members beyond the dialogs)
import type {} from "../models/api.js"; // types the `thinking` service

/** customType of the messages `!cmd` adds; converted to user messages at request time. */
export const SHELL_MESSAGE = "ui-tui.shell";

/**
 * The `ui` service while the TUI runs (its registration's `ui`): the dialogs, and the calls of the plugin
 * UI contract (lib/ui.ts). A dialog asked before the app is drawn answers "no"; notices, status, widgets,
 * footer and title set before then are kept and drawn when it starts.
 */
function uiService(bridge: Bridge): UiService & { readonly active: boolean } {
  const changed = () => bridge.app?.uiChanged();
  return {
    get active() {
      return bridge.app !== undefined;
    },
    confirm: async (title, message, signal) =>
      bridge.app ? bridge.app.dialogs.confirm(title, message, signal) : false,
    select: async (title, options, signal) =>
      bridge.app ? bridge.app.dialogs.select(title, options, signal) : undefined,
    input: async (title, placeholder, signal) =>
      bridge.app ? bridge.app.dialogs.input(title, placeholder, signal) : undefined,
    // Before the app is drawn (a plugin's session_start), a notice waits for it; the screen would clear a log line.
    notify: (message, level = "info") =>
      bridge.app ? bridge.app.notify(message, level) : bridge.ui.notices.push({ message, level }),
    setStatus(key, text) {
      if (text === undefined) bridge.ui.statuses.delete(key);
      else bridge.ui.statuses.set(key, text.replace(/\s*\n\s*/g, " "));
      changed();
    },
    setWidget(key, content, options) {
      if (content === undefined) bridge.ui.widgets.delete(key);
      else bridge.ui.widgets.set(key, { content, placement: options?.placement ?? "aboveEditor" });
      changed();
    },
    setFooter(factory) {
      bridge.ui.footer = factory;
      changed();
    },
    setTitle(title) {
      bridge.ui.title = title;
      changed();
    },
    setEditorText: (text) => bridge.app?.setEditorText(text),
    getEditorText: () => bridge.app?.getEditorText() ?? "",
    getToolsExpanded: () => bridge.app?.toolsExpanded ?? false,
    setToolsExpanded(expanded) {
      if (bridge.app) bridge.app.toolsExpanded = expanded;
    },
    get theme() {
      return theme();
    },
    custom: async (factory, options) => (bridge.app ? bridge.app.custom(factory, options) : undefined),
    showMessage: (message) => bridge.app?.showMessage(message),
    registerMessageRenderer(customType, renderer) {
      if (renderer) bridge.ui.messageRenderers.set(customType, renderer);
      else bridge.ui.messageRenderers.delete(customType);
      bridge.app?.rebuild();
    },
  };
}

/** Custom `!cmd` messages left in the request (no session store converted them) become user messages. */
function shellToUser(request: ModelRequest): ModelRequest | undefined {
  if (!request.messages.some((m) => m.role === "custom" && m.customType === SHELL_MESSAGE)) return undefined;
  const messages = request.messages.map(
    (m): AgentMessage =>
      m.role === "custom" && m.customType === SHELL_MESSAGE
        ? { role: "user", content: m.content, timestamp: m.timestamp }
        : m,
  );
  return { ...request, messages };
}

/** Not a terminal: run a piped prompt the way print mode does, or say how to. */
async function fallback(fe: FrontEndContext): Promise<number> {
  const { stderr, stdout, agent } = fe;
  stderr.write(
    'coil: the interactive UI needs a terminal (stdin and stdout must be TTYs); running in print mode. Use coil -p "what to do" for scripts.\n',
  );
  let prompt = fe.prompt;
  if (!prompt && !fe.stdin.isTTY) {
    let text = "";
    for await (const chunk of fe.stdin) text += chunk.toString();
    prompt = text.trim() || undefined;
  }
  if (!prompt) {
    stderr.write('coil: no prompt given: coil -p "what to do" (or pipe it on stdin)\n');
    return 2;
  }
  const provider = agent.view.providers.get(agent.state.provider);
  if (provider?.isConfigured && !provider.isConfigured()) {
    stderr.write(
      `coil: PROVIDER_MISSING provider '${provider.id}' is not configured\n  hint: ${provider.setupHint ?? "see its plugin's documentation"}\n`,
    );
    return 2;
  }
  const result = await agent.prompt(prompt);
  const text = lastAssistantText(result.messages);
  if (text) stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  if (result.stopReason === "error") stderr.write(`coil: error: ${result.error ?? "the run failed"}\n`);
  if (result.stopReason === "halted") stderr.write(`coil: stopped: ${result.reason}\n`);
  return exitCodeFor(result.stopReason);
}

export const TuiOptions = Type.Object({
  /** Models Ctrl+P cycles through, as `provider/id` (none: the models you switched to lately). */
  favoriteModels: Type.Array(Type.String(), { default: [] }),
});

export default definePlugin({
  id: "ui-tui",
  description:
    "Interactive terminal UI: streaming markdown, tool output, editor, slash commands, dialogs for the ui service",
  options: TuiOptions,
  setup(ctx) {
    const bridge: Bridge = {
      ui: { statuses: new Map(), widgets: new Map(), messageRenderers: new Map(), notices: [] },
    };
    const dialogs = uiService(bridge);
    registerCommands(ctx, bridge);
    ctx.flags.register({
      name: "theme",
      description: "TUI colours: dark, light, a theme in $COIL_HOME/themes/, or a theme file (see /settings)",
      type: "string",
      valueName: "name|file",
    });
    ctx.tap("before_request", async (request) => shellToUser(request), { stage: "LATE" });
    // Begin importing the library and the app once the mode is known to be interactive in a terminal;
    // `run` awaits the same promise.
    let loading: Promise<[typeof import("@mariozechner/pi-tui"), typeof import("./app.js")]> | undefined;
    const load = () => (loading ??= Promise.all([import("@mariozechner/pi-tui"), import("./app.js")]));
    ctx.onStart((_agent, io, info) => {
      if (info.mode === "interactive" && process.stdin.isTTY && (io.stdout as { isTTY?: boolean }).isTTY)
        load().catch(() => undefined);
    });
    ctx.frontEnds.register({
      id: "tui",
      modes: ["interactive"],
      // While the TUI runs, its dialogs are the `ui` service; in other modes there is none.
      ui: dialogs,
      async run(fe) {
        const out = fe.stdout as NodeJS.WritableStream & { isTTY?: boolean };
        if (!process.stdin.isTTY || !out.isTTY) return fallback(fe);
        if (process.env.COIL_TUI_STATS)
          appendFileSync(process.env.COIL_TUI_STATS, JSON.stringify({ mark: "run", at: performance.now() }) + "\n");
        const [lib, { TuiApp }] = await load();
        const app = new TuiApp(lib, fe, ctx, bridge);
        const code = await app.run();
        const reload = ctx.services.get("reload");
        if (!bridge.reload || !reload) return code;
        // /reload: the TUI has stopped and restored the terminal; coil is rebuilt in this process, on this session.
        const { requestReload, sessionFileOf } = await import("./reload.js");
        const { provider, model } = fe.agent.state;
        const thinking = ctx.services.get("thinking")?.level(fe.agent);
        const now = { model: `${provider}/${model.id}`, thinking };
        requestReload(reload, sessionFileOf(ctx.services.get("session")), now, app.editorCarry());
        return code;
      },
    });
  },
});
