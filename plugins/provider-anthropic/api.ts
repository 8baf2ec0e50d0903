/**
 * provider-anthropic's contract (types only): the `anthropic-wire` service, through which another plugin
 * (pi-extensions, for a Pi extension's `registerProvider` with `api: "anthropic-messages"`) makes a provider
 * on the Anthropic Messages API with this plugin's SDK client, wire mapping, retries and error messages.
 */
import type { Provider } from "../../api/index.js";
import type { CatalogModel } from "../../lib/provider-kit/catalog.js";
import type { Login } from "../../lib/provider-kit/driver.js";
import type { ConfigValue } from "../../lib/provider-kit/values.js";

export interface AnthropicWireSetup {
  id: string;
  /** The API root (`https://proxy.example.com`; the SDK adds `/v1/messages`). */
  baseUrl: string;
  /** The key: a variable's name (`${NAME}`), `!command` or the key itself, as models.yaml's `apiKey`. */
  apiKey?: ConfigValue;
  /** A login instead of a key: its token for each request (refreshed by the login), sent as a bearer token. */
  login?: Login;
  /** Headers on every request (same forms as models.yaml's). */
  headers?: readonly ConfigValue[];
  models: CatalogModel[];
  limits: { contextWindow: number; maxOutput: number };
  /** What to do when no key is found. */
  hint: string;
}

/** The `anthropic-wire` service. */
export interface AnthropicWireService {
  provider(setup: AnthropicWireSetup): Provider;
}

declare module "coil" {
  interface Services {
    "anthropic-wire": AnthropicWireService;
  }
}
