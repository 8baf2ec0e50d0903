/**
 * The running TUI. Loaded only by the front end's `run`, with the terminal library passed in (it is
 * imported there), so nothing here is evaluated at start-up. Layout, top to bottom: the transcript,
 * a status block (running, queued messages), the editor (or a dialog in its place) and the footer.
 *
 * Longer than ~350 lines on purpose: the transcript, keys, status and footer all draw from the same
 * layout state (running tools, the streaming reply, expand/thinking toggles). Dialogs (dialogs.ts),
 * `@file` attachments and completion (input.ts), `!cmd` (shell.ts) and rendering (render.ts) are apart.
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, join } from "node:path";
import type * as PiTui from "@mariozechner/pi-tui";
import {
  messageOf,
  textOf,
  type Agent,
  type AgentEvent,
  type AgentMessage,
  type AssistantMessage,
  type CustomMessage,
  type FrontEndContext,
  type PluginContext,
  type PromptInput,
  type ToolResultMessage,
} from "../../api/index.js";
import { coilHome } from "../../lib/paths.js";
import type {
  RegisteredShortcut,
  UiComponent,
  UiCustomFactory,
  UiCustomOptions,
  UiMessageRenderer,
  UiRendered,
} from "../../lib/ui.js";
import { loginFlows } from "../../lib/provider-kit/oauth.js";
import { firstRunHelp, firstRunReminder, KEYS_HELP, oneLine, providerUnusable } from "./commands.js";
import { highlight, onHighlighterReady } from "./highlight.js";
import { keyLabel, loadBindings, type AppAction, type Bindings, type ShortcutClaim } from "./keys.js";
import { readSettings } from "./settings.js";
import { colorLevel, loadTheme, setTheme, theme } from "./theme.js";
import { DoublePress, openRewindPicker } from "./rewind.js";
import { takeCarry, type EditorCarry } from "./reload.js";
import { filterInput, findCommand, formatDiagnostic } from "../../lib/front-end.js";
import { recentModels, rememberModel } from "./recent-models.js";
import { DialogHost } from "./dialogs.js";
import { autocomplete, pastedImageRef, withAttachments } from "./input.js";
import { Lines, wrapText } from "./lines.js";
import { runUserCommand } from "./shell.js";
import {
  c,
  footerParts,
  formatElapsed,
  keyHints,
  markdownTheme,
  selectTheme,
  messagesToEditorText,
  resultText,
  shellMessageText,
  summarizeArgs,
  tail,
  toolBody,
} from "./render.js";
import type { AppHandle, Bridge, Dialogs, PickItem } from "./types.js";
import type {} from "../models/api.js"; // types the `thinking` service
import type {} from "../../lib/models.js"; // types the `model-choice` service (how the start model was chosen)

type Lib = typeof PiTui;

const SHELL_MESSAGE = "ui-tui.shell";
/** customType of the session entries that keep a tool call's measured duration (`{ toolCallId, durationMs }`). */
const TOOL_TIME_ENTRY = "ui-tui.tool-time";
const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const SPIN_MS = 120;
const DOUBLE_PRESS_MS = 1500;
/** Editor history entries handed to the process `/reload` starts. */
const HISTORY_CARRIED = 200;

interface ToolState {
  id: string;
  name: string;
  args: Record<string, unknown>;
  running: boolean;
  partial?: string;
  partialOutput?: ToolResultMessage["content"];
  result?: ToolResultMessage;
  view: Lines;
  startedAt?: number;
  endedAt?: number;
  /** Shared by the tool's own renderers (lib/ui.ts), with their last components. */
  render: { state: Record<string, unknown>; call?: UiComponent; result?: UiComponent };
}

/** A renderer's return value as lines at `width`. */
function renderedLines(out: UiRendered, width: number): string[] {
  if (typeof out === "string") return out.split("\n");
  if (Array.isArray(out)) return [...(out as readonly string[])];
  return (out as UiComponent).render(width);
}

export class TuiApp implements AppHandle {
  private readonly tui: PiTui.TUI;
  private readonly editor: PiTui.Editor;
  private readonly chat: PiTui.Container;
  private readonly slot: PiTui.Container;
  private readonly status: Lines;
  private readonly above: Lines;
  private readonly below: Lines;
  private readonly footer: Lines;
  private readonly agent: Agent;
  private readonly bindings: Bindings;
  private readonly tools = new Map<string, ToolState>();
  private assistant?: { message: AssistantMessage; view: Lines; md: PiTui.Markdown };
  private expanded = false;
  private showThinking = false;
  private lastCtrlC = 0;
  private readonly rewindKey = new DoublePress(DOUBLE_PRESS_MS);
  private runStartedAt = 0;
  private retry?: string;
  private finish?: (code: number) => void;
  private readonly dialogHost: DialogHost;
  private frames = 0;
  private spinner?: ReturnType<typeof setInterval>;
  private spinFrame = 0;
  /** The first run's help was shown: later prompts get a one-line reminder. */
  private helpShown = false;
  /** Problems found while starting (theme, keybindings), shown once the transcript is up. */
  private readonly startProblems: string[] = [];
  /** Plugin components (widgets, footer), made once per factory. */
  private readonly made = new Map<unknown, UiComponent>();
  /**
   * How long each finished call ran, as measured here (tool_execution_start to _end) and kept in the
   * session (a `ui-tui.tool-time` entry), so a redraw or a resume shows the figure shown live.
   */
  private readonly durations = new Map<string, number>();
  /** Custom messages drawn by a plugin's renderer (drawn again when Ctrl+O flips). */
  private readonly messageViews: Lines[] = [];
  /** Renderers that threw: reported once per tool. */
  private readonly failedRenderers = new Set<string>();
  /** What the editor's Up/Down history holds (the library keeps its own copy private). */
  private readonly history: string[] = [];
  /** The prompt given on the command line (`coil "fix the bug"`), sent once the UI is up. */
  private readonly initial?: { text: string; literal: boolean };
  readonly dialogs: Dialogs;

