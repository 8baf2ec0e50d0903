/**
 * provider-openai-codex: the models of a ChatGPT Plus/Pro (or Business, Edu, Enterprise) plan, as provider
 * `openai-codex`, the backend OpenAI's Codex CLI uses. Login is OAuth 2.0 authorization code with PKCE
 * (RFC 7636, S256) through a callback server on 127.0.0.1 at the port and path the Codex client registers
 * (1455, /auth/callback), with a paste fallback when no browser can reach it (SSH). The access token is
 * a JWT whose claim names the ChatGPT account; it is refreshed before it runs out and after a 401, and the
 * refresh token the server rotates is stored at once. Requests go over the Responses API (the
 * `openai-wire` service of provider-openai) as the backend expects them: `store: false`, instructions,
 * streaming, encrypted reasoning, no output limit field, and its headers. See docs/providers.md.
 */
import { spawn } from "../../lib/child-process.js";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { Type, type Static } from "typebox";
import { definePlugin, type Provider, type ProviderRequest } from "../../api/index.js";
import { CompatOption, compatOf } from "../../lib/compat.js";
import { defaultModel, findModel, type CatalogModel } from "../../lib/provider-kit/catalog.js";
import type { OAuthEntry } from "../../lib/provider-kit/config.js";
import {
  findLogin,
  LoginError,
  loginPlace,
  type LoginUI,
  registerLogin,
  requestJson,
  subscriptionAuth,
} from "../../lib/provider-kit/oauth.js";
import type { OpenAIWireService } from "../provider-openai/api.js";

// Required, not imported: on Node 22 and 24 an ESM import of node:http fills in all of its exports, and its
// lazy WebSocket/MessageEvent load undici into every run that has this plugin (lib/provider-kit/http-fetch.ts).
const { createServer } = createRequire(import.meta.url)("node:http") as typeof import("node:http");

export const CodexOptions = Type.Object({
  /** OpenAI's login server (`/oauth/authorize`, `/oauth/token`); default `https://auth.openai.com`. */
  authUrl: Type.String({ default: "https://auth.openai.com" }),
  /** The Codex backend (requests go to `<baseUrl>/responses`); default `https://chatgpt.com/backend-api/codex`. */
  baseUrl: Type.String({ default: "https://chatgpt.com/backend-api/codex" }),
  /** The callback server's port on 127.0.0.1: the one the Codex client registers (1455); 0 picks a free one. */
  callbackPort: Type.Integer({ minimum: 0, maximum: 65535, default: 1455 }),
  /** Open the login page in a browser (`$BROWSER`, else the system's opener where there is a display). */
  openBrowser: Type.Boolean({ default: true }),
  /** Seconds a login waits for the browser or a pasted code. */
  loginTimeoutSec: Type.Integer({ minimum: 1, default: 600 }),
  /** Read Pi's auth.json logins (`pi: false` leaves them out). */
  compat: Type.Optional(CompatOption),
});
type Options = Static<typeof CodexOptions>;

export const PROVIDER = "openai-codex";
/** The public OAuth client of OpenAI's Codex CLI (the one Pi and opencode log in with too). */
const CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann";
const SCOPE = "openid profile email offline_access";
const CALLBACK_PATH = "/auth/callback";
/** Where the ChatGPT account and plan sit in the id and access tokens. */
const CLAIM = "https://api.openai.com/auth";
const LIMITS = { contextWindow: 272_000, maxOutput: 128_000 };
const AGAIN = "run `coil login openai-codex` again";

const EFFORTS = ["low", "medium", "high", "xhigh"];
function codex(id: string, name: string, extra: Partial<CatalogModel> = {}): CatalogModel {
  return {
    ...defaultModel(PROVIDER, id, "openai-responses", LIMITS),
    name,
    reasoning: true,
    thinking: "effort",
    efforts: EFFORTS,
    source: "built-in (ChatGPT plan)",
    ...extra,
  };
}

