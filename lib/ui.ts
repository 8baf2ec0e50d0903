/**
 * The plugin UI contract beyond the kernel's four dialogs: footer status entries, widgets above or below
 * the editor, a replaceable footer, the terminal title, the theme, per-tool renderers and keyboard
 * shortcuts. Types only. Importing this file (`import type {} from "coil/ui"`, or `../../lib/ui.js` inside
 * coil) augments `"coil"`'s `UiService`, `ToolDefinition` and `SlashCommand` with the optional members
 * below, and `PluginContext` with `registerShortcut` (lib/shortcuts.ts implements it), so the kernel keeps
 * its four-call contract and carries none of this (docs/decisions.md).
 *
 * Names follow Pi's extension API where the concept is the same (`setStatus`, `setWidget`, `setFooter`,
 * `setTitle`, `renderCall`, `renderResult`, theme roles), so Pi extensions map onto it.
 * Who answers what: docs/plugins.md#the-plugin-ui-api (TUI: all; RPC: events; print, JSON, ACP: absent).
 */
import type { Static, TSchema } from "typebox";
import type { Agent, CustomMessage, ToolResultMessage, UiService } from "../api/index.js";

/** A colour role of the theme (Pi's 51 tokens, and coil's few more). docs/tui.md#themes lists them. */
export type UiRole =
  | "accent"
  | "border"
  | "borderAccent"
  | "borderMuted"
  | "success"
  | "error"
  | "warning"
  | "muted"
  | "dim"
  | "text"
  | "thinkingText"
  | "selectedBg"
  | "userMessageBg"
  | "userMessageText"
  | "customMessageBg"
  | "customMessageText"
  | "customMessageLabel"
  | "toolPendingBg"
  | "toolSuccessBg"
  | "toolErrorBg"
  | "toolTitle"
  | "toolOutput"
  | "mdHeading"
  | "mdLink"
  | "mdLinkUrl"
  | "mdCode"
  | "mdCodeBlock"
  | "mdCodeBlockBorder"
  | "mdQuote"
  | "mdQuoteBorder"
  | "mdHr"
  | "mdListBullet"
  | "toolDiffAdded"
  | "toolDiffRemoved"
  | "toolDiffContext"
  | "syntaxComment"
  | "syntaxKeyword"
  | "syntaxFunction"
  | "syntaxVariable"
  | "syntaxString"
  | "syntaxNumber"
  | "syntaxType"
  | "syntaxOperator"
  | "syntaxPunctuation"
  | "thinkingOff"
  | "thinkingMinimal"
  | "thinkingLow"
  | "thinkingMedium"
  | "thinkingHigh"
  | "thinkingXhigh"
  | "bashMode"
  | "toolDiffAddedWord"
  | "toolDiffRemovedWord"
  | "toolDiffHunk"
  | "lineNumber"
  | "footer"
  | "statusText";

/** Colours of the theme in force. Under NO_COLOR `fg`/`bg` add no colour (`level` is then 0). */
export interface UiTheme {
  readonly name: string;
  /** 0 no colour, 1 sixteen colours, 2 256 colours, 3 24-bit. */
  readonly level: 0 | 1 | 2 | 3;
  fg(role: UiRole, text: string): string;
  bg(role: UiRole, text: string): string;
  bold(text: string): string;
  italic(text: string): string;
  underline(text: string): string;
  strikethrough(text: string): string;
  inverse(text: string): string;
}

/**
 * A piece of the screen: lines for a width, each at most `width` columns (pi-tui's `Component` has
 * this shape, so its `Text`, `Markdown`, `Box` ... can be returned as they are).
 */
export interface UiComponent {
  render(width: number): string[];
  invalidate?(): void;
  /** Keys, when the component has the focus. */
  handleInput?(data: string): void;
}

/** What a component factory is handed: the screen (pi-tui's `TUI` satisfies it). */
export interface UiTui {
  requestRender(): void;
  readonly terminal: { readonly columns: number; readonly rows: number };
}

export type UiComponentFactory = (tui: UiTui, theme: UiTheme) => UiComponent;

/** A widget: lines of text (styled by the plugin, or plain), or a component factory (the TUI only). */
export type UiWidget = readonly string[] | UiComponentFactory;

