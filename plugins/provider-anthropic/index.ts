/**
 * provider-anthropic: Claude through the Anthropic Messages API (streaming), plus any
 * Anthropic-compatible server configured in `$COIL_HOME/models.yaml` with `api: anthropic-messages`.
 * Text, thinking (budget or adaptive/effort; signatures and redacted thinking kept for replay),
 * tool use, images, prompt caching, retries with backoff, cost from the model catalog.
 * The SDK is imported the first time a request is made. See docs/providers.md.
 */
import { Type, type Static } from "typebox";
import type Anthropic from "@anthropic-ai/sdk";
import {
  CoilError,
  definePlugin,
  type ModelInfo,
  type PluginContext,
  type Provider,
  type ProviderEvent,
  type ProviderRequest,
} from "../../api/index.js";
import { defaultModel, findModel, markUserDefault, type CatalogModel } from "../../lib/provider-kit/catalog.js";
import { hasKey, keyHint, lookupKey } from "../../lib/provider-kit/keys.js";
import type {} from "../models/api.js"; // types the models plugin's `provider-cli` service (the provider --api-key is for)
import type {} from "./api.js"; // types the `anthropic-wire` service this plugin provides
import { deepMerge, isLocalUrl, mergeModel, type ProviderConfig } from "../../lib/provider-kit/config.js";
import { refuseEntry, userModels } from "../../lib/provider-kit/user-models.js";
import { resolveHeaders, variablesOf, type ConfigValue } from "../../lib/provider-kit/values.js";
import { PROVIDER_OPTIONS, runWithRetries } from "../../lib/provider-kit/run.js";
import { routeConsole, sdkLogger } from "../../lib/provider-kit/sdk-log.js";
import { CLOUDS, cloudModels, type Cloud } from "./clouds.js";
import { providerFetch } from "../../lib/provider-kit/fetch.js";
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
  /** `apiKey` from models.yaml / Pi's models.json. */
  apiKey?: ConfigValue;
  keyless: boolean;
  headers?: readonly ConfigValue[];
  params?: Record<string, unknown>;
  cache: boolean;
  models: CatalogModel[];
  limits: { contextWindow: number; maxOutput: number };
  /** Bedrock or Vertex: the cloud's SDK and credentials instead of an API key. */
  cloud?: Cloud;
  /** The key for each request from elsewhere (the `anthropic-wire` service: a login's token). */
  token?: () => string | undefined;
  /** What to do without a key, instead of the standard hint. */
  hint?: string;
}

