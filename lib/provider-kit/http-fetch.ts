/**
 * A `fetch` on `node:http`/`node:https`, for the provider SDKs (their `fetch` client option), and the
 * `Headers` class the bundled SDKs use in place of the global one (scripts/build.mjs).
 *
 * Why: Node's own `fetch`, `Headers` and `Response` live in its bundled undici. Touching any of them
 * loads and compiles undici (80–170 ms and 12 MB on the development machine, more than the rest of a
 * one-turn run), and the first connection starts a background WebAssembly compile of its HTTP parser
 * that the process then waits for at exit. `node:http` is part of Node's start-up snapshot.
 *
 * What it does as Node's fetch does: string, byte, ArrayBuffer, Blob-less stream bodies (a string is sent
 * as its UTF-8 bytes, without undici's lone-surrogate scan); streamed response bodies as a web
 * `ReadableStream` with back-pressure; `AbortSignal` before and during the request and while the body
 * streams (an `AbortError` DOMException); keep-alive through Node's global agents (keep-alive since Node
 * 19, so `NODE_EXTRA_CA_CERTS`, `NODE_TLS_REJECT_UNAUTHORIZED` and a user-replaced global agent apply);
 * gzip/deflate/br responses decoded; redirects followed (at most 20; 303 and a POST's 301/302 become a
 * GET). Failures reject with `TypeError("fetch failed", { cause })` and a body cut short errors with
 * `TypeError("terminated", { cause })`, the messages the retry rules (retry.ts) know from undici.
 * Handed to the global fetch instead: every request when Node is asked to honour a proxy from the
 * environment (`NODE_USE_ENV_PROXY`, `--use-env-proxy`). Not supported: a global undici dispatcher
 * installed with undici's `setGlobalDispatcher` (coil's requests do not go through it), `FormData`/`Blob` request bodies (the SDKs' file uploads, which coil
 * does not use), `credentials`, `cache`, `mode` and `integrity` (meaningless outside a browser).
 */
import type * as Http from "node:http";
import { createRequire } from "node:module";

// Required, not imported: on Node 22 and 24, an ESM import of node:http fills in all of its exports, and
// its lazy `WebSocket`, `CloseEvent` and `MessageEvent` load undici. require() leaves them lazy.
const require = createRequire(import.meta.url);
// https (with tls) and zlib are required when a request needs them: a server on plain http and a response that
// is not compressed (an SSE stream) never load them.
const http = require("node:http") as typeof import("node:http");
let https: typeof import("node:https") | undefined;
let zlib: typeof import("node:zlib") | undefined;
const unzip = () => (zlib ??= require("node:zlib") as typeof import("node:zlib"));
const secure = () => (https ??= require("node:https") as typeof import("node:https"));

type HeaderSource = Iterable<readonly [string, string]> | Record<string, string | readonly string[] | undefined>;

/** The WHATWG `Headers` surface the SDKs use, without undici. Names are kept lower-case, iterated sorted. */
export class FetchHeaders {
  readonly #values = new Map<string, string>();
  readonly #cookies: string[] = [];

