/**
 * The provider driver: one request, from the kernel calling a provider's `stream` to the SDK's HTTP call,
 * run in one place. A provider plugin hands `kitProvider` an adapter, which says what is particular to its
 * API (the catalog, what it accepts of the history, the request body, its SDK client, the call that sends,
 * the stream's events, its errors); the driver owns the sequence and calls the adapter, never the other way:
 *
 * 1. the model's catalog entry (`adapter.model`);
 * 2. the credentials: the API key (keys.ts: `--api-key`, models.yaml, the variable, auth.json) or a
 *    subscription login's token, and the redaction list;
 * 3. the headers (models.yaml's, the model's, a login's per-request headers);
 * 4. the history repaired as the adapter's `history` shape says (history.ts);
 * 5. the body (`adapter.build`, then models.yaml's and the model's `params`, then `adapter.finish`);
 * 6. the SDK client, made once per URL and key (`adapter.client`, given `providerFetch`, the SDK logger
 *    and the timeout), and the call (`adapter.send`) with the SDK's console routed to coil's diagnostics;
 *    a login's 401 refreshes the token once and sends again;
 * 7. the reply read into the message builder (`adapter.read`);
 * 8. retries with backoff (run.ts, retry.ts), and each failure classified (`adapter.classify`, else the
 *    transport's reading in errors.ts).
 *
 * See docs/providers.md for writing an adapter and docs/decisions.md for why the kit drives.
 */
import { Type } from "typebox";
import {
  CoilError,
  type ModelInfo,
  type PluginContext,
  type Provider,
  type ProviderEvent,
  type ProviderRequest,
  type StopReason,
} from "../../api/index.js";
import type { MessageBuilder } from "./builder.js";
import type { CatalogModel } from "./catalog.js";
import { deepMerge, type KeyLookup } from "./config.js";
import { messages, transportFailure, type Failure } from "./errors.js";
import { providerFetch } from "./fetch.js";
import { historyRules, prepareHistory, type HistoryShape } from "./history.js";
import { hasKey, keyHint, lookupKey } from "./keys.js";
import { runWithRetries } from "./run.js";
import { routeConsole, sdkLogger, type SdkLogger } from "./sdk-log.js";
import { resolveHeaders, variablesOf, type ConfigValue } from "./values.js";

export type { HistoryShape } from "./history.js";

/** The retry, timeout, output and models-file options every provider plugin takes (spread into its option schema). */
export const PROVIDER_OPTIONS = {
  /** Retries after the first attempt for 408/409/429/5xx/529, overloaded, and dropped connections. */
  maxRetries: Type.Integer({ minimum: 0, default: 3 }),
  /** First backoff step (doubles per retry, ±25% jitter). */
  baseDelayMs: Type.Integer({ minimum: 0, default: 1000 }),
  /** Longest wait before a retry; a server asking for longer fails the request. */
  maxRetryDelayMs: Type.Integer({ minimum: 0, default: 60_000 }),
  /** Per-request timeout. */
  timeoutMs: Type.Integer({ minimum: 1, default: 600_000 }),
  /** Output token limit when the request sets none (capped by the model's maximum). */
  maxTokens: Type.Integer({ minimum: 1, default: 32_000 }),
  /** Where to read extra providers and models; default `$COIL_HOME/models.yaml`. */
  modelsFile: Type.Optional(Type.String()),
  /** Pi's models.json, read under models.yaml; default `~/.pi/agent/models.json` (`PI_CODING_AGENT_DIR`), `none` to leave it out. */
  piModelsFile: Type.Optional(Type.String()),
};

/** What the driver reads of a provider plugin's options (PROVIDER_OPTIONS and its `headers`). */
export interface DriverOptions {
  maxRetries: number;
  baseDelayMs: number;
  maxRetryDelayMs: number;
  timeoutMs: number;
  /** Extra HTTP headers on every request (the client's default headers). */
  headers?: Record<string, string>;
}

/** What the driver gives `adapter.client`: spread it into the SDK's client options. */
export interface ClientOptions {
  timeout: number;
  /** The one `fetch` the SDKs get (fetch.ts: on node:http, no undici). */
  fetch: typeof providerFetch;
  defaultHeaders: Record<string, string>;
  /** The SDK's logger: its lines become the plugin's diagnostics. */
  logger: SdkLogger;
}

/** Where a request goes and with what key. */
export interface Credentials {
  url: string;
  key?: string;
  /** Send the key as a bearer token (Anthropic's `ANTHROPIC_AUTH_TOKEN`), not as the API key. */
  bearer: boolean;
}

/** Where an API key comes from (keys.ts's order), for a provider that uses one. */
export interface KeySource {
  /** The variable holding the key. */
  envName?: string;
  /** `apiKey` from models.yaml or Pi's models.json (`${NAME}`, `!command`, or a literal key). */
  apiKey?: ConfigValue;
  /** The server takes requests without a key (a local one, or `auth: none`). */
  keyless(): boolean;
  /** A variable read as a bearer token when no key is found. */
  bearerEnv?: string;
  /** A local server coil knows counts as set up once the user declared it (instead of having a key). */
  declared?(): boolean;
}

