/**
 * Pi's `pi.registerProvider(name, config)`, as coil providers: models on an OpenAI API through provider-openai's
 * `openai-wire` service, on the Anthropic Messages API through provider-anthropic's `anthropic-wire` (both as
 * models.yaml's servers are built), a custom `streamSimple` driven here, and an `oauth` login that
 * `coil login <name>` (and /login) runs, stored in coil's auth.json and refreshed before it runs out
 * (lib/provider-kit/oauth.ts). What cannot map (a provider override without models) is reported.
 */
import {
  type AssistantMessage,
  emptyUsage,
  type ModelInfo,
  type PluginContext,
  type Provider,
  type ProviderEvent,
  type ProviderRequest,
} from "coil";
import { coilHome } from "../../lib/paths.js";
import { defaultModel, findModel, type ApiKind, type CatalogModel } from "../../lib/provider-kit/catalog.js";
import type { OAuthEntry } from "../../lib/provider-kit/config.js";
import { findLogin, registerLogin, subscriptionAuth, type LoginUI } from "../../lib/provider-kit/oauth.js";
import type { ConfigValue } from "../../lib/provider-kit/values.js";
import type { AnthropicWireService } from "../provider-anthropic/api.js";
import type { OpenAIWireService } from "../provider-openai/api.js";

export interface PiProviderConfig {
  name?: string;
  baseUrl?: string;
  apiKey?: string;
  api?: string;
  headers?: Record<string, string>;
  authHeader?: boolean;
  models?: PiModelConfig[];
  oauth?: PiOAuth;
  streamSimple?: (model: unknown, context: unknown, options?: Record<string, unknown>) => unknown;
}

interface PiModelConfig {
  id: string;
  name?: string;
  api?: string;
  baseUrl?: string;
  reasoning?: boolean;
  input?: ("text" | "image")[];
  cost?: Partial<Record<"input" | "output" | "cacheRead" | "cacheWrite", number>>;
  contextWindow?: number;
  maxTokens?: number;
  headers?: Record<string, string>;
}

interface PiCredentials {
  refresh: string;
  access: string;
  expires: number;
  [key: string]: unknown;
}

interface PiOAuth {
  name?: string;
  login(callbacks: Record<string, unknown>): Promise<PiCredentials>;
  refreshToken(credentials: PiCredentials): Promise<PiCredentials>;
  getApiKey(credentials: PiCredentials): string;
  modifyModels?: unknown;
}

/** What registering needs from the runtime: the plugin's context, the extension's name, and its report. */
export interface ProviderHost {
  ctx: PluginContext;
  /** The extension's name, for messages and `coil models`. */
  extension: string;
  report(call: string, why: string): void;
}

const LIMITS = { contextWindow: 128_000, maxOutput: 16_384 };
const OPENAI = new Set(["openai-completions", "openai-responses"]);

