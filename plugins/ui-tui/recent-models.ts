/**
 * The models the user switched to lately, newest first, as `provider/id`, kept in
 * `$COIL_HOME/recent-models.json`: a switch in the TUI (`/model`, its picker, Ctrl+P) adds to it, and the TUI's model
 * picker lists them first and Ctrl+P cycles them when the preset names no favourites. A missing or
 * unreadable file is an empty list; failing to write it never fails a switch.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { coilHome } from "../../lib/paths.js";

const FILE = "recent-models.json";
/** How many models the list keeps. */
export const RECENT_MODELS_KEPT = 10;

export function recentModels(home: string = coilHome()): string[] {
  try {
    const data = JSON.parse(readFileSync(join(home, FILE), "utf8")) as unknown;
    return Array.isArray(data) ? data.filter((m): m is string => typeof m === "string") : [];
  } catch {
    return [];
  }
}

/** Put `model` (`provider/id`) first; returns the new list. */
export function rememberModel(model: string, home: string = coilHome()): string[] {
  const list = [model, ...recentModels(home).filter((m) => m !== model)].slice(0, RECENT_MODELS_KEPT);
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    writeFileSync(join(home, FILE), JSON.stringify(list) + "\n", { mode: 0o600 });
  } catch {
    // a read-only home: the list is only a convenience
  }
  return list;
}