/** The models the Codex backend serves to ChatGPT plans (as of 2026-12; which ones a plan includes varies). */
export const CODEX_MODELS: CatalogModel[] = [
  codex("gpt-5.4", "GPT-5.4", { default: "provider" }),
  codex("gpt-5.5", "GPT-5.5"),
  codex("gpt-5.4-mini", "GPT-5.4 mini"),
  codex("gpt-5.3-codex", "GPT-5.3 Codex"),
  codex("gpt-5.3-codex-spark", "GPT-5.3 Codex Spark", { contextWindow: 128_000, input: ["text"] }),
  codex("gpt-5.2-codex", "GPT-5.2 Codex"),
  codex("gpt-5.2", "GPT-5.2"),
  codex("gpt-5.1-codex-max", "GPT-5.1 Codex Max"),
  codex("gpt-5.1-codex-mini", "GPT-5.1 Codex mini", { efforts: ["medium", "high"] }),
  codex("gpt-5.1", "GPT-5.1", { efforts: ["none", "low", "medium", "high"] }),
];

const b64url = (bytes: Buffer) => bytes.toString("base64url");

/** The payload of a JWT (not verified: coil only reads which account it names); undefined if it is not one. */
export function jwtClaims(token: string | undefined): Record<string, unknown> | undefined {
  const part = token?.split(".")[1];
  if (!part) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as unknown;
    return claims && typeof claims === "object" ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function accountOf(token: string | undefined): { accountId?: string; planType?: string; exp?: number } {
  const claims = jwtClaims(token);
  const auth = (claims?.[CLAIM] ?? {}) as { chatgpt_account_id?: unknown; chatgpt_plan_type?: unknown };
  return {
    accountId: typeof auth.chatgpt_account_id === "string" ? auth.chatgpt_account_id : undefined,
    planType: typeof auth.chatgpt_plan_type === "string" ? auth.chatgpt_plan_type : undefined,
    exp: typeof claims?.exp === "number" ? claims.exp : undefined,
  };
}

const PLAN_NAMES: Record<string, string> = { plus: "Plus", pro: "Pro", team: "Business", business: "Business" };
const planName = (plan: string | undefined) => (plan ? (PLAN_NAMES[plan] ?? plan) : undefined);

/** Code and state from what the user pasted: the redirected URL, its query, `code#state`, or the bare code. */
export function parsePasted(text: string): { code?: string; state?: string; error?: string } {
  const v = text.trim();
  let params: URLSearchParams | undefined;
  try {
    params = new URL(v).searchParams;
  } catch {
    if (v.includes("code=") || v.includes("error=")) params = new URLSearchParams(v.replace(/^[^?]*\?/, ""));
  }
  if (params)
    return {
      code: params.get("code") ?? undefined,
      state: params.get("state") ?? undefined,
      error: params.get("error") ?? undefined,
    };
  const [code, state] = v.split("#", 2);
  return { code: code || undefined, state: state || undefined };
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;

interface Callback {
  port: number;
  /** The code the browser brought back (rejects on a wrong state or an error the login server sent). */
  code: Promise<string>;
  close(): void;
}

/** The callback server on 127.0.0.1; undefined when the port is taken (the paste fallback still works). */
function listenCallback(port: number, state: string): Promise<Callback | undefined> {
  let settle: { resolve(code: string): void; reject(error: Error): void } | undefined;
  const code = new Promise<string>((resolve, reject) => {
    settle = { resolve, reject };
  });
  code.catch(() => undefined); // a rejection nobody waits for (the paste won) is not an unhandled one
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const reply = (status: number, title: string, text: string) => {
      res.writeHead(status, { "content-type": "text/html; charset=utf-8", connection: "close" });
      res.end(PAGE(title, text));
    };
    if (url.pathname !== CALLBACK_PATH) return reply(404, "Not found", "This is coil's login callback.");
    const error = url.searchParams.get("error");
    if (url.searchParams.get("state") !== state) {
      reply(400, "Login failed", "The login's state does not match the one coil started. Run the login again.");
      return settle?.reject(
        new LoginError(
          "the browser came back with another login's state (not the one this login started), so it was refused",
          AGAIN,
        ),
      );
    }
    if (error) {
      reply(400, "Login failed", `The login server said: ${error}. Return to your terminal.`);
      return settle?.reject(loginServerError(error, url.searchParams.get("error_description")));
    }
    const got = url.searchParams.get("code");
    if (!got) return reply(400, "Login failed", "No authorization code in the address.");
    reply(200, "Logged in", "coil has your login. You can close this tab and return to your terminal.");
    settle?.resolve(got);
  });
  return new Promise((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE" || error.code === "EACCES") resolve(undefined);
      else
        reject(new LoginError(`cannot start the login callback server on 127.0.0.1:${port}: ${error.message}`, AGAIN));
    });
    server.listen(port, "127.0.0.1", () =>
      resolve({
        port: (server.address() as AddressInfo).port,
        code,
        close: () => {
          server.close();
          server.closeAllConnections();
        },
      }),
    );
  });
}