  constructor(
    private readonly lib: Lib,
    fe: FrontEndContext,
    private readonly ctx: PluginContext,
    private readonly bridge: Bridge,
  ) {
    this.agent = fe.agent;
    if (fe.prompt) this.initial = { text: fe.prompt, literal: fe.literal === true };
    this.useInitialTheme();
    const terminal = new lib.ProcessTerminal();
    if (process.env.COIL_TUI_STATS) {
      // bench/tui.mjs: when the library is loaded and the first frame drawn, and frames per run (one write per render)
      this.writeStats(process.env.COIL_TUI_STATS, "loaded");
      const write = terminal.write.bind(terminal);
      terminal.write = (data: string) => {
        if (data.includes("\x1b[?2026h") && ++this.frames === 1)
          this.writeStats(process.env.COIL_TUI_STATS!, "first-frame");
        write(data);
      };
    }
    this.bindings = loadBindings(lib, coilHome(), this.shortcutClaims());
    this.startProblems.push(...this.bindings.problems);
    keyHints.expand = this.bindings.label("app.tools.expand");
    keyHints.thinking = this.bindings.label("app.thinking.toggle");
    this.tui = new lib.TUI(terminal);
    this.chat = new lib.Container();
    this.slot = new lib.Container();
    this.editor = new lib.Editor(this.tui, { borderColor: c.border, selectList: selectTheme() }, { paddingX: 0 });
    this.editor.setAutocompleteProvider(
      autocomplete(
        lib,
        () =>
          this.agent.view.commands
            .entries()
            .map(([name, o]) => ({ name, description: o.value.description, argumentHint: o.value.argumentHint })),
        this.ctx.cwd,
      ),
    );
    this.editor.onSubmit = (text) => void this.submit(text);
    // `!cmd` in the editor: its border takes the bash-mode colour (as Pi's does)
    this.editor.onChange = (text) => {
      this.editor.borderColor = text.trimStart().startsWith("!") ? (s) => c.fg("bashMode", s) : c.border;
    };
    this.status = new Lines((w) => this.drawStatus(w));
    this.above = new Lines((w) => this.drawWidgets("aboveEditor", w));
    this.below = new Lines((w) => this.drawWidgets("belowEditor", w));
    this.footer = new Lines((w) => this.drawFooter(w));
    this.slot.addChild(this.editor);
    this.tui.addChild(this.chat);
    this.tui.addChild(this.status);
    this.tui.addChild(this.above);
    this.tui.addChild(this.slot);
    this.tui.addChild(this.below);
    this.tui.addChild(this.footer);
    this.dialogHost = new DialogHost(
      lib,
      this.tui,
      this.slot,
      this.editor,
      () => this.finish !== undefined,
      () => this.refresh(),
      (message) => this.notify(message, "error"),
    );
    this.dialogs = this.dialogHost.dialogs();
    // The highlighter loads on the first code block or read; then everything is drawn again, coloured.
    onHighlighterReady(() => {
      this.tui.invalidate();
      this.tui.requestRender();
    });
    // After /reload: the previous TUI's editor history and text (reload.ts)
    const carried = takeCarry(ctx.services.get("reload"));
    for (const text of carried?.history ?? []) this.remember(text);
    if (carried?.text) this.editor.setText(carried.text);
  }

  /** `--theme`, else settings.json's `theme`, else dark; a theme that does not load is reported and dark used. */
  private useInitialTheme(): void {
    const flag = this.ctx.flags.get("theme");
    const spec =
      typeof flag === "string" && flag
        ? flag
        : readSettings(coilHome(), (m) => this.startProblems.push(m)).theme || "dark";
    try {
      setTheme(loadTheme(spec, coilHome(), this.ctx.cwd, colorLevel()));
    } catch (error) {
      this.startProblems.push(`${messageOf(error)}; using the dark theme`);
      setTheme(loadTheme("dark", coilHome(), this.ctx.cwd, colorLevel()));
    }
  }

  /** The editor's history and text, for the TUI `/reload` starts. */
  editorCarry(): EditorCarry {
    return { history: this.history.slice(-HISTORY_CARRIED), text: this.editor.getText() };
  }

  private remember(text: string): void {
    this.editor.addToHistory(text);
    if (this.history.at(-1) !== text) this.history.push(text);
  }

  run(): Promise<number> {
    return new Promise<number>((resolveRun) => {
      this.finish = resolveRun;
      this.bridge.app = this;
      const unsubscribe = this.agent.subscribe((event) => this.onEvent(event));
      const removeKeys = this.tui.addInputListener((data) => this.onKey(data));
      const onSignal = () => this.quit();
      // kill, a closed terminal, and SIGINT from outside (Ctrl-C itself arrives as a key in raw mode)
      for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"] as const) process.on(signal, onSignal);
      this.chat.addChild(new Lines((w) => [this.headerLine(w)]));
      this.rebuild();
      for (const problem of this.startProblems) this.notify(problem, "warn");
      for (const { message, level } of this.bridge.ui.notices.splice(0)) this.notify(message, level);
      // First run without a key: the UI opens anyway and says how to add one (/login) or try the demo.
      if (providerUnusable(this.agent)) {
        this.notify(firstRunHelp(this.agent, [...loginFlows(this.ctx).values()]), "warn");
        this.helpShown = true;
      }
      this.tui.setFocus(this.editor);
      this.tui.start();
      this.applyTitle();
      this.tui.requestRender(true);
      this.sendInitial();
      const done = this.finish;
      this.finish = (code) => {
        this.finish = undefined;
        unsubscribe();
        removeKeys();
        this.stopSpinner();
        for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"] as const) process.off(signal, onSignal);
        this.bridge.app = undefined;
        this.tui.stop();
        done(code);
      };
    });
  }

  /**
   * `coil · model (why) · cwd`, fitted to the width: the reason for the model goes first, then the cwd
   * is shortened (~ for home, then from the left), and the model is cut last, so the cwd stays at 80 columns.
   */
  private headerLine(width: number): string {
    const { truncateToWidth, visibleWidth } = this.lib;
    const chosen = this.ctx.services.get("model-choice")?.chosen;
    const model = this.currentModel();
    const why = chosen?.model === model ? ` (${chosen.why}; --model to choose)` : "";
    const home = homedir();
    let cwd = this.ctx.cwd.startsWith(home) ? `~${this.ctx.cwd.slice(home.length)}` : this.ctx.cwd;
    const line = (m: string, w: string) => `${c.bold("coil")}${c.dim(` · ${m}${w} · ${cwd}`)}`;
    if (visibleWidth(line(model, why)) <= width) return line(model, why);
    const shorten = (path: string, n: number) => (path.length <= n ? path : `…${path.slice(path.length - n + 1)}`);
    const others = visibleWidth(line(model, "")) - visibleWidth(cwd);
    const minCwd = Math.min(visibleWidth(cwd), Math.max(12, Math.floor(width / 2)));
    if (width - others >= minCwd) {
      cwd = shorten(cwd, width - others);
      return line(model, "");
    }
    cwd = shorten(cwd, minCwd);
    const modelRoom = Math.max(6, width - (others - visibleWidth(model)) - minCwd);
    return truncateToWidth(line(truncateToWidth(model, modelRoom, "…"), ""), width);
  }

