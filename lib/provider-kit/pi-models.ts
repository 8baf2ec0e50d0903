/**
 * Pi's `~/.pi/agent/models.json` as an extra source of providers and models, read as the same
 * `ProviderConfig` models.yaml gives, so a Pi user's servers work in coil unchanged. models.yaml wins
 * where both say something about the same provider or model. Pi's file belongs to Pi: what coil
 * cannot use in it is reported as an info-level note, never an error that stops coil.
 *
 * Read: providers with `baseUrl`, `api` (the three APIs coil speaks), `apiKey` (an environment
 * variable's name, `!command`, or the key), `headers` (same forms), `authHeader` (coil's SDKs always send `Authorization: Bearer`), `compat` (the
 * switches coil has, by Pi's names), `models` and `modelOverrides` (id, name, api, reasoning, input,
 * cost, contextWindow, maxTokens, headers, compat, thinkingLevelMap). Everything else is named in a
 * warning.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { API_KINDS, type ApiKind } from "./catalog.js";
import {
  THINKING_FORMATS,
  THINKING_LEVELS,
  type Compat,
  type ModelConfig,
  type ModelsFile,
  type ProviderConfig,
} from "./config.js";
import type { ConfigValue } from "./values.js";
import { piAgentDir } from "../locations.js";

/** Pi's agent folder (`PI_CODING_AGENT_DIR`, else `~/.pi/agent`) + `models.json`. */
export function piModelsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(piAgentDir(env), "models.json");
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** A Pi value: `!command` stays a command, an environment variable's name becomes `${NAME}`, anything else is the value itself. */
function piValue(raw: string): Pick<ConfigValue, "raw" | "literal"> {
  if (raw.startsWith("!")) return { raw };
  if (/^[A-Z_][A-Z0-9_]*$/.test(raw)) return { raw: `\${${raw}}` };
  return { raw, literal: true };
}

/** Pi compat names → coil's switches; what coil has no use for goes to `skipped`. */
function piCompat(raw: Json, skipped: string[], at: string): { compat: Compat; params?: Json } {
  const compat: Compat = {};
  let params: Json | undefined;
  for (const [key, value] of Object.entries(raw)) {
    const bool = typeof value === "boolean";
    if (key === "supportsDeveloperRole" && bool) compat.systemRole = value ? "developer" : "system";
    else if (key === "supportsReasoningEffort" && bool) compat.reasoningEffort = value;
    else if (key === "supportsUsageInStreaming" && bool) compat.streamUsage = value;
    else if (
      (key === "supportsStrictMode" ||
        key === "requiresToolResultName" ||
        key === "requiresAssistantAfterToolResult" ||
        key === "requiresMistralToolIds") &&
      bool
    )
      compat[key] = value;
    else if (key === "maxTokensField" && (value === "max_tokens" || value === "max_completion_tokens"))
      compat.maxTokensField = value;
    else if (key === "thinkingFormat" && (THINKING_FORMATS as readonly unknown[]).includes(value))
      compat.thinkingFormat = value as Compat["thinkingFormat"];
    else if (key === "openRouterRouting" && isObject(value)) params = { provider: value };
    else
      skipped.push(
        `${at}.compat.${key}${key === "thinkingFormat" ? ` (${JSON.stringify(value)}: coil knows ${THINKING_FORMATS.join(", ")})` : ""}`,
      );
  }
  return { compat, params };
}

function piHeaders(
  raw: unknown,
  file: string,
  provider: string,
  at: string,
  skipped: string[],
): ConfigValue[] | undefined {
  if (raw === undefined) return undefined;
  if (!isObject(raw)) {
    skipped.push(`${at}.headers (not an object)`);
    return undefined;
  }
  const out: ConfigValue[] = [];
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value === "string")
      out.push({
        ...piValue(value),
        file,
        provider,
        key: `${at ? `${at}.` : ""}headers.${name}`.replace(/^\./, ""),
        header: name,
      });
    else skipped.push(`${at}.headers.${name} (not a string)`);
  }
  return out;
}

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined);
const posint = (v: unknown) => (Number.isInteger(v) && (v as number) > 0 ? (v as number) : undefined);

