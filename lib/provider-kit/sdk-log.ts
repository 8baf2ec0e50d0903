/**
 * A logger for the provider SDKs (`logger` client option). Left alone, the Anthropic and OpenAI SDKs
 * log to `console`, e.g. "Could not parse message into JSON" on a malformed SSE frame, which would
 * corrupt `--mode json`'s clean stderr and draw over the TUI. Routed here, each line becomes a
 * `diagnostic` event of the provider plugin instead (also the parse lines an SDK writes to `console`
 * directly, which a console filter sends to the logger of the latest request). The request's own
 * failure is reported as the reply's error, so the SDK's error lines are warnings: supporting detail,
 * not a second error.
 */
import { inspect } from "node:util";
import type { PluginLog } from "../../api/index.js";
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

/** Distinct lines remembered to report each only once (a deprecation notice comes with every request). */
const REMEMBERED = 200;

/**
 * The lines the SDKs write about a stream frame they cannot parse. Most paths write them through the
 * client's logger; some go to `console.error` directly (the OpenAI SDK's `thread.*` events), during the
 * stream, long after any request started: a console filter routes exactly these to the SDK's logger.
 */
const PARSE_NOISE = /^(?:Could not parse message into JSON:|From chunk:)/;
let lastUsed: SdkLogger | undefined;
let filtering = false;

function filterParseNoise(): void {
  if (filtering) return;
  filtering = true;
  for (const level of ["error", "warn"] as const) {
    const original = console[level];
    console[level] = (...args: unknown[]) => {
      const [first, ...rest] = args;
      if (lastUsed && typeof first === "string" && PARSE_NOISE.test(first)) return lastUsed[level](first, ...rest);
      return original.apply(console, args);
    };
  }
}

export function sdkLogger(log: PluginLog, sdk: string, secrets: readonly (string | undefined)[]): SdkLogger {
  filterParseNoise();
  const seen = new Set<string>();
  const emit = (level: "info" | "warn", args: unknown[]) => {
    const text = args
      .map((a) => (typeof a === "string" ? a : inspect(a, { depth: 3, breakLength: Infinity })))
      .join(" ");
    const short = text.length > MAX ? `${text.slice(0, MAX)}… (${text.length - MAX} more characters)` : text;
    const line = redact(`${sdk} SDK: ${short}`, secrets);
    if (seen.has(line)) return;
    if (seen.size < REMEMBERED) seen.add(line);
    log[level](line);
  };
  const logger: SdkLogger = {
    error: (...args) => emit("warn", args),
    warn: (...args) => emit("warn", args),
    info: (...args) => emit("info", args),
    debug: (...args) => emit("info", args),
  };
  lastUsed ??= logger;
  return logger;
}

/**
 * Call `start` (an SDK method that starts a request) with `console` routed to `logger`. Some SDK
 * methods warn through `console` directly rather than their logger (the Anthropic SDK's "model is
 * deprecated" notice); they do it synchronously, before the request promise is returned, so the
 * routing lasts only for that synchronous call and nothing else can write in between.
 */
export function routeConsole<T>(logger: SdkLogger, start: () => T): T {
  // The request this starts is the one whose stream may complain later (see PARSE_NOISE).
  lastUsed = logger;
  const saved = {
    log: console.log,
    info: console.info,
    warn: console.warn,
    error: console.error,
    debug: console.debug,
  };
  Object.assign(console, {
    log: logger.info,
    info: logger.info,
    warn: logger.warn,
    error: logger.error,
    debug: logger.debug,
  });
  try {
    return start();
  } finally {
    Object.assign(console, saved);
  }
}
