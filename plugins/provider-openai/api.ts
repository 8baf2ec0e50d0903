/**
 * provider-openai's contract (types only): the `openai-wire` service, through which another plugin (a
 * subscription provider such as provider-github-copilot) sends its requests over OpenAI's wire formats with
 * this plugin's retries and error messages.
 */
import type { Provider, ProviderRequest } from "../../api/index.js";
import type { ApiKind, CatalogModel } from "../../lib/provider-kit/catalog.js";
import type { Compat } from "../../lib/provider-kit/config.js";
import type { Login } from "../../lib/provider-kit/driver.js";

/** How a subscription provider authenticates each request it sends over the OpenAI wire formats (the kit's driver refreshes once on a 401). */
export type WireLogin = Login;

/** What a subscription provider plugin gives the `openai-wire` service: one provider over Responses or Chat Completions. */
export interface WireSetup {
  id: string;
  baseUrl(): string;
  /** The API every model of the provider uses unless its catalog entry says otherwise. */
  api: ApiKind;
  /** The models (a getter: a provider that lists them from its API fills them in later). */
  readonly models: CatalogModel[];
  limits: { contextWindow: number; maxOutput: number };
  /** Chat Completions switches (Responses: `stateless` gives `store: false`). */
  compat: Compat;
  login: WireLogin;
  hint: string;
  /** Change a request body before it is sent (a backend that wants fields set or left out). */
  body?(params: Record<string, unknown>, request: ProviderRequest): Record<string, unknown>;
  /** What a failure means on this service, before the generic OpenAI reading (undefined: the generic one). */
  explain?(error: unknown, model: string): { message: string; retryable: boolean } | undefined;
}

/** The `openai-wire` service: OpenAI's wire formats, retries and error messages for providers other plugins define. */
export interface OpenAIWireService {
  provider(setup: WireSetup): Provider;
}
