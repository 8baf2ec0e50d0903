/**
 * provider-openai: OpenAI models (Responses API) and every OpenAI-compatible server through Chat
 * Completions: OpenRouter, DeepSeek, Groq, Together and xAI out of the box, and Ollama, vLLM,
 * LM Studio, llama.cpp or anything else declared in `$COIL_HOME/models.yaml`.
 * Streaming text, reasoning, tool calls, images, usage with cached tokens, retries with backoff,
 * cost from the model catalog. The SDK is imported the first time a request is made.
 * See docs/providers.md.
 */
import { join, resolve } from "node:path";
import { Type, type Static } from "typebox";
import type OpenAI from "openai";
import { CoilError, definePlugin, type ModelInfo, type PluginContext, type Provider, type ProviderEvent, type ProviderRequest } from "../../kernel/index.js";
import { defaultModel, findModel, type ApiKind, type CatalogModel } from "../../lib/provider-kit/catalog.js";
import { keyHint, lookupKey, sharedCli, type ProviderCliService } from "../../lib/provider-kit/cli.js";
import { coilHome, isLocalUrl, mergeModel, readModelsFile, type Compat, type ProviderConfig } from "../../lib/provider-kit/config.js";
import { PROVIDER_OPTIONS, runWithRetries } from "../../lib/provider-kit/run.js";
import { routeConsole, sdkLogger } from "../../lib/provider-kit/sdk-log.js";
import { bytesBodyFetch } from "../../lib/provider-kit/fetch.js";
import { buildCompletionsParams, readCompletions } from "./completions.js";
import { COMPAT_GENERIC, COMPAT_OPENAI, COMPATIBLE_PROVIDERS, OPENAI_DEFAULT_LIMITS, OPENAI_MODELS } from "./models.js";
import { buildResponsesParams, readResponses } from "./responses.js";
import { classifyOpenAI } from "./shared.js";

export const OpenAIOptions = Type.Object({
  /** API base URL of the `openai` provider; default `OPENAI_BASE_URL`, else https://api.openai.com/v1. */
  baseUrl: Type.Optional(Type.String()),
  /** Environment variable holding the `openai` provider's key. */
  apiKeyEnv: Type.String({ default: "OPENAI_API_KEY" }),
  /** API for `openai` models the catalog does not list: Responses on api.openai.com, Chat Completions elsewhere (`auto`). */
  api: Type.Union([Type.Literal("auto"), Type.Literal("openai-responses"), Type.Literal("openai-completions")], { default: "auto" }),
  /** Extra HTTP headers on every request of every provider this plugin registers. */
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  /** Register the OpenAI-compatible clouds coil knows (openrouter, deepseek, groq, together, xai). */
  compatible: Type.Boolean({ default: true }),
  ...PROVIDER_OPTIONS,
});
type Options = Static<typeof OpenAIOptions>;

const OFFICIAL = "https://api.openai.com/v1";

interface Setup {
  id: string;
  baseUrl(): string;
  apiKeyEnv?: string;
  keyless(): boolean;
  headers?: Record<string, string>;
  compat(): Required<Compat>;
  /** API for a model id the provider does not list. */
  defaultApi(): ApiKind;
  models: CatalogModel[];
  limits: { contextWindow: number; maxOutput: number };
}

function isOfficial(url: string): boolean {
  try {
    return new URL(url).hostname === "api.openai.com";
  } catch {
    return false;
  }
}

function makeProvider(ctx: PluginContext<Options>, cli: ProviderCliService, s: Setup): Provider {
  const o = ctx.options;
  const clients = new Map<string, OpenAI>();
  let warned = false;
  const key = () =>
    lookupKey(ctx, cli, s.id, s.apiKeyEnv, s.keyless(), (m) => {
      if (!warned) ctx.log.warn(m);
      warned = true;
    });
  const hint = keyHint(s.id, s.apiKeyEnv);
  const catalogFor = (model: ModelInfo): CatalogModel => {
    const listed = s.models.find((m) => m.id === model.id);
    if (listed) return listed;
    const api = (model as Partial<CatalogModel>).api;
    return { ...defaultModel(s.id, model.id, s.defaultApi(), s.limits), ...model, api: api && api !== "anthropic-messages" ? api : s.defaultApi(), cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...model.cost } };
  };

  async function client(url: string, k: string | undefined): Promise<OpenAI> {
    const id = `${url}\n${k ?? ""}`;
    let c = clients.get(id);
    if (!c) {
      const { default: OpenAISdk } = await import("openai");
      // The SDK's own retries are off: coil retries, so that waits are visible and abortable.
      // The SDK's console logging goes to coil's diagnostics (stderr stays clean in --mode json).
      c = new OpenAISdk({ apiKey: k ?? "no-key", baseURL: url, maxRetries: 0, timeout: o.timeoutMs, fetch: bytesBodyFetch, defaultHeaders: { ...o.headers, ...s.headers }, logger: sdkLogger(ctx.log, s.id, [k]) });
      clients.set(id, c);
    }
    return c;
  }

  return {
    id: s.id,
    models: s.models,
    resolveModel: (id) => {
      const found = findModel(s.models, id);
      return found ? { ...found, provider: s.id } : defaultModel(s.id, id, s.defaultApi(), s.limits);
    },
    isConfigured: () => key().key !== undefined || s.keyless(),
    setupHint: hint,
    stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
      const model = catalogFor(request.model);
      const k = key();
      const url = s.baseUrl();
      const compat = s.compat();
      return runWithRetries({
        provider: s.id,
        model,
        signal,
        secrets: [k.key],
        policy: { maxRetries: o.maxRetries, baseDelayMs: o.baseDelayMs, maxRetryDelayMs: o.maxRetryDelayMs },
        classify: (error) => classifyOpenAI(error, { provider: s.id, baseUrl: url, keyFrom: k.from, keyHint: hint, model: model.id }),
        async *attempt({ builder, signal: abort }) {
          if (!k.key && !s.keyless()) throw new CoilError("AUTH_MISSING", `no API key for provider '${s.id}': ${hint}`, { plugin: ctx.id });
          const sdk = await client(url, k.key);
          if (model.api === "openai-responses") {
            const params = buildResponsesParams(request, model, { provider: s.id, stateless: compat.store, maxTokens: o.maxTokens });
            const events = await routeConsole(sdk.logger, () => sdk.responses.create(params, { signal: abort, maxRetries: 0 }));
            return yield* readResponses(events, builder);
          }
          const params = buildCompletionsParams(request, model, { compat, maxTokens: o.maxTokens });
          const chunks = await routeConsole(sdk.logger, () => sdk.chat.completions.create(params, { signal: abort, maxRetries: 0 }));
          return yield* readCompletions(chunks, builder);
        },
      });
    },
  };
}

