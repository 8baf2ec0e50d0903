/**
 * What a failed provider request means: the `Failure` the retry loop and the final message need, and the
 * readings every adapter's classifier shares (retryable statuses, the server's retry-after, the transport's
 * dropped, refused and corrupted connections, the messages along an error's cause chain). The driver
 * (driver.ts) reads a failure no adapter recognised as a transport failure (`transportFailure`).
 */

/** What went wrong, in terms the retry loop and the error message need. */
export interface Failure {
  message: string;
  status?: number;
  retryable: boolean;
  /** The request was larger than the model's context window. */
  overflow: boolean;
  /** Wait the server asked for. */
  retryAfterMs?: number;
  /** Machine-readable class for the final message (`context_overflow`, `auth`, `rate_limit`, ...). */
  code?: string;
}

const RETRYABLE_STATUS = new Set([408, 409, 425, 429, 500, 502, 503, 504, 529]);
const NETWORK_CODES = new Set([
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "ECONNABORTED",
  "EAI_AGAIN",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

export function isRetryableStatus(status: number | undefined): boolean {
  return status !== undefined && (RETRYABLE_STATUS.has(status) || (status >= 500 && status < 600));
}

/** Error codes along the cause chain (`ECONNRESET`, `UND_ERR_SOCKET`, ...). */
export function errorCodes(error: unknown): string[] {
  const codes: string[] = [];
  let e = error as { code?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; e && depth < 6; depth++) {
    if (typeof e.code === "string") codes.push(e.code);
    e = e.cause as typeof e;
  }
  return codes;
}

/** A dropped or reset connection (as opposed to one that was never made). */
export function isConnectionDrop(error: unknown): boolean {
  if (errorCodes(error).some((c) => NETWORK_CODES.has(c))) return true;
  const text = messages(error).join(" ").toLowerCase();
  return (
    /\bterminated\b|socket hang up|other side closed|connection (?:reset|closed|error)|premature close|aborted by peer|network error|fetch failed/.test(
      text,
    ) && !isConnectionRefused(error)
  );
}

/**
 * The SDK could not parse a streamed frame as JSON (it has logged the frame as a diagnostic). Like a
 * dropped connection, a corrupted stream is worth another attempt.
 */
export function malformedStream(error: unknown, provider: string): Failure | undefined {
  if (!(error instanceof SyntaxError)) return undefined;
  return {
    message: `${provider}: the response stream sent a frame that is not valid JSON (${error.message})`,
    retryable: true,
    overflow: false,
  };
}

/** Nothing listens at the address: retrying will not help; the user must start the server or fix the URL. */
export function isConnectionRefused(error: unknown): boolean {
  return errorCodes(error).some((c) => c === "ECONNREFUSED" || c === "ENOTFOUND" || c === "EAI_NONAME");
}

/**
 * A failure with no HTTP status and no API error body, judged from the transport: a corrupted stream or a
 * dropped connection (worth another attempt), nothing listening at the address (not worth one), or else
 * the error's own messages. The last step of both provider plugins' classifiers.
 */
export function transportFailure(
  error: unknown,
  where: { provider: string; baseUrl: string },
  detail: string,
): Failure {
  const malformed = malformedStream(error, where.provider);
  if (malformed) return malformed;
  if (isConnectionRefused(error)) {
    return {
      message: `${where.provider}: cannot connect to ${where.baseUrl} (${messages(error).slice(-1)[0]}) — is the URL right and the server running?`,
      retryable: false,
      overflow: false,
      code: "connection",
    };
  }
  if (isConnectionDrop(error) || /timed? ?out/i.test(detail))
    return {
      message: `${where.provider}: connection failed: ${messages(error).join(": ")}`,
      retryable: true,
      overflow: false,
    };
  return {
    message: `${where.provider}: ${messages(error).join(": ") || String(error)}`,
    retryable: false,
    overflow: false,
  };
}

/** Messages along the cause chain. */
export function messages(error: unknown): string[] {
  const out: string[] = [];
  let e = error as { message?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; e && depth < 6; depth++) {
    if (typeof e.message === "string" && e.message) out.push(e.message);
    e = e.cause as typeof e;
  }
  return out;
}

export type HeaderBag =
  | { get(name: string): string | null }
  | Record<string, string | string[] | undefined>
  | undefined
  | null;

function header(headers: HeaderBag, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as { get?: unknown }).get === "function")
    return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const value = bag[name] ?? bag[Object.keys(bag).find((k) => k.toLowerCase() === name) ?? ""];
  return Array.isArray(value) ? value[0] : value;
}

/** `retry-after-ms` (milliseconds) or `retry-after` (seconds or an HTTP date), whichever the server sent. */
export function retryAfterMs(headers: HeaderBag, now = Date.now()): number | undefined {
  const ms = header(headers, "retry-after-ms");
  if (ms !== undefined && ms.trim() !== "" && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const after = header(headers, "retry-after");
  if (after === undefined || after.trim() === "") return undefined;
  if (Number.isFinite(Number(after))) return Math.max(0, Number(after) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * What an HTTP error status means on every API: a rejected key (401), a refused permission (403), a model the
 * server does not have (404), else retryable or not (`overloaded`: the API's own word for a transient
 * failure), with the retry-after the server sent. `label` names the provider, the status and the API's error.
 */
export function statusFailure(
  status: number,
  label: string,
  detail: string,
  where: { baseUrl: string; keyFrom?: string; keyHint: string; model: string },
  o: { overloaded: boolean; headers: HeaderBag },
): Failure {
  const base = { message: `${label}: ${detail}`, status, retryable: false, overflow: false };
  if (status === 401) {
    const from = where.keyFrom ? ` from ${where.keyFrom}` : "";
    return { ...base, message: `${base.message} — the API key${from} was rejected; ${where.keyHint}`, code: "auth" };
  }
  if (status === 403)
    return { ...base, message: `${base.message} — the key is not allowed to do this`, code: "permission" };
  if (status === 404) {
    const hint = `is '${where.model}' a model ${where.baseUrl} serves? (coil models lists known ids)`;
    return { ...base, message: `${base.message} — ${hint}`, code: "not_found" };
  }
  return {
    ...base,
    retryable: isRetryableStatus(status) || o.overloaded,
    retryAfterMs: retryAfterMs(o.headers),
    code: status === 429 ? "rate_limit" : undefined,
  };
}
