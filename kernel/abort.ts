/** The run's one AbortSignal, handed down: a scoped copy per provider call, and a race against it. */

/**
 * A signal that follows `parent` until `release()`. Each provider call gets one: SDK clients add an abort
 * listener to the signal they are given and do not always remove it, which on the run's long-lived signal
 * would pile up one listener per request (MaxListenersExceededWarning after ten).
 */
export function scopedSignal(parent: AbortSignal): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent.reason);
  if (parent.aborted) onAbort();
  else parent.addEventListener("abort", onAbort, { once: true });
  return { signal: controller.signal, release: () => parent.removeEventListener("abort", onAbort) };
}

export const ABORT = Symbol("abort");

/** Resolve with the promise, or with ABORT as soon as the signal fires (the promise is then ignored). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORT> {
  if (signal.aborted) return Promise.resolve(ABORT);
  let onAbort = () => {};
  const aborted = new Promise<typeof ABORT>((resolve) => {
    onAbort = () => resolve(ABORT);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}