  constructor(init?: unknown) {
    if (init === undefined || init === null) return;
    const source = init as HeaderSource & { forEach?: unknown };
    if (typeof (source as Iterable<unknown>)[Symbol.iterator] === "function") {
      for (const pair of source as Iterable<readonly [string, string]>) this.append(pair[0], pair[1]);
    } else {
      for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
        if (value === undefined) continue;
        if (Array.isArray(value)) for (const v of value) this.append(name, String(v));
        else this.append(name, String(value));
      }
    }
  }

  append(name: string, value: string): void {
    const key = name.toLowerCase();
    const v = String(value).trim();
    if (key === "set-cookie") this.#cookies.push(v);
    const old = this.#values.get(key);
    this.#values.set(key, old === undefined ? v : `${old}, ${v}`);
  }
  set(name: string, value: string): void {
    const key = name.toLowerCase();
    const v = String(value).trim();
    if (key === "set-cookie") this.#cookies.splice(0, this.#cookies.length, v);
    this.#values.set(key, v);
  }
  delete(name: string): void {
    const key = name.toLowerCase();
    if (key === "set-cookie") this.#cookies.length = 0;
    this.#values.delete(key);
  }
  get(name: string): string | null {
    return this.#values.get(name.toLowerCase()) ?? null;
  }
  has(name: string): boolean {
    return this.#values.has(name.toLowerCase());
  }
  getSetCookie(): string[] {
    return [...this.#cookies];
  }
  *entries(): IterableIterator<[string, string]> {
    for (const key of [...this.#values.keys()].sort()) {
      if (key === "set-cookie") for (const c of this.#cookies) yield [key, c];
      else yield [key, this.#values.get(key) as string];
    }
  }
  *keys(): IterableIterator<string> {
    for (const [k] of this.entries()) yield k;
  }
  *values(): IterableIterator<string> {
    for (const [, v] of this.entries()) yield v;
  }
  forEach(fn: (value: string, name: string, headers: FetchHeaders) => void, thisArg?: unknown): void {
    for (const [k, v] of this.entries()) fn.call(thisArg, v, k, this);
  }
  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
  get [Symbol.toStringTag](): string {
    return "Headers";
  }
}

/**
 * The `FormData` the bundled SDKs see: `instanceof` answers without loading undici (a request body is
 * checked against `FormData` on every request); constructing one, for an upload, makes Node's own.
 */
export const FetchFormData = Object.defineProperty(
  function FormData(...args: unknown[]) {
    return new (globalThis.FormData as unknown as new (...a: unknown[]) => object)(...args);
  },
  Symbol.hasInstance,
  {
    value: (v: unknown) =>
      typeof v === "object" && v !== null && Object.prototype.toString.call(v) === "[object FormData]",
  },
);

const STATUS_WITHOUT_BODY = new Set([101, 204, 205, 304]);

/** The `Response` surface the SDKs read: status, headers, a streamed body, text/json/arrayBuffer, clone. */
export class FetchResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: FetchHeaders;
  readonly url: string;
  readonly redirected: boolean;
  readonly type = "basic";
  body: ReadableStream<Uint8Array> | null;

  constructor(
    body: ReadableStream<Uint8Array> | null,
    init: { status: number; statusText: string; headers: FetchHeaders; url: string; redirected: boolean },
  ) {
    this.body = body;
    this.status = init.status;
    this.statusText = init.statusText;
    this.headers = init.headers;
    this.url = init.url;
    this.redirected = init.redirected;
  }
  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }
  get bodyUsed(): boolean {
    return this.#used;
  }
  #used = false;

  async bytes(): Promise<Uint8Array> {
    if (this.#used) throw new TypeError("Body is unusable: Body has already been read");
    this.#used = true;
    if (!this.body) return new Uint8Array(0);
    const chunks: Uint8Array[] = [];
    const reader = this.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    return Buffer.concat(chunks);
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    const b = await this.bytes();
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  }
  async text(): Promise<string> {
    return Buffer.from(await this.bytes()).toString("utf8");
  }
  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }
  clone(): FetchResponse {
    if (this.#used) throw new TypeError("Response.clone: Body has already been consumed.");
    let copy: ReadableStream<Uint8Array> | null = null;
    if (this.body) {
      const [a, b] = this.body.tee();
      this.body = a;
      copy = b;
    }
    const { status, statusText, url, redirected } = this;
    return new FetchResponse(copy, { status, statusText, headers: new FetchHeaders(this.headers), url, redirected });
  }
}

type Init = {
  method?: string;
  headers?: unknown;
  body?: unknown;
  signal?: AbortSignal | null;
  redirect?: "follow" | "error" | "manual";
};

const abortError = (signal: AbortSignal): unknown =>
  signal.reason ?? new DOMException("This operation was aborted", "AbortError");

/** Whether Node's own fetch is asked to use the proxy the environment names (Node 24's `NODE_USE_ENV_PROXY`). */
function wantsGlobalFetch(): boolean {
  return Boolean(process.env.NODE_USE_ENV_PROXY) || process.execArgv.includes("--use-env-proxy");
}

async function bodyBytes(body: unknown): Promise<Buffer | AsyncIterable<Uint8Array> | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof URLSearchParams) return Buffer.from(body.toString(), "utf8");
  if (typeof (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator] === "function")
    return body as AsyncIterable<Uint8Array>;
  throw new TypeError(`coil's provider fetch cannot send a ${Object.prototype.toString.call(body)} body`);
}

function decoded(res: Http.IncomingMessage): NodeJS.ReadableStream {
  const coding = String(res.headers["content-encoding"] ?? "")
    .toLowerCase()
    .trim();
  if (coding === "gzip" || coding === "x-gzip")
    return res.pipe(unzip().createGunzip({ flush: unzip().constants.Z_SYNC_FLUSH }));
  if (coding === "deflate") return res.pipe(unzip().createInflate({ flush: unzip().constants.Z_SYNC_FLUSH }));
  if (coding === "br") return res.pipe(unzip().createBrotliDecompress());
  return res;
}

