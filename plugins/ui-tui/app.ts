/**
 * The running TUI. Loaded only by the front end's `run`, with the terminal library passed in (it is
 * imported there), so nothing here is evaluated at start-up. Layout, top to bottom: the transcript,
 * a status block (running, queued messages), the editor (or a dialog in its place) and the footer.
 *
 * Longer than ~350 lines on purpose: the transcript, keys, status and footer all draw from the same
 * layout state (running tools, the streaming reply, expand/thinking toggles). Dialogs (dialogs.ts),
 * `@file` attachments and completion (input.ts), `!cmd` (shell.ts) and rendering (render.ts) are apart.
 */
import { appendFileSync } from "node:fs";
import type * as PiTui from "@mariozechner/pi-tui";
import {
  messageOf,
  textOf,
  type Agent,
  type AgentEvent,
  type AgentMessage,
  type AssistantMessage,
  type FrontEndContext,
  type PluginContext,
  type PromptInput,
  type ToolResultMessage,
} from "../../kernel/index.js";
import { firstRunHelp, KEYS_HELP, oneLine, providerUnusable } from "./commands.js";
import { DoublePress, openRewindPicker } from "./rewind.js";
import { takeCarry, type EditorCarry } from "./reload.js";
import { findCommand, formatDiagnostic } from "../../lib/front-end.js";
import { recentModels, rememberModel } from "../../lib/recent-models.js";
import { DialogHost } from "./dialogs.js";
import { autocomplete, pastedImageRef, withAttachments } from "./input.js";
import { Lines, wrapText } from "./lines.js";
import { runShellCommand } from "./shell.js";
import {
  c,
  footerLine,
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
import type {} from "../../lib/thinking.js"; // types the `thinking` service

type Lib = typeof PiTui;

const SHELL_MESSAGE = "ui-tui.shell";
const DOUBLE_PRESS_MS = 1500;
/** Editor history entries handed to the process `/reload` starts. */
const HISTORY_CARRIED = 200;

interface ToolState {
  id: string;
  name: string;
  args: Record<string, unknown>;
  running: boolean;
  partial?: string;
  result?: ToolResultMessage;
  view: Lines;
}

export class TuiApp implements AppHandle {
  private readonly tui: PiTui.TUI;
  private readonly editor: PiTui.Editor;
  private readonly chat: PiTui.Container;
  private readonly slot: PiTui.Container;
  private readonly status: Lines;
  private readonly footer: Lines;
  private readonly agent: Agent;
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
    this.tui = new lib.TUI(terminal);
    this.chat = new lib.Container();
    this.slot = new lib.Container();
    this.editor = new lib.Editor(this.tui, { borderColor: c.gray, selectList: selectTheme() }, { paddingX: 0 });
    this.editor.setAutocompleteProvider(
      autocomplete(
        lib,
        this.agent.view.commands
          .entries()
          .map(([name, o]) => ({ name, description: o.value.description, argumentHint: o.value.argumentHint })),
        this.ctx.cwd,
      ),
    );
    this.editor.onSubmit = (text) => void this.submit(text);
    this.status = new Lines((w) => this.drawStatus(w));
    this.footer = new Lines((w) => this.drawFooter(w));
    this.slot.addChild(this.editor);
    this.tui.addChild(this.chat);
    this.tui.addChild(this.status);
    this.tui.addChild(this.slot);
    this.tui.addChild(this.footer);
    this.dialogHost = new DialogHost(
      lib,
      this.tui,
      this.slot,
      this.editor,
      () => this.finish !== undefined,
      () => this.refresh(),
    );
    this.dialogs = this.dialogHost.dialogs();
    // After /reload: the previous process's editor history and text (reload.ts)
    const carried = takeCarry();
    for (const text of carried?.history ?? []) this.remember(text);
    if (carried?.text) this.editor.setText(carried.text);
  }

  /** The editor's history and text, for the process `/reload` starts. */
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
      const chosen = (this.ctx.services.get("provider-cli") as { chosen?: { model: string; why: string } } | undefined)
        ?.chosen;
      const model = () => `${this.agent.state.provider}/${this.agent.state.model.id}`;
      this.chat.addChild(
        new Lines((w) => [
          this.lib.truncateToWidth(
            c.bold("coil") +
              c.dim(
                ` · ${model()}${chosen?.model === model() ? ` (${chosen.why}; --model to choose)` : ""} · ${this.ctx.cwd}`,
              ),
            w,
          ),
        ]),
      );
      this.rebuild();
      // First run without a key: the UI opens anyway and says how to add one (/login) or try the demo.
      if (providerUnusable(this.agent)) this.notify(firstRunHelp(this.agent), "warn");
      this.tui.setFocus(this.editor);
      this.tui.start();
      this.tui.requestRender(true);
      this.sendInitial();
      const done = this.finish;
      this.finish = (code) => {
        this.finish = undefined;
        unsubscribe();
        removeKeys();
        for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"] as const) process.off(signal, onSignal);
        this.bridge.app = undefined;
        this.tui.stop();
        done(code);
      };
    });
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
    const paint = level === "error" ? c.red : level === "warn" ? c.yellow : c.dim;
    const mark = level === "error" ? "✗ " : level === "warn" ? "! " : "· ";
    this.addNotice(message, paint, mark);
  }

  setEditorText(text: string): void {
    this.editor.setText(text);
    this.tui.requestRender();
  }

  rebuild(): void {
    const header = this.chat.children[0];
    this.chat.clear();
    if (header) this.chat.addChild(header);
    this.tools.clear();
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
    const { matchesKey } = this.lib;
    const inEditor = this.slot.children[0] === this.editor;
    if (matchesKey(data, "ctrl+c")) {
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
    if (matchesKey(data, "ctrl+v")) {
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
    if (matchesKey(data, "ctrl+d") && this.editor.getText() === "") {
      this.quit();
      return { consume: true };
    }
    if (matchesKey(data, "escape") && !this.editor.isShowingAutocomplete()) {
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
    if ((data === "\x1b\r" || matchesKey(data, "alt+enter")) && this.agent.isRunning) {
      const text = this.editor.getExpandedText().trim();
      if (text) {
        this.editor.setText("");
        this.agent.followUp(withAttachments(text, this.ctx.cwd, this.agent.state.model, (m) => this.notify(m, "warn")));
        this.refresh();
      }
      return { consume: true };
    }
    if (matchesKey(data, "ctrl+o")) {
      this.expanded = !this.expanded;
      for (const t of this.tools.values()) t.view.touch();
      this.refresh();
      return { consume: true };
    }
    if (matchesKey(data, "ctrl+t")) {
      this.showThinking = !this.showThinking;
      this.rebuild();
      return { consume: true };
    }
    if (matchesKey(data, "ctrl+p")) {
      this.cycleModel().catch((error: unknown) => this.notify(messageOf(error), "error"));
      return { consume: true };
    }
    if (matchesKey(data, "shift+tab") && !this.editor.isShowingAutocomplete()) {
      const thinking = this.ctx.services.get("thinking");
      if (thinking) this.notify(thinking.cycle(this.agent));
      else this.notify("No thinking control in this preset: add the models plugin.", "warn");
      return { consume: true };
    }
    return undefined;
  }

  // ───────────── input ─────────────

  private async submit(raw: string): Promise<void> {
    const text = raw.trim();
    if (!text) return;
    this.remember(text);
    try {
      if (text.startsWith("!")) return await this.shell(text);
      if (text === "/model" && this.agent.view.commands.has("model")) return await this.modelPicker();
      const slash = findCommand(this.agent.view, text);
      if (slash?.command.name === "model") return await this.switchModel(slash.args);
      if (slash) {
        const out = await slash.command.run(slash.args, this.agent);
        if (typeof out === "string" && out) this.addNotice(out, (s) => s, "");
        else if (out && typeof out === "object") this.send(out.prompt);
        this.refresh();
        return;
      }
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
      if (providerUnusable(this.agent)) return this.notify(firstRunHelp(this.agent), "warn");
      this.send(withAttachments(text, this.ctx.cwd, this.agent.state.model, (m) => this.notify(m, "warn")));
    } catch (error) {
      this.notify(messageOf(error), "error");
    }
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
    const run = await runShellCommand(this.agent, command, id);
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
        state.view.touch();
        break;
      }
      case "tool_execution_update": {
        const state = this.tools.get(event.toolCallId);
        if (state) {
          state.partial = resultText(event.partial);
          state.view.touch();
        }
        break;
      }
      case "tool_execution_end": {
        const state = this.tool(event.toolCallId, event.toolName, {});
        state.running = false;
        state.result = event.result;
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
    this.refresh();
  }

  private addMessage(m: AgentMessage, replay: boolean): void {
    if (m.role === "user") {
      const text = textOf(m);
      this.chat.addChild(
        new Lines((w) => [
          "",
          ...wrapText(this.lib, text, w - 2).map((l, i) => (i === 0 ? c.cyan(c.bold("› ")) : "  ") + l),
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
    } else if (m.display || m.customType === SHELL_MESSAGE) {
      const text =
        typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : "")).join("");
      this.addNotice(m.customType === SHELL_MESSAGE ? oneLine(text, 200) : text, c.magenta, `[${m.customType}] `);
    }
  }

  private startAssistant(message: AssistantMessage): void {
    const md = new this.lib.Markdown(textOf(message), 0, 0, markdownTheme());
    const entry = { message, md, view: undefined as unknown as Lines };
    entry.view = new Lines((w) => {
      const m = entry.message;
      const out: string[] = [""];
      const thinking = m.content
        .filter((p) => p.type === "thinking")
        .map((p) => (p as { thinking: string }).thinking)
        .join("\n")
        .trim();
      if (thinking) {
        if (this.showThinking) out.push(...wrapText(this.lib, thinking, w).map((l) => c.dim(c.italic(l))));
        else out.push(c.dim(c.italic(`∴ thinking (${thinking.split(/\s+/).length} words, Ctrl+T to show)`)));
      }
      if (textOf(m)) out.push(...entry.md.render(w));
      if (m.stopReason === "error")
        out.push(...wrapText(this.lib, `✗ ${m.errorMessage ?? "the provider failed"}`, w).map((l) => c.red(l)));
      if (m.stopReason === "aborted") out.push(c.yellow("⏹ aborted"));
      return out.length === 1 ? [] : out;
    });
    this.assistant = entry;
    this.chat.addChild(entry.view);
  }

  private tool(id: string, name: string, args: Record<string, unknown>): ToolState {
    let state = this.tools.get(id);
    if (!state) {
      state = { id, name, args, running: false, view: undefined as never };
      state.view = this.toolView(state);
      this.tools.set(id, state);
      this.chat.addChild(state.view);
    } else if (Object.keys(args).length && !Object.keys(state.args).length) state.args = args;
    return state;
  }

  private toolView(state: ToolState): Lines {
    return new Lines((w) => {
      const { truncateToWidth } = this.lib;
      const icon = state.running
        ? c.yellow("◌")
        : !state.result
          ? c.dim("○")
          : state.result.isError
            ? c.red("✗")
            : c.green("●");
      const head = `${icon} ${c.bold(state.name)} ${summarizeArgs(state.name === "!" || state.name === "!!" ? "bash" : state.name, state.args)}`;
      const body = toolBody(state, this.expanded).map((l) => truncateToWidth(`  ${l}`, w));
      return ["", truncateToWidth(head, w), ...body];
    });
  }

  private addNotice(text: string, paint: (s: string) => string, mark: string): void {
    this.chat.addChild(new Lines((w) => ["", ...wrapText(this.lib, mark + text, w).map((l) => paint(l))]));
    this.refresh();
  }

  // ───────────── status and footer ─────────────

  private drawStatus(width: number): string[] {
    const { truncateToWidth } = this.lib;
    const out: string[] = [];
    const s = this.agent.state;
    if (s.isRunning) {
      const secs = Math.floor((Date.now() - this.runStartedAt) / 1000);
      out.push("", c.yellow("● working") + c.dim(` ${secs}s · Esc to abort`));
    }
    if (this.retry) out.push(c.yellow(`↻ ${this.retry}`));
    for (const m of s.queued.steering) out.push(c.dim("↳ steer: ") + oneLine(textOf(m), width));
    for (const m of s.queued.followUp) out.push(c.dim("↳ follow-up: ") + oneLine(textOf(m), width));
    return out.map((l) => truncateToWidth(l, width));
  }

  private drawFooter(width: number): string[] {
    const { truncateToWidth } = this.lib;
    const s = this.agent.state;
    const session = this.ctx.services.get("session");
    const thinking = this.ctx.services.get("thinking");
    const level = thinking?.level(this.agent);
    const think = level && `think ${level}${thinking!.unused(this.agent) ? " (unused)" : ""}`;
    const figures = footerLine({
      model: `${s.provider}/${s.model.id}`,
      thinking: think,
      contextWindow: s.model.contextWindow,
      messages: s.messages,
      sessionName: session?.name,
    });
    const hint =
      Date.now() - this.lastCtrlC < DOUBLE_PRESS_MS
        ? c.yellow("Press Ctrl+C again to quit")
        : s.isRunning
          ? c.dim("Enter to steer · Alt+Enter follow-up · Esc abort")
          : c.dim("Enter to send · / commands · ! shell · Ctrl+C×2 quit");
    return [truncateToWidth(c.dim(figures), width), truncateToWidth(hint, width)];
  }

  private refresh(): void {
    this.status.touch();
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
