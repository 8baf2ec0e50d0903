/**
 * The running TUI. Loaded only by the front end's `run`, with the terminal library passed in (it is
 * imported there), so nothing here is evaluated at start-up. Layout, top to bottom: the transcript,
 * a status block (running, queued messages), the editor (or a dialog in its place) and the footer.
 */
import { spawn } from "node:child_process";
import { appendFileSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import type * as PiTui from "@mariozechner/pi-tui";
import {
  findCommand,
  formatDiagnostic,
  messageOf,
  textOf,
  type Agent,
  type AgentEvent,
  type AgentMessage,
  type AssistantMessage,
  type FrontEndContext,
  type ImageContent,
  type PluginContext,
  type PromptInput,
  type TextContent,
  type ToolResultMessage,
} from "../../kernel/index.js";
import { MAX_IMAGE_BYTES, readHeadSync, sniffBinary, sniffImage } from "../../lib/sniff.js";
import { formatSize } from "../../lib/tool-budget.js";
import { KEYS_HELP, oneLine } from "./commands.js";
import { c, footerLine, markdownTheme, selectTheme, messagesToEditorText, resultText, shellMessageText, summarizeArgs, tail, toolBody } from "./render.js";
import type { AppHandle, Bridge, Dialogs, PickItem, SessionLike } from "./types.js";

type Lib = typeof PiTui;
type Component = PiTui.Component;

const SHELL_MESSAGE = "ui-tui.shell";
const DOUBLE_PRESS_MS = 1500;
const MAX_ATTACH_BYTES = 200_000;

/** A component drawn by a function, cached per width until touched. */
class Lines implements Component {
  private cache?: { width: number; lines: string[] };
  constructor(private draw: (width: number) => string[]) {}
  render(width: number): string[] {
    if (this.cache?.width === width) return this.cache.lines;
    const lines = this.draw(width);
    this.cache = { width, lines };
    return lines;
  }
  touch(): void {
    this.cache = undefined;
  }
  invalidate(): void {
    this.cache = undefined;
  }
}

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
  private runStartedAt = 0;
  private retry?: string;
  private finish?: (code: number) => void;
  private dialogChain: Promise<unknown> = Promise.resolve();
  private frames = 0;
  readonly dialogs: Dialogs;

  constructor(
    private readonly lib: Lib,
    private readonly fe: FrontEndContext,
    private readonly ctx: PluginContext,
    private readonly bridge: Bridge,
  ) {
    this.agent = fe.agent;
    const terminal = new lib.ProcessTerminal();
    if (process.env.COIL_TUI_STATS) {
      // bench/tui.mjs: when the library is loaded and the first frame drawn, and frames per run (one write per render)
      this.writeStats(process.env.COIL_TUI_STATS, "loaded");
      const write = terminal.write.bind(terminal);
      terminal.write = (data: string) => {
        if (data.includes("\x1b[?2026h") && ++this.frames === 1) this.writeStats(process.env.COIL_TUI_STATS!, "first-frame");
        write(data);
      };
    }
    this.tui = new lib.TUI(terminal);
    this.chat = new lib.Container();
    this.slot = new lib.Container();
    this.editor = new lib.Editor(this.tui, { borderColor: c.gray, selectList: selectTheme() }, { paddingX: 0 });
    this.editor.setAutocompleteProvider(this.autocomplete());
    this.editor.onSubmit = (text) => void this.submit(text);
    this.status = new Lines((w) => this.drawStatus(w));
    this.footer = new Lines((w) => this.drawFooter(w));
    this.slot.addChild(this.editor);
    this.tui.addChild(this.chat);
    this.tui.addChild(this.status);
    this.tui.addChild(this.slot);
    this.tui.addChild(this.footer);
    this.dialogs = {
      confirm: async (title, message, signal) => (await this.pickOne(`${title}\n${message}`, [{ value: "yes", label: "Yes" }, { value: "no", label: "No" }], { signal })) === "yes",
      select: (title, options, signal) => this.pickOne(title, options.map((o) => ({ value: o, label: o })), { signal }),
      input: (title, placeholder, signal) => this.askText(title, placeholder, signal),
      pick: (title, items, options) => this.pickOne(title, items, options ?? {}),
    };
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
      this.chat.addChild(new Lines((w) => [this.lib.truncateToWidth(c.bold("coil") + c.dim(` · ${this.agent.state.provider}/${this.agent.state.model.id} · ${this.ctx.cwd}`), w)]));
      this.rebuild();
      this.tui.setFocus(this.editor);
      this.tui.start();
      this.tui.requestRender(true);
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
      }
      return { consume: true };
    }
    if ((data === "\x1b\r" || matchesKey(data, "alt+enter")) && this.agent.isRunning) {
      const text = this.editor.getExpandedText().trim();
      if (text) {
        this.editor.setText("");
        this.agent.followUp(this.withAttachments(text));
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
    return undefined;
  }

  // ───────────── input ─────────────

  private async submit(raw: string): Promise<void> {
    const text = raw.trim();
    if (!text) return;
    this.editor.addToHistory(text);
    try {
      if (text.startsWith("!")) return await this.shell(text);
      if (text === "/model" && this.agent.view.commands.has("model")) return await this.modelPicker();
      const slash = findCommand(this.agent.view, text);
      if (slash) {
        const out = await slash.command.run(slash.args, this.agent);
        if (typeof out === "string" && out) this.addNotice(out, (s) => s, "");
        else if (out && typeof out === "object") this.send(out.prompt);
        this.refresh();
        return;
      }
      // A lone `/word`, or a namespaced `/name:arg ...` (like /skill:x), is a command typed wrong, not a request.
      const head = text.split(/\s/, 1)[0]!;
      if ((text.startsWith("/") && !text.includes(" ") && !text.slice(1).includes("/")) || /^\/[\w-]+:[^/\s]*$/.test(head)) {
        const skills = head.startsWith("/skill:") && this.agent.view.commands.has("skills") ? " /skills lists the skills, and why any did not load." : "";
        this.notify(`Unknown command ${head}. /help lists the commands.${skills}`, "warn");
        return;
      }
      this.send(this.withAttachments(text));
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
   * `@path` tokens naming files in the working directory attach them: text inside `<file>`, images
   * (PNG, JPEG, GIF, WebP, by their bytes) as image blocks after the text. Other binary files, and
   * images the model cannot take, are left out with a notice; the model can still inspect them with its tools.
   */
  private withAttachments(text: string): PromptInput {
    const files: string[] = [];
    const images: (TextContent | ImageContent)[] = [];
    for (const m of text.matchAll(/(?:^|\s)@("([^"]+)"|\S+)/g)) {
      const rel = m[2] ?? m[1]!;
      const abs = resolve(this.ctx.cwd, rel);
      let size: number;
      let head: Uint8Array;
      try {
        const st = statSync(abs);
        if (!st.isFile()) continue;
        size = st.size;
        head = readHeadSync(abs);
      } catch {
        continue; // not a file: leave the text as typed
      }
      const image = sniffImage(head);
      if (image) {
        const model = this.agent.state.model;
        const label = `${image.mimeType}${image.width && image.height ? `, ${image.width}x${image.height}` : ""}, ${formatSize(size)}`;
        if (model.input && !model.input.includes("image")) this.notify(`@${rel} is an image (${label}); not attached: ${model.provider}/${model.id} does not take images.`, "warn");
        else if (size > MAX_IMAGE_BYTES) this.notify(`@${rel} is an image (${label}); not attached: larger than the ${formatSize(MAX_IMAGE_BYTES)} providers accept.`, "warn");
        else images.push({ type: "text", text: `[image @${rel} (${label})]` }, { type: "image", data: readFileSync(abs).toString("base64"), mimeType: image.mimeType });
        continue;
      }
      const binary = sniffBinary(head, rel);
      if (binary) {
        this.notify(`@${rel} is a binary file${binary.what ? ` (${binary.what})` : ""}; not attached. The model can inspect it with its tools.`, "warn");
        continue;
      }
      if (size > MAX_ATTACH_BYTES) {
        this.notify(`@${rel} is ${size} bytes; not attached (limit ${MAX_ATTACH_BYTES}). The model can read it with its tools.`, "warn");
        continue;
      }
      files.push(`<file path="${rel}">\n${readFileSync(abs, "utf8").replace(/\n$/, "")}\n</file>`);
    }
    const body = files.length ? `${text}\n\n${files.join("\n\n")}` : text;
    if (!images.length) return body;
    return { role: "user", content: [{ type: "text", text: body }, ...images], timestamp: Date.now() };
  }

  private async modelPicker(): Promise<void> {
    const items: PickItem[] = [];
    for (const p of this.agent.view.providers.values()) {
      if (p.isConfigured && !p.isConfigured()) continue;
      for (const m of p.models ?? []) items.push({ value: `${p.id}/${m.id}`, label: `${p.id}/${m.id}`, description: m.name });
    }
    const current = `${this.agent.state.provider}/${this.agent.state.model.id}`;
    const chosen = await this.pickOne(`Model (now ${current})`, items, { selected: current });
    if (!chosen) return;
    const out = await this.agent.view.commands.get("model")!.run(chosen, this.agent);
    if (typeof out === "string" && out) this.addNotice(out, (s) => s, "");
    this.refresh();
  }

  /** `!cmd` runs in the shell and adds its output to the context; `!!cmd` only shows it. */
  private async shell(text: string): Promise<void> {
    const keep = !text.startsWith("!!");
    const command = text.slice(keep ? 1 : 2).trim();
    if (!command) return;
    const state: ToolState = { id: `shell-${Date.now()}`, name: keep ? "!" : "!!", args: { command }, running: true, partial: "", view: undefined as never };
    state.view = this.toolView(state);
    this.chat.addChild(state.view);
    this.refresh();
    let output = "";
    const code = await new Promise<number | null>((done) => {
      const child = spawn(process.env.SHELL || "/bin/sh", ["-c", command], { cwd: this.ctx.cwd, stdio: ["ignore", "pipe", "pipe"] });
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.length > 1_000_000) output = output.slice(-500_000);
        state.partial = output;
        state.view.touch();
        this.tui.requestRender();
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", onData);
      child.on("error", (e) => {
        output += messageOf(e);
        done(127);
      });
      child.on("close", (exit) => done(exit));
    });
    const shown = tail(output.replace(/\n$/, ""), 2000).lines.join("\n");
    state.running = false;
    state.result = { role: "toolResult", toolCallId: state.id, toolName: "shell", content: [{ type: "text", text: shown || "(no output)" }], isError: code !== 0, timestamp: Date.now() };
    state.view.touch();
    if (keep) {
      const content = shellMessageText(command, shown, code);
      const session = this.ctx.services.get("session") as SessionLike | undefined;
      if (this.agent.isRunning) this.agent.steer({ role: "user", content, timestamp: Date.now() });
      else if (session) session.appendCustomMessage({ customType: SHELL_MESSAGE, content, display: false });
      else this.agent.replaceMessages([...this.agent.state.messages, { role: "custom", customType: SHELL_MESSAGE, content, display: false, timestamp: Date.now() }]);
    }
    this.refresh();
  }

  // ───────────── events ─────────────

  private onEvent(event: AgentEvent): void {
    if (process.env.COIL_TUI_STATS && (event.type === "agent_start" || event.type === "agent_end")) this.writeStats(process.env.COIL_TUI_STATS, event.type);
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
        this.notify(`Context compacted (${event.reason}) by ${event.by}: ${event.tokensBefore} → ${event.tokensAfter ?? "?"} tokens`);
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
      this.chat.addChild(new Lines((w) => ["", ...this.wrap(text, w - 2).map((l, i) => (i === 0 ? c.cyan(c.bold("› ")) : "  ") + l)]));
    } else if (m.role === "assistant") {
      this.startAssistant(m);
      this.assistant = undefined;
      if (replay) for (const call of m.content) if (call.type === "toolCall") this.tool(call.id, call.name, call.arguments);
    } else if (m.role === "toolResult") {
      const state = this.tool(m.toolCallId, m.toolName, {});
      state.running = false;
      state.result = m;
      state.view.touch();
    } else if (m.display || m.customType === SHELL_MESSAGE) {
      const text = typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : "")).join("");
      this.addNotice(m.customType === SHELL_MESSAGE ? oneLine(text, 200) : text, c.magenta, `[${m.customType}] `);
    }
  }

  private startAssistant(message: AssistantMessage): void {
    const md = new this.lib.Markdown(textOf(message), 0, 0, markdownTheme());
    const entry = { message, md, view: undefined as unknown as Lines };
    entry.view = new Lines((w) => {
      const m = entry.message;
      const out: string[] = [""];
      const thinking = m.content.filter((p) => p.type === "thinking").map((p) => (p as { thinking: string }).thinking).join("\n").trim();
      if (thinking) {
        if (this.showThinking) out.push(...this.wrap(thinking, w).map((l) => c.dim(c.italic(l))));
        else out.push(c.dim(c.italic(`∴ thinking (${thinking.split(/\s+/).length} words, Ctrl+T to show)`)));
      }
      if (textOf(m)) out.push(...entry.md.render(w));
      if (m.stopReason === "error") out.push(...this.wrap(`✗ ${m.errorMessage ?? "the provider failed"}`, w).map((l) => c.red(l)));
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
      const icon = state.running ? c.yellow("◌") : !state.result ? c.dim("○") : state.result.isError ? c.red("✗") : c.green("●");
      const head = `${icon} ${c.bold(state.name)} ${summarizeArgs(state.name === "!" || state.name === "!!" ? "bash" : state.name, state.args)}`;
      const body = toolBody(state, this.expanded).map((l) => truncateToWidth(`  ${l}`, w));
      return ["", truncateToWidth(head, w), ...body];
    });
  }

  private addNotice(text: string, paint: (s: string) => string, mark: string): void {
    this.chat.addChild(new Lines((w) => ["", ...this.wrap(mark + text, w).map((l) => paint(l))]));
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
    const session = this.ctx.services.get("session") as SessionLike | undefined;
    const figures = footerLine({ model: `${s.provider}/${s.model.id}`, contextWindow: s.model.contextWindow, messages: s.messages, sessionName: session?.name });
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

  // ───────────── dialogs (they take the editor's place, one at a time) ─────────────

  private inDialog<T>(build: (close: (value: T) => void) => Component, fallbackValue: T, signal?: AbortSignal): Promise<T> {
    const next = this.dialogChain.then(
      () =>
        new Promise<T>((done) => {
          if (signal?.aborted || !this.finish) return done(fallbackValue);
          let closed = false;
          const close = (value: T) => {
            if (closed) return;
            closed = true;
            signal?.removeEventListener("abort", onAbort);
            this.slot.clear();
            this.slot.addChild(this.editor);
            this.tui.setFocus(this.editor);
            this.refresh();
            done(value);
          };
          const onAbort = () => close(fallbackValue);
          signal?.addEventListener("abort", onAbort, { once: true });
          const component = build(close);
          this.slot.clear();
          this.slot.addChild(component);
          this.tui.setFocus(component);
          this.refresh();
        }),
    );
    this.dialogChain = next.catch(() => undefined);
    return next;
  }

  private pickOne(title: string, items: readonly PickItem[], options: { selected?: string; signal?: AbortSignal }): Promise<string | undefined> {
    return this.inDialog<string | undefined>(
      (close) => {
        const list = new this.lib.SelectList([...items], Math.max(3, Math.min(10, (this.tui.terminal.rows || 24) - 10)), selectTheme());
        const at = options.selected ? items.findIndex((i) => i.value === options.selected) : -1;
        if (at >= 0) list.setSelectedIndex(at);
        list.onSelect = (item) => close(item.value);
        list.onCancel = () => close(undefined);
        const head = new Lines((w) => [c.gray("─".repeat(w)), ...title.split("\n").flatMap((l, i) => this.wrap(l, w).map((x) => (i === 0 ? c.bold(x) : x)))]);
        const foot = new Lines((w) => [c.dim(this.lib.truncateToWidth("↑↓ move · Enter choose · Esc cancel", w)), c.gray("─".repeat(w))]);
        return this.box([head, list, foot], list);
      },
      undefined,
      options.signal,
    );
  }

  private askText(title: string, placeholder: string | undefined, signal?: AbortSignal): Promise<string | undefined> {
    return this.inDialog<string | undefined>(
      (close) => {
        const input = new this.lib.Input();
        input.onSubmit = (value) => close(value);
        input.onEscape = () => close(undefined);
        const head = new Lines((w) => [c.gray("─".repeat(w)), ...this.wrap(title, w).map((x) => c.bold(x))]);
        const foot = new Lines((w) => [c.dim(this.lib.truncateToWidth(`${placeholder ? `${placeholder} · ` : ""}Enter confirm · Esc cancel`, w)), c.gray("─".repeat(w))]);
        return this.box([head, input, foot], input);
      },
      undefined,
      signal,
    );
  }

  /** Stack components; keys go to `target`. Focus is passed on so the input's cursor shows. */
  private box(parts: Component[], target: Component): Component & PiTui.Focusable {
    let focused = false;
    return {
      render: (w) => parts.flatMap((p) => p.render(w)),
      invalidate: () => parts.forEach((p) => p.invalidate()),
      handleInput: (data) => {
        target.handleInput?.(data);
        this.tui.requestRender();
      },
      get focused() {
        return focused;
      },
      set focused(v: boolean) {
        focused = v;
        if ("focused" in target) (target as unknown as PiTui.Focusable).focused = v;
      },
    };
  }

  // ───────────── helpers ─────────────

  private wrap(text: string, width: number): string[] {
    return text.split("\n").flatMap((line) => (line ? this.lib.wrapTextWithAnsi(line, Math.max(10, width)) : [""]));
  }

  /** Slash commands from the registry, `@` fuzzy file search, and Tab path completion. */
  private autocomplete(): PiTui.AutocompleteProvider {
    const commands = this.agent.view.commands.entries().map(([name, o]) => ({ name, description: o.value.description, argumentHint: o.value.argumentHint }));
    const combined = new this.lib.CombinedAutocompleteProvider(commands, this.ctx.cwd);
    let files: string[] | undefined;
    const listFiles = () => (files ??= walk(this.ctx.cwd, 5000));
    return {
      getSuggestions: async (lines, line, col, options) => {
        const before = (lines[line] ?? "").slice(0, col);
        const at = /(?:^|\s)@(\S*)$/.exec(before);
        if (at) {
          const query = at[1]!;
          const found = this.lib.fuzzyFilter(listFiles(), query, (f) => f).slice(0, 20);
          if (!found.length) return null;
          return { prefix: `@${query}`, items: found.map((f) => ({ value: `@${f}`, label: basename(f), description: f })) };
        }
        return combined.getSuggestions(lines, line, col, options);
      },
      applyCompletion: (lines, line, col, item, prefix) => combined.applyCompletion(lines, line, col, item, prefix),
      shouldTriggerFileCompletion: (lines, line, col) => combined.shouldTriggerFileCompletion(lines, line, col),
    };
  }

  /** bench/tui.mjs: one JSON line per mark with the frames drawn and this process's CPU time so far. */
  private writeStats(file: string, mark: string): void {
    const cpu = process.cpuUsage();
    appendFileSync(file, JSON.stringify({ mark, at: performance.now(), frames: this.frames, cpuUs: cpu.user + cpu.system }) + "\n");
  }
}

/** Files under `root` (relative paths), skipping dot-folders and node_modules, up to `max`. */
function walk(root: string, max: number): string[] {
  const out: string[] = [];
  const queue = [root];
  while (queue.length && out.length < max) {
    const dir = queue.shift()!;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (e.name.startsWith(".") || e.name === "node_modules" || e.name === "dist") continue;
      const abs = join(dir, e.name);
      if (e.isDirectory()) queue.push(abs);
      else out.push(relative(root, abs));
      if (out.length >= max) break;
    }
  }
  return out;
}

export { KEYS_HELP };