function loginServerError(error: string, description: string | null): LoginError {
  if (error === "access_denied") return new LoginError("the login was cancelled or denied in the browser", AGAIN);
  return new LoginError(`OpenAI's login server answered ${error}${description ? `: ${description}` : ""}`, AGAIN);
}

/** Open `url` in a browser where one can be: `$BROWSER`, `open` (macOS), `start` (Windows), `xdg-open` with a display. */
function openInBrowser(url: string, env: NodeJS.ProcessEnv): boolean {
  const browser = env.BROWSER?.trim();
  let command: string | undefined;
  let args: string[] = [url];
  if (browser) command = browser;
  else if (process.platform === "darwin") command = "open";
  else if (process.platform === "win32") {
    command = "cmd";
    args = ["/c", "start", "", url];
  } else if (env.DISPLAY || env.WAYLAND_DISPLAY) command = "xdg-open";
  if (!command) return false;
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true, env });
    child.on("error", () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}

interface TokenReply {
  access_token?: string;
  refresh_token?: string;
  id_token?: string;
  expires_in?: number;
  error?: string | { code?: string; message?: string; type?: string };
  error_description?: string;
}

/** The error code of a failed token request: `{ error: "x" }`, `{ error: { code: "x" } }` or `{ code: "x" }`. */
function errorCode(body: Record<string, unknown>): string | undefined {
  const e = body.error as TokenReply["error"];
  if (typeof e === "string") return e;
  if (e && typeof e === "object") return e.code ?? e.type;
  return typeof body.code === "string" ? body.code : undefined;
}

const REFRESH_GONE: Record<string, string> = {
  refresh_token_expired: "the login expired",
  refresh_token_reused: "its refresh token was already used (another program may have refreshed it)",
  refresh_token_invalidated: "the login was revoked (signed out, or the password changed)",
  invalid_grant: "the login is no longer valid",
};