/** Registers the provider; gives how its `apiKey` resolves (for ctx.modelRegistry), or undefined when it was refused. */
export function registerPiProvider(
  host: ProviderHost,
  name: string,
  config: PiProviderConfig,
): (() => string | undefined) | undefined {
  const { ctx, extension } = host;
  const call = `pi.registerProvider("${name}")`;
  if (!Array.isArray(config?.models) || !config.models.length) {
    host.report(call, "overriding a provider without models: set baseUrl and headers in models.yaml");
    return undefined;
  }
  const api = config.api;
  const streamSimple = config.streamSimple;
  if (!streamSimple && api !== "anthropic-messages" && !OPENAI.has(api ?? "")) {
    host.report(
      call,
      `api ${api ?? "(none)"}: coil speaks anthropic-messages, openai-completions and openai-responses (or give the provider a streamSimple)`,
    );
    return undefined;
  }
  const source = `Pi extension ${extension}`;
  const models: CatalogModel[] = config.models.map((m) => ({
    id: m.id,
    provider: name,
    name: m.name ?? m.id,
    api: (m.api && (OPENAI.has(m.api) || m.api === "anthropic-messages")
      ? m.api
      : (api ?? "openai-completions")) as ApiKind,
    contextWindow: m.contextWindow ?? LIMITS.contextWindow,
    maxOutput: m.maxTokens ?? LIMITS.maxOutput,
    reasoning: m.reasoning ?? false,
    input: m.input ?? ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...(m.cost ?? {}) },
    source,
  }));
  const login = config.oauth ? piLogin(host, name, config.oauth) : undefined;
  const keyRef = config.apiKey;
  const envKey = () => (keyRef && /^[A-Z_][A-Z0-9_]*$/.test(keyRef) ? process.env[keyRef] : keyRef);
  const hint = login
    ? `log in with \`coil login ${name}\` (or /login ${name}; ${source})`
    : keyRef && /^[A-Z_][A-Z0-9_]*$/.test(keyRef)
      ? `set ${keyRef} (${source})`
      : source;
  let provider: Provider;
  if (streamSimple) provider = streamProvider(host, name, config, models, streamSimple, login, envKey, hint);
  else if (api === "anthropic-messages") {
    const wire = ctx.services.get("anthropic-wire") as AnthropicWireService | undefined;
    if (!wire) {
      host.report(call, "the preset has no provider-anthropic plugin");
      return undefined;
    }
    const value = (raw: string, key: string, header?: string): ConfigValue => ({
      ...piValue(raw),
      file: source,
      provider: name,
      key,
      ...(header ? { header } : {}),
    });
    const inner = wire.provider({
      id: name,
      baseUrl: config.baseUrl ?? "",
      ...(keyRef && !login ? { apiKey: value(keyRef, "apiKey") } : {}),
      ...(login ? { login: { token: login.fresh, ready: login.ready, secrets: login.secrets } } : {}),
      headers: Object.entries(config.headers ?? {}).map(([h, v]) => value(v, `headers.${h}`, h)),
      models,
      limits: LIMITS,
      hint,
    });
    provider = inner;
  } else {
    const wire = ctx.services.get("openai-wire") as OpenAIWireService | undefined;
    if (!wire) {
      host.report(call, "the preset has no provider-openai plugin");
      return undefined;
    }
    const headers = { ...(config.headers ?? {}) };
    provider = wire.provider({
      id: name,
      baseUrl: () => config.baseUrl ?? "",
      api: api as ApiKind,
      models,
      limits: LIMITS,
      compat: {},
      login: login
        ? { token: login.fresh, headers: () => headers, ready: login.ready, secrets: login.secrets }
        : {
            token: async () => envKey() ?? "",
            headers: () => headers,
            ready: () => !keyRef || !!envKey(),
            secrets: () => [envKey()].filter((k): k is string => !!k && k !== keyRef),
          },
      hint,
    });
  }
  try {
    ctx.providers.register(provider);
    return envKey;
  } catch (error) {
    host.report(call, error instanceof Error ? error.message : String(error));
    return undefined;
  }
}

/** Pi's apiKey forms (as in models.json): `!command`, an environment variable's name, or the key itself. */
function piValue(raw: string): Pick<ConfigValue, "raw" | "literal"> {
  if (raw.startsWith("!")) return { raw };
  if (/^[A-Z_][A-Z0-9_]*$/.test(raw)) return { raw: `\${${raw}}` };
  return { raw, literal: true };
}

interface PiLogin {
  /** Refreshed first when it runs out, then the key. */
  fresh(force?: boolean): Promise<string>;
  ready(): boolean;
  secrets(): string[];
}

/**
 * The extension's `oauth` as a coil login flow: `coil login <name>` (and /login) runs its `login` with
 * callbacks on coil's login UI; the credentials go to coil's auth.json; `refreshToken` runs before they run
 * out; `getApiKey` turns them into the key each request sends.
 */
