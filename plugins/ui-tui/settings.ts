/**
 * The TUI's settings file, `$COIL_HOME/settings.json`: what `/settings` changes and the next start
 * keeps (today the theme). Unknown keys are kept as they are when the file is written back.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export interface TuiSettings {
  /** A built-in theme (`dark`, `light`), a file in `$COIL_HOME/themes/` by name, or a path. */
  theme?: string;
  [key: string]: unknown;
}

export function settingsFile(home: string): string {
  return join(home, "settings.json");
}

/** The settings, or {} when there is no file; a broken file is reported through `warn` and ignored. */
export function readSettings(home: string, warn?: (message: string) => void): TuiSettings {
  const file = settingsFile(home);
  if (!existsSync(file)) return {};
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as TuiSettings;
    warn?.(`${file} is not a JSON object; it was ignored`);
  } catch (error) {
    warn?.(`${file} was not read: ${(error as Error).message}`);
  }
  return {};
}

export function writeSettings(home: string, change: Partial<TuiSettings>): string {
  const file = settingsFile(home);
  const next = { ...readSettings(home), ...change };
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(next, null, 2)}\n`);
  return file;
}
