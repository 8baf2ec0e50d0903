/**
 * The test kit's UI helper: a `ui` service that records what a plugin shows (status entries, widgets,
 * footer, title, notifications, dialogs) and answers dialogs from a list, and `renderTool` to draw a
 * tool's own `renderCall`/`renderResult` without a terminal. Text comes out plain unless `colors` is set.
 *
 *   const ui = createTestUi();
 *   const kit = createTestKit({ plugins: [myPlugin], ui });   // the host serves it as the `ui` service
 *   ui.answer(true);                                           // the next confirm says yes
 *   await kit.run("go");
 *   ui.statuses.get("my-plugin")  // "3 files"
 */
import type { CustomMessage, ToolDefinition, ToolResultMessage, UiService } from "../../api/index.js";
import type {
  UiComponent,
  UiComponentFactory,
  UiMessageRenderer,
  UiRendered,
  UiTheme,
  UiWidget,
} from "../../lib/ui.js";
import { BUILTIN_THEMES, makeTheme } from "../../plugins/ui-tui/theme.js";

export interface TestUiDialog {
  method: "confirm" | "select" | "input";
  title: string;
  /** confirm's message, select's options, input's placeholder. */
  detail?: string | readonly string[];
  answer: unknown;
}

export interface TestUi extends Required<Omit<UiService, "theme">> {
  readonly theme: UiTheme;
  readonly statuses: Map<string, string>;
  readonly widgets: Map<string, { content: UiWidget; placement: "aboveEditor" | "belowEditor" }>;
  footer?: UiComponentFactory;
  title?: string;
  editorText: string;
  toolsExpanded: boolean;
  readonly notifications: { message: string; level: "info" | "warn" | "error" }[];
  /** Every dialog asked, with the answer it got. */
  readonly dialogs: TestUiDialog[];
  /** Answers for the next dialogs, in order: a boolean (confirm), an option (select), text (input); undefined dismisses. */
  answer(...answers: unknown[]): void;
  /** A widget's lines (a component widget rendered at `width`). */
  widgetLines(key: string, width?: number): string[] | undefined;
  /** The footer a plugin set, rendered at `width` (undefined: the built-in one). */
  footerLines(width?: number): string[] | undefined;
  /** The renderers plugins registered for custom messages, by `customType`. */
  readonly messageRenderers: Map<string, UiMessageRenderer>;
  /** The custom messages plugins showed with `showMessage`, in order. */
  readonly shownMessages: CustomMessage[];
  /** The component `custom` shows now, rendered at `width` (undefined when none is open). */
  customLines(width?: number): string[] | undefined;
  /** Keys (raw terminal data: `"\r"`, `"\x1b"`, `"j"`) for the component `custom` shows now. */
  press(data: string): void;
}

export interface TestUiOptions {
  /** Render width for components (default 80). */
  width?: number;
  /** Keep colour codes (the dark theme, 256 colours); plain text by default. */
  colors?: boolean;
}

const screen = (width: number) => ({ requestRender: () => undefined, terminal: { columns: width, rows: 24 } });

function linesOf(out: UiRendered, width: number): string[] {
  if (typeof out === "string") return out.split("\n");
  if (Array.isArray(out)) return [...(out as readonly string[])];
  return (out as UiComponent).render(width);
}