function piLogin(host: ProviderHost, name: string, oauth: PiOAuth): PiLogin {
  const toEntry = (c: PiCredentials): OAuthEntry => ({ ...c, type: "oauth" });
  const toCredentials = ({ type: _type, ...rest }: OAuthEntry): PiCredentials => rest as PiCredentials;
  const home = () => coilHome(process.env);
  registerLogin(host.ctx, {
    provider: name,
    title: oauth.name ?? name,
    describe: () => `Pi extension ${host.extension}`,
    async login(ui: LoginUI) {
      const ask = async (message: string) => {
        const answer = await ui.ask(message, ui.signal);
        if (answer === undefined) throw new Error(`no answer to "${message}"`);
        return answer;
      };
      const credentials = await oauth.login({
        onAuth: (info: { url: string; instructions?: string }) =>
          ui.show(`Open ${info.url}${info.instructions ? ` (${info.instructions})` : ""}`),
        onDeviceCode: (info: { userCode: string; verificationUri: string }) =>
          ui.show(`Open ${info.verificationUri} and enter the code ${info.userCode}`),
        onPrompt: (prompt: { message: string }) => ask(prompt.message),
        onProgress: (message: string) => ui.show(message),
        onManualCodeInput: () => ask("Paste the code or the redirect URL"),
        onSelect: async (prompt: { message: string; options: { id: string; label: string }[] }) => {
          ui.show([prompt.message, ...prompt.options.map((o) => `  ${o.id}: ${o.label}`)].join("\n"));
          return ui.ask("Type the id of your choice", ui.signal);
        },
        signal: ui.signal,
      });
      return toEntry(credentials);
    },
  });
  const auth = subscriptionAuth({
    provider: name,
    home,
    env: () => process.env,
    pi: true,
    refresh: async (entry) => toEntry(await oauth.refreshToken(toCredentials(entry))),
  });
  const stored = () => {
    try {
      return findLogin(home(), name, process.env, true)?.entry;
    } catch {
      return undefined;
    }
  };
  return {
    fresh: async (force) => oauth.getApiKey(toCredentials(await auth.current(force))),
    ready: () => auth.has(),
    secrets: () => [...auth.secrets(), ...[stored()].flatMap((e) => (e ? [oauth.getApiKey(toCredentials(e))] : []))],
  };
}

// ---- streamSimple ----

/**
 * A provider whose replies come from the extension's `streamSimple(model, context, options)`: Pi's events
 * (`start`, `text_delta`, `thinking_delta`, `toolcall_delta`, `done`, `error`) become coil's, Pi's messages
 * are coil's shapes already. A stream that throws, or ends without `done`/`error`, is an error reply naming
 * the extension.
 */
function streamProvider(
  host: ProviderHost,
  name: string,
  config: PiProviderConfig,
  models: CatalogModel[],
  streamSimple: NonNullable<PiProviderConfig["streamSimple"]>,
  login: PiLogin | undefined,
  envKey: () => string | undefined,
  hint: string,
): Provider {
  const api = config.api ?? "custom";
  return {
    id: name,
    models,
    resolveModel: (id: string): ModelInfo =>
      findModel(models, id) ?? defaultModel(name, id, (models[0]?.api ?? "openai-completions") as ApiKind, LIMITS),
    isConfigured: () => (login ? login.ready() : !config.apiKey || !!envKey()),
    setupHint: hint,
    stream: (request, signal) =>
      (async function* (): AsyncGenerator<ProviderEvent> {
        let ended = false;
        try {
          const apiKey = login ? await login.fresh() : envKey();
          const m = request.model as ModelInfo & { maxOutput?: number; headers?: unknown };
          const model = {
            ...m,
            api,
            provider: name,
            baseUrl: config.baseUrl ?? "",
            maxTokens: m.maxOutput,
            headers: config.headers ?? {},
          };
          const context = {
            systemPrompt: request.system.map((b) => b.text).join("\n\n"),
            messages: request.messages,
            tools: request.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
          };
          const stream = streamSimple(model, context, {
            signal,
            apiKey,
            maxTokens: m.maxOutput,
            ...(request.options.thinking ? { reasoning: request.options.thinking } : {}),
          }) as AsyncIterable<Record<string, unknown>>;
          for await (const e of stream) {
            const mapped = piEvent(e, name, request);
            if (!mapped) continue;
            yield mapped;
            if (mapped.type === "done" || mapped.type === "error") {
              ended = true;
              return;
            }
          }
        } catch (error) {
          ended = true;
          yield { type: "error", message: failed(request, error, signal, host.extension) };
          return;
        }
        if (!ended)
          yield {
            type: "error",
            message: failed(
              request,
              new Error(`the streamSimple of Pi extension ${host.extension} ended without a done or error event`),
              signal,
            ),
          };
      })(),
  };
}

function piEvent(e: Record<string, unknown>, provider: string, request: ProviderRequest): ProviderEvent | undefined {
  const m = (raw: unknown) => assistant(raw, provider, request);
  switch (e.type) {
    case "start":
      return { type: "start", partial: m(e.partial) };
    case "text_delta":
    case "thinking_delta":
    case "toolcall_delta":
      return {
        type: e.type,
        contentIndex: Number(e.contentIndex ?? 0),
        delta: String(e.delta ?? ""),
        partial: m(e.partial),
      };
    case "done":
      return { type: "done", message: m(e.message) };
    case "error": {
      const message = m(e.error);
      return {
        type: "error",
        message: { ...message, stopReason: message.stopReason === "aborted" ? "aborted" : "error" },
      };
    }
    default:
      return undefined;
  }
}

