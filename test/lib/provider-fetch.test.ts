/**
 * lib/provider-kit/fetch.ts: the fetch the provider SDKs get, on node:http, against a real local server:
 * bodies as bytes, a streamed response read as it arrives, abort before and while streaming, keep-alive,
 * compressed bodies, redirects, and failures shaped as Node's fetch shapes them (the retry rules read them).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { gzipSync } from "node:zlib";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FetchHeaders } from "../../lib/provider-kit/http-fetch.js";
import { providerFetch } from "../../lib/provider-kit/fetch.js";
import { isConnectionDrop } from "../../lib/provider-kit/retry.js";
import { startMockAnthropic, text } from "../support/mock-anthropic.js";

type Seen = { method?: string; url?: string; body: Buffer; headers: IncomingMessage["headers"]; port: number };
const seen: Seen[] = [];
/** Lets a streaming test release the rest of a response. */
let release: (() => void) | undefined;
const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  seen.push({
    method: req.method,
    url: req.url,
    body: Buffer.concat(chunks),
    headers: req.headers,
    port: (req.socket as Socket).remotePort ?? 0,
  });
  if (req.url === "/stream") {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: one\n\n");
    release = () => res.end("data: two\n\n");
    return;
  }
  if (req.url === "/drop") {
    res.writeHead(200, { "content-type": "text/plain", "content-length": "100" });
    res.write("partial");
    setImmediate(() => req.socket.destroy());
    return;
  }
  if (req.url === "/gzip") {
    res.writeHead(200, { "content-encoding": "gzip", "content-type": "application/json" });
    res.end(gzipSync(JSON.stringify({ zipped: true })));
    return;
  }
  if (req.url === "/moved") {
    res.writeHead(303, { location: "/landed" });
    res.end();
    return;
  }
  res.writeHead(201, [
    ["content-type", "text/plain"],
    ["x-multi", "a"],
    ["x-multi", "b"],
    ["request-id", "req_1"],
  ]);
  res.end("ok");
});
let base = "";
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((r) => server.close(() => r()));
});

describe("providerFetch (node:http)", () => {
  it("sends a JSON string body as its UTF-8 bytes with the caller's headers; bytes and no body too", async () => {
    seen.length = 0;
    const body = JSON.stringify({ text: "héllo ✓ 😀", lone: "\ud800", big: "x".repeat(100_000) });
    const res = await providerFetch(`${base}/v1/messages`, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", "X-Api-Key": "k" },
    });
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(await res.text()).toBe("ok");
    expect(seen[0]!.body.equals(Buffer.from(body, "utf8"))).toBe(true);
    expect(seen[0]!.headers["content-length"]).toBe(String(Buffer.byteLength(body)));
    expect(seen[0]!.headers["content-type"]).toBe("application/json");
    expect(seen[0]!.headers["x-api-key"]).toBe("k");
    expect(JSON.parse(seen[0]!.body.toString("utf8")).lone).toBe("\ud800");
    await (await providerFetch(`${base}/b`, { method: "POST", body: new Uint8Array([1, 2, 3]) })).text();
    expect([...seen[1]!.body]).toEqual([1, 2, 3]);
    const get = await providerFetch(`${base}/c`);
    await get.arrayBuffer();
    expect(seen[2]!.method).toBe("GET");
    expect(seen[2]!.body.length).toBe(0);
  });

  it("gives the response's headers as Headers do: case-insensitive, repeated values joined", async () => {
    const res = await providerFetch(`${base}/h`, { headers: new FetchHeaders([["Accept", "application/json"]]) });
    expect(res.headers.get("Request-Id")).toBe("req_1");
    expect(res.headers.get("x-multi")).toBe("a, b");
    expect(res.headers.has("missing")).toBe(false);
    const names: string[] = [];
    res.headers.forEach((_v, k) => {
      names.push(k);
    });
    expect(names).toEqual([...names].sort());
    expect(names).toContain("content-type");
    expect(seen.at(-1)!.headers.accept).toBe("application/json");
    await res.text();
  });

  it("reuses the connection for the next request (keep-alive)", async () => {
    seen.length = 0;
    await (await providerFetch(`${base}/k1`)).text();
    await (await providerFetch(`${base}/k2`)).text();
    expect(seen).toHaveLength(2);
    expect(seen[1]!.port).toBe(seen[0]!.port);
  });

  it("streams the body as it arrives, before the response ends", async () => {
    const res = await providerFetch(`${base}/stream`);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value!).toString()).toBe("data: one\n\n");
    release!();
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += Buffer.from(value).toString();
    }
    expect(rest).toBe("data: two\n\n");
  });

  it("aborts: before the request with the signal's reason, and mid-stream as an AbortError", async () => {
    const early = new AbortController();
    early.abort();
    await expect(providerFetch(`${base}/x`, { signal: early.signal })).rejects.toMatchObject({ name: "AbortError" });
    const ac = new AbortController();
    const res = await providerFetch(`${base}/stream`, { signal: ac.signal });
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: "AbortError" });
    release?.();
  });

  it("fails as Node's fetch does: refused as `fetch failed` with the cause, a cut body as `terminated`", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const refused = await providerFetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TypeError);
    expect((refused as Error).message).toBe("fetch failed");
    expect(((refused as Error).cause as { code?: string }).code).toBe("ECONNREFUSED");
    const res = await providerFetch(`${base}/drop`);
    const cut = await res.text().catch((e: unknown) => e);
    expect(cut).toBeInstanceOf(TypeError);
    expect((cut as Error).message).toBe("terminated");
    expect(isConnectionDrop(cut)).toBe(true);
  });

  it("decodes a gzip body and follows a redirect (303 becomes a GET without the body)", async () => {
    expect(await (await providerFetch(`${base}/gzip`)).json()).toEqual({ zipped: true });
    seen.length = 0;
    const res = await providerFetch(`${base}/moved`, { method: "POST", body: "{}" });
    expect(res.redirected).toBe(true);
    expect(res.url).toBe(`${base}/landed`);
    expect(await res.text()).toBe("ok");
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(["POST /moved", "GET /landed"]);
  });

  it("carries the Anthropic SDK's streamed message end to end, and clone() gives a second reader", async () => {
    const mock = await startMockAnthropic({ key: "sk-ant-fetch-test-0123456789" });
    try {
      mock.push(text("hello over node:http"));
      const client = new Anthropic({
        apiKey: "sk-ant-fetch-test-0123456789",
        baseURL: mock.url,
        maxRetries: 0,
        fetch: providerFetch,
      });
      const stream = client.messages.stream({
        model: "claude-sonnet-5-5",
        max_tokens: 64,
        messages: [{ role: "user", content: "hi" }],
      });
      const final = await stream.finalMessage();
      expect(final.content).toEqual([expect.objectContaining({ type: "text", text: "hello over node:http" })]);
      const res = await providerFetch(`${base}/c`);
      const copy = res.clone();
      expect(await copy.text()).toBe("ok");
      expect(await res.text()).toBe("ok");
    } finally {
      await mock.close();
    }
  });
});
