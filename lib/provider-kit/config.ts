/**
 * User configuration shared by the provider plugins: `$COIL_HOME/models.yaml` (extra providers and
 * models, with file/line/field errors), `$COIL_HOME/auth.json` (stored keys, mode 0600), key lookup
 * and redaction.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { isMap, isScalar, LineCounter, parseDocument, type Document } from "yaml";
import { CoilError } from "../../api/index.js";
import {
  API_KINDS,
  type ApiKind,
  type CatalogModel,
  type PriceTier,
  type Prices,
  type ThinkingStyle,
} from "./catalog.js";
import type { ConfigValue } from "./values.js";

export { coilHome } from "../paths.js";

// ───────────────────────────── models.yaml ─────────────────────────────

/** The kernel's thinking levels, as keys of `reasoningEffortMap`. */
export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"] as const;
export type ThinkingLevel = (typeof THINKING_LEVELS)[number];

/** How a Chat Completions server takes the thinking setting. */
export const THINKING_FORMATS = ["openai", "openrouter", "qwen", "zai"] as const;
export type ThinkingFormat = (typeof THINKING_FORMATS)[number];

/** Per-provider (or per-model) switches for servers that differ from the reference API. */
export interface Compat {
  /** Chat Completions: which field carries the output limit. */
  maxTokensField?: "max_tokens" | "max_completion_tokens";
  /** Chat Completions: role of the system prompt. */
  systemRole?: "system" | "developer";
  /** Chat Completions: ask for usage in the stream (`stream_options.include_usage`). */
  streamUsage?: boolean;
  /** Chat Completions: send the thinking setting (`reasoning_effort` or the `thinkingFormat` field) for reasoning models. */
  reasoningEffort?: boolean;
  /**
   * Chat Completions: how thinking is asked for. `openai`: `reasoning_effort`; `openrouter`:
   * `reasoning: { effort }`; `qwen`: `enable_thinking: true|false`; `zai`: `thinking: { type: enabled|disabled }`.
   */
  thinkingFormat?: ThinkingFormat;
  /** The effort value sent for each thinking level (a level left out: the nearest effort the model accepts). */
  reasoningEffortMap?: Partial<Record<ThinkingLevel, string>>;
  /** Longest tool-call id the server accepts; longer ids are shortened deterministically. */
  toolCallIdMaxLength?: number;
  /** Chat Completions: tool-call ids are exactly 9 letters and digits (Mistral rejects others, e.g. another provider's after a switch). */
  requiresMistralToolIds?: boolean;
  /** Chat Completions: tool results carry the tool's `name` (Mistral and some gateways require it). */
  requiresToolResultName?: boolean;
  /** Chat Completions: a user message may not follow tool results directly; an assistant message is put between. */
  requiresAssistantAfterToolResult?: boolean;
  /** The server accepts `strict` on function tools (coil sends `strict: false`); off: the field is left out. */
  supportsStrictMode?: boolean;
  /** Anthropic Messages: send `cache_control` breakpoints. */
  cacheControl?: boolean;
  /** Responses API: the server keeps no state: send `store: false` and replay reasoning from its encrypted copy. */
  stateless?: boolean;
  /** @deprecated the old name of `stateless` (same meaning: `true` sends `store: false`); read with a warning. */
  store?: boolean;
}

/** Every switch set, as the wire code reads it (`reasoningEffortMap` may stay empty). */
export type ResolvedCompat = Required<Omit<Compat, "store" | "reasoningEffortMap">> &
  Pick<Compat, "reasoningEffortMap">;

/** `base` with `over` on top; the deprecated `store` becomes `stateless`. */
export function mergeCompat<T extends Compat>(base: T, ...over: (Compat | undefined)[]): T {
  let out: Compat = { ...base };
  for (const c of over) {
    if (!c) continue;
    const { store, ...rest } = c;
    out = { ...out, ...(store !== undefined && rest.stateless === undefined ? { stateless: store } : {}), ...rest };
    if (c.reasoningEffortMap) out.reasoningEffortMap = { ...base.reasoningEffortMap, ...c.reasoningEffortMap };
  }
  delete out.store;
  return out as T;
}