/** A web stream over the response, paused while the reader is behind; errors and aborts end it as undici's do. */
function webBody(res: Http.IncomingMessage, signal: AbortSignal | null | undefined): ReadableStream<Uint8Array> {
  const source = decoded(res);
  let onAbort: (() => void) | undefined;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let finished = false;
      const fail = (error: unknown) => {
        if (finished) return;
        finished = true;
        if (onAbort) signal?.removeEventListener("abort", onAbort);
        controller.error(error);
      };
      source.on("data", (chunk: Buffer) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) source.pause();
      });
      source.on("end", () => {
        if (finished) return;
        finished = true;
        if (onAbort) signal?.removeEventListener("abort", onAbort);
        controller.close();
      });
      source.on("error", (e: Error) => fail(new TypeError("terminated", { cause: e })));
      // A connection that closes before the body's end (Node 20 reports it as `aborted`).
      res.on("aborted", () => fail(new TypeError("terminated", { cause: new Error("other side closed") })));
      res.on("error", (e: Error) => fail(new TypeError("terminated", { cause: e })));
      if (signal) {
        onAbort = () => {
          fail(abortError(signal));
          res.destroy();
        };
        signal.addEventListener("abort", onAbort, { once: true });
      }
    },
    pull() {
      source.resume();
    },
    cancel() {
      if (onAbort) signal?.removeEventListener("abort", onAbort);
      res.destroy();
    },
  });
}

function once(
  url: URL,
  method: string,
  headers: FetchHeaders,
  body: Buffer | AsyncIterable<Uint8Array> | undefined,
  signal: AbortSignal | null | undefined,
): Promise<Http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const lib = url.protocol === "https:" ? secure() : url.protocol === "http:" ? http : undefined;
    if (!lib) {
      reject(new TypeError("fetch failed", { cause: new Error(`unsupported protocol ${url.protocol}`) }));
      return;
    }
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of headers) {
      const had = out[k];
      if (had === undefined) out[k] = v;
      else out[k] = Array.isArray(had) ? [...had, v] : [had, v];
    }
    if (!headers.has("accept")) out.accept = "*/*";
    if (!headers.has("accept-encoding")) out["accept-encoding"] = "gzip, deflate, br";
    if (!headers.has("user-agent")) out["user-agent"] = "node";
    if (Buffer.isBuffer(body)) out["content-length"] = String(body.byteLength);
    else if (body === undefined && (method === "POST" || method === "PUT" || method === "PATCH"))
      out["content-length"] = "0";
    const req = lib.request(url, { method, headers: out });
    let onAbort: (() => void) | undefined;
    const settle = () => {
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    };
    if (signal) {
      onAbort = () => {
        req.destroy();
        reject(abortError(signal));
      };
      signal.addEventListener("abort", onAbort, { once: true });
    }
    req.on("response", (res) => {
      settle();
      resolve(res);
    });
    req.on("error", (e) => {
      settle();
      reject(signal?.aborted ? abortError(signal) : new TypeError("fetch failed", { cause: e }));
    });
    if (body === undefined) req.end();
    else if (Buffer.isBuffer(body)) req.end(body);
    else {
      (async () => {
        for await (const chunk of body) if (!req.write(chunk)) await new Promise((r) => req.once("drain", r));
        req.end();
      })().catch((e) => req.destroy(e as Error));
    }
  });
}

/** `fetch` over `node:http`/`node:https` (see the file's comment for what is and is not supported). */
export const httpFetch: typeof fetch = async (input, init) => {
  if (wantsGlobalFetch()) return fetch(input, init);
  const options = (init ?? {}) as Init;
  const signal = options.signal;
  if (signal?.aborted) throw abortError(signal);
  const target = typeof input === "string" ? input : input instanceof URL ? input.href : (input as { url: string }).url;
  let url = new URL(target);
  let method = (options.method ?? "GET").toUpperCase();
  let headers = new FetchHeaders(options.headers);
  let body = await bodyBytes(options.body);
  for (let hops = 0; ; hops++) {
    const res = await once(url, method, headers, body, signal);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if ([301, 302, 303, 307, 308].includes(status) && location && options.redirect !== "manual") {
      res.resume();
      if (options.redirect === "error" || hops >= 20)
        throw new TypeError("fetch failed", { cause: new Error(`redirect to ${location} not followed`) });
      const next = new URL(location, url);
      if (status === 303 || ((status === 301 || status === 302) && method === "POST")) {
        method = method === "HEAD" ? "HEAD" : "GET";
        body = undefined;
        headers = new FetchHeaders([...headers].filter(([k]) => !/^content-/.test(k)));
      } else if (body !== undefined && !Buffer.isBuffer(body))
        throw new TypeError("fetch failed", { cause: new Error("cannot replay a streamed body on a redirect") });
      if (next.origin !== url.origin) headers.delete("authorization");
      url = next;
      continue;
    }
    const resHeaders = new FetchHeaders();
    const raw = res.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) resHeaders.append(raw[i] as string, raw[i + 1] as string);
    const empty = method === "HEAD" || STATUS_WITHOUT_BODY.has(status);
    if (empty) res.resume();
    return new FetchResponse(empty ? null : webBody(res, signal), {
      status,
      statusText: res.statusMessage ?? "",
      headers: resHeaders,
      url: url.href,
      redirected: hops > 0,
    }) as unknown as Response;
  }
};