function makeProvider(ctx: PluginContext<Options>, selected: () => string | undefined, s: Setup): Provider {
  const o = ctx.options;
  const clients = new Map<string, Anthropic>();
  let warned = false;
  const warnOnce = (message: string) => {
    if (!warned) ctx.log.warn(message);
    warned = true;
  };
  const key = (run = false) => {
    if (s.token) return { key: s.token(), from: "login", bearer: false };
    const found = lookupKey(ctx, selected(), s.id, s.apiKeyEnv, s.keyless, warnOnce, { apiKey: s.apiKey, run });
    if (!found.key && !found.deferred && s.id === "anthropic" && process.env.ANTHROPIC_AUTH_TOKEN)
      return { key: process.env.ANTHROPIC_AUTH_TOKEN, from: "ANTHROPIC_AUTH_TOKEN", bearer: true };
    return { ...found, bearer: false };
  };
  const cloud = s.cloud;
  const baseUrl = () =>
    s.baseUrl ??
    (s.id === "anthropic" ? process.env.ANTHROPIC_BASE_URL : undefined) ??
    (cloud ? `${cloud.name} (${cloud.id})` : "https://api.anthropic.com");
  const hint = s.hint ?? cloud?.hint ?? keyHint(s.id, s.apiKeyEnv ?? (s.apiKey ? variablesOf(s.apiKey)[0] : undefined));
  // A cloud's model id names the Claude model inside it (us.anthropic.claude-…-v1:0): prices and limits come from the catalog.
  const withId = (m: CatalogModel | undefined, id: string) => m && { ...m, id, provider: s.id };
  const lookup = (id: string): CatalogModel | undefined =>
    findModel(s.models, id) ?? (cloud && withId(findModel(ANTHROPIC_MODELS, cloud.catalogId(id)), id));
  const catalogFor = (model: ModelInfo): CatalogModel =>
    s.models.find((m) => m.id === model.id) ??
    (cloud && lookup(model.id)) ?? {
      ...defaultModel(s.id, model.id, API, s.limits),
      ...model,
      api: API,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...model.cost },
    };

  async function client(url: string, k: { key?: string; bearer: boolean }): Promise<Anthropic> {
    const id = `${url}\n${k.bearer}\n${k.key ?? ""}`;
    let c = clients.get(id);
    if (!c) {
      // The SDK's own retries are off: coil retries, so that waits are visible and abortable.
      // The SDK's console logging goes to coil's diagnostics (stderr stays clean in --mode json).
      const common = {
        timeout: o.timeoutMs,
        fetch: providerFetch,
        defaultHeaders: { ...o.headers },
        logger: sdkLogger(ctx.log, s.id, [k.key, ...cloudSecrets()]),
      };
      if (cloud) c = await cloud.client(common, process.env);
      else {
        const { default: AnthropicSdk } = await import("@anthropic-ai/sdk");
        const auth = k.bearer ? { authToken: k.key } : { apiKey: k.key ?? "no-key" };
        c = new AnthropicSdk({ ...auth, baseURL: url, maxRetries: 0, ...common });
      }
      clients.set(id, c);
    }
    return c;
  }

  return {
    id: s.id,
    // Bedrock and Vertex list their models once their credentials are set (the catalog is the same Claude family).
    get models() {
      return cloud && cloud.missing(process.env) !== undefined ? [] : s.models;
    },
    resolveModel: (id) => {
      const found = lookup(id);
      return found ? { ...found, provider: s.id } : defaultModel(s.id, id, API, s.limits);
    },
    isConfigured: () => (cloud ? cloud.missing(process.env) === undefined : hasKey(key()) || s.keyless),
    setupHint: hint,
    stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
      const model = catalogFor(request.model);
      const url = baseUrl();
      const secrets: (string | undefined)[] = cloudSecrets();
      let k: ReturnType<typeof key> | undefined;
      return runWithRetries({
        provider: s.id,
        model,
        signal,
        secrets,
        policy: { maxRetries: o.maxRetries, baseDelayMs: o.baseDelayMs, maxRetryDelayMs: o.maxRetryDelayMs },
        classify: (error) =>
          error instanceof CoilError
            ? { message: error.message, retryable: false, overflow: false }
            : classify(error, { provider: s.id, baseUrl: url, keyFrom: k?.from, keyHint: hint, model: model.id }),
        async *attempt({ builder, signal: abort }) {
          k ??= key(true);
          secrets.push(k.key);
          const unusable = cloud?.missing(process.env);
          if (unusable)
            throw new CoilError(
              "AUTH_MISSING",
              `provider '${s.id}' (${cloud!.name}) is not set up: ${unusable}. To use it, ${hint}`,
              { plugin: ctx.id },
            );
          if (!cloud && !k.key && !s.keyless)
            throw new CoilError("AUTH_MISSING", `no API key for provider '${s.id}': ${hint}`, { plugin: ctx.id });
          const { headers, secrets: hidden } = resolveHeaders(s.headers, model.headers);
          secrets.push(...hidden);
          const built = buildParams(request, model, {
            provider: s.id,
            cache: s.cache ? o.cacheRetention : "none",
            maxTokens: o.maxTokens,
          });
          const params = deepMerge(
            deepMerge(built as unknown as Record<string, unknown>, s.params),
            model.params,
          ) as unknown as typeof built;
          const sdk = await client(url, k);
          const stream = await routeConsole(sdk.logger, () =>
            sdk.messages.create(params, { signal: abort, maxRetries: 0, headers }),
          );
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
    // read at each lookup: the models plugin may be set up after this one, or not be in the preset
    const selected = () => ctx.services.get("provider-cli")?.selected;
    const user = userModels(ctx.baseDir, o, ctx.log, { cwd: ctx.cwd, trusted: ctx.projectTrusted });
    const configured = user.providers;
    const info = (m: string) => ctx.log.info(m);
    const mine = configured.filter((p) => {
      if (p.id === "anthropic" && p.api && p.api !== API) {
        refuseEntry(p, `is built in with api ${API}; give your ${p.api} server another id`, info);
        return false;
      }
      if (p.id === "openai" && p.api === API) {
        refuseEntry(p, "is built in (OpenAI); give your anthropic-messages server another id", info);
        return false;
      }
      if (p.id !== "anthropic" && p.api === API && !p.baseUrl) {
        refuseEntry(p, "needs a baseUrl (the Anthropic-compatible API root)", info);
        return false;
      }
      return p.id === "anthropic" || p.api === API;
    });
    const builtin = mine.find((p) => p.id === "anthropic");
    const providers = [
      makeProvider(ctx, selected, setupFor("anthropic", builtin, o)),
      ...mine.filter((p) => p.id !== "anthropic").map((p) => makeProvider(ctx, selected, setupFor(p.id, p, o))),
    ];
    // Bedrock and Vertex, unless models.yaml already uses the id for a server of its own.
    for (const c of CLOUDS)
      if (!mine.some((p) => p.id === c.id))
        providers.push(
          makeProvider(ctx, selected, {
            id: c.id,
            keyless: true,
            cache: true,
            models: cloudModels(c, ANTHROPIC_MODELS),
            limits: ANTHROPIC_DEFAULT_LIMITS,
            cloud: c,
          }),
        );
    for (const p of providers) ctx.providers.register(p);
    // Providers other plugins define on this API (a Pi extension's registerProvider), built like models.yaml's.
    ctx.services.provide("anthropic-wire", {
      provider: (w) =>
        makeProvider(ctx, selected, {
          ...w,
          keyless: false,
          cache: true,
          models: w.models.map((m) => ({ ...m, provider: w.id })),
        }),
    });
    // models.yaml `default: provider/id` naming one of these providers (the other plugin reports unknown ones).
    const slash = user.default?.indexOf("/") ?? -1;
    const named = slash > 0 ? providers.find((p) => p.id === user.default!.slice(0, slash)) : undefined;
    if (named) markUserDefault(named, user.default!.slice(slash + 1), user.defaultFrom);
  },
});

/** The cloud credentials that must never appear in logs or error messages. */
function cloudSecrets(): (string | undefined)[] {
  const e = process.env;
  return [e.AWS_SECRET_ACCESS_KEY, e.AWS_SESSION_TOKEN, e.AWS_BEARER_TOKEN_BEDROCK];
}

function setupFor(id: string, p: ProviderConfig | undefined, o: Options): Setup {
  const builtin = id === "anthropic";
  const limits = {
    contextWindow: p?.defaults?.contextWindow ?? ANTHROPIC_DEFAULT_LIMITS.contextWindow,
    maxOutput: p?.defaults?.maxOutput ?? ANTHROPIC_DEFAULT_LIMITS.maxOutput,
  };
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
    apiKey: p?.apiKey,
    keyless: p?.auth === "none" || (!builtin && !p?.apiKeyEnv && !p?.apiKey && isLocalUrl(baseUrl)),
    headers: p?.headers,
    params: p?.params,
    cache: p?.compat?.cacheControl ?? true,
    models: models.map((m) => ({ ...m, provider: id })),
    limits,
  };
}

/** For benchmarks and embedders: the wire mapping without the network. */
export { buildParams, readStream } from "./wire.js";
export { MessageBuilder } from "../../lib/provider-kit/builder.js";
export { ANTHROPIC_MODELS } from "./models.js";
