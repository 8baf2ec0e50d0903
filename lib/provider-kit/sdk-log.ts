/**
 * A logger for the provider SDKs (`logger` client option). Left alone, the Anthropic and OpenAI SDKs
 * log to `console`, e.g. "Could not parse message into JSON" on a malformed SSE frame, which would
 * corrupt `--mode json`'s clean stderr and draw over the TUI. Routed here, each line becomes a
 * `diagnostic` event of the provider plugin instead. The request's own failure is reported as the
 * reply's error, so the SDK's error lines are warnings: supporting detail, not a second error.
 */
import { inspect } from "node:util";
import type { PluginLog } from "../../kernel/index.js";
import { redact } from "./config.js";

type LogFn = (message: string, ...rest: unknown[]) => void;
export interface SdkLogger {
  error: LogFn;
  warn: LogFn;
  info: LogFn;
  debug: LogFn;
}

/** Longest SDK log line kept (a malformed frame can be large). */
const MAX = 2000;

export function sdkLogger(log: PluginLog, sdk: string, secrets: readonly (string | undefined)[]): SdkLogger {
  const line = (args: unknown[]) => {
    const text = args.map((a) => (typeof a === "string" ? a : inspect(a, { depth: 3, breakLength: Infinity }))).join(" ");
    const short = text.length > MAX ? `${text.slice(0, MAX)}… (${text.length - MAX} more characters)` : text;
    return redact(`${sdk} SDK: ${short}`, secrets);
  };
  return {
    error: (...args) => log.warn(line(args)),
    warn: (...args) => log.warn(line(args)),
    info: (...args) => log.info(line(args)),
    debug: (...args) => log.info(line(args)),
  };
}
