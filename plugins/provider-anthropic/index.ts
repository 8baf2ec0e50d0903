/**
 * provider-anthropic: Claude through the Anthropic Messages API (streaming), plus any
 * Anthropic-compatible server configured in `$COIL_HOME/models.yaml` with `api: anthropic-messages`.
 * Text, thinking (budget or adaptive/effort; signatures and redacted thinking kept for replay),
 * tool use, images, prompt caching, retries with backoff, cost from the model catalog.
 * The SDK is imported the first time a request is made. See docs/providers.md.
 */
import { join, resolve } from "node:path";
import { Type, type Static } from "typebox";
import type Anthropic from "@anthropic-ai/sdk";
import { CoilError, definePlugin, type ModelInfo, type PluginContext, type Provider, type ProviderEvent, type ProviderRequest } from "../../kernel/index.js";
import { defaultModel, findModel, type CatalogModel } from "../../lib/provider-kit/catalog.js";
import { keyHint, lookupKey, sharedCli, type ProviderCliService } from "../../lib/provider-kit/cli.js";
import { coilHome, isLocalUrl, mergeModel, readModelsFile, type ProviderConfig } from "../../lib/provider-kit/config.js";
import { PROVIDER_OPTIONS, runWithRetries } from "../../lib/provider-kit/run.js";
import { routeConsole, sdkLogger } from "../../lib/provider-kit/sdk-log.js";
import { bytesBodyFetch } from "../../lib/provider-kit/fetch.js";
import { ANTHROPIC_DEFAULT_LIMITS, ANTHROPIC_MODELS } from "./models.js";
import { buildParams, classify, readStream } from "./wire.js";

export const AnthropicOptions = Type.Object({
  /** API base URL; default `ANTHROPIC_BASE_URL`, else https://api.anthropic.com. */
  baseUrl: Type.Optional(Type.String()),
  /** Environment variable holding the key (`ANTHROPIC_AUTH_TOKEN` is used as a bearer token when it is unset). */
  apiKeyEnv: Type.String({ default: "ANTHROPIC_API_KEY" }),
  /** Extra HTTP headers on every request. */
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  ...PROVIDER_OPTIONS,
  /** Prompt-cache lifetime for the breakpoints coil sets, or `none`. */
  cacheRetention: Type.Union([Type.Literal("5m"), Type.Literal("1h"), Type.Literal("none")], { default: "5m" }),
});
type Options = Static<typeof AnthropicOptions>;

const API = "anthropic-messages";

interface Setup {
  id: string;
  baseUrl?: string;
  apiKeyEnv?: string;
  keyless: boolean;
  headers?: Record<string, string>;
  cache: boolean;
  models: CatalogModel[];
  limits: { contextWindow: number; maxOutput: number };
}

function makeProvider(ctx: PluginContext<Options>, cli: ProviderCliService, s: Setup): Provider {
  const o = ctx.options;
  const clients = new Map<string, Anthropic>();
  let warned = false;
  const warnOnce = (message: string) => {
    if (!warned) ctx.log.warn(message);
    warned = true;
  };
  const key = () => {
    const found = lookupKey(ctx, cli, s.id, s.apiKeyEnv, s.keyless, warnOnce);
    if (!found.key && s.id === "anthropic" && process.env.ANTHROPIC_AUTH_TOKEN) return { key: process.env.ANTHROPIC_AUTH_TOKEN, from: "ANTHROPIC_AUTH_TOKEN", bearer: true };
    return { ...found, bearer: false };
  };
  const baseUrl = () => s.baseUrl ?? (s.id === "anthropic" ? process.env.ANTHROPIC_BASE_URL : undefined) ?? "https://api.anthropic.com";
  const hint = keyHint(s.id, s.apiKeyEnv);
  const catalogFor = (model: ModelInfo): CatalogModel =>
    s.models.find((m) => m.id === model.id) ?? { ...defaultModel(s.id, model.id, API, s.limits), ...model, api: API, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...model.cost } };

  async function client(url: string, k: { key?: string; bearer: boolean }): Promise<Anthropic> {
    const id = `${url}\n${k.bearer}\n${k.key ?? ""}`;
    let c = clients.get(id);
    if (!c) {
      const { default: AnthropicSdk } = await import("@anthropic-ai/sdk");
      const auth = k.bearer ? { authToken: k.key } : { apiKey: k.key ?? "no-key" };
      // The SDK's own retries are off: coil retries, so that waits are visible and abortable.
      // The SDK's console logging goes to coil's diagnostics (stderr stays clean in --mode json).
      c = new AnthropicSdk({ ...auth, baseURL: url, maxRetries: 0, timeout: o.timeoutMs, fetch: bytesBodyFetch, defaultHeaders: { ...o.headers, ...s.headers }, logger: sdkLogger(ctx.log, s.id, [k.key]) });
      clients.set(id, c);
    }
    return c;
  }

  return {
    id: s.id,
    models: s.models,
    resolveModel: (id) => {
      const found = findModel(s.models, id);
      return found ? { ...found, provider: s.id } : defaultModel(s.id, id, API, s.limits);
    },
    isConfigured: () => key().key !== undefined || s.keyless,
    setupHint: hint,
    stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
      const model = catalogFor(request.model);
      const k = key();
      const url = baseUrl();
      return runWithRetries({
        provider: s.id,
        model,
        signal,
        secrets: [k.key],
        policy: { maxRetries: o.maxRetries, baseDelayMs: o.baseDelayMs, maxRetryDelayMs: o.maxRetryDelayMs },
        classify: (error) => classify(error, { provider: s.id, baseUrl: url, keyFrom: k.from, keyHint: hint, model: model.id }),
        async *attempt({ builder, signal: abort }) {
          if (!k.key && !s.keyless) throw new CoilError("AUTH_MISSING", `no API key for provider '${s.id}': ${hint}`, { plugin: ctx.id });
          const params = buildParams(request, model, { provider: s.id, cache: s.cache ? o.cacheRetention : "none", maxTokens: o.maxTokens });
          const sdk = await client(url, k);
          const stream = await routeConsole(sdk.logger, () => sdk.messages.create(params, { signal: abort, maxRetries: 0 }));
          return yield* readStream(stream, builder);
        },
      });
    },
  };
}

