/**
 * The parts of Pi's UI API that draw: `ctx.ui.custom` (a component with the keyboard until it calls `done`,
 * in the editor's place or as an overlay) and `pi.registerMessageRenderer` (how `pi.sendMessage`'s custom
 * messages are drawn). Both go to the `ui` service's members of coil's plugin UI API (lib/ui.ts), which the
 * TUI implements; other front ends have no terminal to draw in, and coil says what happens there.
 */
import { homedir } from "node:os";
import type { UiService } from "coil";
import type { UiCustomFactory, UiCustomOptions, UiMessageRenderer } from "../../lib/ui.js";
import type { FoundExtension } from "./discover.js";

/** Who a key or command belongs to in the TUI's notices and /help: `Pi extension greeter (~/.pi/…/greeter.ts)`. */
export function extensionSource(found: FoundExtension): string {
  const home = homedir();
  const file = found.file.startsWith(`${home}/`) ? `~${found.file.slice(home.length)}` : found.file;
  return `Pi extension ${found.name} (${file})`;
}

export interface CustomHost {
  /** The `ui` service once a front end runs it (undefined before, and in print/JSON mode). */
  ui(): UiService | undefined;
  /** The run's mode (`interactive`, `rpc`, `text`, `json`). */
  mode(): string;
  /** Say something once per extension (coil's log). */
  warn(message: string): void;
}

/**
 * Pi's `ctx.ui.custom(factory, options)`: the TUI shows the component (overlay options as pi-tui's) and
 * resolves to what it passes to `done`. Without the TUI it resolves to `undefined`, as Pi's RPC and print
 * modes do, and the extension's first call says so.
 */
export function customFor(
  host: CustomHost,
  found: FoundExtension,
): <T>(factory: UiCustomFactory<T>, options?: UiCustomOptions) => Promise<T | undefined> {
  let said = false;
  return async (factory, options) => {
    const ui = host.ui();
    if (ui?.custom) return ui.custom(factory, options);
    if (!said) {
      said = true;
      const mode = host.mode();
      host.warn(
        `Pi extension ${found.name}: ctx.ui.custom() draws only in the TUI; ${
          mode === "rpc" ? "in --mode rpc" : "without a UI"
        } it resolves to undefined (as in Pi's ${mode === "rpc" ? "RPC" : "print"} mode)`,
      );
    }
    return undefined;
  };
}

/**
 * Pi's `pi.registerMessageRenderer(customType, renderer)`: the TUI draws the custom messages of that type
 * (`display: true`) with it; a throw names the extension. Other front ends show the message's text.
 */
export function messageRenderer(found: FoundExtension, renderer: UiMessageRenderer): UiMessageRenderer {
  return (message, options, theme) => {
    try {
      return renderer(message, options, theme);
    } catch (error) {
      throw new Error(`Pi extension ${found.name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
}
