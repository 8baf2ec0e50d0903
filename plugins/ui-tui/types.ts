/**
 * Shapes shared by the plugin's files: the bridge between setup-time registrations (the `ui` service,
 * slash commands) and the running app, and the slice of the `session` service the TUI calls.
 * The session type is declared here, not imported, because plugins do not import each other.
 */
import type { CustomMessage } from "../../api/index.js";
import type {
  UiComponentFactory,
  UiCustomFactory,
  UiCustomOptions,
  UiMessageRenderer,
  UiWidget,
} from "../../lib/ui.js";

export interface PickItem {
  value: string;
  label: string;
  description?: string;
}

export interface Dialogs {
  confirm(title: string, message: string, signal?: AbortSignal): Promise<boolean>;
  select(title: string, options: readonly string[], signal?: AbortSignal): Promise<string | undefined>;
  input(title: string, placeholder?: string, signal?: AbortSignal): Promise<string | undefined>;
  /** A picker with labels and descriptions; resolves to the chosen value. */
  pick(
    title: string,
    items: readonly PickItem[],
    options?: { selected?: string; signal?: AbortSignal },
  ): Promise<string | undefined>;
  /** The /tree picker: search, fold, label (see dialogs.ts). */
  pickTree(
    title: string,
    items: readonly (PickItem & { parent?: string; children: number })[],
    options?: { selected?: string },
  ): Promise<string | { label: string } | undefined>;
  /** A line of text that is not shown as typed (an API key): one dot per character. */
  secret(title: string, hint?: string, signal?: AbortSignal): Promise<string | undefined>;
}

/** What commands and the `ui` service reach while the TUI runs. */
export interface AppHandle {
  dialogs: Dialogs;
  notify(message: string, level?: "info" | "warn" | "error"): void;
  setEditorText(text: string): void;
  /** Redraw the transcript from the agent's history (after a session switch). */
  rebuild(): void;
  quit(): void;
  /** Redraw what the `ui` state shows (status, widgets, footer, title). */
  uiChanged(): void;
  getEditorText(): string;
  toolsExpanded: boolean;
  /** The plugins' bound shortcuts, one line each (`Alt+S  /showcase — …`), for /help. */
  shortcutHelp(): string[];
  /** The last assistant answer's text (for /copy). */
  lastAnswer(): string | undefined;
  /** Switch the theme (for /settings); throws with the problem. */
  useTheme(spec: string): string;
  /** A plugin's component with the keyboard until it calls `done` (the `ui` service's `custom`). */
  custom<T>(factory: UiCustomFactory<T>, options?: UiCustomOptions): Promise<T | undefined>;
  /** A custom message appended while idle, drawn now (the `ui` service's `showMessage`). */
  showMessage(message: CustomMessage): void;
}

/** What plugins set through the `ui` service (lib/ui.ts); kept while the TUI is not drawing yet. */
export interface UiState {
  statuses: Map<string, string>;
  widgets: Map<string, { content: UiWidget; placement: "aboveEditor" | "belowEditor" }>;
  footer?: UiComponentFactory;
  title?: string;
  /** How custom messages are drawn, by `customType` (`registerMessageRenderer`). */
  messageRenderers: Map<string, UiMessageRenderer>;
  /** Notices given before the app was drawn, shown when it is. */
  notices: { message: string; level: "info" | "warn" | "error" }[];
}

/** Set while the TUI runs. */
export interface Bridge {
  app?: AppHandle;
  ui: UiState;
  /** Set by /reload: when the app has stopped, the front end runs coil again on this session. */
  reload?: boolean;
}
