/**
 * Where a provider's API key comes from, in order, and the hint when there is none: the provider plugins
 * look keys up here at run time. The `--api-key` flag itself and the start provider it applies to are the
 * models plugin's (plugins/models/api.ts); this kit reads the flag's value and registers nothing.
 */
import type { PluginContext } from "../../api/index.js";
import { coilHome, readAuth, storedKey, type KeyLookup } from "./config.js";
import { isCommand, resolveValue, variablesOf, type ConfigValue } from "./values.js";

/**
 * The key for `provider`: `--api-key` (for `selected`, the provider chosen at start: the models plugin's
 * `provider-cli` service says which; undefined lets the flag apply to any), the `apiKey` of models.yaml
 * or Pi's models.json (`${NAME}` or `!command`), the variable, then auth.json. A command runs only when
 * `run` is set (a request is about to be made): otherwise the lookup says the key will come from it.
 */
export function lookupKey(
  ctx: PluginContext<unknown>,
  selected: string | undefined,
  provider: string,
  envName: string | undefined,
  keyless: boolean,
  warn?: (m: string) => void,
  configured?: { apiKey?: ConfigValue; run?: boolean },
): KeyLookup {
  const flag = ctx.flags.get("api-key");
  if (typeof flag === "string" && flag && (!selected || selected === provider)) return { key: flag, from: "--api-key" };
  const v = configured?.apiKey;
  if (v) {
    const from = `apiKey in ${v.file}`;
    if (isCommand(v)) return configured.run ? { key: resolveValue(v), from } : { from, deferred: true };
    const key = resolveValue(v, "undefined");
    if (key) return { key, from: v.literal ? from : `${variablesOf(v).join(", ")} (${from})` };
  }
  const fromEnv = envName ? process.env[envName] : undefined;
  if (fromEnv) return { key: fromEnv, from: envName };
  try {
    const stored = storedKey(readAuth(coilHome()), provider);
    if (stored) return { key: stored, from: "auth.json" };
  } catch (error) {
    warn?.((error as Error).message);
  }
  return keyless ? { from: "none" } : {};
}

/** Whether a lookup found a key, or one a `!command` will give when a request needs it (looked up once). */
export function hasKey(k: KeyLookup): boolean {
  return k.key !== undefined || k.deferred === true;
}

/** "set ANTHROPIC_API_KEY (or --api-key, or `coil auth set anthropic`)". */
export function keyHint(provider: string, envName: string | undefined): string {
  return `${envName ? `set ${envName}` : "configure apiKeyEnv in $COIL_HOME/models.yaml"} (or pass --api-key, or store one with \`coil auth set ${provider}\`)`;
}
