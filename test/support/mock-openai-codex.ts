/**
 * A local server that speaks OpenAI's side of a ChatGPT-plan login and the Codex backend, as the Codex CLI
 * uses them, and rejects what they reject:
 * - `GET /oauth/authorize`: the browser's page; checks client_id, redirect_uri (the registered one),
 *   response_type, scope, the PKCE challenge (S256) and state, then redirects (302) to the redirect_uri
 *   with `code` and `state` (or `error=access_denied` when `deny` is set);
 * - `POST /oauth/token` (form): `authorization_code` checks the code (once), client_id, redirect_uri and
 *   that SHA-256 of `code_verifier` is the challenge; `refresh_token` rotates the refresh token (an old one
 *   answers `refresh_token_reused`, a revoked login `refresh_token_invalidated`). Tokens are JWTs whose
 *   `https://api.openai.com/auth` claim names the account and plan;
 * - `POST /backend-api/codex/responses`: the bearer must be the current access token (else 401
 *   `token_expired`), `chatgpt-account-id` its account, `OpenAI-Beta: responses=experimental` and
 *   `originator` present; the body must have `store: false`, `stream: true`, instructions and no
 *   `max_output_tokens`, and a model the plan has; `usageLimit` answers 429 `usage_limit_reached`.
 *   Accepted requests are forwarded to a mock-openai server's `/responses` for the streamed reply.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import { forward, listenLocal } from "./local-server.js";

export const CODEX_CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann";

export interface CodexCall {
  path: string;
  method: string;
  headers: IncomingMessage["headers"];
  query: Record<string, string>;
  form?: Record<string, string>;
  body?: Record<string, any>;
  status: number;
  error?: string;
}

export interface MockCodex {
  url: string;
  calls: CodexCall[];
  /** The redirect_uri the client registers (http://localhost:1455/auth/callback; tests set their port). */
  redirectUri: string;
  accountId: string;
  plan: string;
  /** The plan's models; others answer 400 as the backend does. */
  models: string[];
  /** Seconds the next access tokens live. */
  expiresIn: number;
  /** The access token the backend accepts, and the refresh token the token endpoint accepts. */
  access?: string;
  refresh?: string;
  /** The login was revoked: every refresh answers refresh_token_invalidated. */
  revoked: boolean;
  /** The next authorize page denies the login (`error=access_denied`). */
  deny: boolean;
  /** Answer the next backend request with 429 usage_limit_reached, resetting in this many seconds. */
  usageLimit?: number;
  count(path: string): number;
  rejected(): CodexCall[];
  /** Make the current access token stop working (a 401 follows until a refresh). */
  expireAccess(): void;
  close(): Promise<void>;
}

const b64url = (s: string | Buffer) => Buffer.from(s).toString("base64url");

/** A JWT as OpenAI issues them (the signature is not checked by clients; this one is a fixed filler). */
export function fakeJwt(claims: Record<string, unknown>): string {
  return `${b64url(JSON.stringify({ alg: "RS256", typ: "JWT" }))}.${b64url(JSON.stringify(claims))}.${b64url("mock-signature-not-verified")}`;
}