export default definePlugin({
  id: "provider-openai-codex",
  description: "ChatGPT plans (the Codex backend): browser login with PKCE, the Codex models over the Responses API",
  options: CodexOptions,
  setup(ctx) {
    const o: Options = ctx.options;
    const pi = compatOf(o.compat).pi;
    // $COIL_HOME from the locations service, the environment from the start (lib/provider-kit/oauth.ts)
    const place = loginPlace(ctx);
    ctx.onStart(place.start);
    const tokenUrl = () => `${o.authUrl.replace(/\/+$/, "")}/oauth/token`;
    // One id per run: the backend's prompt cache key and session header.
    const conversation = randomUUID();

    /** A token reply as a login entry: the account from the id token (else the access token), expiry from expires_in. */
    function entryOf(reply: TokenReply, previous?: OAuthEntry): OAuthEntry {
      const access = reply.access_token!;
      const fromId = accountOf(reply.id_token);
      const fromAccess = accountOf(access);
      const accountId =
        fromId.accountId ??
        fromAccess.accountId ??
        (typeof previous?.accountId === "string" ? previous.accountId : undefined);
      if (!accountId)
        throw new LoginError(
          "the token OpenAI returned names no ChatGPT account (no chatgpt_account_id claim)",
          `${AGAIN}; a ChatGPT plan is needed (an API-only account logs in with an API key: coil auth set openai)`,
        );
      const planType =
        fromId.planType ?? fromAccess.planType ?? (typeof previous?.planType === "string" ? previous.planType : "");
      const seconds =
        typeof reply.expires_in === "number"
          ? reply.expires_in
          : fromAccess.exp
            ? fromAccess.exp - Date.now() / 1000
            : 3600;
      return {
        type: "oauth",
        access,
        // the server may keep the refresh token as it is; a new one replaces the old at once (rotation)
        refresh: reply.refresh_token ?? previous?.refresh ?? "",
        expires: Date.now() + seconds * 1000,
        accountId,
        ...(planType ? { planType } : {}),
      };
    }

    async function refresh(entry: OAuthEntry): Promise<OAuthEntry> {
      const reply = await requestJson(tokenUrl(), {
        form: { grant_type: "refresh_token", refresh_token: entry.refresh, client_id: CLIENT_ID },
      });
      const body = reply.body as TokenReply;
      if (reply.status < 400 && typeof body.access_token === "string") return entryOf(body, entry);
      const code = errorCode(reply.body);
      if (code === "refresh_token_reused") {
        // another coil (or Pi) refreshed first and stored the new tokens: use those
        const now = findLogin(place.home(), PROVIDER, place.env(), pi)?.entry;
        if (now && now.refresh !== entry.refresh && now.expires > Date.now()) return now;
      }
      const why =
        (code && REFRESH_GONE[code]) ??
        (reply.status === 400 || reply.status === 401 ? "the login is no longer valid" : undefined);
      if (why)
        throw new LoginError(
          `ChatGPT no longer accepts the openai-codex login: ${why} (${tokenUrl()} answered HTTP ${reply.status}${code ? ` ${code}` : ""})`,
          "run `coil login openai-codex` (or /login openai-codex in the TUI)",
        );
      throw new LoginError(
        `refreshing the openai-codex login at ${tokenUrl()} failed (HTTP ${reply.status}${code ? ` ${code}` : ""})`,
        "try again; if it keeps failing, run `coil login openai-codex`",
      );
    }

    const auth = subscriptionAuth({ provider: PROVIDER, home: place.home, env: place.env, pi, refresh });
    let currentEntry: OAuthEntry | undefined;

    const requestHeaders = (_request: ProviderRequest, token: string): Record<string, string> => {
      const accountId =
        accountOf(token).accountId ??
        (typeof currentEntry?.accountId === "string" ? currentEntry.accountId : undefined);
      return {
        ...(accountId ? { "chatgpt-account-id": accountId } : {}),
        "OpenAI-Beta": "responses=experimental",
        originator: "coil",
        session_id: conversation,
        accept: "text/event-stream",
      };
    };

    /** The body as the Codex backend wants it: store false, instructions always, no output limit field. */
    const codexBody = (params: Record<string, unknown>): Record<string, unknown> => {
      const { max_output_tokens: _limit, ...rest } = params;
      return {
        ...rest,
        store: false,
        stream: true,
        instructions:
          typeof rest.instructions === "string" && rest.instructions.trim()
            ? rest.instructions
            : "You are a helpful assistant.",
        prompt_cache_key: conversation,
        ...(Array.isArray(rest.tools) && rest.tools.length ? { tool_choice: "auto", parallel_tool_calls: true } : {}),
      };
    };

    /** The backend's own failures: the plan's usage limit, a plan without Codex, a model the plan lacks. */
    const explain = (error: unknown, model: string): { message: string; retryable: boolean } | undefined => {
      const e = error as {
        status?: number;
        error?: {
          type?: string;
          code?: string;
          message?: string;
          plan_type?: string;
          resets_at?: number;
          resets_in_seconds?: number;
          detail?: string;
        };
      };
      const kind = e.error?.type ?? e.error?.code;
      const plan = planName(e.error?.plan_type ?? (currentEntry?.planType as string | undefined));
      if (kind === "usage_limit_reached" || (e.status === 429 && e.error?.resets_at !== undefined)) {
        const at =
          typeof e.error?.resets_at === "number"
            ? e.error.resets_at * 1000
            : typeof e.error?.resets_in_seconds === "number"
              ? Date.now() + e.error.resets_in_seconds * 1000
              : undefined;
        const when = at
          ? `; it resets at ${new Date(at).toISOString().slice(0, 16).replace("T", " ")} UTC (in ${Math.max(1, Math.round((at - Date.now()) / 60_000))} min)`
          : "";
        return {
          message: `openai-codex HTTP 429 usage_limit_reached: you have reached the usage limit of your ChatGPT${plan ? ` ${plan}` : ""} plan${when}. Not retried: wait for the reset, use another provider (/model), or see your plan at https://chatgpt.com/codex/settings/usage`,
          retryable: false,
        };
      }
      if (kind === "usage_not_included")
        return {
          message: `openai-codex HTTP ${e.status ?? 403} usage_not_included: your ChatGPT${plan ? ` ${plan}` : ""} plan does not include Codex; upgrade the plan, or use an API key (coil auth set openai)`,
          retryable: false,
        };
      const detail = e.error?.detail;
      if (e.status === 400 && typeof detail === "string" && /model/i.test(detail) && /not supported/i.test(detail))
        return {
          message: `openai-codex HTTP 400: ${detail} — your ChatGPT plan does not offer '${model}' in Codex; pick another with /model or --model openai-codex/<id> (coil models openai-codex lists them)`,
          retryable: false,
        };
      return undefined;
    };

    let inner: Provider | undefined;
    const wire = (): Provider => {
      if (inner) return inner;
      const service = ctx.services.get("openai-wire") as OpenAIWireService | undefined;
      if (!service)
        throw new LoginError(
          "provider-openai-codex needs provider-openai in the preset (it speaks the Responses API through it)",
          "add provider-openai to the preset (the default preset has it)",
        );
      inner = service.provider({
        id: PROVIDER,
        baseUrl: () => o.baseUrl.replace(/\/+$/, ""),
        api: "openai-responses",
        models: CODEX_MODELS,
        limits: LIMITS,
        compat: { stateless: true, supportsStrictMode: false },
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
        body: codexBody,
        explain,
      });
      return inner;
    };

    ctx.providers.register({
      id: PROVIDER,
      models: CODEX_MODELS,
      resolveModel: (id) => findModel(CODEX_MODELS, id) ?? defaultModel(PROVIDER, id, "openai-responses", LIMITS),
      isConfigured: () => auth.has(),
      setupHint: `log in with \`coil login ${PROVIDER}\` (a ChatGPT Plus/Pro plan; /login ${PROVIDER} in the TUI)`,
      stream: (request, signal) => wire().stream(request, signal),
    });

    /** The code: from the callback server, or pasted; whichever comes first. */
    async function awaitCode(ui: LoginUI, callback: Callback | undefined, state: string): Promise<string> {
      const stopAsking = new AbortController();
      const pasted = (async (): Promise<string> => {
        const question = callback
          ? "Or paste the address your browser ended on (or the code), then Enter:"
          : "Paste the address your browser ended on (http://localhost:…/auth/callback?code=…), or the code, then Enter:";
        for (;;) {
          const text = await ui.ask(question, stopAsking.signal);
          if (stopAsking.signal.aborted) return new Promise<string>(() => undefined);
          if (text === undefined) {
            // no input (stdin closed, or the question dismissed): the callback server may still get the code
            if (callback) return new Promise<string>(() => undefined);
            throw new LoginError("no authorization code was pasted", AGAIN);
          }
          const got = parsePasted(text);
          if (got.error) throw loginServerError(got.error, null);
          if (got.state !== undefined && got.state !== state)
            throw new LoginError(
              "the pasted address carries another login's state (not the one this login started), so it was refused",
              AGAIN,
            );
          if (got.code) return got.code;
          ui.show("That has no authorization code in it (look for code=… in the address).");
        }
      })();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new LoginError(`no login arrived within ${o.loginTimeoutSec} s`, AGAIN)),
          o.loginTimeoutSec * 1000,
        );
      });
      const cancelled = new Promise<never>((_, reject) => {
        const stop = () => reject(new LoginError("login cancelled", AGAIN));
        if (ui.signal.aborted) stop();
        else ui.signal.addEventListener("abort", stop, { once: true });
      });
      try {
        return await Promise.race([...(callback ? [callback.code] : []), pasted, timeout, cancelled]);
      } finally {
        clearTimeout(timer);
        stopAsking.abort();
      }
    }

    registerLogin(ctx, {
      provider: PROVIDER,
      title: "ChatGPT (Codex)",
      describe: (entry) => {
        const plan = planName(typeof entry.planType === "string" ? entry.planType : accountOf(entry.access).planType);
        return plan ? `ChatGPT ${plan}` : "ChatGPT";
      },
      async login(ui) {
        const verifier = b64url(randomBytes(32));
        const challenge = b64url(createHash("sha256").update(verifier).digest());
        const state = b64url(randomBytes(24));
        const callback = await listenCallback(o.callbackPort, state);
        const port = callback?.port ?? o.callbackPort;
        const redirectUri = `http://localhost:${port}${CALLBACK_PATH}`;
        try {
          const url = new URL(`${o.authUrl.replace(/\/+$/, "")}/oauth/authorize`);
          for (const [k, v] of Object.entries({
            response_type: "code",
            client_id: CLIENT_ID,
            redirect_uri: redirectUri,
            scope: SCOPE,
            code_challenge: challenge,
            code_challenge_method: "S256",
            id_token_add_organizations: "true",
            codex_cli_simplified_flow: "true",
            state,
            originator: "codex_cli_rs",
          }))
            url.searchParams.set(k, v);
          const opened = o.openBrowser && callback ? openInBrowser(url.toString(), place.env()) : false;
          ui.show(
            opened
              ? "Opened a browser to log in with your ChatGPT account at this address:"
              : "Open this address in a browser to log in with your ChatGPT account:",
          );
          ui.show(url.toString());
          if (!callback)
            ui.show(
              `(127.0.0.1:${o.callbackPort} is taken, so the browser cannot hand the login back by itself: after you log in, copy the address it ends on and paste it here.)`,
            );
          else if (!opened)
            ui.show(
              `No browser here (an SSH session?): open it on any machine; if the page at ${redirectUri} does not load there, copy that address and paste it here.`,
            );
          const code = await awaitCode(ui, callback, state);
          const reply = await requestJson(
            tokenUrl(),
            {
              form: {
                grant_type: "authorization_code",
                client_id: CLIENT_ID,
                code,
                code_verifier: verifier,
                redirect_uri: redirectUri,
              },
            },
            ui.signal,
          );
          const body = reply.body as TokenReply;
          if (reply.status >= 400 || typeof body.access_token !== "string" || typeof body.refresh_token !== "string") {
            const said = body.error_description ?? errorCode(reply.body) ?? `HTTP ${reply.status}`;
            throw new LoginError(`OpenAI's token endpoint ${tokenUrl()} refused the code: ${said}`, AGAIN);
          }
          return entryOf(body);
        } finally {
          callback?.close();
        }
      },
    });
  },
});
