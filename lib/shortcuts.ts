/**
 * `ctx.registerShortcut(key, { description, handler })`: keyboard shortcuts plugins register in setup (Pi's
 * name and shape), and `ctx.shortcuts.list()`, which the front end that binds keys (the TUI) reads. The
 * registry belongs to a host's creator, like the command line's flags: `CommandLine` declares both members
 * (lib/command-line.ts), so every host built with its declarations has them. Conflicts are not decided here:
 * the TUI binds the first claim on a key and reports every other with both owners (plugins/ui-tui/keys.ts).
 * The types are in lib/ui.ts (`coil/ui`).
 */
import { CoilError, type Declaration } from "../api/index.js";
import type { RegisteredShortcut, ShortcutOptions } from "./ui.js";

/** A key as pi-tui names it: modifiers and one key joined by `+` (`ctrl+shift+p`, `alt+s`, `f5`). */
const KEY = /^(?:(?:ctrl|alt|shift|meta|super)\+)*[^\s+]+$/;

export class ShortcutRegistry {
  private readonly all: RegisteredShortcut[] = [];

  list(): readonly RegisteredShortcut[] {
    return this.all;
  }

  readonly declarations: Readonly<Record<string, Declaration>> = {
    registerShortcut:
      (plugin) =>
      (key: string, options: ShortcutOptions): void => {
        plugin.guard();
        const normal = typeof key === "string" ? key.trim().toLowerCase() : "";
        if (!KEY.test(normal))
          throw new CoilError(
            "PLUGIN_INVALID",
            `registerShortcut: '${String(key)}' is not a key (write modifiers and a key joined by '+': 'ctrl+shift+p', 'alt+s', 'f5')`,
            { plugin: plugin.id },
          );
        if (!options || typeof options.handler !== "function")
          throw new CoilError("PLUGIN_INVALID", `registerShortcut('${normal}'): the options need a handler function`, {
            plugin: plugin.id,
          });
        this.all.push({
          key: normal,
          description: options.description,
          ...(options.source ? { source: options.source } : {}),
          handler: options.handler,
          owner: plugin.id,
        });
      },
    shortcuts: () => ({ list: () => this.list() }),
  };
}