export async function startMockCodex(o: { upstream: string; redirectUri?: string }): Promise<MockCodex> {
  let serial = 0;
  const codes = new Map<string, { challenge: string; redirectUri: string; used: boolean }>();
  const usedRefresh = new Set<string>();
  const mock: MockCodex = {
    url: "",
    calls: [],
    redirectUri: o.redirectUri ?? "http://localhost:1455/auth/callback",
    accountId: "acc-7f3e9b2c-1d4a-4e8f-9a6b-5c2d8e1f0a3b",
    plan: "plus",
    models: ["gpt-5.4", "gpt-5.3-codex", "gpt-5.1-codex-mini"],
    expiresIn: 3600,
    revoked: false,
    deny: false,
    count: (path) => mock.calls.filter((c) => c.path === path).length,
    rejected: () => mock.calls.filter((c) => c.status >= 400),
    expireAccess: () => {
      mock.access = `expired-${mock.access}`;
    },
    close: () => listening.close(),
  };
  const auth = () => ({ chatgpt_account_id: mock.accountId, chatgpt_plan_type: mock.plan, user_id: "user-mock" });
  const issue = () => {
    serial++;
    const now = Math.floor(Date.now() / 1000);
    mock.access = fakeJwt({
      iss: "https://auth.openai.com",
      aud: ["https://api.openai.com/v1"],
      exp: now + mock.expiresIn,
      iat: now,
      jti: `jti-${serial}`,
      "https://api.openai.com/auth": auth(),
    });
    if (mock.refresh) usedRefresh.add(mock.refresh);
    mock.refresh = `rt_mock${serial}_${b64url(`refresh-${serial}-${now}`)}`;
    return {
      access_token: mock.access,
      refresh_token: mock.refresh,
      id_token: fakeJwt({ email: "user@example.com", exp: now + 3600, "https://api.openai.com/auth": auth() }),
      token_type: "Bearer",
      expires_in: mock.expiresIn,
      scope: "openid profile email offline_access",
    };
  };

  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const c of req) raw += c;
    const url = new URL(req.url ?? "/", "http://mock");
    const call: CodexCall = {
      path: url.pathname,
      method: req.method ?? "",
      headers: req.headers,
      query: Object.fromEntries(url.searchParams),
      status: 200,
    };
    mock.calls.push(call);
    const json = (status: number, body: unknown) => {
      call.status = status;
      if (status >= 400) call.error = JSON.stringify(body);
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const q = call.query;

    if (req.method === "GET" && url.pathname === "/oauth/authorize") {
      const bad = (what: string) => json(400, { error: "invalid_request", error_description: what });
      if (q.client_id !== CODEX_CLIENT_ID) return bad(`unknown client_id '${q.client_id}'`);
      if (q.redirect_uri !== mock.redirectUri) return bad(`redirect_uri '${q.redirect_uri}' is not registered`);
      if (q.response_type !== "code") return bad("response_type must be code");
      const scopes = (q.scope ?? "").split(" ");
      if (!["openid", "offline_access"].every((s) => scopes.includes(s)))
        return bad("scope lacks openid offline_access");
      if (q.code_challenge_method !== "S256" || !/^[A-Za-z0-9_-]{43}$/.test(q.code_challenge ?? ""))
        return bad("PKCE with code_challenge_method S256 is required");
      if (!q.state) return bad("state is required");
      const back = new URL(q.redirect_uri);
      if (mock.deny) {
        mock.deny = false;
        back.searchParams.set("error", "access_denied");
      } else {
        const code = `ac_mock_${++serial}_${b64url(String(Date.now()))}`;
        codes.set(code, { challenge: q.code_challenge!, redirectUri: q.redirect_uri, used: false });
        back.searchParams.set("code", code);
      }
      back.searchParams.set("state", q.state);
      call.status = 302;
      res.writeHead(302, { location: back.toString() });
      return res.end();
    }

    if (req.method === "POST" && url.pathname === "/oauth/token") {
      if (!String(req.headers["content-type"]).startsWith("application/x-www-form-urlencoded"))
        return json(400, { error: "invalid_request", error_description: "send a form body" });
      const form = Object.fromEntries(new URLSearchParams(raw));
      call.form = form;
      if (form.client_id !== CODEX_CLIENT_ID) return json(401, { error: "invalid_client" });
      if (form.grant_type === "authorization_code") {
        const c = codes.get(form.code ?? "");
        if (!c || c.used) return json(400, { error: "invalid_grant", error_description: "unknown or used code" });
        c.used = true;
        if (form.redirect_uri !== c.redirectUri)
          return json(400, { error: "invalid_grant", error_description: "redirect_uri does not match" });
        const hashed = createHash("sha256")
          .update(form.code_verifier ?? "")
          .digest("base64url");
        if (hashed !== c.challenge)
          return json(400, { error: "invalid_grant", error_description: "code_verifier does not match the challenge" });
        return json(200, issue());
      }
      if (form.grant_type === "refresh_token") {
        const rt = form.refresh_token ?? "";
        const fail = (code: string, message: string) =>
          json(401, { error: { message, type: "invalid_request_error", param: null, code } });
        if (mock.revoked) return fail("refresh_token_invalidated", "Your refresh token has been invalidated.");
        if (usedRefresh.has(rt))
          return fail(
            "refresh_token_reused",
            "Your refresh token has already been used to generate a new access token.",
          );
        if (rt !== mock.refresh) return fail("refresh_token_expired", "Your refresh token has expired.");
        return json(200, issue());
      }
      return json(400, { error: "unsupported_grant_type" });
    }

    if (req.method === "POST" && url.pathname === "/backend-api/codex/responses") {
      const bearer = String(req.headers.authorization ?? "").replace(/^Bearer /, "");
      if (!bearer || bearer !== mock.access)
        return json(401, {
          error: {
            message: "Provided authentication token is expired. Please try signing in again.",
            type: "invalid_request_error",
            code: "token_expired",
            param: null,
          },
        });
      if (req.headers["chatgpt-account-id"] !== mock.accountId)
        return json(403, { detail: "chatgpt-account-id is missing or does not match the token" });
      if (req.headers["openai-beta"] !== "responses=experimental" || !req.headers.originator)
        return json(400, { detail: "missing the OpenAI-Beta: responses=experimental or originator header" });
      let body: Record<string, any>;
      try {
        body = JSON.parse(raw);
      } catch {
        return json(400, { detail: "invalid JSON" });
      }
      call.body = body;
      if (body.store !== false) return json(400, { detail: "Store must be set to false" });
      if (body.stream !== true) return json(400, { detail: "Stream must be set to true" });
      if (typeof body.instructions !== "string" || !body.instructions.trim())
        return json(400, { detail: "Instructions are required" });
      if ("max_output_tokens" in body) return json(400, { detail: "Unsupported parameter: max_output_tokens" });
      if (!mock.models.includes(body.model))
        return json(400, {
          detail: `The '${body.model}' model is not supported when using Codex with a ChatGPT account.`,
        });
      if (mock.usageLimit !== undefined) {
        const seconds = mock.usageLimit;
        mock.usageLimit = undefined;
        return json(429, {
          error: {
            type: "usage_limit_reached",
            message: "The usage limit has been reached",
            plan_type: mock.plan,
            resets_at: Math.floor(Date.now() / 1000) + seconds,
            resets_in_seconds: seconds,
          },
        });
      }
      call.status = await forward(res, `${o.upstream}/responses`, raw);
      return;
    }
    json(404, { detail: "Not Found" });
  });
  const listening = await listenLocal(server);
  mock.url = listening.url;
  return mock;
}

/** What a browser does with the login page: load it, follow the redirect to the callback (localhost → 127.0.0.1). */
export async function browse(authorizeUrl: string): Promise<{ status: number; text: string; location?: string }> {
  const first = await fetch(authorizeUrl, { redirect: "manual" });
  const location = first.headers.get("location") ?? undefined;
  if (first.status !== 302 || !location) return { status: first.status, text: await first.text() };
  const back = new URL(location);
  if (back.hostname === "localhost") back.hostname = "127.0.0.1";
  const page = await fetch(back);
  return { status: page.status, text: await page.text(), location };
}
