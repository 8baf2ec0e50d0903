/**
 * The `fetch` the provider SDKs get (their `fetch` client option): coil's client on `node:http`
 * (http-fetch.ts), so a run never loads Node's undici, and a string body is sent as its UTF-8 bytes.
 */
export { httpFetch as providerFetch } from "./http-fetch.js";
