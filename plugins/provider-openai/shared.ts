/** What the two OpenAI wire formats share: reasoning effort mapping and error classification. */
import type { ProviderRequest } from "../../api/index.js";
import type { CatalogModel } from "../../lib/provider-kit/catalog.js";
import { messages, statusFailure, type Failure } from "../../lib/provider-kit/errors.js";

/** The stream closed before its final event: a dropped connection as far as retries are concerned. */
export class StreamEndedEarly extends Error {}

/** An error the server reported inside a stream (`error` event, `response.failed`). */
export class StreamError extends Error {
  constructor(
    message: string,
    readonly code?: string | null,
    readonly type?: string | null,
  ) {
    super(message);
  }
}

/**
 * The SDK keeps only the `error` field of an error body: a server that answers `{ "detail": "..." }`
 * (the Codex backend, FastAPI-style servers) became "400 status code (no body)". A body without `error`
 * is passed on whole, so its text reaches the message and `error.error`.
 */
export function keepErrorBodies(client: object): void {
  const c = client as {
    makeStatusError?: (status: number, body: unknown, message: unknown, headers: unknown) => Error;
  };
  const make = c.makeStatusError?.bind(client);
  if (!make) return;
  c.makeStatusError = (status, body, message, headers) =>
    make(status, body && typeof body === "object" && !("error" in body) ? { error: body } : body, message, headers);
}

const ORDER = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];
const LEVEL: Record<string, string> = {
  off: "none",
  minimal: "minimal",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "xhigh",
};

/**
 * The effort to send for the kernel's thinking level: the `reasoningEffortMap` entry for it when the
 * user gave one, else the nearest one the model accepts (undefined: leave the server's default).
 */
export function effortFor(
  level: ProviderRequest["options"]["thinking"],
  model: CatalogModel,
  map?: Partial<Record<string, string>>,
): string | undefined {
  if (!level || !model.reasoning) return undefined;
  const mapped = map?.[level];
  if (mapped) return mapped;
  const want = LEVEL[level]!;
  const accepted = model.efforts?.length ? model.efforts : ["low", "medium", "high"];
  if (accepted.includes(want)) return want;
  const at = ORDER.indexOf(want);
  return accepted.reduce(
    (best, e) => (Math.abs(ORDER.indexOf(e) - at) < Math.abs(ORDER.indexOf(best) - at) ? e : best),
    accepted[0]!,
  );
}

const OVERFLOW =
  /context_length_exceeded|maximum context length|context length|context window|exceeds? the (?:available )?context|too many tokens|prompt is too long|input (?:is )?too long|reduce the length of the messages|tokens to keep .* greater than the context|request exceeds the available context size/i;

interface OpenAIErrorLike {
  status?: number;
  headers?: Headers;
  error?: { message?: string; type?: string; code?: string | null } | null;
  code?: string | null;
  type?: string | null;
  message?: string;
}

/** How a failed request should be handled and described; undefined for a transport failure (the driver reads those). */
export function classifyOpenAI(
  error: unknown,
  where: { provider: string; baseUrl: string; keyFrom?: string; keyHint: string; model: string },
): Failure | undefined {
  const e = (error ?? {}) as OpenAIErrorLike;
  const status = typeof e.status === "number" ? e.status : undefined;
  const code = e.error?.code ?? e.code ?? undefined;
  const type = e.error?.type ?? e.type ?? undefined;
  const detail =
    e.error?.message ??
    (error instanceof StreamError ? error.message : undefined) ??
    messages(error)[0] ??
    String(error);
  const label = `${where.provider}${status ? ` HTTP ${status}` : ""}${code ? ` ${code}` : type ? ` ${type}` : ""}`;
  if (error instanceof StreamEndedEarly)
    return { message: `${where.provider}: ${detail}`, retryable: true, overflow: false };
  if (status !== 429 && (code === "context_length_exceeded" || OVERFLOW.test(detail))) {
    return { message: `${label}: ${detail}`, status, retryable: false, overflow: true };
  }
  if (status !== undefined)
    return statusFailure(status, label, detail, where, { overloaded: /overloaded/i.test(detail), headers: e.headers });
  if (error instanceof StreamError || code || type) {
    const retryable = /server_error|overloaded|rate_limit|timeout|temporar|unavailable/i.test(
      `${code ?? ""} ${type ?? ""} ${detail}`,
    );
    return { message: `${label}: ${detail}`, retryable, overflow: false };
  }
  return undefined;
}