/** A subscription login instead of a key. */
export interface Login {
  /** The bearer token for the next request; `force` after a 401 (refresh even if it looks valid). */
  token(force?: boolean): Promise<string>;
  /** Headers the service requires on every request (computed per request). */
  headers?(request: ProviderRequest, token: string): Record<string, string>;
  /** Whether a login exists. */
  ready(): boolean;
  /** Every token of the login, for redaction. */
  secrets(): string[];
}

/** Where a failure happened, for the adapter's classifier and the error message. */
export interface FailureContext {
  provider: string;
  baseUrl: string;
  /** Where the key came from (`ANTHROPIC_API_KEY`, `auth.json`, `the login`, ...). */
  keyFrom?: string;
  keyHint: string;
  model: string;
}

/** What a provider plugin supplies: its API, without the sequence (the driver runs that). */
export interface ProviderAdapter<Client, Params extends object = object, Event = unknown> {
  id: string;
  /** What to do when the provider is not set up; default: the key's variable, `--api-key`, `coil auth set`. */
  hint?: string;
  /** The models listed (read each time: a provider may fill them in later). */
  readonly models: CatalogModel[];
  resolveModel(id: string): ModelInfo;
  /** The catalog entry a request's model stands for (one the catalog lacks gets defaults). */
  model(info: ModelInfo): CatalogModel;
  baseUrl(): string;
  /** The key's sources; a provider with neither `key` nor `login` sends no key. */
  key?: KeySource;
  login?: Login;
  /** models.yaml's headers for the provider (resolved per request, with the model's). */
  headers?: readonly ConfigValue[];
  /** models.yaml's `params`, deep-merged into every body (then the model's). */
  params?: Record<string, unknown>;
  /** Why the provider cannot take requests yet (the whole message), or undefined when it can. */
  unready?(): string | undefined;
  /** Credentials besides the key that must never appear in a message (a cloud's secrets). */
  secrets?(): (string | undefined)[];
  /** What the API accepts of the history, for this model. */
  history(model: CatalogModel): HistoryShape;
  /** The request body, from the request with its history repaired. */
  build(request: ProviderRequest, model: CatalogModel): Params;
  /** Change the merged body before it is sent (a backend that wants fields set or left out). */
  finish?(body: Record<string, unknown>, request: ProviderRequest): Record<string, unknown>;
  /** The SDK client (no retries of its own: the driver retries). */
  client(credentials: Credentials, options: ClientOptions): Promise<Client>;
  /** Start the streaming call; the driver awaits it. */
  send(
    client: Client,
    params: Params,
    o: { model: CatalogModel; signal: AbortSignal; headers: Record<string, string> },
  ): Promise<AsyncIterable<Event>>;
  /** Feed the reply into the builder: yield its deltas, return how it ended; throw when it broke off. */
  read(
    events: AsyncIterable<Event>,
    builder: MessageBuilder,
    model: CatalogModel,
  ): AsyncGenerator<ProviderEvent, StopReason>;
  /** What a failure means on this API; undefined for a failure of the transport (the driver reads those). */
  classify(error: unknown, where: FailureContext): Failure | undefined;
}

/** One provider response as it arrives: its status and headers, before the SDK reads its body. */
export interface ProviderResponse {
  /** The provider's id. */
  provider: string;
  /** The address the request went to. */
  url: string;
  status: number;
  /** The response's headers, names in lower case. */
  headers: Record<string, string>;
}

/**
 * Told of every provider response (each attempt of a request, retries included) before its body is read, and
 * awaited: a Pi extension's `after_provider_response` (plugins/pi-extensions). Optional: without it, nothing
 * is asked. A throw is reported and the response goes on to the SDK.
 */
export interface ProviderResponsesService {
  seen(response: ProviderResponse): void | Promise<void>;
}

declare module "coil" {
  interface Services {
    "provider-responses": ProviderResponsesService;
  }
}

type Found = KeyLookup & { bearer: boolean };

