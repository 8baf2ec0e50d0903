/**
 * What both provider plugins read at setup: `$COIL_HOME/models.yaml` (or the `modelsFile` option)
 * and Pi's `~/.pi/agent/models.json` (or the `piModelsFile` option; `none` leaves it out), merged,
 * with their warnings logged once (what coil skips in Pi's file as `info`: it is Pi's, nothing is wrong with it).
 */
import { join, resolve } from "node:path";
import { coilHome, loadModelsConfig, warnOnce, type ModelsConfig } from "./config.js";
import { piModelsPath, readPiModels } from "./pi-models.js";

export function userModels(baseDir: string, o: { modelsFile?: string; piModelsFile?: string }, log: { warn(message: string): void; info(message: string): void }): ModelsConfig & { file: string } {
  const file = o.modelsFile ? resolve(baseDir, o.modelsFile) : join(coilHome(), "models.yaml");
  const pi = o.piModelsFile === "none" || o.piModelsFile === "" ? undefined : o.piModelsFile ? resolve(baseDir, o.piModelsFile) : piModelsPath();
  const config = loadModelsConfig(file, pi, readPiModels);
  warnOnce(config.warnings, (m) => log.warn(m));
  warnOnce(config.notes, (m) => log.info(m));
  return { ...config, file };
}