  private applyTitle(): void {
    this.tui.terminal.setTitle(this.bridge.ui.title ?? `coil — ${basename(this.ctx.cwd)}`);
  }

  /**
   * The command line's prompt, as if typed and submitted (a `/command` runs; after `--` it is text).
   * Without a usable provider it waits in the editor, under the help that says how to add a key.
   */
  private sendInitial(): void {
    const initial = this.initial;
    if (!initial) return;
    if (providerUnusable(this.agent)) {
      this.setEditorText(initial.text);
      return;
    }
    if (!initial.literal) {
      void this.submit(initial.text);
      return;
    }
    this.remember(initial.text);
    this.send(withAttachments(initial.text, this.ctx.cwd, this.agent.state.model, (m) => this.notify(m, "warn")));
  }

  // ───────────── AppHandle ─────────────

  notify(message: string, level: "info" | "warn" | "error" = "info"): void {
    const paint = level === "error" ? c.error : level === "warn" ? c.warning : c.dim;
    const mark = level === "error" ? "✗ " : level === "warn" ? "! " : "· ";
    this.addNotice(message, paint, mark);
  }

  setEditorText(text: string): void {
    this.editor.setText(text);
    this.tui.requestRender();
  }

  getEditorText(): string {
    return this.editor.getText();
  }

  get toolsExpanded(): boolean {
    return this.expanded;
  }

  set toolsExpanded(value: boolean) {
    this.expanded = value;
    for (const t of this.tools.values()) t.view.touch();
    for (const v of this.messageViews) v.touch();
    this.refresh();
  }

  custom<T>(factory: UiCustomFactory<T>, options?: UiCustomOptions): Promise<T | undefined> {
    return this.dialogHost.custom(factory, options);
  }

  /** A custom message a plugin appended while idle: shown as a run's message_end would show it. */
  showMessage(message: CustomMessage): void {
    this.addMessage(message, false);
    this.refresh();
  }

  uiChanged(): void {
    this.applyTitle();
    this.above.touch();
    this.below.touch();
    this.refresh();
  }

  shortcutHelp(): string[] {
    return this.bindings.shortcuts.map(
      (s) => `${keyLabel(s.key)} — ${s.description ? `${s.description} · ` : ""}${s.who}`,
    );
  }

  lastAnswer(): string | undefined {
    const last = [...this.agent.state.messages].reverse().find((m) => m.role === "assistant" && textOf(m).trim());
    return last ? textOf(last) : undefined;
  }

  useTheme(spec: string): string {
    const next = loadTheme(spec, coilHome(), this.ctx.cwd, colorLevel());
    setTheme(next);
    this.editor.borderColor = c.border;
    this.tui.invalidate();
    this.rebuild();
    this.tui.requestRender(true);
    return next.name;
  }

  /** A finished call's duration: for redraws, and in the session for a resume (aborted calls too). */
  private keepDuration(toolCallId: string, durationMs: number): void {
    this.durations.set(toolCallId, durationMs);
    try {
      this.ctx.services.get("session")?.appendCustom(TOOL_TIME_ENTRY, { toolCallId, durationMs });
    } catch (error) {
      this.notify(`The session did not keep the tool's duration: ${messageOf(error)}`, "warn");
    }
  }

  rebuild(): void {
    for (const e of this.ctx.services.get("session")?.entries() ?? []) {
      if (e.type !== "custom" || e.customType !== TOOL_TIME_ENTRY) continue;
      const d = e.data as { toolCallId?: unknown; durationMs?: unknown } | undefined;
      if (typeof d?.toolCallId === "string" && typeof d.durationMs === "number" && !this.durations.has(d.toolCallId))
        this.durations.set(d.toolCallId, d.durationMs);
    }
    const header = this.chat.children[0];
    this.chat.clear();
    if (header) this.chat.addChild(header);
    this.tools.clear();
    this.messageViews.length = 0;
    this.assistant = undefined;
    for (const m of this.agent.state.messages) this.addMessage(m, true);
    this.refresh();
  }

  quit(): void {
    if (!this.finish) return;
    const finish = this.finish;
    if (this.agent.isRunning) {
      this.agent.abort();
      // give the run a moment to write its aborted results, then leave regardless
      void Promise.race([this.agent.waitForIdle(), new Promise((r) => setTimeout(r, 2000))]).then(() => finish(0));
    } else finish(0);
  }

  // ───────────── keys ─────────────

