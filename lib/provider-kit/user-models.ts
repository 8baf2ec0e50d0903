/**
 * What both provider plugins read at setup: `$COIL_HOME/models.yaml` (or the `modelsFile` option)
 * and Pi's `~/.pi/agent/models.json` (or the `piModelsFile` option; `none` leaves it out, and Pi's
 * settings.json default model with it), merged,
 * with their warnings logged once (what coil skips in Pi's file as `info`: it is Pi's, nothing is wrong with it).
 */
import { join, resolve } from "node:path";
import { CoilError } from "../../api/index.js";
import { coilHome, loadModelsConfig, warnOnce, type ModelsConfig, type ProviderConfig } from "./config.js";
import { piModelsPath, readPiModels } from "./pi-models.js";
import { noteSkipped } from "./skipped.js";
import { readPiSettings } from "../pi-settings.js";

export function userModels(
  baseDir: string,
  o: { modelsFile?: string; piModelsFile?: string },
  log: { warn(message: string): void; info(message: string): void },
  where?: { cwd: string; trusted: boolean },
): ModelsConfig & { file: string } {
  const file = o.modelsFile ? resolve(baseDir, o.modelsFile) : join(coilHome(), "models.yaml");
  const pi =
    o.piModelsFile === "none" || o.piModelsFile === ""
      ? undefined
      : o.piModelsFile
        ? resolve(baseDir, o.piModelsFile)
        : piModelsPath();
  const config = loadModelsConfig(file, pi, readPiModels);
  // Pi's settings.json `defaultProvider` + `defaultModel`, when models.yaml has no `default:` (and Pi's files are read).
  if (!config.default && pi && where) {
    const piDefault = readPiSettings({ cwd: where.cwd, trusted: where.trusted }).defaultModel;
    if (piDefault) {
      config.default = piDefault.spec;
      config.defaultFrom = `Pi's settings.json (${piDefault.file})`;
    }
  }
  warnOnce(config.warnings, (m) => log.warn(m));
  warnOnce(config.notes, (m) => log.info(m));
  // Kept for `coil models`, `coil doctor` and a `--model` that names a provider that was not read.
  const whole = new Map(Object.entries(config.skippedProviders).map(([id, note]) => [note, id]));
  for (const note of config.notes) noteSkipped(note, whole.get(note));
  return { ...config, file };
}

/**
 * A provider entry coil cannot use: from models.yaml that is an error naming the file and line; from
 * Pi's models.json (Pi's file, written for Pi's built-in providers) it is skipped with an info note.
 * Returns normally only when the entry is to be skipped.
 */
export function refuseEntry(p: ProviderConfig, problem: string, info: (message: string) => void): void {
  if (p.source.kind !== "pi models.json")
    throw new CoilError("CONFIG_INVALID", `models.yaml: provider '${p.id}' ${problem}`, {
      file: p.source.file,
      line: p.source.line,
    });
  const note = `${p.source.file}: provider '${p.id}' not read: it ${problem}`;
  noteSkipped(note, p.id);
  warnOnce([note], info);
}