function piModel(
  raw: unknown,
  file: string,
  provider: string,
  at: string,
  skipped: string[],
  id?: string,
): ModelConfig | undefined {
  if (!isObject(raw)) {
    skipped.push(`${at} (not an object)`);
    return undefined;
  }
  const modelId = id ?? raw.id;
  if (typeof modelId !== "string" || !modelId) {
    skipped.push(`${at} (no id)`);
    return undefined;
  }
  const m: ModelConfig = { id: modelId, source: "pi models.json" };
  for (const [key, value] of Object.entries(raw)) {
    if (key === "id") continue;
    else if (key === "name" && typeof value === "string") m.name = value;
    else if (key === "api" && API_KINDS.includes(value as ApiKind)) m.api = value as ApiKind;
    else if (key === "reasoning" && typeof value === "boolean") m.reasoning = value;
    else if (key === "input" && Array.isArray(value) && value.every((v) => v === "text" || v === "image"))
      m.input = value as ("text" | "image")[];
    else if (key === "contextWindow" && posint(value)) m.contextWindow = posint(value);
    else if (key === "maxTokens" && posint(value)) m.maxOutput = posint(value);
    else if (key === "cost" && isObject(value)) {
      const cost: Record<string, number> = {};
      for (const k of ["input", "output", "cacheRead", "cacheWrite"])
        if (num(value[k]) !== undefined) cost[k] = num(value[k])!;
      m.cost = cost;
    } else if (key === "headers") m.headers = piHeaders(value, file, provider, at, skipped);
    else if (key === "compat" && isObject(value)) {
      const { compat, params } = piCompat(value, skipped, at);
      m.compat = { ...m.compat, ...compat };
      if (params) m.params = params;
    } else if (key === "thinkingLevelMap" && isObject(value)) {
      const map: Record<string, string> = {};
      for (const [level, effort] of Object.entries(value)) {
        if ((THINKING_LEVELS as readonly string[]).includes(level) && typeof effort === "string") map[level] = effort;
        else if (effort !== null) skipped.push(`${at}.thinkingLevelMap.${level}`);
      }
      m.compat = { ...m.compat, reasoningEffortMap: map };
    } else skipped.push(`${at}.${key}`);
  }
  return m;
}

/** Why a provider or model on `api` is not read, with the way to reach the same models when coil has one. */
function unspoken(api: unknown): string {
  const how: Record<string, string> = {
    "google-generative-ai":
      "; coil's built-in gemini provider reaches the Gemini models (GEMINI_API_KEY; docs/providers.md)",
    "google-vertex": "; coil's built-in vertex provider reaches Claude on Vertex AI (docs/providers.md)",
    "bedrock-converse-stream": "; coil's built-in bedrock provider reaches Claude on Bedrock (docs/providers.md)",
  };
  return `coil does not speak api '${String(api)}' (it speaks ${API_KINDS.join(", ")})${how[String(api)] ?? ""}`;
}

/**
 * Read Pi's models.json at `file`. Undefined when it does not exist; a file coil cannot read gives
 * no providers and a warning (it is Pi's file: coil never refuses to start over it).
 */
export function readPiModels(file: string): ModelsFile | undefined {
  if (!existsSync(file)) return undefined;
  const warnings: string[] = [];
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    return {
      file,
      providers: [],
      warnings: [`${file}: not read (${(error as Error).message}); coil reads Pi's models.json when it is valid JSON`],
    };
  }
  if (!isObject(data) || !isObject(data.providers))
    return { file, providers: [], warnings: [`${file}: not read: it has no "providers" object`] };
  const providers: ProviderConfig[] = [];
  const skippedProviders: Record<string, string> = {};
  for (const [id, raw] of Object.entries(data.providers)) {
    const skipped: string[] = [];
    if (!/^[a-z0-9][a-z0-9._-]*$/i.test(id) || !isObject(raw)) {
      warnings.push(
        `${file}: provider '${id}' not read (${isObject(raw) ? "not a valid provider id" : "not an object"})`,
      );
      continue;
    }
    if (raw.api !== undefined && !API_KINDS.includes(raw.api as ApiKind)) {
      const note = `${file}: provider '${id}' not read: ${unspoken(raw.api)}`;
      warnings.push(note);
      skippedProviders[id] = note;
      continue;
    }
    const p: ProviderConfig = { id, models: [], source: { file, kind: "pi models.json" } };
    for (const [key, value] of Object.entries(raw)) {
      if (key === "api") p.api = value as ApiKind;
      else if (key === "baseUrl" && typeof value === "string" && /^https?:\/\/\S+$/.test(value)) p.baseUrl = value;
      else if (key === "apiKey" && typeof value === "string" && value)
        p.apiKey = { ...piValue(value), file, provider: id, key: "apiKey" };
      else if (key === "authHeader" && typeof value === "boolean")
        continue; // both SDKs send the key as `Authorization: Bearer` already
      else if (key === "headers") p.headers = piHeaders(value, file, id, "", skipped);
      else if (key === "compat" && isObject(value)) {
        const { compat, params } = piCompat(value, skipped, "");
        p.compat = compat;
        if (params) p.params = params;
      } else if (key === "models" && Array.isArray(value)) {
        value.forEach((m, i) => {
          const at = `models[${i}]`;
          // A model on an API coil does not speak would be sent to this provider's endpoint in the wrong format.
          if (isObject(m) && m.api !== undefined && !API_KINDS.includes(m.api as ApiKind)) {
            warnings.push(`${file}: provider '${id}': ${at} (${String(m.id)}) not read: ${unspoken(m.api)}`);
            return;
          }
          const model = piModel(m, file, id, at, skipped);
          if (model) p.models.push(model);
        });
      } else if (key === "modelOverrides" && isObject(value)) {
        for (const [modelId, m] of Object.entries(value)) {
          const model = piModel(m, file, id, `modelOverrides.${modelId}`, skipped, modelId);
          if (model) p.models.push(model);
        }
      } else skipped.push(key);
    }
    if (skipped.length)
      warnings.push(`${file}: provider '${id}': not read: ${skipped.map((s) => s.replace(/^\./, "")).join(", ")}`);
    providers.push(p);
  }
  return { file, providers, warnings, skippedProviders };
}
