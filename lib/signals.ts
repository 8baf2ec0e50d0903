/**
 * The signals that end a front end's run: Ctrl-C (SIGINT), kill and CI cancels (SIGTERM), a closed
 * terminal or ssh session (SIGHUP). Each handler is attached once per signal, so a second Ctrl-C still
 * ends coil at once (Node's default), and the process groups of running commands end with it.
 */
export const TERMINATION_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** Run `handler` on the first of each termination signal; the returned function detaches it. */
export function onTermination(handler: () => void): () => void {
  for (const signal of TERMINATION_SIGNALS) process.once(signal, handler);
  return () => {
    for (const signal of TERMINATION_SIGNALS) process.off(signal, handler);
  };
}