export function createTestUi(options: TestUiOptions = {}): TestUi {
  const width = options.width ?? 80;
  const theme = makeTheme("dark", BUILTIN_THEMES.dark!, options.colors ? 2 : 0, !options.colors);
  const queue: unknown[] = [];
  const open: UiComponent[] = [];
  const keybindings = { matches: (data: string, id: string) => (KEYS[id] ?? []).includes(data) };
  const ui: TestUi = {
    theme,
    statuses: new Map(),
    widgets: new Map(),
    editorText: "",
    toolsExpanded: false,
    notifications: [],
    dialogs: [],
    answer: (...answers) => void queue.push(...answers),
    async confirm(title, message) {
      const answer = queue.length ? queue.shift() === true : false;
      ui.dialogs.push({ method: "confirm", title, detail: message, answer });
      return answer;
    },
    async select(title, choices) {
      const next = queue.shift();
      const answer = typeof next === "string" && choices.includes(next) ? next : undefined;
      ui.dialogs.push({ method: "select", title, detail: choices, answer });
      return answer;
    },
    async input(title, placeholder) {
      const next = queue.shift();
      const answer = typeof next === "string" ? next : undefined;
      ui.dialogs.push({ method: "input", title, detail: placeholder, answer });
      return answer;
    },
    notify: (message, level = "info") => void ui.notifications.push({ message, level }),
    setStatus(key, text) {
      if (text === undefined) ui.statuses.delete(key);
      else ui.statuses.set(key, text);
    },
    setWidget(key, content, o) {
      if (content === undefined) ui.widgets.delete(key);
      else ui.widgets.set(key, { content, placement: o?.placement ?? "aboveEditor" });
    },
    setFooter(factory) {
      ui.footer = factory;
    },
    setTitle(title) {
      ui.title = title;
    },
    setEditorText(text) {
      ui.editorText = text;
    },
    getEditorText: () => ui.editorText,
    getToolsExpanded: () => ui.toolsExpanded,
    setToolsExpanded(expanded) {
      ui.toolsExpanded = expanded;
    },
    widgetLines(key, w = width) {
      const widget = ui.widgets.get(key);
      if (!widget) return undefined;
      return Array.isArray(widget.content)
        ? [...(widget.content as readonly string[])]
        : (widget.content as UiComponentFactory)(screen(w), theme).render(w);
    },
    footerLines: (w = width) => ui.footer?.(screen(w), theme).render(w),
    messageRenderers: new Map(),
    shownMessages: [],
    showMessage: (message) => void ui.shownMessages.push(message),
    registerMessageRenderer(customType, renderer) {
      if (renderer) ui.messageRenderers.set(customType, renderer);
      else ui.messageRenderers.delete(customType);
    },
    custom: async <T>(factory: Parameters<TestUi["custom"]>[0], o?: Parameters<TestUi["custom"]>[1]) => {
      let settle!: (value: T | undefined) => void;
      const result = new Promise<T | undefined>((resolve) => {
        settle = resolve;
      });
      let component: (UiComponent & { dispose?(): void }) | undefined;
      let closed = false;
      const done = (value: T | undefined) => {
        if (closed) return;
        closed = true;
        if (component) open.splice(open.indexOf(component), 1);
        component?.dispose?.();
        settle(value);
      };
      o?.signal?.addEventListener("abort", () => done(undefined), { once: true });
      component = await factory(screen(width), theme, keybindings, done as (value: unknown) => void);
      if (!closed) open.push(component);
      return result as Promise<T | undefined>;
    },
    customLines: (w = width) => open.at(-1)?.render(w),
    press: (data) => open.at(-1)?.handleInput?.(data),
  };
  return ui;
}

/** The few pi-tui key ids a test's `custom` component may ask about, with the raw keys they match. */
const KEYS: Record<string, string[]> = {
  "tui.select.confirm": ["\r"],
  "tui.select.cancel": ["\x1b", "\x03"],
  "tui.select.up": ["\x1b[A"],
  "tui.select.down": ["\x1b[B"],
};

/**
 * Draw a tool's own renderers as the TUI would call them: the call with its arguments, and, given a result,
 * the result (`expanded` and `isPartial` as Ctrl+O and a running call set them). A missing renderer gives [].
 */
export function renderTool(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  result?: ToolResultMessage,
  options: { expanded?: boolean; isPartial?: boolean; width?: number; colors?: boolean; cwd?: string } = {},
): { call: string[]; result: string[] } {
  const width = options.width ?? 78;
  const theme = makeTheme("dark", BUILTIN_THEMES.dark!, options.colors ? 2 : 0, !options.colors);
  const context = {
    toolCallId: "test-call",
    args,
    cwd: options.cwd ?? process.cwd(),
    expanded: options.expanded ?? false,
    isPartial: options.isPartial ?? false,
    isError: result?.isError === true,
    executionStarted: result !== undefined,
    state: {},
    invalidate: () => undefined,
  };
  const call = tool.renderCall ? linesOf(tool.renderCall(args as never, theme, context as never), width) : [];
  const body =
    result && tool.renderResult
      ? linesOf(
          tool.renderResult(
            result as never,
            { expanded: context.expanded, isPartial: context.isPartial },
            theme,
            context as never,
          ),
          width,
        )
      : [];
  return { call, result: body };
}
