/**
 * A signal of its own for each call made on behalf of a run, for libraries that add an abort listener
 * to the signal they are given and never remove it (the MCP SDK does, once per request). One listener
 * per parent signal fans the abort out to every call still open, so a run's signal carries one
 * listener however many calls it makes, and however many run at once; a call's own signal is dropped
 * with whatever the library hung on it when the call ends.
 */
const open = new WeakMap<AbortSignal, Set<AbortController>>();

export function callSignal(parent: AbortSignal): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, release: () => {} };
  }
  let calls = open.get(parent);
  if (!calls) {
    const set = new Set<AbortController>();
    calls = set;
    open.set(parent, set);
    parent.addEventListener(
      "abort",
      () => {
        for (const c of set) c.abort(parent.reason);
        set.clear();
      },
      { once: true },
    );
  }
  calls.add(controller);
  const set = calls;
  return { signal: controller.signal, release: () => set.delete(controller) };
}