/** Pi's AssistantMessage as coil's (the same shape; `api`, `totalTokens` dropped, missing parts filled in). */
function assistant(raw: unknown, provider: string, request: ProviderRequest): AssistantMessage {
  const r = (raw ?? {}) as Partial<AssistantMessage> & { usage?: Partial<AssistantMessage["usage"]> };
  const u: Partial<AssistantMessage["usage"]> = r.usage ?? {};
  const cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, ...(u.cost ?? {}) };
  return {
    role: "assistant",
    content: Array.isArray(r.content) ? r.content.filter((b) => b && typeof b === "object") : [],
    provider,
    model: typeof r.model === "string" ? r.model : request.model.id,
    usage: {
      input: u.input ?? 0,
      output: u.output ?? 0,
      cacheRead: u.cacheRead ?? 0,
      cacheWrite: u.cacheWrite ?? 0,
      cost,
    },
    stopReason: r.stopReason ?? "stop",
    ...(r.errorMessage ? { errorMessage: r.errorMessage } : {}),
    timestamp: r.timestamp ?? Date.now(),
  };
}

function failed(request: ProviderRequest, error: unknown, signal: AbortSignal, extension?: string): AssistantMessage {
  const text = error instanceof Error ? error.message : String(error);
  return {
    role: "assistant",
    content: [],
    provider: request.model.provider,
    model: request.model.id,
    usage: emptyUsage(),
    stopReason: signal.aborted ? "aborted" : "error",
    errorMessage: extension ? `Pi extension ${extension}: ${text}` : text,
    timestamp: Date.now(),
  };
}

/**
 * pi-ai's `createAssistantMessageEventStream()`, which a `streamSimple` returns: `push(event)` and `end()`
 * on one side, `for await` (and `result()`, the final message) on the other.
 */
export class AssistantMessageEventStream implements AsyncIterable<Record<string, unknown>> {
  private readonly queue: Record<string, unknown>[] = [];
  private waiting: ((r: IteratorResult<Record<string, unknown>>) => void) | undefined;
  private done = false;
  private final: ((m: unknown) => void) | undefined;
  private readonly finalMessage = new Promise<unknown>((resolve) => {
    this.final = resolve;
  });

  push(event: Record<string, unknown>): void {
    if (this.done) return;
    if (event.type === "done") this.final?.(event.message);
    else if (event.type === "error") this.final?.(event.error);
    const w = this.waiting;
    if (w) {
      this.waiting = undefined;
      w({ value: event, done: false });
    } else this.queue.push(event);
  }

  end(result?: unknown): void {
    this.done = true;
    if (result !== undefined) this.final?.(result);
    const w = this.waiting;
    this.waiting = undefined;
    w?.({ value: undefined, done: true });
  }

  result(): Promise<unknown> {
    return this.finalMessage;
  }

  [Symbol.asyncIterator](): AsyncIterator<Record<string, unknown>> {
    return {
      next: () => {
        const next = this.queue.shift();
        if (next) return Promise.resolve({ value: next, done: false });
        if (this.done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.waiting = resolve;
        });
      },
    };
  }
}

/** pi-ai's `calculateCost(model, usage)`: fills `usage.cost` from the model's per-million prices. */
export function calculateCost(
  model: { cost?: Partial<Record<"input" | "output" | "cacheRead" | "cacheWrite", number>> },
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number; cost?: Record<string, number> },
): Record<string, number> {
  const price = model.cost ?? {};
  const part = (k: "input" | "output" | "cacheRead" | "cacheWrite") => ((price[k] ?? 0) * (usage[k] ?? 0)) / 1_000_000;
  const cost = {
    input: part("input"),
    output: part("output"),
    cacheRead: part("cacheRead"),
    cacheWrite: part("cacheWrite"),
    total: 0,
  };
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  usage.cost = cost;
  return cost;
}

/** What the served pi-ai module adds for streamSimple providers. */
export const piAiStreaming = {
  createAssistantMessageEventStream: () => new AssistantMessageEventStream(),
  AssistantMessageEventStream,
  calculateCost,
};
