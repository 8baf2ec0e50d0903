/**
 * provider-openai: OpenAI models (Responses API) and every OpenAI-compatible server through Chat
 * Completions: OpenRouter, DeepSeek, Groq, Together and xAI out of the box, and Ollama, vLLM,
 * LM Studio, llama.cpp or anything else declared in `$COIL_HOME/models.yaml`.
 * Streaming text, reasoning, tool calls, images, usage with cached tokens, retries with backoff,
 * cost from the model catalog. The SDK is imported the first time a request is made.
 * See docs/providers.md.
 */
import { Type, type Static } from "typebox";
import type OpenAI from "openai";
import { definePlugin, type ModelInfo, type PluginContext, type Provider } from "../../api/index.js";
import {
  defaultModel,
  findModel,
  markUserDefault,
  type ApiKind,
  type CatalogModel,
} from "../../lib/provider-kit/catalog.js";
import {
  isLocalUrl,
  mergeCompat,
  mergeModel,
  type Compat,
  type ProviderConfig,
  type ResolvedCompat,
} from "../../lib/provider-kit/config.js";
import { refuseEntry, userModels } from "../../lib/provider-kit/user-models.js";
import type { ConfigValue } from "../../lib/provider-kit/values.js";
import { kitProvider, PROVIDER_OPTIONS, type ProviderAdapter } from "../../lib/provider-kit/driver.js";
import { AZURE_HINT, azureClient, azureEndpoint } from "./azure.js";
import { buildCompletionsParams, readCompletions } from "./completions.js";
import { COMPAT_GENERIC, COMPAT_OPENAI, COMPATIBLE_PROVIDERS, OPENAI_DEFAULT_LIMITS, OPENAI_MODELS } from "./models.js";
import { buildResponsesParams, CALL_ID_MAX, readResponses } from "./responses.js";
import { classifyOpenAI, keepErrorBodies } from "./shared.js";
import type { OpenAIWireService, WireLogin, WireSetup } from "./api.js";

export type { OpenAIWireService, WireLogin, WireSetup };

export const OpenAIOptions = Type.Object({
  /** API base URL of the `openai` provider; default `OPENAI_BASE_URL`, else https://api.openai.com/v1. */
  baseUrl: Type.Optional(Type.String()),
  /** Environment variable holding the `openai` provider's key. */
  apiKeyEnv: Type.String({ default: "OPENAI_API_KEY" }),
  /** API for `openai` models the catalog does not list: Responses on api.openai.com, Chat Completions elsewhere (`auto`). */
  api: Type.Union([Type.Literal("auto"), Type.Literal("openai-responses"), Type.Literal("openai-completions")], {
    default: "auto",
  }),
  /** Extra HTTP headers on every request of every provider this plugin registers. */
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  /** Register the OpenAI-compatible clouds coil knows (openrouter, deepseek, groq, together, xai). */
  compatible: Type.Boolean({ default: true }),
  ...PROVIDER_OPTIONS,
});
type Options = Static<typeof OpenAIOptions>;

const OFFICIAL = "https://api.openai.com/v1";
type Params = OpenAI.Responses.ResponseCreateParamsStreaming | OpenAI.Chat.ChatCompletionCreateParamsStreaming;
type Event = OpenAI.Responses.ResponseStreamEvent | OpenAI.Chat.ChatCompletionChunk;

interface Setup {
  id: string;
  baseUrl(): string;
  apiKeyEnv?: string;
  /** `apiKey` from models.yaml / Pi's models.json (`${NAME}`, `!command`, or Pi's literal key). */
  apiKey?: ConfigValue;
  keyless(): boolean;
  headers?: readonly ConfigValue[];
  /** Defaults for this server, before the user's switches. */
  compat(): ResolvedCompat;
  /** The user's switches for the provider (models.yaml / Pi), before each model's own. */
  userCompat?: Compat;
  params?: Record<string, unknown>;
  /** API for a model id the provider does not list. */
  defaultApi(): ApiKind;
  models: CatalogModel[];
  limits: { contextWindow: number; maxOutput: number };
  /** Only for local servers coil knows: whether the user said it runs (models.yaml / Pi / a variable). */
  declared?(): boolean;
  hint?: string;
  /** A client other than the plain OpenAI one (Azure). */
  client?: typeof azureClient;
  /** Besides the key, what must be set for the provider to be usable (Azure's endpoint). */
  ready?: () => boolean;
  /** A subscription login instead of a key (another plugin's, through the `openai-wire` service). */
  login?: WireLogin;
  /** The `openai-wire` caller's body change and failure reading. */
  finish?: WireSetup["body"];
  explain?: WireSetup["explain"];
}