export interface ProviderConfig {
  id: string;
  api?: ApiKind;
  baseUrl?: string;
  /** Name of the environment variable holding the key. */
  apiKeyEnv?: string;
  /** The key as `${NAME}` or `!command` (never the key itself in models.yaml; Pi's models.json may hold one). */
  apiKey?: ConfigValue;
  /** `none`: the server takes no key (local servers). */
  auth?: "key" | "none";
  /** Extra headers on every request; values may hold `${NAME}` or be a `!command`. */
  headers?: ConfigValue[];
  compat?: Compat;
  /** Extra fields merged into every request body (deeply; e.g. OpenRouter's `provider.order`, `top_k`). */
  params?: Record<string, unknown>;
  /** Limits for ids this provider does not list. */
  defaults?: { contextWindow?: number; maxOutput?: number };
  models: ModelConfig[];
  /** Where it was defined, for error messages and `coil models`. */
  source: { file: string; line?: number; kind?: ConfigSource };
}

/** Which file a provider or model came from. */
export type ConfigSource = "models.yaml" | "pi models.json";

export type ModelConfig = Partial<Omit<CatalogModel, "provider" | "cost">> & { id: string; cost?: Partial<Prices> };

export interface ModelsFile {
  file: string;
  providers: ProviderConfig[];
  /** `default: provider/id`: the model a run starts with when neither `--model` nor the preset names one. */
  default?: string;
  /** Things read but not as written (deprecated keys); the provider plugins log them once. */
  warnings: string[];
  /** Providers not read at all, with the note saying why (Pi's models.json). */
  skippedProviders?: Record<string, string>;
}

type Kind = "string" | "boolean" | "posint" | "number" | "stringMap" | "strings" | "object";
interface Field {
  kind: Kind | readonly string[];
}
const PRICE_FIELDS = {
  input: { kind: "number" },
  output: { kind: "number" },
  cacheRead: { kind: "number" },
  cacheWrite: { kind: "number" },
} as const;
const MODEL_FIELDS: Record<string, Field | "cost" | "tiers" | "headers" | "compat"> = {
  id: { kind: "string" },
  name: { kind: "string" },
  api: { kind: API_KINDS },
  contextWindow: { kind: "posint" },
  maxOutput: { kind: "posint" },
  reasoning: { kind: "boolean" },
  input: { kind: "strings" },
  cost: "cost",
  tiers: "tiers",
  thinking: { kind: ["budget", "adaptive", "always", "effort"] satisfies ThinkingStyle[] },
  efforts: { kind: "strings" },
  fixedSampling: { kind: "boolean" },
  headers: "headers",
  compat: "compat",
  params: { kind: "object" },
};
const COMPAT_FIELDS: Record<keyof Compat, Field> = {
  maxTokensField: { kind: ["max_tokens", "max_completion_tokens"] },
  systemRole: { kind: ["system", "developer"] },
  streamUsage: { kind: "boolean" },
  reasoningEffort: { kind: "boolean" },
  thinkingFormat: { kind: THINKING_FORMATS },
  reasoningEffortMap: { kind: "stringMap" },
  toolCallIdMaxLength: { kind: "posint" },
  requiresToolResultName: { kind: "boolean" },
  requiresMistralToolIds: { kind: "boolean" },
  requiresAssistantAfterToolResult: { kind: "boolean" },
  supportsStrictMode: { kind: "boolean" },
  cacheControl: { kind: "boolean" },
  stateless: { kind: "boolean" },
  store: { kind: "boolean" },
};
const PROVIDER_FIELDS = [
  "api",
  "baseUrl",
  "apiKeyEnv",
  "apiKey",
  "auth",
  "headers",
  "compat",
  "params",
  "defaults",
  "models",
];

class Checker {
  private readonly lc = new LineCounter();
  readonly doc: Document;

  constructor(
    readonly file: string,
    text: string,
  ) {
    this.doc = parseDocument(text, { lineCounter: this.lc, prettyErrors: false });
    const bad = this.doc.errors[0];
    if (bad) {
      const p = this.lc.linePos(bad.pos[0]);
      throw new CoilError("CONFIG_INVALID", `malformed YAML in models.yaml: ${bad.message.split("\n")[0]}`, {
        file,
        line: p.line,
        column: p.col,
      });
    }
  }

