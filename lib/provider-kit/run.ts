/**
 * The retry loop around one provider request. An attempt streams deltas and returns a stop reason,
 * or throws; this turns that into the kernel's contract: deltas, `retry` events while waiting,
 * then exactly one `done` or `error`, and never a throw.
 */
import { ERROR_CONTEXT_OVERFLOW, messageOf, type ProviderEvent, type StopReason } from "../../api/index.js";
import { MessageBuilder } from "./builder.js";
import type { CatalogModel } from "./catalog.js";
import { redact } from "./config.js";
import type { Failure } from "./errors.js";
import { backoffMs, sleep, type RetryPolicy } from "./retry.js";

export interface Attempt {
  builder: MessageBuilder;
  signal: AbortSignal;
  /** 0 for the first try. */
  attempt: number;
}

export interface RunOptions {
  provider: string;
  model: CatalogModel;
  policy: RetryPolicy;
  signal: AbortSignal;
  /** Strings that must never appear in a message (the API key). */
  secrets: readonly (string | undefined)[];
  /** One request: yield deltas from the builder, return how the reply ended; throw on failure. */
  attempt(a: Attempt): AsyncGenerator<ProviderEvent, StopReason>;
  classify(error: unknown): Failure;
}

export async function* runWithRetries(o: RunOptions): AsyncGenerator<ProviderEvent> {
  let builder = new MessageBuilder(o.provider, o.model);
  try {
    for (let attempt = 0; ; attempt++) {
      builder = new MessageBuilder(o.provider, o.model);
      try {
        if (o.signal.aborted) throw new Error("aborted");
        const stopReason = yield* o.attempt({ builder, signal: o.signal, attempt });
        yield { type: "done", message: builder.finish(stopReason) };
        return;
      } catch (error) {
        if (o.signal.aborted) {
          yield { type: "error", message: builder.fail("aborted", "aborted") };
          return;
        }
        const failure = o.classify(error);
        const text = redact(failure.message, o.secrets);
        // The failed attempt's partial reply is discarded with its builder: a retry starts the reply over.
        if (failure.retryable && !failure.overflow && !builder.serverToolRan && attempt < o.policy.maxRetries) {
          const wait = failure.retryAfterMs ?? backoffMs(attempt + 1, o.policy);
          if (wait <= o.policy.maxRetryDelayMs) {
            yield { type: "retry", attempt: attempt + 1, delayMs: wait, reason: text };
            if (!(await sleep(wait, o.signal))) {
              yield { type: "error", message: builder.fail("aborted", "aborted while waiting to retry") };
              return;
            }
            continue;
          }
          const why = `${text} (the server asked to wait ${Math.ceil(wait / 1000)}s, longer than maxRetryDelayMs=${o.policy.maxRetryDelayMs})`;
          yield { type: "error", message: builder.fail("error", why, failure.code) };
          return;
        }
        const tries = attempt > 0 ? ` (after ${attempt} ${attempt === 1 ? "retry" : "retries"})` : "";
        const after =
          builder.serverToolRan && failure.retryable
            ? " (a server-side tool had already run in this reply, so it was not retried)"
            : "";
        yield {
          type: "error",
          message: builder.fail(
            "error",
            `${text}${tries}${after}`,
            failure.overflow ? ERROR_CONTEXT_OVERFLOW : failure.code,
          ),
        };
        return;
      }
    }
  } catch (bug) {
    // A defect in the adapter itself: still end the stream the way the kernel expects.
    yield {
      type: "error",
      message: builder.fail(
        o.signal.aborted ? "aborted" : "error",
        redact(`[${o.provider}] ${messageOf(bug)}`, o.secrets),
      ),
    };
  }
}