function isOfficial(url: string): boolean {
  try {
    return new URL(url).hostname === "api.openai.com";
  } catch {
    return false;
  }
}

/** OpenAI's two wire formats as the kit's driver runs them (lib/provider-kit/driver.ts): this plugin says what is OpenAI's. */
function makeProvider(ctx: PluginContext<Options>, s: Setup): Provider {
  const o = ctx.options;
  // The switches for a request's model, worked out once per request (model() is the driver's first call).
  const compats = new WeakMap<CatalogModel, ResolvedCompat>();
  const compatOf = (model: CatalogModel) => compats.get(model) ?? mergeCompat(s.compat(), s.userCompat, model.compat);
  const adapter: ProviderAdapter<OpenAI, Params, Event> = {
    id: s.id,
    hint: s.hint,
    get models() {
      return s.models;
    },
    resolveModel: (id) => {
      const found = findModel(s.models, id);
      return found ? { ...found, provider: s.id } : defaultModel(s.id, id, s.defaultApi(), s.limits);
    },
    model(info: ModelInfo): CatalogModel {
      const api = (info as Partial<CatalogModel>).api;
      const model = s.models.find((m) => m.id === info.id) ?? {
        ...defaultModel(s.id, info.id, s.defaultApi(), s.limits),
        ...info,
        api: api && api !== "anthropic-messages" ? api : s.defaultApi(),
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...info.cost },
      };
      compats.set(model, mergeCompat(s.compat(), s.userCompat, model.compat));
      return model;
    },
    baseUrl: s.baseUrl,
    key: s.login ? undefined : { envName: s.apiKeyEnv, apiKey: s.apiKey, keyless: s.keyless, declared: s.declared },
    login: s.login,
    headers: s.headers,
    params: s.params,
    unready: () => (s.ready?.() === false ? `provider '${s.id}' is not set up: ${s.hint}` : undefined),
    history(model) {
      if (model.api === "openai-responses")
        return { toolIds: CALL_ID_MAX, pairedIds: true, thinking: compatOf(model).stateless ? "same-model" : "never" };
      const compat = compatOf(model);
      // reasoning text is never sent back over Chat Completions (DeepSeek rejects it; others ignore it)
      return { toolIds: compat.requiresMistralToolIds ? "mistral" : compat.toolCallIdMaxLength, thinking: "never" };
    },
    build(request, model) {
      const compat = compatOf(model);
      if (model.api !== "openai-responses")
        return buildCompletionsParams(request, model, { compat, maxTokens: o.maxTokens });
      return buildResponsesParams(request, model, {
        provider: s.id,
        stateless: compat.stateless,
        strict: model.compat?.supportsStrictMode ?? s.userCompat?.supportsStrictMode ?? true,
        maxTokens: o.maxTokens,
        reasoningEffortMap: compat.reasoningEffortMap,
      });
    },
    finish: s.finish,
    async client(c, common) {
      // The SDK's own retries are off: coil retries, so that waits are visible and abortable.
      let sdk: OpenAI;
      if (s.client) sdk = await s.client(c.key, common);
      else {
        const { default: OpenAISdk } = await import("openai");
        sdk = new OpenAISdk({ apiKey: c.key ?? "no-key", baseURL: c.url, maxRetries: 0, ...common });
      }
      keepErrorBodies(sdk);
      return sdk;
    },
    send(sdk, params, { model, signal, headers }) {
      const options = { signal, maxRetries: 0, headers };
      if (model.api === "openai-responses")
        return sdk.responses.create(params as OpenAI.Responses.ResponseCreateParamsStreaming, options);
      return sdk.chat.completions.create(params as OpenAI.Chat.ChatCompletionCreateParamsStreaming, options);
    },
    read(events, builder, model) {
      if (model.api === "openai-responses")
        return readResponses(events as AsyncIterable<OpenAI.Responses.ResponseStreamEvent>, builder);
      return readCompletions(events as AsyncIterable<OpenAI.Chat.ChatCompletionChunk>, builder);
    },
    classify: (error, where) => explained(s.explain?.(error, where.model)) ?? classifyOpenAI(error, where),
  };
  return kitProvider(ctx, adapter);
}