function catalog(id: string, api: ApiKind, builtin: readonly CatalogModel[], p: ProviderConfig | undefined, limits: Setup["limits"]): CatalogModel[] {
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
    const cli = sharedCli(ctx);
    const file = o.modelsFile ? resolve(ctx.baseDir, o.modelsFile) : join(coilHome(), "models.yaml");
    const configured = (readModelsFile(file)?.providers ?? []).filter((p) => p.id !== "anthropic" && p.api !== "anthropic-messages");
    const byId = new Map(configured.map((p) => [p.id, p]));

    const own = byId.get("openai");
    if (own?.api === "anthropic-messages") throw new CoilError("CONFIG_INVALID", "models.yaml: provider 'openai' is built in; give your server another id", { file, line: own.source.line });
    const openaiUrl = () => own?.baseUrl ?? o.baseUrl ?? process.env.OPENAI_BASE_URL ?? OFFICIAL;
    const limits = { contextWindow: own?.defaults?.contextWindow ?? OPENAI_DEFAULT_LIMITS.contextWindow, maxOutput: own?.defaults?.maxOutput ?? OPENAI_DEFAULT_LIMITS.maxOutput };
    ctx.providers.register(
      makeProvider(ctx, cli, {
        id: "openai",
        baseUrl: openaiUrl,
        apiKeyEnv: own?.apiKeyEnv ?? o.apiKeyEnv,
        keyless: () => own?.auth === "none" || isLocalUrl(openaiUrl()),
        headers: own?.headers,
        compat: () => ({ ...(isLocalUrl(openaiUrl()) ? COMPAT_GENERIC : COMPAT_OPENAI), ...own?.compat }),
        defaultApi: () => own?.api ?? (o.api !== "auto" ? o.api : isOfficial(openaiUrl()) ? "openai-responses" : "openai-completions"),
        models: catalog("openai", own?.api ?? "openai-responses", OPENAI_MODELS, own, limits),
        limits,
      }),
    );

    const builtins = o.compatible ? COMPATIBLE_PROVIDERS : [];
    for (const b of builtins) {
      const p = byId.get(b.id);
      const api = p?.api ?? b.api;
      const lim = { contextWindow: p?.defaults?.contextWindow ?? b.limits.contextWindow, maxOutput: p?.defaults?.maxOutput ?? b.limits.maxOutput };
      const url = p?.baseUrl ?? b.baseUrl;
      ctx.providers.register(
        makeProvider(ctx, cli, {
          id: b.id,
          baseUrl: () => url,
          apiKeyEnv: p?.apiKeyEnv ?? b.apiKeyEnv,
          keyless: () => p?.auth === "none",
          headers: p?.headers,
          compat: () => ({ ...COMPAT_GENERIC, ...b.compat, ...p?.compat }),
          defaultApi: () => api,
          models: catalog(b.id, api, b.models, p, lim),
          limits: lim,
        }),
      );
    }

    const taken = new Set(["openai", ...builtins.map((b) => b.id)]);
    for (const p of configured) {
      if (taken.has(p.id)) continue;
      if (!p.baseUrl) throw new CoilError("CONFIG_INVALID", `models.yaml: provider '${p.id}' needs a baseUrl (e.g. http://localhost:11434/v1)`, { file, line: p.source.line });
      const api = p.api ?? "openai-completions";
      const lim = { contextWindow: p.defaults?.contextWindow ?? OPENAI_DEFAULT_LIMITS.contextWindow, maxOutput: p.defaults?.maxOutput ?? OPENAI_DEFAULT_LIMITS.maxOutput };
      const url = p.baseUrl;
      ctx.providers.register(
        makeProvider(ctx, cli, {
          id: p.id,
          baseUrl: () => url,
          apiKeyEnv: p.apiKeyEnv,
          keyless: () => p.auth === "none" || (!p.apiKeyEnv && isLocalUrl(url)),
          headers: p.headers,
          compat: () => ({ ...(api === "openai-responses" && isOfficial(url) ? COMPAT_OPENAI : COMPAT_GENERIC), ...p.compat }),
          defaultApi: () => api,
          models: catalog(p.id, api, [], p, lim),
          limits: lim,
        }),
      );
    }
  },
});

/** For benchmarks and embedders: the wire mappings without the network. */
export { buildCompletionsParams, readCompletions } from "./completions.js";
export { buildResponsesParams, readResponses } from "./responses.js";
export { MessageBuilder } from "../../lib/provider-kit/builder.js";
export { OPENAI_MODELS } from "./models.js";
