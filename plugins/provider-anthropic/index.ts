/**
 * provider-anthropic: Claude through the Anthropic Messages API (streaming), plus any
 * Anthropic-compatible server configured in `$COIL_HOME/models.yaml` with `api: anthropic-messages`.
 * Text, thinking (budget or adaptive/effort; signatures and redacted thinking kept for replay),
 * tool use, images, prompt caching, retries with backoff, cost from the model catalog.
 * The SDK is imported the first time a request is made. See docs/providers.md.
 */
import { Type, type Static } from "typebox";
import type Anthropic from "@anthropic-ai/sdk";
import { definePlugin, type ModelInfo, type PluginContext, type Provider } from "../../api/index.js";
import { defaultModel, findModel, markUserDefault, type CatalogModel } from "../../lib/provider-kit/catalog.js";
import { isLocalUrl, mergeModel, type ProviderConfig } from "../../lib/provider-kit/config.js";
import { refuseEntry, userModels } from "../../lib/provider-kit/user-models.js";
import type { ConfigValue } from "../../lib/provider-kit/values.js";
import { kitProvider, PROVIDER_OPTIONS, type Login, type ProviderAdapter } from "../../lib/provider-kit/driver.js";
import type {} from "./api.js";
import type { AnthropicClient } from "./client.js"; // types the `anthropic-wire` service this plugin provides
import { CLOUDS, cloudModels, type Cloud } from "./clouds.js";
import { ANTHROPIC_DEFAULT_LIMITS, ANTHROPIC_MODELS } from "./models.js";
import { buildParams, classify, HISTORY, readStream } from "./wire.js";

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
type Params = Anthropic.MessageCreateParamsStreaming;

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
  /** A login instead of a key (the `anthropic-wire` service: a Pi extension's oauth). */
  login?: Login;
  /** What to do when the provider is not set up, instead of the standard hint. */
  hint?: string;
}

/** The Messages API as the kit's driver runs it (lib/provider-kit/driver.ts): this plugin says what is Anthropic's. */
function makeProvider(ctx: PluginContext<Options>, s: Setup): Provider {
  const o = ctx.options;
  const cloud = s.cloud;
  // A cloud's model id names the Claude model inside it (us.anthropic.claude-…-v1:0): prices and limits come from the catalog.
  const withId = (m: CatalogModel | undefined, id: string) => m && { ...m, id, provider: s.id };
  const lookup = (id: string): CatalogModel | undefined =>
    findModel(s.models, id) ?? (cloud && withId(findModel(ANTHROPIC_MODELS, cloud.catalogId(id)), id));
  const adapter: ProviderAdapter<AnthropicClient, Params, Anthropic.RawMessageStreamEvent> = {
    id: s.id,
    hint: s.hint ?? cloud?.hint,
    // Bedrock and Vertex list their models once their credentials are set (the catalog is the same Claude family).
    models: s.models,
    resolveModel: (id) => {
      const found = lookup(id);
      return found ? { ...found, provider: s.id } : defaultModel(s.id, id, API, s.limits);
    },
    model: (model: ModelInfo): CatalogModel =>
      s.models.find((m) => m.id === model.id) ??
      (cloud && lookup(model.id)) ?? {
        ...defaultModel(s.id, model.id, API, s.limits),
        ...model,
        api: API,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...model.cost },
      },
    baseUrl: () =>
      s.baseUrl ??
      (s.id === "anthropic" ? process.env.ANTHROPIC_BASE_URL : undefined) ??
      (cloud ? `${cloud.name} (${cloud.id})` : "https://api.anthropic.com"),
    login: s.login,
    key: s.login
      ? undefined
      : {
          envName: s.apiKeyEnv,
          apiKey: s.apiKey,
          keyless: () => s.keyless,
          // Claude Code's bearer-token variable, for the built-in provider when no key is set
          bearerEnv: s.id === "anthropic" ? "ANTHROPIC_AUTH_TOKEN" : undefined,
        },
    headers: s.headers,
    params: s.params,
    unready: cloud
      ? () => {
          const missing = cloud.missing(process.env);
          return missing && `provider '${s.id}' (${cloud.name}) is not set up: ${missing}. To use it, ${cloud.hint}`;
        }
      : undefined,
    secrets: cloudSecrets,
    history: () => HISTORY,
    build: (request, model) =>
      buildParams(request, model, {
        provider: s.id,
        cache: s.cache ? o.cacheRetention : "none",
        maxTokens: o.maxTokens,
      }),
    async client(c, common) {
      if (cloud) return cloud.client(common, process.env);
      // The SDK's own retries are off: coil retries, so that waits are visible and abortable.
      const { MessagesClient } = await import("./client.js");
      const auth = c.bearer ? { authToken: c.key } : { apiKey: c.key ?? "no-key" };
      return new MessagesClient({ ...auth, baseURL: c.url, maxRetries: 0, ...common });
    },
    send: (sdk, params, { signal, headers }) => sdk.messages.create(params, { signal, maxRetries: 0, headers }),
    read: (events, builder) => readStream(events, builder),
    classify,
  };
  return kitProvider(ctx, adapter);
}

export default definePlugin({
  id: "provider-anthropic",
  description: "Claude models through the Anthropic Messages API (and Anthropic-compatible servers)",
  options: AnthropicOptions,
  setup(ctx) {
    const o = ctx.options;
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
      makeProvider(ctx, setupFor("anthropic", builtin, o)),
      ...mine.filter((p) => p.id !== "anthropic").map((p) => makeProvider(ctx, setupFor(p.id, p, o))),
    ];
    // Bedrock and Vertex, unless models.yaml already uses the id for a server of its own.
    for (const c of CLOUDS)
      if (!mine.some((p) => p.id === c.id))
        providers.push(
          makeProvider(ctx, {
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
        makeProvider(ctx, {
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
