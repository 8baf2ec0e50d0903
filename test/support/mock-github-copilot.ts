/**
 * A local server that speaks GitHub's side of Copilot as GitHub documents the device flow (RFC 8628) and
 * as Copilot's editor clients use it: `POST /login/device/code`, `POST /login/oauth/access_token` (form
 * bodies, JSON replies; `authorization_pending`, `slow_down`, `expired_token` scripted per test), the
 * token exchange `GET /copilot_internal/v2/token` (Bearer GitHub token), and the Copilot API:
 * `GET /models` and `POST /chat/completions`, which checks the headers Copilot requires and the current
 * Copilot token, then forwards to a mock-openai server for the streamed reply.
 */
import { createServer, type IncomingMessage } from "node:http";
import { forward, listenLocal } from "./local-server.js";

export const CLIENT_ID = "Iv1.b507a08c87ecfe98";

export interface CopilotCall {
  path: string;
  at: number;
  headers: IncomingMessage["headers"];
  form?: Record<string, string>;
  status: number;
}

export interface MockCopilot {
  url: string;
  calls: CopilotCall[];
  /** Replies to the next polls of the token endpoint, in order; after them, the access token. */
  polls: ("authorization_pending" | "slow_down" | "expired_token" | "access_denied")[];
  /** The GitHub token the device flow gives, and the one the exchange accepts (`revoked`: none). */
  githubToken: string;
  revoked: boolean;
  /** The Copilot token the next exchange returns; chat requests must carry the last one returned. */
  nextCopilotToken: string;
  validCopilotToken?: string;
  /** Where the Copilot API sits on this server (the token exchange's `endpoints.api` is url + this): "" or e.g. "/ghe". */
  apiPrefix: string;
  /** Model ids /models lists (the plan's). */
  models: { id: string; picker?: boolean; context?: number; output?: number }[];
  count(path: string): number;
  close(): Promise<void>;
}

const REQUIRED = ["editor-version", "editor-plugin-version", "copilot-integration-id", "x-initiator", "openai-intent"];

export async function startMockCopilot(o: { upstream: string }): Promise<MockCopilot> {
  const mock: MockCopilot = {
    url: "",
    calls: [],
    polls: [],
    githubToken: "gho_mockgithubtoken0123456789abcdefABCD",
    revoked: false,
    nextCopilotToken: "tid=0123456789abcdef;exp=1999999999;sku=mock;8kp=1:aaaa0000",
    apiPrefix: "",
    models: [
      { id: "gpt-4.1", context: 128000, output: 16384 },
      { id: "claude-sonnet-4.5" },
      { id: "hidden", picker: false },
    ],
    count: (path) => mock.calls.filter((c) => c.path === path).length,
    close: () => listening.close(),
  };
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const c of req) raw += c;
    const path = req.url?.split("?")[0] ?? "";
    const call: CopilotCall = { path, at: Date.now(), headers: req.headers, status: 200 };
    mock.calls.push(call);
    const json = (status: number, body: unknown) => {
      call.status = status;
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const bearer = String(req.headers.authorization ?? "").replace(/^Bearer /, "");
    if (req.method === "POST" && (path === "/login/device/code" || path === "/login/oauth/access_token")) {
      if (req.headers.accept !== "application/json") return json(400, { error: "send Accept: application/json" });
      const form = Object.fromEntries(new URLSearchParams(raw));
      call.form = form;
      if (form.client_id !== CLIENT_ID) return json(200, { error: "incorrect_client_credentials" });
      if (path === "/login/device/code")
        return json(200, {
          device_code: "dev-code-1",
          user_code: "WDJB-MJHT",
          verification_uri: "https://github.com/login/device",
          expires_in: 900,
          interval: 1,
        });
      if (form.device_code !== "dev-code-1" || form.grant_type !== "urn:ietf:params:oauth:grant-type:device_code")
        return json(200, { error: "bad_verification_code" });
      const next = mock.polls.shift();
      if (next) return json(200, { error: next, ...(next === "slow_down" ? { interval: 6 } : {}) });
      return json(200, { access_token: mock.githubToken, token_type: "bearer", scope: "read:user" });
    }
    if (req.method === "GET" && path === "/copilot_internal/v2/token") {
      if (mock.revoked || bearer !== mock.githubToken) return json(401, { message: "Bad credentials" });
      mock.validCopilotToken = mock.nextCopilotToken;
      return json(200, {
        token: mock.nextCopilotToken,
        expires_at: Math.floor(Date.now() / 1000) + 1800,
        refresh_in: 1500,
        endpoints: { api: mock.url + mock.apiPrefix },
      });
    }
    const missing = REQUIRED.filter((h) => !req.headers[h]);
    const api = path.startsWith(mock.apiPrefix) ? path.slice(mock.apiPrefix.length) : "";
    if (api === "/models" || api === "/chat/completions") {
      if (!bearer || bearer !== mock.validCopilotToken)
        return json(401, { error: { message: "unauthorized: token expired", code: "unauthorized" } });
      if (api === "/models")
        return json(200, {
          data: mock.models.map((m) => ({
            id: m.id,
            name: m.id,
            model_picker_enabled: m.picker ?? true,
            capabilities: {
              type: "chat",
              limits: { max_context_window_tokens: m.context, max_output_tokens: m.output },
              supports: { tool_calls: true },
            },
          })),
        });
      if (missing.length)
        return json(400, {
          error: { message: `missing required headers: ${missing.join(", ")}`, code: "bad_request" },
        });
      call.status = await forward(res, `${o.upstream}/chat/completions`, raw);
      return;
    }
    json(404, { message: "Not Found" });
  });
  const listening = await listenLocal(server);
  mock.url = listening.url;
  return mock;
}
