/** lib/provider-kit/fetch.ts: the SDKs' fetch sends a string body as the same UTF-8 bytes, over real HTTP. */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytesBodyFetch } from "../../lib/provider-kit/fetch.js";

const seen: { body: Buffer; length?: string; type?: string }[] = [];
const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  seen.push({ body: Buffer.concat(chunks), length: req.headers["content-length"], type: req.headers["content-type"] });
  res.end("ok");
});
let url = "";
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/messages`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("bytesBodyFetch", () => {
  it("sends a JSON string body as its UTF-8 bytes with the caller's headers, and leaves other bodies alone", async () => {
    const body = JSON.stringify({ text: "héllo ✓ 😀", lone: "\ud800", big: "x".repeat(100_000) });
    const res = await bytesBodyFetch(url, { method: "POST", body, headers: { "content-type": "application/json" } });
    expect(await res.text()).toBe("ok");
    expect(seen[0]!.body.equals(Buffer.from(body, "utf8"))).toBe(true);
    expect(seen[0]!.length).toBe(String(Buffer.byteLength(body)));
    expect(seen[0]!.type).toBe("application/json");
    expect(JSON.parse(seen[0]!.body.toString("utf8")).lone).toBe("\ud800");
    const bytes = new Uint8Array([1, 2, 3]);
    await bytesBodyFetch(url, { method: "POST", body: bytes });
    expect([...seen[1]!.body]).toEqual([1, 2, 3]);
    await bytesBodyFetch(url);
    expect(seen[2]!.body.length).toBe(0);
  });
});
