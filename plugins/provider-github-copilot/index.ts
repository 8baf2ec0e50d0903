/**
 * provider-github-copilot: the models of a GitHub Copilot plan, as provider `github-copilot`. Login is
 * GitHub's device flow (RFC 8628: a code to enter at github.com/login/device, polled at the interval the
 * server gives, slower on `slow_down`); the GitHub token it gives is exchanged for a short-lived Copilot
 * API token, exchanged again before it runs out (and after a 401). Requests go over Chat Completions
 * (the `openai-wire` service of provider-openai) with the headers the Copilot API requires. The models
 * are the ones the plan's `/models` lists (read at login and at each token refresh, kept in
 * `$COIL_HOME/github-copilot-models.json`). GitHub Enterprise: `coil login github-copilot <host>`.
 * See docs/providers.md.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Type, type Static } from "typebox";
import { definePlugin, type Provider, type ProviderRequest } from "../../api/index.js";
import { CompatOption, compatOf } from "../../lib/compat.js";
import { defaultModel, findModel, type CatalogModel } from "../../lib/provider-kit/catalog.js";
import type { OAuthEntry } from "../../lib/provider-kit/config.js";
import {
  findLogin,
  LoginError,
  loginPlace,
  pollDeviceToken,
  registerLogin,
  requestJson,
  subscriptionAuth,
} from "../../lib/provider-kit/oauth.js";
import type { OpenAIWireService } from "../provider-openai/api.js";

export const CopilotOptions = Type.Object({
  /** GitHub's web origin for the device flow; default `https://github.com` (or `https://<enterprise host>`). */
  githubUrl: Type.Optional(Type.String()),
  /** GitHub's API origin for the token exchange; default `https://api.github.com` (or `https://api.<enterprise host>`). */
  githubApiUrl: Type.Optional(Type.String()),
  /** The Copilot API; default the one the token exchange names (`endpoints.api`). */
  copilotUrl: Type.Optional(Type.String()),
  /** Milliseconds per second of the device flow's polling interval (1000; tests against local servers use less). */
  pollUnitMs: Type.Integer({ minimum: 1, default: 1000 }),
  /** Read Pi's auth.json logins (`pi: false` leaves them out). */
  compat: Type.Optional(CompatOption),
});
type Options = Static<typeof CopilotOptions>;

export const PROVIDER = "github-copilot";
/** The OAuth app GitHub's Copilot editor integrations log in with (the id Pi and opencode use too). */
const CLIENT_ID = "Iv1.b507a08c87ecfe98";
const EDITOR = {
  "User-Agent": "GitHubCopilotChat/0.35.0",
  "Editor-Version": "vscode/1.107.0",
  "Editor-Plugin-Version": "copilot-chat/0.35.0",
  "Copilot-Integration-Id": "vscode-chat",
};
const LIMITS = { contextWindow: 128_000, maxOutput: 16_000 };
const AGAIN = "run `coil login github-copilot` again";

/** `ghe.example.com` or `https://ghe.example.com/` → `ghe.example.com`; undefined for github.com. */
function enterpriseDomain(value: string | undefined): string | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  let host: string;
  try {
    host = new URL(v.includes("://") ? v : `https://${v}`).host;
  } catch {
    throw new LoginError(`'${v}' is not a host name or URL`, "give the enterprise host, e.g. ghe.example.com");
  }
  return host === "github.com" ? undefined : host;
}

interface CopilotToken {
  token: string;
  expires_at: number;
  refresh_in?: number;
  endpoints?: { api?: string };
}

interface ListedModel {
  id: string;
  name?: string;
  model_picker_enabled?: boolean;
  policy?: { state?: string };
  capabilities?: {
    type?: string;
    limits?: { max_context_window_tokens?: number; max_output_tokens?: number; max_prompt_tokens?: number };
    supports?: { tool_calls?: boolean; vision?: boolean; reasoning_effort?: string[] };
  };
}

