/**
 * Local servers for Claude on the clouds, as their endpoints behave:
 * - Amazon Bedrock: `POST /model/{modelId}/invoke-with-response-stream`, authenticated by an AWS
 *   Signature Version 4 the server recomputes from the secret key (or a Bedrock API key as a bearer
 *   token); the body carries `anthropic_version` and no `model` or `stream`;
 *   the reply is AWS event-stream framing (binary messages with CRCs) whose `chunk` events hold each
 *   Messages API event as base64 JSON.
 * - Google Vertex AI: an STS token endpoint (for an `external_account` credential file) and
 *   `POST /v1/projects/{p}/locations/{r}/publishers/anthropic/models/{m}:streamRawPredict` with the
 *   bearer token it issued; body with `anthropic_version`, `stream` and no `model`; SSE reply.
 * Both also apply the Messages API's own validation (test/support/mock-anthropic.ts).
 */
import { createHash, createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenLocal } from "./local-server.js";
import { crc32 } from "node:zlib";
import { replyFrames, validate, type AnthropicBlock, type ReplyOptions } from "./mock-anthropic.js";

export interface CloudRequest {
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, any>;
  status: number;
  error?: string;
}

type Reply = { blocks: AnthropicBlock[]; options?: ReplyOptions };

export interface MockCloud {
  url: string;
  requests: CloudRequest[];
  rejected(): CloudRequest[];
  push(...replies: Reply[]): void;
  close(): Promise<void>;
}

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data).digest();

/** RFC 3986 encoding as SigV4 wants it: unreserved characters stay, everything else is %XX (upper case). */
const awsEncode = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The SigV4 signature of a request, computed here from the documented algorithm (canonical request,
 * string to sign, derived key). Services other than S3 encode each path segment twice.
 */
export function sigv4(o: {
  method: string;
  path: string;
  query: string;
  headers: IncomingMessage["headers"];
  signedHeaders: string[];
  body: Buffer;
  secret: string;
  date: string;
  region: string;
  service: string;
}): string {
  const canonicalUri = o.path
    .split("/")
    .map((seg) => awsEncode(seg))
    .join("/");
  const canonicalQuery = o.query
    .split("&")
    .filter(Boolean)
    .map((kv) =>
      kv
        .split("=")
        .map((x) => awsEncode(decodeURIComponent(x)))
        .join("="),
    )
    .sort()
    .join("&");
  const canonicalHeaders = o.signedHeaders
    .map(
      (h) =>
        `${h}:${String(o.headers[h] ?? "")
          .trim()
          .replace(/\s+/g, " ")}\n`,
    )
    .join("");
  const canonical = [
    o.method,
    canonicalUri,
    canonicalQuery,
    canonicalHeaders,
    o.signedHeaders.join(";"),
    sha256(o.body),
  ].join("\n");
  const day = o.date.slice(0, 8);
  const scope = `${day}/${o.region}/${o.service}/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", o.date, scope, sha256(canonical)].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${o.secret}`, day), o.region), o.service), "aws4_request");
  return createHmac("sha256", key).update(toSign).digest("hex");
}

/** One AWS event-stream message: prelude (lengths + CRC), string headers, payload, message CRC. */
export function eventStreamMessage(headers: Record<string, string>, payload: Buffer): Buffer {
  const hs = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const n = Buffer.from(name, "utf8");
      const v = Buffer.from(value, "utf8");
      const h = Buffer.alloc(1 + n.length + 1 + 2 + v.length);
      h.writeUInt8(n.length, 0);
      n.copy(h, 1);
      h.writeUInt8(7, 1 + n.length); // 7: string
      h.writeUInt16BE(v.length, 2 + n.length);
      v.copy(h, 4 + n.length);
      return h;
    }),
  );
  const total = 12 + hs.length + payload.length + 4;
  const prelude = Buffer.alloc(8);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(hs.length, 4);
  const preludeCrc = Buffer.alloc(4);
  preludeCrc.writeUInt32BE(crc32(prelude));
  const body = Buffer.concat([prelude, preludeCrc, hs, payload]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([body, crc]);
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

async function start(
  handle: (req: IncomingMessage, raw: Buffer, res: ServerResponse, record: CloudRequest) => Promise<void> | void,
  replies: Reply[],
  requests: CloudRequest[],
): Promise<MockCloud> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    let body: Record<string, any> = {};
    try {
      body = raw.length && String(req.headers["content-type"]).includes("json") ? JSON.parse(raw.toString("utf8")) : {};
    } catch {
      body = {};
    }
    const record: CloudRequest = { path: req.url ?? "", headers: req.headers, body, status: 200 };
    requests.push(record);
    await handle(req, raw, res, record);
  });
  const { url, close } = await listenLocal(server);
  return {
    url,
    requests,
    rejected: () => requests.filter((r) => r.status >= 400),
    push: (...more) => void replies.push(...more),
    close,
  };
}

/** The body the Messages API would have received, validated the same way; or the cloud's own complaint. */
function messagesBody(
  body: Record<string, any>,
  model: string,
  extraneous: string[],
): { body?: Record<string, any>; error?: string } {
  // The API version travels in the body on both clouds (the SDKs move the anthropic-version header there).
  if (typeof body.anthropic_version !== "string" || !body.anthropic_version)
    return { error: "anthropic_version: field required" };
  for (const key of extraneous) if (key in body) return { error: `extraneous key [${key}] is not permitted` };
  const whole: Record<string, any> = { ...body, model, stream: true };
  delete whole.anthropic_version;
  const invalid = validate(whole);
  return invalid ? { error: invalid } : { body: whole };
}