  /** Line/column of the node at `path`, or of the key `key` inside it. */
  where(path: (string | number)[], key?: string): { line?: number; column?: number } {
    let node: unknown = this.doc.getIn(path, true);
    if (key !== undefined && isMap(node))
      node = node.items.find((p) => isScalar(p.key) && p.key.value === key)?.key ?? node;
    const range = (node as { range?: [number, number] } | undefined)?.range;
    if (!range) return {};
    const { line, col } = this.lc.linePos(range[0]);
    return { line, column: col };
  }

  fail(path: (string | number)[], message: string, key?: string): never {
    const dotted = path
      .map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`))
      .join("")
      .slice(1);
    const field = key ? (dotted ? `${dotted}.${key}` : key) : dotted;
    throw new CoilError("CONFIG_INVALID", `models.yaml: ${field ? `'${field}' ` : ""}${message}`, {
      file: this.file,
      ...this.where(path, key),
      hint: 'see docs/providers.md ("models.yaml") for the format',
    });
  }

  object(value: unknown, path: (string | number)[], known?: readonly string[]): Record<string, unknown> {
    if (!value || typeof value !== "object" || Array.isArray(value))
      this.fail(path, `must be a mapping, got ${show(value)}`);
    if (known) {
      for (const key of Object.keys(value)) {
        if (!known.includes(key)) this.fail(path, `is not a known field (known: ${known.join(", ")})`, key);
      }
    }
    return value as Record<string, unknown>;
  }

  field(value: unknown, path: (string | number)[], field: Field): unknown {
    const k = field.kind;
    const bad = (what: string) => this.fail(path, `must be ${what}, got ${show(value)}`);
    if (Array.isArray(k)) return k.includes(value as string) ? value : bad(`one of ${k.join(", ")}`);
    switch (k) {
      case "string":
        return typeof value === "string" && value.length > 0 ? value : bad("a non-empty string");
      case "boolean":
        return typeof value === "boolean" ? value : bad("true or false");
      case "posint":
        return Number.isInteger(value) && (value as number) > 0 ? value : bad("a positive integer");
      case "number":
        return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : bad("a number ≥ 0");
      case "strings":
        return Array.isArray(value) && value.every((v) => typeof v === "string") ? value : bad("a list of strings");
      case "object":
        return this.object(value, path);
      case "stringMap": {
        const map = this.object(value, path);
        for (const [key, v] of Object.entries(map))
          if (typeof v !== "string") this.fail([...path, key], `must be a string, got ${show(v)}`);
        return map;
      }
    }
    return value;
  }
}

function show(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  return JSON.stringify(value)?.slice(0, 60) ?? String(value);
}

/** `compat` at `path`: known switches with the right types; `store` noted as deprecated. */
function checkCompat(c: Checker, value: unknown, path: (string | number)[], warnings: string[]): Compat {
  const compat = c.object(value, path, Object.keys(COMPAT_FIELDS));
  for (const [k, v] of Object.entries(compat)) c.field(v, [...path, k], COMPAT_FIELDS[k as keyof Compat]);
  if (compat.reasoningEffortMap) {
    for (const level of Object.keys(compat.reasoningEffortMap)) {
      if (!(THINKING_LEVELS as readonly string[]).includes(level))
        c.fail(
          [...path, "reasoningEffortMap"],
          `is not a thinking level (levels: ${THINKING_LEVELS.join(", ")})`,
          level,
        );
    }
  }
  if (compat.store !== undefined) {
    const at = c.where(path, "store").line;
    const dotted = path
      .map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`))
      .join("")
      .slice(1);
    warnings.push(
      `models.yaml: '${dotted}.store' is deprecated (it read backwards: true meant "send store: false"); write 'stateless: ${compat.store}' instead, which means the same (${c.file}${at ? `:${at}` : ""})`,
    );
  }
  return compat as Compat;
}