export default definePlugin({
  id: "provider-github-copilot",
  description: "GitHub Copilot plans: device-flow login, the plan's models over Chat Completions",
  options: CopilotOptions,
  setup(ctx) {
    const o: Options = ctx.options;
    const pi = compatOf(o.compat).pi;
    // $COIL_HOME from the locations service, the environment from the start (lib/provider-kit/oauth.ts)
    const place = loginPlace(ctx);
    ctx.onStart(place.start);
    const github = (domain?: string) => o.githubUrl ?? `https://${domain ?? "github.com"}`;
    const githubApi = (domain?: string) => o.githubApiUrl ?? `https://api.${domain ?? "github.com"}`;
    const modelsFile = () => join(place.home(), "github-copilot-models.json");

    /** Exchange the GitHub token for a Copilot API token (the login's `access`), and list the plan's models. */
    async function exchange(githubToken: string, domain: string | undefined): Promise<OAuthEntry> {
      const url = `${githubApi(domain)}/copilot_internal/v2/token`;
      const reply = await requestJson(url, { headers: { ...EDITOR, Authorization: `Bearer ${githubToken}` } });
      if (reply.status === 401)
        throw new LoginError("GitHub no longer accepts the login (the token was revoked or expired)", AGAIN);
      if (reply.status === 403 || reply.status === 404)
        throw new LoginError(
          `this GitHub account has no Copilot access (${url} answered HTTP ${reply.status}: ${String((reply.body as { message?: string }).message ?? "")})`,
          "check the Copilot plan at https://github.com/settings/copilot, or log in with another account",
        );
      const t = reply.body as unknown as CopilotToken;
      if (reply.status >= 400 || typeof t.token !== "string" || typeof t.expires_at !== "number")
        throw new LoginError(`the Copilot token exchange at ${url} failed (HTTP ${reply.status})`, AGAIN);
      const entry: OAuthEntry = {
        type: "oauth",
        refresh: githubToken,
        access: t.token,
        // a little early, so a request never goes out with a token that runs out on the way
        expires: t.expires_at * 1000 - 5 * 60_000,
        ...(domain ? { enterpriseUrl: domain } : {}),
        ...(t.endpoints?.api ? { baseUrl: t.endpoints.api } : {}),
      };
      await listModels(entry).catch((error: unknown) =>
        ctx.log.warn(`github-copilot: cannot list the plan's models: ${(error as Error).message}`),
      );
      return entry;
    }

    const copilotUrl = (entry: OAuthEntry | undefined) => {
      if (o.copilotUrl) return o.copilotUrl;
      if (typeof entry?.baseUrl === "string") return entry.baseUrl;
      const domain = typeof entry?.enterpriseUrl === "string" ? entry.enterpriseUrl : undefined;
      return domain ? `https://copilot-api.${domain}` : "https://api.individual.githubcopilot.com";
    };

    async function listModels(entry: OAuthEntry): Promise<void> {
      const reply = await requestJson(`${copilotUrl(entry)}/models`, {
        headers: { ...EDITOR, Authorization: `Bearer ${entry.access}` },
      });
      const data = (reply.body as { data?: ListedModel[] }).data;
      if (reply.status >= 400 || !Array.isArray(data)) throw new Error(`HTTP ${reply.status} from /models`);
      const usable = data.filter(
        (m) =>
          typeof m.id === "string" &&
          (m.capabilities?.type ?? "chat") === "chat" &&
          m.model_picker_enabled !== false &&
          m.policy?.state !== "disabled",
      );
      mkdirSync(place.home(), { recursive: true, mode: 0o700 });
      writeFileSync(modelsFile(), `${JSON.stringify(usable, null, 2)}\n`, { mode: 0o600 });
      cached = undefined;
    }

    let cached: { file: string; models: CatalogModel[] } | undefined;
    const models = (): CatalogModel[] => {
      const file = modelsFile();
      if (cached?.file === file) return cached.models;
      let listed: ListedModel[] = [];
      try {
        listed = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as ListedModel[]) : [];
      } catch {
        listed = [];
      }
      const out = listed.map(
        (m): CatalogModel => ({
          ...defaultModel(PROVIDER, m.id, "openai-completions", LIMITS),
          name: m.name ?? m.id,
          contextWindow: m.capabilities?.limits?.max_context_window_tokens ?? LIMITS.contextWindow,
          maxOutput: m.capabilities?.limits?.max_output_tokens ?? LIMITS.maxOutput,
          input: m.capabilities?.supports?.vision ? ["text", "image"] : ["text"],
          source: "github-copilot /models",
        }),
      );
      cached = { file, models: out };
      return out;
    };

    const auth = subscriptionAuth({
      provider: PROVIDER,
      home: place.home,
      env: place.env,
      pi,
      refresh: (entry) =>
        exchange(entry.refresh, typeof entry.enterpriseUrl === "string" ? entry.enterpriseUrl : undefined),
    });
    let currentEntry: OAuthEntry | undefined;
    const storedLogin = (): OAuthEntry | undefined => {
      try {
        return findLogin(place.home(), PROVIDER, place.env(), pi)?.entry;
      } catch {
        return undefined;
      }
    };

    const requestHeaders = (request: ProviderRequest): Record<string, string> => {
      const last = request.messages.at(-1);
      const images = request.messages.some(
        (m) =>
          (m.role === "user" || m.role === "toolResult") &&
          Array.isArray(m.content) &&
          m.content.some((c) => c.type === "image"),
      );
      return {
        ...EDITOR,
        "Openai-Intent": "conversation-edits",
        // who started this request: the user's prompt, or the agent continuing after tool results
        "X-Initiator": last?.role === "user" ? "user" : "agent",
        ...(images ? { "Copilot-Vision-Request": "true" } : {}),
      };
    };

    let inner: Provider | undefined;
    const wire = (): Provider => {
      if (inner) return inner;
      const service = ctx.services.get("openai-wire") as OpenAIWireService | undefined;
      if (!service)
        throw new LoginError(
          "provider-github-copilot needs provider-openai in the preset (it speaks Chat Completions through it)",
          "add provider-openai to the preset (the default preset has it)",
        );
      inner = service.provider({
        id: PROVIDER,
        // the login's API host (from the token exchange); read before the first token is asked for
        baseUrl: () => copilotUrl(currentEntry ?? storedLogin()),
        api: "openai-completions",
        get models() {
          return models();
        },
        limits: LIMITS,
        compat: { maxTokensField: "max_tokens", systemRole: "system", supportsStrictMode: false },
        hint: `log in with \`coil login ${PROVIDER}\` (or /login ${PROVIDER})`,
        login: {
          ready: () => auth.has(),
          secrets: () => auth.secrets(),
          token: async (force) => {
            currentEntry = await auth.current(force);
            return currentEntry.access;
          },
          headers: requestHeaders,
        },
      });
      return inner;
    };

    ctx.providers.register({
      id: PROVIDER,
      get models() {
        return models();
      },
      resolveModel: (id) => findModel(models(), id) ?? defaultModel(PROVIDER, id, "openai-completions", LIMITS),
      isConfigured: () => auth.has(),
      setupHint: `log in with \`coil login ${PROVIDER}\` (a GitHub Copilot plan; /login ${PROVIDER} in the TUI)`,
      stream: (request, signal) => wire().stream(request, signal),
    });

    registerLogin(ctx, {
      provider: PROVIDER,
      title: "GitHub Copilot",
      describe: (entry) => (typeof entry.enterpriseUrl === "string" ? entry.enterpriseUrl : "github.com"),
      async login(ui, args) {
        const domain = enterpriseDomain(args[0]);
        const start = await requestJson(
          `${github(domain)}/login/device/code`,
          { form: { client_id: CLIENT_ID, scope: "read:user" }, headers: { "User-Agent": EDITOR["User-Agent"] } },
          ui.signal,
        );
        const d = start.body as {
          device_code?: string;
          user_code?: string;
          verification_uri?: string;
          interval?: number;
          expires_in?: number;
        };
        if (start.status >= 400 || !d.device_code || !d.user_code || !d.verification_uri)
          throw new LoginError(
            `GitHub did not start the device login (HTTP ${start.status} from ${github(domain)}/login/device/code)`,
            domain ? `check the enterprise host '${domain}'` : AGAIN,
          );
        ui.show(`Open ${d.verification_uri} and enter the code ${d.user_code}`);
        ui.show("Waiting for you to approve the login in the browser… (Ctrl+C cancels)");
        const token = await pollDeviceToken({
          url: `${github(domain)}/login/oauth/access_token`,
          form: {
            client_id: CLIENT_ID,
            device_code: d.device_code,
            grant_type: "urn:ietf:params:oauth:grant-type:device_code",
          },
          headers: { "User-Agent": EDITOR["User-Agent"] },
          intervalSec: typeof d.interval === "number" ? d.interval : 5,
          expiresInSec: typeof d.expires_in === "number" ? d.expires_in : 900,
          signal: ui.signal,
          secondMs: o.pollUnitMs,
          retryHint: AGAIN,
        });
        return exchange(String(token.access_token), domain);
      },
    });
  },
});