export interface UiWidgetOptions {
  /** Above the editor (the default) or below it, above the footer. */
  placement?: "aboveEditor" | "belowEditor";
}

/** What a renderer returns: a component, or text (a string is split at newlines; lines are cut at the edge). */
export type UiRendered = UiComponent | string | readonly string[];

/** The second argument of `renderCall` and the fourth of `renderResult`. */
export interface ToolRenderContext<A = Record<string, unknown>> {
  toolCallId: string;
  /** The call's arguments (`{}` while they are still streaming). */
  args: A;
  cwd: string;
  /** Ctrl+O's state: show everything when true, a compact view when false. */
  expanded: boolean;
  /** True while the tool runs (the result is then its latest partial output). */
  isPartial: boolean;
  /** The result is an error (the model sees it as one). */
  isError: boolean;
  /** The call has started executing (false while the model is still writing it). */
  executionStarted: boolean;
  /** How long the call ran, once it finished. */
  durationMs?: number;
  /** Shared by this call's `renderCall` and `renderResult`, kept for the row's life. */
  state: Record<string, unknown>;
  /** What this slot returned last time, to update in place. */
  lastComponent?: UiComponent;
  /** Ask for this row to be drawn again (after async work). */
  invalidate(): void;
}

/** pi-tui's key bindings, as `custom`'s factory gets them: `matches(data, "tui.select.confirm")`. */
export interface UiKeybindings {
  matches(data: string, id: string): boolean;
  getKeys?(id: string): readonly string[];
}

/**
 * A component that takes the keyboard until it calls `done(value)` (Pi's `ctx.ui.custom` factory): the
 * screen, the theme, the key bindings and `done`. It may be asynchronous.
 */
export type UiCustomFactory<T> = (
  tui: UiTui,
  theme: UiTheme,
  keybindings: UiKeybindings,
  done: (value: T) => void,
) => (UiComponent & { dispose?(): void }) | Promise<UiComponent & { dispose?(): void }>;

/** Where an overlay floats (pi-tui's `OverlayOptions`): sizes in columns/rows or `"50%"`. */
export interface UiOverlayOptions {
  width?: number | `${number}%`;
  minWidth?: number;
  maxHeight?: number | `${number}%`;
  anchor?:
    | "center"
    | "top-left"
    | "top-right"
    | "bottom-left"
    | "bottom-right"
    | "top-center"
    | "bottom-center"
    | "left-center"
    | "right-center";
  offsetX?: number;
  offsetY?: number;
  row?: number | `${number}%`;
  col?: number | `${number}%`;
  margin?: number | { top?: number; right?: number; bottom?: number; left?: number };
  /** Drawn only while this says true (called at each frame with the terminal's size). */
  visible?(columns: number, rows: number): boolean;
  /** Shown without taking the keyboard. */
  nonCapturing?: boolean;
}

/** An overlay on screen (pi-tui's `OverlayHandle`). */
export interface UiOverlayHandle {
  hide(): void;
  setHidden(hidden: boolean): void;
  isHidden(): boolean;
  focus(): void;
  unfocus(): void;
  isFocused(): boolean;
}

export interface UiCustomOptions {
  /** Float over the transcript instead of taking the editor's place. */
  overlay?: boolean;
  /** The overlay's place and size (a function is read when the overlay is shown). */
  overlayOptions?: UiOverlayOptions | (() => UiOverlayOptions);
  /** Given the overlay's handle once it is shown. */
  onHandle?(handle: UiOverlayHandle): void;
  /** Closes the component (resolving `undefined`) when it aborts. */
  signal?: AbortSignal;
}

/** How a custom message is drawn in the transcript (Pi's `registerMessageRenderer`); `undefined`: the built-in view. */
export type UiMessageRenderer = (
  message: CustomMessage,
  options: { expanded: boolean },
  theme: UiTheme,
) => UiRendered | undefined;

/** What a shortcut's handler is given: the agent, and the `ui` service of the front end that ran it. */
export interface ShortcutContext {
  agent: Agent;
  ui: UiService;
}