/** `headers` at `path`: a map of strings, each a template (`${NAME}`, `!command`). */
function checkHeaders(c: Checker, value: unknown, path: (string | number)[], provider: string): ConfigValue[] {
  const map = c.field(value, path, { kind: "stringMap" }) as Record<string, string>;
  const dotted = path
    .slice(2)
    .map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`))
    .join("")
    .slice(1);
  return Object.entries(map).map(([name, raw]) => ({
    raw,
    file: c.file,
    line: c.where([...path, name]).line,
    provider,
    key: `${dotted}.${name}`,
    header: name,
  }));
}

function checkModel(c: Checker, raw: unknown, path: (string | number)[], warnings: string[]): ModelConfig {
  const m = c.object(raw, path, Object.keys(MODEL_FIELDS));
  if (m.id === undefined) c.fail(path, "needs an 'id'");
  const out: Record<string, unknown> = { source: "models.yaml" };
  for (const [key, value] of Object.entries(m)) {
    const spec = MODEL_FIELDS[key]!;
    if (spec === "headers") out.headers = checkHeaders(c, value, [...path, key], String(path[1]));
    else if (spec === "compat") out.compat = checkCompat(c, value, [...path, key], warnings);
    else if (spec === "cost") {
      const cost = c.object(value, [...path, key], Object.keys(PRICE_FIELDS));
      for (const [k, v] of Object.entries(cost)) c.field(v, [...path, key, k], PRICE_FIELDS[k as keyof Prices]);
      out.cost = cost;
    } else if (spec === "tiers") {
      if (!Array.isArray(value))
        c.fail([...path, key], `must be a list of { above, input, output, cacheRead, cacheWrite }, got ${show(value)}`);
      out.tiers = value.map((t, i) => {
        const tier = c.object(t, [...path, key, i], ["above", ...Object.keys(PRICE_FIELDS)]);
        c.field(tier.above, [...path, key, i, "above"], { kind: "posint" });
        for (const k of Object.keys(PRICE_FIELDS))
          c.field(tier[k] ?? 0, [...path, key, i, k], PRICE_FIELDS[k as keyof Prices]);
        return { cacheRead: 0, cacheWrite: 0, ...tier } as unknown as PriceTier;
      });
      (out.tiers as PriceTier[]).sort((a, b) => a.above - b.above);
    } else {
      out[key] = c.field(value, [...path, key], spec);
      if (key === "input" && !(value as string[]).every((v) => v === "text" || v === "image"))
        c.fail([...path, key], `may only list text and image, got ${show(value)}`);
    }
  }
  return out as ModelConfig;
}

/** Parse and check `text` (the contents of `file`). Throws CONFIG_INVALID naming the file, line and field. */
export function parseModelsFile(file: string, text: string): ModelsFile {
  const c: Checker = new Checker(file, text);
  const warnings: string[] = [];
  const root = c.doc.toJS() as unknown;
  if (root === null || root === undefined) return { file, providers: [], warnings };
  const top = c.object(root, [], ["default", "providers"]);
  let fallback: string | undefined;
  if (top.default !== undefined) {
    fallback = c.field(top.default, ["default"], { kind: "string" }) as string;
    if (!/^[^/\s]+\/\S+$/.test(fallback))
      c.fail(
        ["default"],
        `must name a provider and a model: provider/id (e.g. anthropic/claude-sonnet-5-5), got ${show(top.default)}`,
      );
  }
  if (top.providers === undefined || top.providers === null)
    return { file, providers: [], default: fallback, warnings };
  const providers = c.object(top.providers, ["providers"]);
  const out: ProviderConfig[] = [];
  for (const [id, raw] of Object.entries(providers)) {
    const path = ["providers", id];
    if (!/^[a-z0-9][a-z0-9._-]*$/i.test(id))
      c.fail(["providers"], "is not a valid provider id (letters, digits, '.', '_', '-')", id);
    const p = c.object(raw ?? {}, path, PROVIDER_FIELDS);
    const config: ProviderConfig = {
      id,
      models: [],
      source: { file, line: c.where(["providers"], id).line, kind: "models.yaml" },
    };
    if (p.api !== undefined) config.api = c.field(p.api, [...path, "api"], { kind: API_KINDS }) as ApiKind;
    if (p.baseUrl !== undefined) {
      config.baseUrl = c.field(p.baseUrl, [...path, "baseUrl"], { kind: "string" }) as string;
      if (!/^https?:\/\/[^\s]+$/.test(config.baseUrl))
        c.fail([...path, "baseUrl"], `must be an http(s) URL, got ${show(p.baseUrl)}`);
    }
    if (p.apiKeyEnv !== undefined) {
      config.apiKeyEnv = c.field(p.apiKeyEnv, [...path, "apiKeyEnv"], { kind: "string" }) as string;
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(config.apiKeyEnv))
        c.fail(
          [...path, "apiKeyEnv"],
          `must be the NAME of an environment variable (the key itself never goes in this file), got ${show(p.apiKeyEnv)}`,
        );
    }
    if (p.apiKey !== undefined) {
      const raw = c.field(p.apiKey, [...path, "apiKey"], { kind: "string" }) as string;
      if (!raw.startsWith("!") && !/\$\{[A-Za-z_][A-Za-z0-9_]*\}/.test(raw)) {
        c.fail([...path, "apiKey"], "must be ${VARIABLE} or !command (the key itself never goes in this file)");
      }
      config.apiKey = { raw, file, line: c.where([...path, "apiKey"]).line, provider: id, key: "apiKey" };
    }
    if (p.auth !== undefined)
      config.auth = c.field(p.auth, [...path, "auth"], { kind: ["key", "none"] }) as "key" | "none";
    if (p.headers !== undefined) config.headers = checkHeaders(c, p.headers, [...path, "headers"], id);
    if (p.compat !== undefined) config.compat = checkCompat(c, p.compat, [...path, "compat"], warnings);
    if (p.params !== undefined)
      config.params = c.field(p.params, [...path, "params"], { kind: "object" }) as Record<string, unknown>;
    if (p.defaults !== undefined) {
      const d = c.object(p.defaults, [...path, "defaults"], ["contextWindow", "maxOutput"]);
      for (const [k, v] of Object.entries(d)) c.field(v, [...path, "defaults", k], { kind: "posint" });
      config.defaults = d as ProviderConfig["defaults"];
    }
    if (p.models !== undefined) {
      if (!Array.isArray(p.models)) c.fail([...path, "models"], `must be a list of models, got ${show(p.models)}`);
      const seen = new Set<string>();
      config.models = p.models.map((m, i) => {
        const model = checkModel(c, m, [...path, "models", i], warnings);
        if (seen.has(model.id)) c.fail([...path, "models", i, "id"], `repeats model id '${model.id}'`);
        seen.add(model.id);
        return model;
      });
    }
    out.push(config);
  }
  return { file, providers: out, default: fallback, warnings };
}

/** Read `$COIL_HOME/models.yaml` (or `file`); undefined when it does not exist. */
export function readModelsFile(file: string): ModelsFile | undefined {
  if (!existsSync(file)) return undefined;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (cause) {
    throw new CoilError("CONFIG_INVALID", `cannot read ${file}`, { file, cause });
  }
  return parseModelsFile(file, text);
}

/** `over` merged into `base`: objects deeply, anything else (arrays included) replaced. Neither is changed. */
export function deepMerge<T extends Record<string, unknown>>(base: T, over: Record<string, unknown> | undefined): T {
  if (!over) return base;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key];
    const plain = (v: unknown): v is Record<string, unknown> =>
      typeof v === "object" && v !== null && !Array.isArray(v);
    out[key] = plain(prev) && plain(value) ? deepMerge(prev, value) : value;
  }
  return out as T;
}

/** `over`'s fields on top of `base`'s (models.yaml over Pi's models.json): compat and params merged, headers by name, models by id. */
function mergeProvider(base: ProviderConfig, over: ProviderConfig): ProviderConfig {
  const headers = new Map<string, ConfigValue>();
  for (const h of [...(base.headers ?? []), ...(over.headers ?? [])]) headers.set((h.header ?? h.key).toLowerCase(), h);
  const models = [...base.models];
  for (const m of over.models) {
    const at = models.findIndex((x) => x.id === m.id);
    if (at < 0) models.push(m);
    else {
      const prev = models[at]!;
      models[at] = {
        ...prev,
        ...m,
        compat: prev.compat || m.compat ? { ...prev.compat, ...m.compat } : undefined,
        source: `${m.source} over ${prev.source}`,
      };
    }
  }
  return {
    ...base,
    ...over,
    headers: headers.size ? [...headers.values()] : undefined,
    compat: base.compat || over.compat ? { ...base.compat, ...over.compat } : undefined,
    params: base.params || over.params ? deepMerge(base.params ?? {}, over.params) : undefined,
    models,
    source: over.source,
  };
}

/** What coil knows from the user's files: models.yaml, and Pi's models.json under it. */
export interface ModelsConfig {
  providers: ProviderConfig[];
  default?: string;
  /** Where `default` came from, when not models.yaml (Pi's settings.json). */
  defaultFrom?: string;
  /** About models.yaml (deprecated keys): the user should act on them. */
  warnings: string[];
  /** What coil skipped in Pi's models.json: Pi's own fields, nothing to fix for coil's sake. */
  notes: string[];
  /** Providers of Pi's models.json not read at all, with the note saying why. */
  skippedProviders: Record<string, string>;
  /** The files that exist and were read. */
  files: string[];
}

/**
 * models.yaml (`yamlFile`; errors in it stop coil) and, when `piFile` is given and exists, Pi's
 * models.json: a provider both name is Pi's entry with models.yaml's fields on top.
 */
export function loadModelsConfig(
  yamlFile: string,
  piFile: string | undefined,
  readPi: (file: string) => ModelsFile | undefined,
): ModelsConfig {
  const yaml = readModelsFile(yamlFile);
  const pi = piFile ? readPi(piFile) : undefined;
  const byId = new Map<string, ProviderConfig>();
  for (const p of pi?.providers ?? []) byId.set(p.id, p);
  for (const p of yaml?.providers ?? []) {
    const prev = byId.get(p.id);
    byId.set(p.id, prev ? mergeProvider(prev, p) : p);
  }
  return {
    providers: [...byId.values()],
    default: yaml?.default,
    warnings: yaml?.warnings ?? [],
    notes: pi?.warnings ?? [],
    skippedProviders: pi?.skippedProviders ?? {},
    files: [yaml?.file, pi?.file].filter((f): f is string => Boolean(f)),
  };
}

const warned = new Set<string>();
/** Log each configuration warning once per process (both provider plugins read the same files). */
export function warnOnce(warnings: readonly string[], log: (message: string) => void): void {
  for (const w of warnings) {
    if (warned.has(w)) continue;
    warned.add(w);
    log(w);
  }
}

/** A catalog entry from a models.yaml model, on top of what the built-in catalog says (if anything). */
export function mergeModel(
  provider: string,
  api: ApiKind,
  m: ModelConfig,
  base: CatalogModel | undefined,
  limits: { contextWindow: number; maxOutput: number },
): CatalogModel {
  const cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...base?.cost, ...m.cost };
  return {
    ...(base ?? { input: ["text", "image"] }),
    ...m,
    id: m.id,
    provider,
    name: m.name ?? base?.name ?? m.id,
    api: m.api ?? base?.api ?? api,
    contextWindow: m.contextWindow ?? base?.contextWindow ?? limits.contextWindow,
    maxOutput: m.maxOutput ?? base?.maxOutput ?? limits.maxOutput,
    cost,
    source:
      m.source && base?.provider === provider
        ? `${m.source} over ${base.source ?? "built-in"}`
        : (m.source ?? base?.source),
  } as CatalogModel;
}

// ───────────────────────────── auth.json and keys ─────────────────────────────

/** A stored API key (`coil auth set`). */
export interface ApiKeyEntry {
  type: "api_key";
  key: string;
}

/**
 * A subscription login (`coil login`), in the shape Pi's auth.json uses: `access` (the token sent to the
 * API), `refresh` (what gets a new one), `expires` (epoch milliseconds of the access token's end), plus
 * provider-specific fields (`accountId`, `enterpriseUrl`, ...).
 */
export interface OAuthEntry {
  type: "oauth";
  access: string;
  refresh: string;
  expires: number;
  [field: string]: unknown;
}

export type AuthEntry = ApiKeyEntry | OAuthEntry;
export type AuthFile = Record<string, AuthEntry>;

export function authFile(home: string): string {
  return join(home, "auth.json");
}

/** Stored keys and logins; a missing file is empty. A malformed file throws (the caller reports it once). */
export function readAuth(home: string): AuthFile {
  return readAuthAt(authFile(home), "fix it or delete it and run `coil auth set <provider>` again");
}

/** An auth.json file at `file` (coil's or Pi's); a missing file is empty, a malformed one throws. */
export function readAuthAt(file: string, hint: string): AuthFile {
  if (!existsSync(file)) return {};
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (cause) {
    throw new CoilError("CONFIG_INVALID", `${file} is not valid JSON`, { file, cause, hint });
  }
  if (!data || typeof data !== "object" || Array.isArray(data))
    throw new CoilError("CONFIG_INVALID", `${file} must hold a JSON object`, { file });
  return data as AuthFile;
}

/** The stored API key of a provider (an OAuth login is not a key). */
export function storedKey(auth: AuthFile, provider: string): string | undefined {
  const entry = auth[provider];
  return entry?.type === "api_key" && typeof entry.key === "string" ? entry.key : undefined;
}

/** Whether group or others can read the file (a stored key should be private). */
export function authFileTooOpen(home: string): boolean {
  const file = authFile(home);
  return existsSync(file) && process.platform !== "win32" && (statSync(file).mode & 0o077) !== 0;
}

/** Store (or with `key` undefined, remove) a provider's key. The file is written with mode 0600. */
export function writeAuthKey(home: string, provider: string, key: string | undefined): string {
  return writeAuthEntry(home, provider, key === undefined ? undefined : { type: "api_key", key });
}

/**
 * Store (or with `entry` undefined, remove) a provider's key or login, keeping the other entries. The
 * file is written atomically (a private temporary file renamed over it) with mode 0600, in a 0700 directory.
 */
export function writeAuthEntry(home: string, provider: string, entry: AuthEntry | undefined): string {
  const file = authFile(home);
  const data = readAuth(home);
  if (entry === undefined) delete data[provider];
  else data[provider] = entry;
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, JSON.stringify(data, null, 2) + "\n", { mode: 0o600, flag: "wx" });
  chmodSync(tmp, 0o600); // a umask cannot widen it, but be explicit
  renameSync(tmp, file);
  return file;
}

/**
 * Shapes of tokens that are secrets wherever they appear: OpenAI/Anthropic keys, GitHub OAuth and
 * personal tokens (`gho_`, `ghu_`, `ghp_`, `ghs_`, `ghr_`, `github_pat_`), JWTs (ChatGPT access and id
 * tokens), and GitHub Copilot's API token (`tid=...;exp=...;...`).
 */
export const TOKEN_SHAPES: readonly RegExp[] = [
  /\b(sk-(?:ant-)?[A-Za-z0-9_-]{6})[A-Za-z0-9_-]{10,}/g,
  /\b(gh[opusr]_)[A-Za-z0-9]{20,}/g,
  /\b(github_pat_)[A-Za-z0-9_]{20,}/g,
  /\b(eyJ)[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  /\b(tid=)[0-9a-f]{8,}[^\s"']*/g,
  /\b(rt_)[A-Za-z0-9._-]{20,}/g,
];

/** What every TOKEN_SHAPES match begins with: a text without any of these holds no token (one scan, not six). */
const SHAPE_PREFIXES = /sk-|gh[opusr]_|github_pat_|eyJ|tid=|rt_/;

/** `text` with every token of a known shape replaced by its prefix and `…[redacted]`. */
export function redactShapes(text: string): string {
  if (!SHAPE_PREFIXES.test(text)) return text;
  let out = text;
  for (const shape of TOKEN_SHAPES) out = out.replace(shape, "$1…[redacted]");
  return out;
}

/** Where a provider's key came from; `key` is undefined when none was found. */
export interface KeyLookup {
  key?: string;
  /** `--api-key`, the variable name, `auth.json`, `apiKey in <file>`, or `none` (keyless server). */
  from?: string;
  /** The key comes from a `!command` not run yet (it runs before the first request). */
  deferred?: boolean;
}

/** Replace every occurrence of the given secrets (and anything that looks like a bearer key) in `text`. */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join(`${secret.slice(0, 3)}…[redacted]`);
  }
  return redactShapes(out);
}

/** Hosts that usually run keyless local servers. */
export function isLocalUrl(url: string | undefined): boolean {
  if (!url) return false;
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
    return (
      host === "localhost" || host === "::1" || host.startsWith("127.") || host === "0.0.0.0" || host.endsWith(".local")
    );
  } catch {
    return false;
  }
}