export async function startMockBedrock(o: {
  region: string;
  accessKey?: string;
  secretKey?: string;
  bearer?: string;
}): Promise<MockCloud> {
  const replies: Reply[] = [];
  const requests: CloudRequest[] = [];
  return start(
    (req, raw, res, record) => {
      const fail = (status: number, message: string, type = "ValidationException") => {
        record.status = status;
        record.error = message;
        json(res, status, { message }, { "x-amzn-errortype": type });
      };
      const [path, query = ""] = (req.url ?? "").split("?");
      const m = /^\/model\/([^/]+)\/invoke-with-response-stream$/.exec(path!);
      if (req.method !== "POST" || !m)
        return fail(404, `unknown operation ${req.method} ${req.url}`, "UnknownOperationException");
      const auth = String(req.headers.authorization ?? "");
      if (o.bearer) {
        if (auth !== `Bearer ${o.bearer}`)
          return fail(403, "Authentication failed: invalid Bedrock API key", "AccessDeniedException");
      } else {
        const a =
          /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
            auth,
          );
        if (!a)
          return fail(
            403,
            `Authorization header is not an AWS Signature Version 4: ${auth || "(none)"}`,
            "UnrecognizedClientException",
          );
        const [, keyId, , region, service, signed, signature] = a;
        if (keyId !== o.accessKey)
          return fail(403, "The security token included in the request is invalid.", "UnrecognizedClientException");
        if (region !== o.region || service !== "bedrock")
          return fail(
            403,
            `Credential should be scoped to a valid region and service bedrock, got ${region}/${service}`,
            "InvalidSignatureException",
          );
        const date = String(req.headers["x-amz-date"] ?? "");
        const headers = signed!.split(";");
        if (!headers.includes("host") || !headers.includes("x-amz-date"))
          return fail(403, "host and x-amz-date must be signed", "InvalidSignatureException");
        const expected = sigv4({
          method: req.method!,
          path: path!,
          query,
          headers: req.headers,
          signedHeaders: headers,
          body: raw,
          secret: o.secretKey!,
          date,
          region: region!,
          service: service!,
        });
        if (expected !== signature)
          return fail(
            403,
            "The request signature we calculated does not match the signature you provided.",
            "InvalidSignatureException",
          );
      }
      const model = decodeURIComponent(m[1]!);
      const checked = messagesBody(record.body, model, ["model", "stream"]);
      if (checked.error) return fail(400, checked.error);
      const next = replies.shift();
      if (!next) return fail(500, "mock script exhausted", "InternalServerException");
      res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "mock-request" });
      for (const frame of replyFrames(next.blocks, { model, ...next.options })) {
        const payload = Buffer.from(
          JSON.stringify({ bytes: Buffer.from(JSON.stringify(frame.data)).toString("base64"), p: "abcd" }),
        );
        res.write(
          eventStreamMessage(
            { ":event-type": "chunk", ":content-type": "application/json", ":message-type": "event" },
            payload,
          ),
        );
      }
      res.end();
    },
    replies,
    requests,
  );
}

export async function startMockVertex(o: {
  project: string;
  region: string;
  subjectToken: string;
}): Promise<MockCloud & { tokenUrl: string }> {
  const replies: Reply[] = [];
  const requests: CloudRequest[] = [];
  const token = "ya29.mock-vertex-access-token";
  const cloud = await start(
    (req, raw, res, record) => {
      const fail = (status: number, message: string) => {
        record.status = status;
        record.error = message;
        json(res, status, {
          error: { code: status, message, status: status === 401 ? "UNAUTHENTICATED" : "INVALID_ARGUMENT" },
        });
      };
      if (req.url === "/token") {
        const form = new URLSearchParams(raw.toString("utf8"));
        if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:token-exchange")
          return fail(400, `unsupported grant_type ${form.get("grant_type")}`);
        if (form.get("subject_token") !== o.subjectToken) return fail(401, "invalid subject token");
        return json(res, 200, {
          access_token: token,
          issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
          token_type: "Bearer",
          expires_in: 3600,
        });
      }
      const m =
        /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):streamRawPredict$/.exec(
          req.url ?? "",
        );
      if (req.method !== "POST" || !m) return fail(404, `not found: ${req.method} ${req.url}`);
      if (req.headers.authorization !== `Bearer ${token}`)
        return fail(401, "Request had invalid authentication credentials.");
      if (m[1] !== o.project || m[2] !== o.region) return fail(403, `project ${m[1]} / location ${m[2]} not allowed`);
      const model = decodeURIComponent(m[3]!);
      const checked = messagesBody(record.body, model, ["model"]);
      if (checked.error) return fail(400, checked.error);
      const next = replies.shift();
      if (!next) return fail(500, "mock script exhausted");
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const frame of replyFrames(next.blocks, { model, ...next.options }))
        res.write(`event: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n\n`);
      res.end();
    },
    replies,
    requests,
  );
  return { ...cloud, tokenUrl: `${cloud.url}/token` };
}