/** The second argument of `ctx.registerShortcut` (Pi's shape). */
export interface ShortcutOptions {
  /** Shown in /help's key list and in conflict notices. */
  description?: string;
  /**
   * Who the key is for, in conflict notices and /help, when a plugin registers it on behalf of something it
   * hosts (pi-extensions: `Pi extension greeter (~/.pi/agent/extensions/greeter.ts)`). Default: `plugin <id>`.
   */
  source?: string;
  /** Runs when the key is pressed on the main screen; a throw or rejection is shown as an error naming the plugin. */
  handler(context: ShortcutContext): void | Promise<void>;
}

/** A shortcut as registered: the key in lower case, and the plugin that registered it. */
export interface RegisteredShortcut extends ShortcutOptions {
  key: string;
  owner: string;
}

declare module "coil" {
  interface PluginContext<O> {
    /**
     * A key that runs `handler` in the TUI (pi-tui's key names: `ctrl+shift+p`, `alt+x`, `f5`). Call it in
     * setup. A key a built-in action, a command or an earlier shortcut holds is not bound; the notice names
     * both owners. Other front ends have no keys and ignore it.
     */
    registerShortcut(key: string, options: ShortcutOptions): void;
    /** Every plugin's shortcuts, in registration order (the TUI binds them). */
    readonly shortcuts: { list(): readonly RegisteredShortcut[] };
  }

  interface UiService {
    /** A footer entry under `key` (one line, ordered by key); `undefined` removes it. */
    setStatus?(key: string, text: string | undefined): void;
    /** A block above (default) or below the editor under `key`; `undefined` removes it. */
    setWidget?(key: string, content: UiWidget | undefined, options?: UiWidgetOptions): void;
    /** Replace the footer with a component; `undefined` brings the built-in one back. */
    setFooter?(factory: UiComponentFactory | undefined): void;
    /** The terminal window's title. */
    setTitle?(title: string): void;
    /** Put text in the editor (replacing what is there). */
    setEditorText?(text: string): void;
    getEditorText?(): string;
    /** Ctrl+O's state, for renderers and plugins. */
    getToolsExpanded?(): boolean;
    setToolsExpanded?(expanded: boolean): void;
    /** The theme in force, to colour widget lines and status text. */
    readonly theme?: UiTheme;
    /**
     * Show a component that takes the keyboard until it calls `done(value)`: in the editor's place, or
     * floating over the transcript (`overlay`). Resolves to the value, or `undefined` when it cannot be shown.
     */
    custom?<T>(factory: UiCustomFactory<T>, options?: UiCustomOptions): Promise<T | undefined>;
    /** Draw the custom messages of `customType` (`display: true`) with `renderer`; `undefined` removes it. */
    registerMessageRenderer?(customType: string, renderer: UiMessageRenderer | undefined): void;
    /**
     * Add a custom message to the transcript that no run produced (one a plugin appended to the session
     * while the agent was idle), drawn as a run's would be (its renderer, or its text).
     */
    showMessage?(message: CustomMessage): void;
  }

  interface ToolDefinition<P extends TSchema = TSchema, D = unknown> {
    /**
     * The TUI's header line(s) for a call of this tool, instead of `name` and the argument summary. A
     * throwing or missing renderer falls back to the built-in view (the error is reported once).
     */
    renderCall?(args: Static<P>, theme: UiTheme, context: ToolRenderContext<Static<P>>): UiRendered;
    /** The TUI's body for the result (and, with `isPartial`, the streamed output), instead of its text. */
    renderResult?(
      result: ToolResultMessage<D>,
      options: { expanded: boolean; isPartial: boolean },
      theme: UiTheme,
      context: ToolRenderContext<Static<P>>,
    ): UiRendered;
  }

  interface SlashCommand {
    /**
     * A key that runs the command in the TUI with no arguments (`ctrl+shift+p`, `alt+x`, `f5`: pi-tui's key
     * names): sugar for `ctx.registerShortcut`, bound the same way, and rebindable as `"/name"` in
     * keybindings.json. A key a built-in action, another command or a shortcut holds is refused with both
     * owners named.
     */
    shortcut?: string;
    /** Who the command is for in shortcut notices and /help (see `ShortcutOptions.source`); default `plugin <id>`. */
    source?: string;
  }
}
