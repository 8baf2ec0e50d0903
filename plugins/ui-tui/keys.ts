/**
 * Key bindings: the TUI's own actions under Pi's ids (`app.*`), pi-tui's editor and list actions
 * (`tui.*`), `$COIL_HOME/keybindings.json` rebinding any of them, and plugins' shortcuts: a command's
 * `shortcut` and `ctx.registerShortcut` (lib/ui.ts, lib/shortcuts.ts), which take the same path. A key an
 * action or an earlier shortcut already holds is refused, and the notice names both owners. docs/tui.md#keys.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type * as PiTui from "@mariozechner/pi-tui";

/** The TUI's actions, with Pi's ids where Pi has the same action. */
export const APP_KEYBINDINGS = {
  "app.interrupt": { defaultKeys: "escape", description: "Abort the run; twice on an empty editor: rewind" },
  "app.clear": { defaultKeys: "ctrl+c", description: "Clear the editor; twice: quit" },
  "app.exit": { defaultKeys: "ctrl+d", description: "Quit (on an empty editor)" },
  "app.editor.external": { defaultKeys: "ctrl+g", description: "Edit the message in $VISUAL / $EDITOR" },
  "app.clipboard.pasteImage": { defaultKeys: "ctrl+v", description: "Attach the clipboard's image" },
  "app.model.select": { defaultKeys: "ctrl+l", description: "Open the model picker" },
  "app.model.cycleForward": { defaultKeys: "ctrl+p", description: "Next favourite (or recent) model" },
  "app.thinking.cycle": { defaultKeys: "shift+tab", description: "Next thinking level" },
  "app.thinking.toggle": { defaultKeys: "ctrl+t", description: "Show or hide thinking blocks" },
  "app.tools.expand": { defaultKeys: "ctrl+o", description: "Expand or collapse tool output" },
  "app.message.followUp": { defaultKeys: "alt+enter", description: "Queue a follow-up (while a run goes)" },
  "app.message.dequeue": { defaultKeys: "alt+up", description: "Edit the queued messages again" },
  "app.session.tree": { defaultKeys: [], description: "Open the session tree (/tree)" },
  "app.session.new": { defaultKeys: [], description: "Start a new session (/new)" },
  "app.session.resume": { defaultKeys: [], description: "Resume another session (/resume)" },
  "app.session.fork": { defaultKeys: [], description: "Fork from an earlier message (/fork)" },
} as const satisfies Record<string, { defaultKeys: string | readonly string[]; description: string }>;

export type AppAction = keyof typeof APP_KEYBINDINGS;

/** Where the user's bindings live. */
export function keybindingsFile(home: string): string {
  return join(home, "keybindings.json");
}

/** `ctrl+o` → `Ctrl+O`, for hints. */
export function keyLabel(key: string | undefined): string {
  if (!key) return "(unbound)";
  return key
    .split("+")
    .map((part) => (part.length === 1 ? part.toUpperCase() : part[0]!.toUpperCase() + part.slice(1)))
    .join("+")
    .replace("Escape", "Esc")
    .replace("Pageup", "PageUp")
    .replace("Pagedown", "PageDown");
}

/** A plugin's claim on a key: a command's `shortcut`, or a `ctx.registerShortcut`. */
export interface ShortcutClaim {
  key?: string;
  /** Who claims it, for notices: `/stamp (plugin keys-test)`, `plugin clock`. */
  who: string;
  /** Its id in keybindings.json (`/stamp`, `clock:alt+k`), which rebinds it (`[]` unbinds it). */
  id: string;
  description: string;
  /** Runs it; `key` is the key it is bound to (keybindings.json may have moved it). */
  run(key: string): void;
}

/** An accepted claim, with the key it got. */
export type Shortcut = ShortcutClaim & { key: string };

export interface Bindings {
  manager: PiTui.KeybindingsManager;
  /** Does `data` press `action`? */
  is(data: string, action: AppAction): boolean;
  /** The first key of an action, as a hint label (`Ctrl+O`). */
  label(action: AppAction): string;
  /** Plugins' shortcuts that were accepted, in the order they were claimed. */
  shortcuts: Shortcut[];
  /** What went wrong: the file, unknown ids, conflicts (each names both owners). */
  problems: string[];
}

/**
 * Build the bindings: defaults, then `keybindings.json` (an object of action id → key or keys), then the
 * plugins' shortcuts, first claim first. The manager is installed as pi-tui's global one, so the editor
 * follows it too.
 */
export function loadBindings(lib: typeof PiTui, home: string, claims: readonly ShortcutClaim[]): Bindings {
  const problems: string[] = [];
  const file = keybindingsFile(home);
  let user: Record<string, string | string[]> = {};
  if (existsSync(file)) {
    try {
      const parsed = JSON.parse(readFileSync(file, "utf8")) as unknown;
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("it is not a JSON object");
      user = parsed as Record<string, string | string[]>;
    } catch (error) {
      problems.push(`${file} was not read: ${(error as Error).message}. The default keys are in force.`);
    }
  }
  const definitions = { ...lib.TUI_KEYBINDINGS, ...APP_KEYBINDINGS } as unknown as PiTui.KeybindingDefinitions;
  // "/name" rebinds a command's shortcut, "plugin:key" a registered one ([] unbinds it)
  const claimIds = new Set(claims.map((c) => c.id));
  const isClaim = (id: string) => id.startsWith("/") || claimIds.has(id);
  const unknown = Object.keys(user).filter((id) => !(id in definitions) && !isClaim(id));
  if (unknown.length)
    problems.push(
      `${file}: no action ${unknown.map((u) => `'${u}'`).join(", ")} (the ids are listed in docs/tui.md#keys; /help shows them)`,
    );
  const actions = Object.fromEntries(Object.entries(user).filter(([id]) => !isClaim(id)));
  const manager = new lib.KeybindingsManager(definitions, actions as PiTui.KeybindingsConfig);
  for (const c of manager.getConflicts())
    problems.push(`${file}: ${c.key} is bound to both ${c.keybindings.join(" and ")}; each press runs the first`);
  lib.setKeybindings(manager);
  const keysOf = (id: string) => manager.getKeys(id as PiTui.Keybinding);
  // Keys the main screen acts on: every app action, the editor's and input's keys.
  const taken = new Map<string, string>();
  for (const id of Object.keys(definitions)) {
    if (!id.startsWith("app.") && !id.startsWith("tui.editor.") && !id.startsWith("tui.input.")) continue;
    for (const key of keysOf(id)) if (!taken.has(key)) taken.set(key, `${id} (ui-tui)`);
  }
  const shortcuts: Shortcut[] = [];
  for (const claim of claims) {
    const own = user[claim.id];
    const key = (own === undefined ? claim.key : Array.isArray(own) ? own[0] : own)?.toLowerCase();
    if (!key) continue;
    const holder = taken.get(key);
    if (holder) {
      problems.push(
        `the shortcut ${key} of ${claim.who} is not bound: ${holder} already has it. Rebind one of them in ${file}.`,
      );
      continue;
    }
    taken.set(key, claim.who);
    shortcuts.push({ ...claim, key });
  }
  return {
    manager,
    is: (data, action) => manager.matches(data, action as PiTui.Keybinding),
    label: (action) => keyLabel(keysOf(action)[0]),
    shortcuts,
    problems,
  };
}
