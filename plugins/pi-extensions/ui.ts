/**
 * The parts of Pi's UI API that draw: `ctx.ui.custom` (a component with the keyboard until it calls `done`,
 * in the editor's place or as an overlay) and `pi.registerMessageRenderer` (how `pi.sendMessage`'s custom
 * messages are drawn). Both go to the `ui` service's members of coil's plugin UI API (lib/ui.ts), which the
 * TUI implements; other front ends have no terminal to draw in, and coil says what happens there.
 */
import { homedir } from "node:os";
import type { UiService } from "coil";
import type { UiComponent, UiCustomFactory, UiCustomOptions, UiMessageRenderer } from "../../lib/ui.js";
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

type Made = UiComponent & { dispose?(): void };

/**
 * The component a factory makes, with its `render` and `handleInput` caught: one that throws (a Pi export
 * coil does not serve, used while drawing) is closed (`done(undefined)`) and said once, instead of the throw
 * reaching the TUI's render loop, which would end coil.
 */
function guardComponent<T>(factory: UiCustomFactory<T>, found: FoundExtension, warn: (m: string) => void) {
  const made: UiCustomFactory<T> = (tui, theme, keybindings, done) => {
    let failed = false;
    const guard = (component: Made): Made => {
      const c = component as unknown as Record<string, unknown> | undefined;
      if (!c || typeof c !== "object") return component;
      for (const name of ["render", "handleInput"] as const) {
        const original = c[name];
        if (typeof original !== "function") continue;
        c[name] = function (this: unknown, ...args: unknown[]) {
          if (failed) return name === "render" ? [] : undefined;
          try {
            return (original as (...a: unknown[]) => unknown).apply(this, args);
          } catch (error) {
            failed = true;
            warn(
              `Pi extension ${found.name}: its ctx.ui.custom() component failed (${error instanceof Error ? error.message : String(error)}); it was closed`,
            );
            queueMicrotask(() => done(undefined as T));
            return name === "render" ? [] : undefined;
          }
        };
      }
      return component;
    };
    const out = factory(tui, theme, keybindings, done);
    return out && typeof (out as Promise<Made>).then === "function"
      ? (out as Promise<Made>).then(guard)
      : guard(out as Made);
  };
  return made;
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
    if (ui?.custom) return ui.custom(guardComponent(factory, found, host.warn), options);
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
