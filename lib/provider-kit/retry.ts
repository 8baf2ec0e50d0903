/**
 * Retry policy the provider driver applies (driver.ts, run.ts): how long to wait between attempts
 * (exponential backoff with jitter, or what the server asked for) and an abortable sleep. Which failures
 * are worth another attempt is errors.ts's reading, re-exported here for older importers.
 */
export {
  errorCodes,
  isConnectionDrop,
  isConnectionRefused,
  isRetryableStatus,
  malformedStream,
  messages,
  retryAfterMs,
  transportFailure,
  type Failure,
} from "./errors.js";

export interface RetryPolicy {
  /** Attempts after the first one. */
  maxRetries: number;
  /** First backoff step; doubles per attempt. */
  baseDelayMs: number;
  /** Longest wait. A server asking for longer (retry-after) fails the request instead of hanging. */
  maxRetryDelayMs: number;
}

/** Backoff before retry number `attempt` (1-based): base·2^(attempt-1), with ±25% jitter, capped. */
export function backoffMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exp = policy.baseDelayMs * 2 ** Math.max(0, attempt - 1);
  const jittered = exp * (0.75 + random() * 0.5);
  return Math.round(Math.min(policy.maxRetryDelayMs, jittered));
}

/** Sleep that ends early when `signal` fires; resolves false when aborted. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve(!signal.aborted);
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