export default definePlugin({
  id: "provider-anthropic",
  description: "Claude models through the Anthropic Messages API (and Anthropic-compatible servers)",
  options: AnthropicOptions,
  setup(ctx) {
    const o = ctx.options;
    const cli = sharedCli(ctx);
    const file = o.modelsFile ? resolve(ctx.baseDir, o.modelsFile) : join(coilHome(), "models.yaml");
    const configured = readModelsFile(file)?.providers ?? [];
    const mine = configured.filter((p) => p.id === "anthropic" || p.api === API);
    for (const p of mine) {
      if (p.id === "anthropic" && p.api && p.api !== API) {
        throw new CoilError("CONFIG_INVALID", `models.yaml: provider 'anthropic' is built in with api ${API}; give your ${p.api} server another id`, { file, line: p.source.line });
      }
    }
    for (const p of mine) {
      if (p.id !== "anthropic" && !p.baseUrl) throw new CoilError("CONFIG_INVALID", `models.yaml: provider '${p.id}' needs a baseUrl (the Anthropic-compatible API root)`, { file, line: p.source.line });
    }
    const builtin = mine.find((p) => p.id === "anthropic");
    ctx.providers.register(makeProvider(ctx, cli, setupFor("anthropic", builtin, o)));
    for (const p of mine) if (p.id !== "anthropic") ctx.providers.register(makeProvider(ctx, cli, setupFor(p.id, p, o)));
  },
});

function setupFor(id: string, p: ProviderConfig | undefined, o: Options): Setup {
  const builtin = id === "anthropic";
  const limits = { contextWindow: p?.defaults?.contextWindow ?? ANTHROPIC_DEFAULT_LIMITS.contextWindow, maxOutput: p?.defaults?.maxOutput ?? ANTHROPIC_DEFAULT_LIMITS.maxOutput };
  const base = builtin ? ANTHROPIC_MODELS.map((m) => ({ ...m })) : [];
  const models = [...base];
  for (const m of p?.models ?? []) {
    const at = models.findIndex((x) => x.id === m.id);
    const merged = mergeModel(id, API, m, at >= 0 ? models[at] : findModel(ANTHROPIC_MODELS, m.id), limits);
    if (at >= 0) models[at] = merged;
    else models.push(merged);
  }
  const baseUrl = p?.baseUrl ?? (builtin ? o.baseUrl : undefined);
  return {
    id,
    baseUrl,
    apiKeyEnv: p?.apiKeyEnv ?? (builtin ? o.apiKeyEnv : undefined),
    keyless: p?.auth === "none" || (!builtin && !p?.apiKeyEnv && isLocalUrl(baseUrl)),
    headers: p?.headers,
    cache: p?.compat?.cacheControl ?? true,
    models: models.map((m) => ({ ...m, provider: id })),
    limits,
  };
}

/** For benchmarks and embedders: the wire mapping without the network. */
export { buildParams, readStream } from "./wire.js";
export { MessageBuilder } from "../../lib/provider-kit/builder.js";
export { ANTHROPIC_MODELS } from "./models.js";
