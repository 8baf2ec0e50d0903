/** How the CLI prints an error on a terminal. */
import { CoilError, messageOf } from "../kernel/errors.js";

/** Multi-line text for a terminal: message, cause chain, hint. */
export function formatError(error: unknown): string {
  const lines = [messageOf(error)];
  let cause = error instanceof Error ? error.cause : undefined;
  for (let depth = 0; cause !== undefined && depth < 5; depth++) {
    lines.push(`  cause: ${messageOf(cause)}`);
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  if (error instanceof CoilError && error.hint) lines.push(`  hint: ${error.hint}`);
  return lines.join("\n");
}