function explained(e: { message: string; retryable: boolean } | undefined) {
  return e && { ...e, overflow: false };
}

function catalog(
  id: string,
  api: ApiKind,
  builtin: readonly CatalogModel[],
  p: ProviderConfig | undefined,
  limits: Setup["limits"],
): CatalogModel[] {
  const models = builtin.map((m) => ({ ...m, provider: id }));
  for (const m of p?.models ?? []) {
    const at = models.findIndex((x) => x.id === m.id);
    const merged = mergeModel(id, api, m, at >= 0 ? models[at] : findModel(OPENAI_MODELS, m.id), limits);
    if (at >= 0) models[at] = merged;
    else models.push(merged);
  }
  return models;
}

export default definePlugin({
  id: "provider-openai",
  description: "OpenAI (Responses API) and OpenAI-compatible servers (Chat Completions)",
  options: OpenAIOptions,
  setup(ctx) {
    const o = ctx.options;
    const user = userModels(ctx.baseDir, o, ctx.log, { cwd: ctx.cwd, trusted: ctx.projectTrusted });
    const configured = user.providers.filter((p) => p.id !== "anthropic" && p.api !== "anthropic-messages");
    // (an `openai` entry with api anthropic-messages is the anthropic plugin's to refuse)
    const byId = new Map(configured.map((p) => [p.id, p]));
    const registered: Provider[] = [];
    const register = (p: Provider) => {
      registered.push(p);
      ctx.providers.register(p);
    };

    const own = byId.get("openai");
    const openaiUrl = () => own?.baseUrl ?? o.baseUrl ?? process.env.OPENAI_BASE_URL ?? OFFICIAL;
    const limits = {
      contextWindow: own?.defaults?.contextWindow ?? OPENAI_DEFAULT_LIMITS.contextWindow,
      maxOutput: own?.defaults?.maxOutput ?? OPENAI_DEFAULT_LIMITS.maxOutput,
    };
    register(
      makeProvider(ctx, {
        id: "openai",
        baseUrl: openaiUrl,
        apiKeyEnv: own?.apiKeyEnv ?? o.apiKeyEnv,
        apiKey: own?.apiKey,
        keyless: () => own?.auth === "none" || isLocalUrl(openaiUrl()),
        headers: own?.headers,
        compat: () => (isLocalUrl(openaiUrl()) ? COMPAT_GENERIC : COMPAT_OPENAI),
        userCompat: own?.compat,
        params: own?.params,
        defaultApi: () =>
          own?.api ?? (o.api !== "auto" ? o.api : isOfficial(openaiUrl()) ? "openai-responses" : "openai-completions"),
        models: catalog("openai", own?.api ?? "openai-responses", OPENAI_MODELS, own, limits),
        limits,
      }),
    );

    const builtins = o.compatible ? COMPATIBLE_PROVIDERS : [];
    for (const b of builtins) {
      const p = byId.get(b.id);
      const api = p?.api ?? b.api;
      const lim = {
        contextWindow: p?.defaults?.contextWindow ?? b.limits.contextWindow,
        maxOutput: p?.defaults?.maxOutput ?? b.limits.maxOutput,
      };
      const url = p?.baseUrl ?? b.baseUrl;
      const local = isLocalUrl(b.baseUrl);
      register(
        makeProvider(ctx, {
          id: b.id,
          baseUrl: () => url,
          apiKeyEnv: p?.apiKeyEnv ?? b.apiKeyEnv,
          apiKey: p?.apiKey,
          keyless: () => p?.auth === "none" || (local && !p?.apiKeyEnv && !p?.apiKey),
          headers: p?.headers,
          compat: () => ({ ...COMPAT_GENERIC, ...b.compat }),
          userCompat: p?.compat,
          params: p?.params,
          defaultApi: () => api,
          models: catalog(b.id, api, b.models, p, lim),
          limits: lim,
          // A local server counts as usable once the user says it runs: an entry in models.yaml (even `ollama: {}`) or Pi's models.json.
          declared: local ? () => Boolean(p) : undefined,
          hint: local
            ? `start ${b.name} (${b.baseUrl}), then add \`${b.id}: {}\` under providers in $COIL_HOME/models.yaml`
            : undefined,
        }),
      );
    }

    // Azure OpenAI, unless models.yaml uses the id for a server of its own.
    if (!byId.has("azure")) {
      const azureLimits = { ...OPENAI_DEFAULT_LIMITS };
      register(
        makeProvider(ctx, {
          id: "azure",
          baseUrl: () => azureEndpoint() ?? "https://<resource>.openai.azure.com",
          apiKeyEnv: "AZURE_OPENAI_API_KEY",
          keyless: () => false,
          compat: () => COMPAT_OPENAI,
          defaultApi: () => "openai-completions",
          models: catalog("azure", "openai-responses", OPENAI_MODELS, undefined, azureLimits),
          limits: azureLimits,
          client: azureClient,
          ready: () => azureEndpoint() !== undefined,
          hint: AZURE_HINT,
        }),
      );
    }

    const taken = new Set(["openai", "azure", ...builtins.map((b) => b.id)]);
    for (const p of configured) {
      if (taken.has(p.id)) continue;
      if (!p.baseUrl) {
        refuseEntry(p, "needs a baseUrl (e.g. http://localhost:11434/v1)", (m) => ctx.log.info(m));
        continue;
      }
      const api = p.api ?? "openai-completions";
      const lim = {
        contextWindow: p.defaults?.contextWindow ?? OPENAI_DEFAULT_LIMITS.contextWindow,
        maxOutput: p.defaults?.maxOutput ?? OPENAI_DEFAULT_LIMITS.maxOutput,
      };
      const url = p.baseUrl;
      register(
        makeProvider(ctx, {
          id: p.id,
          baseUrl: () => url,
          apiKeyEnv: p.apiKeyEnv,
          apiKey: p.apiKey,
          keyless: () => p.auth === "none" || (!p.apiKeyEnv && !p.apiKey && isLocalUrl(url)),
          headers: p.headers,
          compat: () => (api === "openai-responses" && isOfficial(url) ? COMPAT_OPENAI : COMPAT_GENERIC),
          userCompat: p.compat,
          params: p.params,
          defaultApi: () => api,
          models: catalog(p.id, api, [], p, lim),
          limits: lim,
        }),
      );
    }
    markDefaults(registered, user.default, user.providers, (m) => ctx.log.warn(m), user.defaultFrom);

    // Subscription providers (provider-github-copilot) speak these wire formats through this service.
    const wire: OpenAIWireService = {
      provider: (w) =>
        makeProvider(ctx, {
          id: w.id,
          baseUrl: w.baseUrl,
          keyless: () => false,
          compat: () => mergeCompat(COMPAT_GENERIC, w.compat),
          defaultApi: () => w.api,
          get models() {
            return w.models;
          },
          limits: w.limits,
          hint: w.hint,
          login: w.login,
          finish: w.body,
          explain: w.explain,
        }),
    };
    ctx.services.provide("openai-wire", wire);
  },
});