/** The kernel's `Provider` for an adapter: the driver runs every request (see the file's comment). */
export function kitProvider<Client, Params extends object, Event>(
  ctx: PluginContext<DriverOptions>,
  a: ProviderAdapter<Client, Params, Event>,
): Provider {
  const o = ctx.options;
  const clients = new Map<string, { client: Client; logger: SdkLogger }>();
  let warned = false;
  const warnOnce = (message: string) => {
    if (!warned) ctx.log.warn(message);
    warned = true;
  };
  // read at each lookup: the models plugin (whose `provider-cli` service says which provider --api-key is
  // for) may be set up after this plugin, or not be in the preset
  const selected = () => (ctx.services.get("provider-cli") as { selected?: string } | undefined)?.selected;
  const source = a.key;
  const keyless = () => source?.keyless() ?? true;
  const key = (run = false): Found => {
    if (!source) return { from: "none", bearer: false };
    const found = lookupKey(ctx, selected(), a.id, source.envName, source.keyless(), warnOnce, {
      apiKey: source.apiKey,
      run,
    });
    const bearer = source.bearerEnv ? process.env[source.bearerEnv] : undefined;
    if (!found.key && !found.deferred && bearer) return { key: bearer, from: source.bearerEnv, bearer: true };
    return { ...found, bearer: false };
  };
  const hint = a.hint ?? keyHint(a.id, source?.envName ?? (source?.apiKey ? variablesOf(source.apiKey)[0] : undefined));

  /** `providerFetch`, telling the `provider-responses` service (when there is one) of each response first. */
  const observed: typeof providerFetch = async (input, init) => {
    const response = await providerFetch(input, init);
    const watcher = ctx.services.get("provider-responses");
    if (!watcher) return response;
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name.toLowerCase()] = value;
    });
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    try {
      await watcher.seen({ provider: a.id, url, status: response.status, headers });
    } catch (error) {
      ctx.log.warn(`the provider-responses service failed on a response: ${(error as Error).message}`);
    }
    return response;
  };

  /** The client for these credentials, made on first use; `hidden`: the provider's other secrets. */
  async function client(
    c: Credentials,
    hidden: readonly (string | undefined)[],
  ): Promise<{ client: Client; logger: SdkLogger }> {
    const id = `${c.url}\n${c.bearer}\n${c.key ?? ""}`;
    let made = clients.get(id);
    if (!made) {
      // The SDK's console logging goes to coil's diagnostics (stderr stays clean in --mode json).
      const logger = sdkLogger(ctx.log, a.id, [c.key, ...hidden]);
      const options = { timeout: o.timeoutMs, fetch: observed, defaultHeaders: { ...o.headers }, logger };
      made = { client: await a.client(c, options), logger };
      clients.set(id, made);
    }
    return made;
  }

  return {
    id: a.id,
    // A provider that needs more than a key (a cloud's credentials, Azure's endpoint) lists its models once set up.
    get models() {
      return a.unready?.() !== undefined ? [] : a.models;
    },
    resolveModel: (id) => a.resolveModel(id),
    isConfigured: () => {
      if (a.login) return a.login.ready();
      const has = source?.declared ? source.declared() : hasKey(key()) || keyless();
      return has && a.unready?.() === undefined;
    },
    setupHint: hint,
    stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
      const model = a.model(request.model);
      const url = a.baseUrl();
      const hidden = a.secrets?.() ?? [];
      const secrets: (string | undefined)[] = [...hidden];
      let k: Found | undefined;
      const classify = (error: unknown): Failure => {
        if (error instanceof CoilError)
          return {
            message: error.hint ? `${error.message}; ${error.hint}` : error.message,
            retryable: false,
            overflow: false,
          };
        const where = { provider: a.id, baseUrl: url, keyFrom: k?.from, keyHint: hint, model: model.id };
        return a.classify(error, where) ?? transportFailure(error, where, messages(error)[0] ?? String(error));
      };
      return runWithRetries({
        provider: a.id,
        model,
        signal,
        secrets,
        policy: { maxRetries: o.maxRetries, baseDelayMs: o.baseDelayMs, maxRetryDelayMs: o.maxRetryDelayMs },
        classify,
        async *attempt({ builder, signal: abort }) {
          const unready = a.unready?.();
          if (unready) throw new CoilError("AUTH_MISSING", unready, { plugin: ctx.id });
          // A subscription login: its current token (refreshed when near expiry); else the key.
          const login = a.login;
          let token = login ? await login.token() : undefined;
          if (login && token !== undefined) {
            k = { key: token, from: "the login", bearer: false };
            secrets.push(token, ...login.secrets());
          } else {
            k ??= key(true);
            secrets.push(k.key);
            if (!k.key && !keyless())
              throw new CoilError("AUTH_MISSING", `no API key for provider '${a.id}': ${hint}`, { plugin: ctx.id });
          }
          // Resolved per request: a header naming a variable that is not set fails this request, naming it.
          const resolved = resolveHeaders(a.headers, model.headers);
          secrets.push(...resolved.secrets);
          const withLogin = (t: string | undefined) =>
            login && t !== undefined ? { ...resolved.headers, ...login.headers?.(request, t) } : resolved.headers;
          let headers = withLogin(token);
          const history = prepareHistory(request.messages, historyRules(a.history(model), a.id, model.id));
          const built = a.build({ ...request, messages: history }, model) as Record<string, unknown>;
          const merged = deepMerge(deepMerge(built, a.params), model.params);
          const params = (a.finish ? a.finish(merged, request) : merged) as Params;
          let sdk = await client({ url, key: k.key, bearer: k.bearer }, hidden);
          const send = () =>
            routeConsole(sdk.logger, () => a.send(sdk.client, params, { model, signal: abort, headers }));
          let events: AsyncIterable<Event>;
          try {
            events = await send();
          } catch (error) {
            // a login's token may have been revoked or run out early: refresh once and send again
            if (!login || (error as { status?: number }).status !== 401) throw error;
            token = await login.token(true);
            secrets.push(token, ...login.secrets());
            headers = withLogin(token);
            sdk = await client({ url, key: token, bearer: false }, hidden);
            events = await send();
          }
          return yield* a.read(events, builder, model);
        },
      });
    },
  };
}