  private onKey(data: string): { consume?: boolean; data?: string } | undefined {
    const is = (action: AppAction) => this.bindings.is(data, action);
    // An overlay that took the focus (a plugin's `custom` with `overlay`) gets the keys, Escape included.
    const inEditor = this.slot.children[0] === this.editor && this.editor.focused;
    if (is("app.clear")) {
      if (!inEditor) return undefined; // a dialog cancels on its own
      const now = Date.now();
      if (now - this.lastCtrlC < DOUBLE_PRESS_MS) {
        this.quit();
        return { consume: true };
      }
      this.lastCtrlC = now;
      this.editor.setText("");
      this.refresh();
      setTimeout(() => this.refresh(), DOUBLE_PRESS_MS + 10);
      return { consume: true };
    }
    if (!inEditor) return undefined;
    const paste = /^\x1b\[200~([\s\S]*)\x1b\[201~$/.exec(data);
    const image = paste ? pastedImageRef(paste[1]!, this.ctx.cwd) : undefined;
    if (image) {
      this.insertImage(image);
      return { consume: true };
    }
    // A plugin's shortcut (a command's `shortcut`, or `ctx.registerShortcut`; lib/ui.ts)
    const shortcut = this.bindings.shortcuts.find((s) => this.lib.matchesKey(data, s.key as PiTui.KeyId));
    if (shortcut) {
      shortcut.run(shortcut.key);
      return { consume: true };
    }
    if (is("app.clipboard.pasteImage")) {
      import("./clipboard.js")
        .then(({ clipboardImage }) => clipboardImage())
        .then((got) => {
          const ref = "file" in got ? pastedImageRef(got.file, this.ctx.cwd) : undefined;
          if (ref) this.insertImage(ref);
          else
            this.notify(
              `Ctrl+V: ${"problem" in got ? got.problem : "the clipboard's image could not be read back"}.`,
              "warn",
            );
        })
        .catch((error: unknown) => this.notify(`Ctrl+V: ${messageOf(error)}`, "error"));
      return { consume: true };
    }
    if (is("app.exit") && this.editor.getText() === "") {
      this.quit();
      return { consume: true };
    }
    if (is("app.interrupt") && !this.editor.isShowingAutocomplete()) {
      if (this.agent.isRunning) {
        const queued = messagesToEditorText(this.agent.abort());
        const current = this.editor.getText();
        if (queued) this.editor.setText(current ? `${queued}\n${current}` : queued);
        this.notify("Aborted.", "warn");
      } else if (this.editor.getText() === "" && this.rewindKey.press()) {
        // checkpoints (#19): Esc Esc opens the rewind picker (plugins/ui-tui/rewind.ts)
        openRewindPicker(this.agent, this.ctx.services.get("session")).then(
          (out) => {
            if (out?.notice) this.addNotice(out.notice, (s) => s, "");
            if (out?.editorText && !this.editor.getText()) this.setEditorText(out.editorText);
            this.refresh();
          },
          (error: unknown) => this.notify(messageOf(error), "error"),
        );
      }
      return { consume: true };
    }
    if ((is("app.message.followUp") || data === "\x1b\r") && this.agent.isRunning) {
      const text = this.editor.getExpandedText().trim();
      if (text) {
        this.editor.setText("");
        this.agent.followUp(withAttachments(text, this.ctx.cwd, this.agent.state.model, (m) => this.notify(m, "warn")));
        this.refresh();
      }
      return { consume: true };
    }
    if (is("app.message.dequeue")) {
      const queued = messagesToEditorText(this.agent.dequeue());
      if (!queued) this.notify("No queued messages to edit.");
      else {
        const current = this.editor.getText();
        this.editor.setText(current ? `${queued}\n${current}` : queued);
      }
      this.refresh();
      return { consume: true };
    }
    if (is("app.editor.external")) {
      this.externalEditor();
      return { consume: true };
    }
    if (is("app.tools.expand")) {
      this.toolsExpanded = !this.expanded;
      return { consume: true };
    }
    if (is("app.thinking.toggle")) {
      this.showThinking = !this.showThinking;
      this.rebuild();
      return { consume: true };
    }
    if (is("app.model.cycleForward")) {
      this.cycleModel().catch((error: unknown) => this.notify(messageOf(error), "error"));
      return { consume: true };
    }
    if (is("app.model.select")) {
      if (this.agent.view.commands.has("model"))
        this.modelPicker().catch((error: unknown) => this.notify(messageOf(error), "error"));
      else this.notify("No /model in this preset: add the models plugin.", "warn");
      return { consume: true };
    }
    for (const [action, command] of [
      ["app.session.tree", "tree"],
      ["app.session.new", "new"],
      ["app.session.resume", "resume"],
      ["app.session.fork", "fork"],
    ] as const)
      if (is(action)) {
        void this.runCommand(command, "");
        return { consume: true };
      }
    if (is("app.thinking.cycle") && !this.editor.isShowingAutocomplete()) {
      const thinking = this.ctx.services.get("thinking");
      if (thinking) this.notify(thinking.cycle(this.agent));
      else this.notify("No thinking control in this preset: add the models plugin.", "warn");
      return { consume: true };
    }
    return undefined;
  }

  /**
   * Ctrl+G: the editor's text in `$VISUAL` or `$EDITOR` (vi without either). The TUI steps aside while it
   * runs and takes the saved text back; an editor that fails leaves the text as it was.
   */
  private externalEditor(): void {
    const command = process.env.VISUAL || process.env.EDITOR || "vi";
    const dir = mkdtempSync(join(tmpdir(), "coil-edit-"));
    const file = join(dir, "message.md");
    writeFileSync(file, this.editor.getExpandedText(), { mode: 0o600 });
    this.tui.stop();
    try {
      const run = spawnSync(`${command} "$COIL_EDIT_FILE"`, {
        shell: true,
        stdio: "inherit",
        env: { ...process.env, COIL_EDIT_FILE: file },
      });
      const text = readFileSync(file, "utf8").replace(/\n$/, "");
      if (run.status === 0) this.editor.setText(text);
      else
        this.startProblems.push(`${command} exited with ${run.status ?? run.signal}: the message was left as it was`);
    } catch (error) {
      this.startProblems.push(`${command}: ${messageOf(error)}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      this.tui.start();
      this.tui.requestRender(true);
      for (const problem of this.startProblems.splice(0)) this.notify(problem, "warn");
    }
  }

  // ───────────── input ─────────────

  private async submit(raw: string): Promise<void> {
    let text = raw.trim();
    if (!text) return;
    this.remember(text);
    try {
      if (text.startsWith("!")) return await this.shell(text);
      if (text === "/model" && this.agent.view.commands.has("model")) return await this.modelPicker();
      const slash = findCommand(this.agent.view, text);
      if (slash?.command.name === "model") return await this.switchModel(slash.args);
      if (slash) return await this.runCommand(slash.command.name, slash.args);
      // A lone `/word`, or a namespaced `/name:arg ...` (like /skill:x), is a command typed wrong, not a request.
      const head = text.split(/\s/, 1)[0]!;
      if (
        (text.startsWith("/") && !text.includes(" ") && !text.slice(1).includes("/")) ||
        /^\/[\w-]+:[^/\s]*$/.test(head)
      ) {
        const skills =
          head.startsWith("/skill:") && this.agent.view.commands.has("skills")
            ? " /skills lists the skills, and why any did not load."
            : "";
        this.notify(`Unknown command ${head}. /help lists the commands.${skills}`, "warn");
        return;
      }
      // A plugin's `input` service (Pi extensions' input event) may rewrite what was typed, or consume it.
      const verdict = await filterInput(this.ctx.services.get("input"), text, "interactive");
      if ("handled" in verdict) {
        if (verdict.output) this.addNotice(verdict.output, (s) => s, "");
        this.refresh();
        return;
      }
      text = verdict.text;
      if (providerUnusable(this.agent)) {
        // Shown once in full; after that one line, and what was typed goes back into the editor.
        this.notify(
          this.helpShown ? firstRunReminder(this.agent) : firstRunHelp(this.agent, [...loginFlows(this.ctx).values()]),
          "warn",
        );
        this.helpShown = true;
        if (!this.editor.getText()) this.setEditorText(raw);
        return;
      }
      this.send(withAttachments(text, this.ctx.cwd, this.agent.state.model, (m) => this.notify(m, "warn")));
    } catch (error) {
      this.notify(messageOf(error), "error");
    }
  }

  /** Run a slash command: its text is shown, a prompt it returns is sent. */
  /**
   * What plugins claim keys for: commands' `shortcut` (run as if typed, without arguments), then the
   * shortcuts registered with `ctx.registerShortcut`, in that order; keys.ts binds the first claim on a key.
   */
  private shortcutClaims(): ShortcutClaim[] {
    const commands = this.agent.view.commands.entries().map(
      ([name, o]): ShortcutClaim => ({
        key: o.value.shortcut,
        who: `/${name} (${o.value.source ?? `plugin ${o.owner}`})`,
        id: `/${name}`,
        description: o.value.description,
        run: () => void this.runCommand(name, ""),
      }),
    );
    const registered = this.ctx.shortcuts.list().map(
      (s): ShortcutClaim => ({
        key: s.key,
        who: s.source ?? `plugin ${s.owner}`,
        id: `${s.owner}:${s.key}`,
        description: s.description ?? "",
        run: (key) => void this.runShortcut(s, key),
      }),
    );
    return [...commands, ...registered];
  }

  private async runShortcut(shortcut: RegisteredShortcut, key: string): Promise<void> {
    const ui = this.ctx.services.get("ui");
    try {
      if (!ui) throw new Error("no ui service is in force");
      await shortcut.handler({ agent: this.agent, ui });
    } catch (error) {
      this.notify(
        `The shortcut ${key} of ${shortcut.source ?? `plugin ${shortcut.owner}`} failed: ${messageOf(error)}`,
        "error",
      );
    }
    this.refresh();
  }

  private async runCommand(name: string, args: string): Promise<void> {
    const command = this.agent.view.commands.get(name);
    if (!command) return;
    // A plugin's command may switch or move the session (a Pi extension's ctx.newSession/fork/navigateTree).
    const session = this.ctx.services.get("session");
    const id = session?.id;
    const leaf = session?.leafId;
    try {
      const out = await command.run(args, this.agent);
      const moved = session && (session.id !== id || (leaf && !session.path().some((e) => e.id === leaf)));
      if (moved && !["new", "resume", "fork", "clone", "tree"].includes(name)) this.rebuild();
      if (typeof out === "string" && out) this.addNotice(out, (s) => s, "");
      else if (out && typeof out === "object") this.send(out.prompt);
    } catch (error) {
      this.notify(messageOf(error), "error");
    }
    this.refresh();
  }

  /** Start a run, or queue steering while one is going. */
  private send(input: PromptInput): void {
    if (this.agent.isRunning) {
      this.agent.steer(input);
      this.refresh();
      return;
    }
    this.runStartedAt = Date.now();
    this.agent
      .prompt(input)
      .then((result) => {
        this.retry = undefined;
        if (result.stopReason === "error") this.notify(`Error: ${result.error ?? "the run failed"}`, "error");
        else if (result.reason) this.notify(`Stopped: ${result.reason}`, "warn");
        const unsent = messagesToEditorText(result.unsent);
        if (unsent) this.setEditorText(unsent + (this.editor.getText() ? `\n${this.editor.getText()}` : ""));
        this.refresh();
      })
      .catch((error: unknown) => this.notify(messageOf(error), "error"));
    this.refresh();
  }

  /**
   * A pasted (or dropped) image file, or the clipboard's image: its `@reference` goes into the editor and
   * the image is attached when the message is sent (the space after it closes the `@` completion).
   */
  private insertImage(ref: string): void {
    this.editor.insertTextAtCursor(`${ref} `);
    const { provider, model } = this.agent.state;
    if (model.input && !model.input.includes("image"))
      this.notify(
        `${provider}/${model.id} does not take images: ${ref} will not be attached unless you switch model (/model).`,
        "warn",
      );
    this.refresh();
  }

  /** `provider/id` of the agent's model. */
  private currentModel(): string {
    return `${this.agent.state.provider}/${this.agent.state.model.id}`;
  }

  /** `/model` without an argument: every model of a configured provider, recent ones first, filtered as you type. */
  private async modelPicker(): Promise<void> {
    const items: PickItem[] = [];
    for (const p of this.agent.view.providers.values()) {
      if (p.isConfigured && !p.isConfigured()) continue;
      for (const m of p.models ?? [])
        items.push({ value: `${p.id}/${m.id}`, label: `${p.id}/${m.id}`, description: m.name });
    }
    const recent = recentModels();
    const rank = (i: PickItem) => (recent.includes(i.value) ? recent.indexOf(i.value) : recent.length);
    const ordered = items
      .map((item) =>
        recent.includes(item.value)
          ? { ...item, description: `recent${item.description ? ` · ${item.description}` : ""}` }
          : item,
      )
      .sort((a, b) => rank(a) - rank(b));
    const current = this.currentModel();
    const chosen = await this.dialogHost.pickFiltered(`Model (now ${current})`, ordered, {
      selected: current,
      empty: "no model matches: coil models lists them all",
    });
    if (chosen) await this.switchModel(chosen);
  }

  /** Switch through the `model` command (which records it in the session) and remember it as recent. */
  private async switchModel(spec: string): Promise<void> {
    const before = this.currentModel();
    const out = await this.agent.view.commands.get("model")!.run(spec, this.agent);
    if (typeof out === "string" && out) this.addNotice(out, (s) => s, "");
    if (this.currentModel() !== before) {
      rememberModel(this.currentModel());
      // a thinking level the new model cannot use: said once here, and `(unused)` in the footer
      const thinking = this.ctx.services.get("thinking");
      const unused = thinking?.level(this.agent) ? thinking.unused(this.agent) : undefined;
      if (unused) this.notify(`thinking ${thinking!.level(this.agent)}: ${unused}.`);
    }
    this.refresh();
  }

  /**
   * Ctrl+P: the next of the preset's favourite models (ui-tui's `favoriteModels`), or, without them, of
   * the recent ones whose provider is configured.
   */
  private async cycleModel(): Promise<void> {
    if (!this.agent.view.commands.has("model"))
      return this.notify("No /model in this preset: add the models plugin.", "warn");
    const favorites = (this.ctx.options as { favoriteModels?: string[] }).favoriteModels ?? [];
    const usable = (spec: string) => {
      const p = this.agent.view.providers.get(spec.split("/", 1)[0]!);
      return p !== undefined && (!p.isConfigured || p.isConfigured());
    };
    const list = favorites.length ? favorites : recentModels().filter(usable);
    const current = this.currentModel();
    const at = list.indexOf(current);
    const next = list.length ? list[(at + 1) % list.length] : undefined;
    if (!next || next === current) {
      this.notify(
        favorites.length
          ? "Only one favourite model."
          : "No other recent model: switch with /model once, or list favourites in the preset (ui-tui: { favoriteModels: [...] }).",
        "warn",
      );
      return;
    }
    await this.switchModel(next);
  }

  /**
   * `!cmd` runs as a bash tool call through the gates (see shell.ts) and, when it ran, adds its output
   * to the context; `!!cmd` only shows it. A refusal (permission rule, plan mode) is shown, not added.
   */
  private async shell(text: string): Promise<void> {
    const keep = !text.startsWith("!!");
    const command = text.slice(keep ? 1 : 2).trim();
    if (!command) return;
    const id = `shell-${Date.now()}`;
    this.tool(id, keep ? "!" : "!!", { command }); // the tool events of the run land on this entry
    this.refresh();
    // A plugin may run it in the bash tool's place (Pi extensions' user_bash), once the gates let it through.
    const run = await runUserCommand(this.agent, this.ctx.services.get("user-shell"), command, {
      id,
      excludeFromContext: !keep,
      cwd: this.ctx.cwd,
    });
    if (run.by) this.notify(`!${command}: run by ${run.by}`, "info");
    if (keep && run.ran) {
      const content = shellMessageText(command, tail(run.output, 2000).lines.join("\n"), run.exitCode);
      const session = this.ctx.services.get("session");
      if (this.agent.isRunning) this.agent.steer({ role: "user", content, timestamp: Date.now() });
      else if (session) session.appendCustomMessage({ customType: SHELL_MESSAGE, content, display: false });
      else
        this.agent.replaceMessages([
          ...this.agent.state.messages,
          { role: "custom", customType: SHELL_MESSAGE, content, display: false, timestamp: Date.now() },
        ]);
    }
    this.refresh();
  }

  // ───────────── events ─────────────

  private onEvent(event: AgentEvent): void {
    if (process.env.COIL_TUI_STATS && (event.type === "agent_start" || event.type === "agent_end"))
      this.writeStats(process.env.COIL_TUI_STATS, event.type);
    switch (event.type) {
      case "agent_start":
        this.runStartedAt = Date.now();
        break;
      case "message_start":
        if (event.message.role === "assistant") this.startAssistant(event.message);
        break;
      case "message_update":
        if (this.assistant) {
          this.assistant.message = event.message;
          this.assistant.md.setText(textOf(event.message));
          this.assistant.view.touch();
        }
        break;
      case "message_end":
        if (event.message.role === "assistant") {
          if (!this.assistant) this.startAssistant(event.message);
          this.assistant!.message = event.message;
          this.assistant!.md.setText(textOf(event.message));
          this.assistant!.view.touch();
          this.assistant = undefined;
        } else this.addMessage(event.message, false);
        break;
      case "tool_execution_start": {
        const state = this.tool(event.toolCallId, event.toolName, event.args);
        state.running = true;
        state.startedAt = Date.now();
        state.view.touch();
        break;
      }
      case "tool_execution_update": {
        const state = this.tools.get(event.toolCallId);
        if (state) {
          state.partial = resultText(event.partial);
          state.partialOutput = event.partial.content;
          state.view.touch();
        }
        break;
      }
      case "tool_execution_end": {
        const state = this.tool(event.toolCallId, event.toolName, {});
        state.running = false;
        state.result = event.result;
        state.endedAt = Date.now();
        if (state.startedAt) this.keepDuration(event.toolCallId, state.endedAt - state.startedAt);
        state.view.touch();
        break;
      }
      case "retry":
        this.retry = `retrying in ${Math.round(event.delayMs / 1000)}s (attempt ${event.attempt}): ${event.reason}`;
        break;
      case "compaction":
        this.notify(
          `Context compacted (${event.reason}) by ${event.by}: ${event.tokensBefore} → ${event.tokensAfter ?? "?"} tokens`,
        );
        break;
      case "diagnostic":
        if (event.level !== "info") this.notify(formatDiagnostic(event), event.level);
        break;
      case "agent_end":
        this.retry = undefined;
        break;
    }
    if (this.agent.isRunning) this.startSpinner();
    else this.stopSpinner();
    this.refresh();
  }

  /** While a run goes, the status line's spinner and elapsed time move (and running tools' elapsed time). */
  private startSpinner(): void {
    if (this.spinner) return;
    this.spinner = setInterval(() => {
      if (!this.agent.isRunning) return this.stopSpinner();
      this.spinFrame = (this.spinFrame + 1) % SPINNER.length;
      for (const t of this.tools.values()) if (t.running) t.view.touch();
      this.refresh();
    }, SPIN_MS);
    this.spinner.unref?.();
  }

  private stopSpinner(): void {
    if (this.spinner) clearInterval(this.spinner);
    this.spinner = undefined;
  }

  private addMessage(m: AgentMessage, replay: boolean): void {
    if (m.role === "user") {
      const text = textOf(m);
      this.chat.addChild(
        new Lines((w) => [
          "",
          ...wrapText(this.lib, text, w - 2).map(
            (l, i) => (i === 0 ? c.accent(c.bold("› ")) : "  ") + c.fg("userMessageText", l),
          ),
        ]),
      );
    } else if (m.role === "assistant") {
      this.startAssistant(m);
      this.assistant = undefined;
      if (replay)
        for (const call of m.content) if (call.type === "toolCall") this.tool(call.id, call.name, call.arguments);
    } else if (m.role === "toolResult") {
      const state = this.tool(m.toolCallId, m.toolName, {});
      state.running = false;
      state.result = m;
      state.view.touch();
    } else if (m.display && this.bridge.ui.messageRenderers.has(m.customType)) {
      this.addCustomMessage(m, this.bridge.ui.messageRenderers.get(m.customType)!);
    } else if (m.display || m.customType === SHELL_MESSAGE) {
      const text =
        typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : "")).join("");
      this.addNotice(m.customType === SHELL_MESSAGE ? oneLine(text, 200) : text, c.label, `[${m.customType}] `);
    }
  }

  /**
   * A custom message drawn by the renderer a plugin registered for its type (Pi's registerMessageRenderer),
   * with Ctrl+O's state; `undefined` from it, or a throw (reported once per type), gives the built-in view.
   */
  private addCustomMessage(m: CustomMessage, renderer: UiMessageRenderer): void {
    const text =
      typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : "")).join("");
    const builtIn = (w: number) => ["", ...wrapText(this.lib, `[${m.customType}] ${text}`, w).map((l) => c.label(l))];
    const view = new Lines((w) => {
      const key = `message:${m.customType}`;
      if (this.failedRenderers.has(key)) return builtIn(w);
      try {
        const out = renderer(m, { expanded: this.expanded }, theme());
        return out === undefined ? builtIn(w) : ["", ...renderedLines(out, w)];
      } catch (error) {
        this.failedRenderers.add(key);
        queueMicrotask(() =>
          this.notify(
            `the renderer of custom message '${m.customType}' failed: ${messageOf(error)}; its text is shown instead`,
            "error",
          ),
        );
        return builtIn(w);
      }
    });
    this.messageViews.push(view);
    this.chat.addChild(view);
  }

  private startAssistant(message: AssistantMessage): void {
    // Code blocks are highlighted once the highlighter has loaded (it is imported on the first one).
    const md = new this.lib.Markdown(
      textOf(message),
      0,
      0,
      markdownTheme((code, lang) => highlight(code, lang)),
    );
    const entry = { message, md, view: undefined as unknown as Lines };
    entry.view = new Lines(
      (w) => {
        const m = entry.message;
        const out: string[] = [""];
        const thinking = m.content
          .filter((p) => p.type === "thinking")
          .map((p) => (p as { thinking: string }).thinking)
          .join("\n")
          .trim();
        if (thinking) {
          if (this.showThinking)
            out.push(...wrapText(this.lib, thinking, w).map((l) => c.fg("thinkingText", c.italic(l))));
          else
            out.push(
              c.fg(
                "thinkingText",
                c.italic(`∴ thinking (${thinking.split(/\s+/).length} words, ${keyHints.thinking} to show)`),
              ),
            );
        }
        const text = textOf(m);
        if (text) out.push(...entry.md.render(w));
        if (m.stopReason === "error")
          out.push(...wrapText(this.lib, `✗ ${m.errorMessage ?? "the provider failed"}`, w).map((l) => c.error(l)));
        if (m.stopReason === "aborted") out.push(c.warning("⏹ aborted"));
        return out.length === 1 ? [] : out;
      },
      () => md.invalidate(),
    );
    this.assistant = entry;
    this.chat.addChild(entry.view);
  }

  private tool(id: string, name: string, args: Record<string, unknown>): ToolState {
    let state = this.tools.get(id);
    if (!state) {
      state = { id, name, args, running: false, view: undefined as never, render: { state: {} } };
      state.view = this.toolView(state);
      this.tools.set(id, state);
      this.chat.addChild(state.view);
    } else if (Object.keys(args).length && !Object.keys(state.args).length) state.args = args;
    return state;
  }

  /**
   * How long a finished call ran: measured here (live, or kept in the session by keepDuration), else the
   * tool's own figure (bash's details.durationMs) for a session from before coil kept durations.
   */
  private durationOf(state: ToolState): number | undefined {
    if (state.startedAt && state.endedAt) return state.endedAt - state.startedAt;
    const kept = this.durations.get(state.id);
    if (kept !== undefined) return kept;
    const ms = (state.result?.details as { durationMs?: unknown } | undefined)?.durationMs;
    return typeof ms === "number" ? ms : undefined;
  }

  private toolView(state: ToolState): Lines {
    return new Lines((w) => {
      const { truncateToWidth } = this.lib;
      const icon = state.running
        ? c.warning("◌")
        : !state.result
          ? c.dim("○")
          : state.result.isError
            ? c.error("✗")
            : c.success("●");
      const shellLike = state.name === "!" || state.name === "!!";
      const ms = this.durationOf(state);
      const timing = state.running
        ? c.dim(` · ${formatElapsed(Date.now() - (state.startedAt ?? Date.now()))}`)
        : state.result && ms !== undefined && (ms >= 1000 || state.name === "bash" || shellLike)
          ? c.dim(` · Took ${formatElapsed(ms)}`)
          : "";
      const def = shellLike ? undefined : this.agent.view.tools.get(state.name);
      const context = {
        toolCallId: state.id,
        args: state.args,
        cwd: this.ctx.cwd,
        expanded: this.expanded,
        isPartial: state.running,
        isError: state.result?.isError === true,
        executionStarted: state.running || state.result !== undefined,
        durationMs: ms,
        state: state.render.state,
        invalidate: () => {
          state.view.touch();
          this.refresh();
        },
      };
      const custom = (slot: "call" | "result", fn: () => UiRendered): string[] | undefined => {
        if (this.failedRenderers.has(`${state.name}:${slot}`)) return undefined;
        try {
          const out = fn();
          if (out && typeof out === "object" && !Array.isArray(out)) state.render[slot] = out as UiComponent;
          return renderedLines(out, w - 2);
        } catch (error) {
          this.failedRenderers.add(`${state.name}:${slot}`);
          this.notify(
            `render${slot === "call" ? "Call" : "Result"} of tool '${state.name}' failed: ${messageOf(error)}; its text is shown instead`,
            "error",
          );
          return undefined;
        }
      };
      const call = def?.renderCall
        ? custom("call", () =>
            def.renderCall!(state.args as never, theme(), { ...context, lastComponent: state.render.call }),
          )
        : undefined;
      const head = call
        ? call.map((l, i) => (i === 0 ? `${icon} ${l}${timing}` : `  ${l}`))
        : [
            `${icon} ${c.title(c.bold(state.name))} ${summarizeArgs(shellLike ? "bash" : state.name, state.args)}${timing}`,
          ];
      const partial: ToolResultMessage | undefined =
        state.running && state.partialOutput
          ? {
              role: "toolResult",
              toolCallId: state.id,
              toolName: state.name,
              isError: false,
              timestamp: 0,
              content: state.partialOutput,
            }
          : undefined;
      const shown = state.result ?? partial;
      const resultLines =
        def?.renderResult && shown
          ? custom("result", () =>
              def.renderResult!(shown as never, { expanded: this.expanded, isPartial: state.running }, theme(), {
                ...context,
                lastComponent: state.render.result,
              }),
            )
          : undefined;
      const body = (resultLines ?? toolBody(state, this.expanded)).map((l) => truncateToWidth(`  ${l}`, w));
      return ["", ...head.map((l) => truncateToWidth(l, w)), ...body];
    });
  }

  private addNotice(text: string, paint: (s: string) => string, mark: string): void {
    this.chat.addChild(new Lines((w) => ["", ...wrapText(this.lib, mark + text, w).map((l) => paint(l))]));
    this.refresh();
  }

  // ───────────── status, widgets and footer ─────────────

  private drawStatus(width: number): string[] {
    const { truncateToWidth } = this.lib;
    const out: string[] = [];
    const s = this.agent.state;
    if (s.isRunning) {
      const secs = Math.floor((Date.now() - this.runStartedAt) / 1000);
      out.push(
        "",
        c.accent(SPINNER[this.spinFrame]!) +
          c.warning(" working") +
          c.dim(` ${secs}s · ${this.bindings.label("app.interrupt")} to abort`),
      );
    }
    if (this.retry) out.push(c.warning(`↻ ${this.retry}`));
    const queued = [...s.queued.steering, ...s.queued.followUp].length;
    for (const m of s.queued.steering) out.push(c.dim("↳ steer: ") + oneLine(textOf(m), width));
    for (const m of s.queued.followUp) out.push(c.dim("↳ follow-up: ") + oneLine(textOf(m), width));
    if (queued) out.push(c.dim(`  ${this.bindings.label("app.message.dequeue")} to edit the queued messages`));
    return out.map((l) => truncateToWidth(l, width));
  }

  /** The plugins' widgets at one place, in the order they were first set. */
  private drawWidgets(placement: "aboveEditor" | "belowEditor", width: number): string[] {
    const { truncateToWidth } = this.lib;
    const out: string[] = [];
    for (const [key, w] of this.bridge.ui.widgets) {
      if (w.placement !== placement) continue;
      let lines: string[];
      try {
        lines = Array.isArray(w.content)
          ? [...(w.content as readonly string[])]
          : this.component(w.content as never).render(width);
      } catch (error) {
        lines = [c.error(`widget ${key}: ${messageOf(error)}`)];
      }
      out.push(...lines.map((l) => truncateToWidth(l, width)));
    }
    return out;
  }

  /** A plugin's component, made once from its factory. */
  private component(factory: (tui: PiTui.TUI, t: ReturnType<typeof theme>) => UiComponent): UiComponent {
    let made = this.made.get(factory);
    if (!made) {
      made = factory(this.tui, theme());
      this.made.set(factory, made);
    }
    return made;
  }

  private drawFooter(width: number): string[] {
    const { truncateToWidth, visibleWidth } = this.lib;
    const statuses = [...this.bridge.ui.statuses.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([, text]) => text);
    const statusLine = statuses.length ? [truncateToWidth(c.fg("statusText", statuses.join("  ")), width)] : [];
    if (this.bridge.ui.footer) {
      try {
        return [
          ...statusLine,
          ...this.component(this.bridge.ui.footer as never)
            .render(width)
            .map((l) => truncateToWidth(l, width)),
        ];
      } catch (error) {
        return [...statusLine, c.error(truncateToWidth(`footer: ${messageOf(error)}`, width))];
      }
    }
    const s = this.agent.state;
    const session = this.ctx.services.get("session");
    const thinking = this.ctx.services.get("thinking");
    const level = thinking?.level(this.agent);
    const think = level && `think ${level}${thinking!.unused(this.agent) ? " (unused)" : ""}`;
    const parts = footerParts({
      model: `${s.provider}/${s.model.id}`,
      thinking: think,
      contextWindow: s.model.contextWindow,
      messages: s.messages,
      sessionName: session?.name,
    });
    // Narrow terminals drop the figures that matter least first; the cost stays.
    const fits = () => visibleWidth(parts.map((p) => p.text).join(" · ")) <= width;
    for (const drop of ["cache", "tokens", "session", "thinking", "context"]) {
      if (fits()) break;
      const at = parts.findIndex((p) => p.id === drop);
      if (at >= 0) parts.splice(at, 1);
    }
    if (!fits()) {
      const model = parts.find((p) => p.id === "model")!;
      const rest = parts
        .filter((p) => p !== model)
        .map((p) => p.text)
        .join(" · ");
      model.text = truncateToWidth(model.text, Math.max(8, width - visibleWidth(rest) - 3), "…");
    }
    const figures = parts.map((p) => p.text).join(" · ");
    const hint =
      Date.now() - this.lastCtrlC < DOUBLE_PRESS_MS
        ? c.warning(`Press ${this.bindings.label("app.clear")} again to quit`)
        : s.isRunning
          ? c.dim(
              `Enter to steer · ${this.bindings.label("app.message.followUp")} follow-up · ${this.bindings.label("app.interrupt")} abort`,
            )
          : c.dim(`Enter to send · / commands · ! shell · ${this.bindings.label("app.clear")}×2 quit`);
    return [...statusLine, truncateToWidth(c.fg("footer", figures), width), truncateToWidth(hint, width)];
  }

  private refresh(): void {
    this.status.touch();
    this.above.touch();
    this.below.touch();
    this.footer.touch();
    this.tui.requestRender();
  }

  // ───────────── helpers ─────────────

  /** bench/tui.mjs: one JSON line per mark with the frames drawn and this process's CPU time so far. */
  private writeStats(file: string, mark: string): void {
    const cpu = process.cpuUsage();
    appendFileSync(
      file,
      JSON.stringify({ mark, at: performance.now(), frames: this.frames, cpuUs: cpu.user + cpu.system }) + "\n",
    );
  }
}

export { KEYS_HELP };