/**
 * Mark each provider's balanced default (the catalog's `default: "provider"` entry stays) and the
 * models.yaml `default:` on the provider it names, when this plugin registered it. A `default:` naming
 * a provider neither plugin registers is reported here (anthropic-messages providers are the other plugin's).
 */
function markDefaults(
  providers: Provider[],
  spec: string | undefined,
  all: readonly ProviderConfig[],
  warn: (m: string) => void,
  from?: string,
): void {
  if (!spec) return;
  const slash = spec.indexOf("/");
  const [head, id] = [spec.slice(0, slash), spec.slice(slash + 1)];
  const provider = providers.find((p) => p.id === head);
  if (!provider) {
    const theirs = head === "anthropic" || all.some((p) => p.id === head && p.api === "anthropic-messages");
    if (!theirs)
      warn(
        `${from ?? "models.yaml"}: default '${spec}' names no provider coil has (known: ${providers.map((p) => p.id).join(", ")}, anthropic); using the built-in default`,
      );
    return;
  }
  markUserDefault(provider, id, from);
}
/** For benchmarks and embedders: the wire mappings without the network. */
export { buildCompletionsParams, readCompletions } from "./completions.js";
export { buildResponsesParams, readResponses } from "./responses.js";
export { MessageBuilder } from "../../lib/provider-kit/builder.js";
export { OPENAI_MODELS } from "./models.js";
