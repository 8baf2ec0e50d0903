/**
 * What subscription providers share: the logins stored in `$COIL_HOME/auth.json` (and Pi's, read only),
 * the registry of login flows that `coil login`, `coil logout`, `coil auth list` and `/login` use, refresh
 * before expiry (and on demand after a 401), and the OAuth 2.0 pieces the flows are made of: the device
 * authorization grant (RFC 8628) and form/JSON requests that name what failed. See docs/providers.md.
 */
import { join } from "node:path";
import { CoilError, type PluginContext, type StartFn } from "../../api/index.js";
import { type OAuthEntry, readAuth, readAuthAt, redact, writeAuthEntry } from "./config.js";
import { locationsOf, piAgentDir } from "../locations.js";

export const LOGINS_SERVICE = "logins";

/** How a login flow talks to the user: the CLI writes to stderr and reads stdin; the TUI uses its dialogs. */
export interface LoginUI {
  /** A line to show (a URL to open, a code to enter, progress). */
  show(text: string): void;
  /**
   * Ask for a line of text (a pasted redirect URL or code); undefined when the user gives none, or when
   * `signal` aborts (the flow got its answer another way, e.g. the browser reached the callback server).
   */
  ask(question: string, signal?: AbortSignal): Promise<string | undefined>;
  signal: AbortSignal;
}

export interface LoginFlow {
  /** The provider id the login is for (`github-copilot`). */
  provider: string;
  /** What the user logs in with ("GitHub Copilot"). */
  title: string;
  /** Run the flow; the entry returned is stored by the caller. */
  login(ui: LoginUI, args: string[]): Promise<OAuthEntry>;
  /** A short description of the stored login for `coil auth list` (never a token), e.g. the host. */
  describe?(entry: OAuthEntry): string;
}

export interface LoginRegistry {
  flows: Map<string, LoginFlow>;
}

/** Add a login flow to the registry the `models` plugin's commands read (created by whichever plugin comes first). */
export function registerLogin(ctx: PluginContext<unknown>, flow: LoginFlow): void {
  let registry = ctx.services.get(LOGINS_SERVICE) as LoginRegistry | undefined;
  if (!registry) {
    registry = { flows: new Map() };
    ctx.services.provide(LOGINS_SERVICE, registry);
  }
  registry.flows.set(flow.provider, flow);
}

export function loginFlows(ctx: PluginContext<unknown>): Map<string, LoginFlow> {
  return (ctx.services.get(LOGINS_SERVICE) as LoginRegistry | undefined)?.flows ?? new Map();
}

/** Pi's auth.json: `$PI_CODING_AGENT_DIR/auth.json`, else `~/.pi/agent/auth.json`. */
export function piAuthFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(piAgentDir(env), "auth.json");
}

function isOAuth(entry: unknown): entry is OAuthEntry {
  const e = entry as Partial<OAuthEntry> | null;
  return (
    !!e &&
    e.type === "oauth" &&
    typeof e.access === "string" &&
    typeof e.refresh === "string" &&
    typeof e.expires === "number"
  );
}

/** The OAuth entries of Pi's auth.json (compat `pi`); a missing or unreadable file has none. Never written. */
export function piLogins(env: NodeJS.ProcessEnv = process.env): Record<string, OAuthEntry> {
  let data: Record<string, unknown>;
  try {
    data = readAuthAt(piAuthFile(env), "Pi's file: coil only reads it");
  } catch {
    return {};
  }
  return Object.fromEntries(Object.entries(data).filter(([, e]) => isOAuth(e))) as Record<string, OAuthEntry>;
}

export interface FoundLogin {
  entry: OAuthEntry;
  /** `auth.json` (coil's) or `pi` (Pi's auth.json, read only). */
  from: "auth.json" | "pi";
}

/** A provider's login: coil's auth.json first, then Pi's (when `pi` compat is on). */
export function findLogin(home: string, provider: string, env: NodeJS.ProcessEnv, pi: boolean): FoundLogin | undefined {
  const own = readAuth(home)[provider];
  if (isOAuth(own)) return { entry: own, from: "auth.json" };
  if (!pi) return undefined;
  const theirs = piLogins(env)[provider];
  return theirs ? { entry: theirs, from: "pi" } : undefined;
}

/** Every token-like string in a login entry (for redaction). */
export function loginSecrets(entry: OAuthEntry | undefined): string[] {
  if (!entry) return [];
  return Object.entries(entry)
    .filter(([k, v]) => typeof v === "string" && v.length >= 8 && k !== "type" && !/url|host|email/i.test(k))
    .map(([, v]) => v as string);
}

/** "until 2026-12-02 14:05 UTC (in 25 min)" or "expired 2026-12-01 ... (refreshes on next use)". */
export function describeExpiry(expires: number, now = Date.now()): string {
  const at = `${new Date(expires).toISOString().slice(0, 16).replace("T", " ")} UTC`;
  const mins = Math.round((expires - now) / 60_000);
  if (mins <= 0) return `access token expired ${at} (refreshed on next use)`;
  const span =
    mins < 120 ? `${mins} min` : mins < 48 * 60 ? `${Math.round(mins / 60)} h` : `${Math.round(mins / 1440)} days`;
  return `access token valid until ${at} (in ${span}; refreshed automatically)`;
}

/** Where a subscription provider's logins are: coil's under `$COIL_HOME`, Pi's found through the run's environment. */
export interface LoginPlace {
  /** `$COIL_HOME`, from the `locations` service (boot's answer, worked out once). */
  home(): string;
  /** The environment the run started with (`process.env` until it starts). */
  env(): NodeJS.ProcessEnv;
  /** Hand it to `ctx.onStart`: it takes the environment from the start. */
  start: StartFn;
}

/** The one place a subscription provider plugin reads `$COIL_HOME` and the environment from. */
export function loginPlace(ctx: Pick<PluginContext, "services" | "cwd" | "projectTrusted">): LoginPlace {
  let home: string | undefined;
  let env: NodeJS.ProcessEnv = process.env;
  return {
    home: () => {
      home ??= locationsOf(ctx).coilHome;
      return home;
    },
    env: () => env,
    start: (_agent, io) => {
      env = io.env;
    },
  };
}

/** A failed login or refresh: what happened, and what to do. Not retried. */
export class LoginError extends CoilError {
  constructor(detail: string, hint: string) {
    super("AUTH_FAILED", detail, { hint });
  }
}

export interface SubscriptionAuth {
  /** The login to use now: refreshed first when it expires within `skewMs` (or `force`), and stored. */
  current(force?: boolean): Promise<OAuthEntry>;
  /** Whether a login exists (coil's or Pi's). */
  has(): boolean;
  /** Every token of the login in use (for redaction). */
  secrets(): string[];
}

/**
 * Refresh handling for one provider. A refreshed login is written to coil's auth.json (a login read from
 * Pi's file is copied there when it is refreshed; Pi's file is never rewritten). Concurrent refreshes share one.
 */
export function subscriptionAuth(o: {
  provider: string;
  home: () => string;
  env: () => NodeJS.ProcessEnv;
  pi: boolean;
  /** Exchange the login for a fresh one (throws LoginError when the grant is gone). */
  refresh(entry: OAuthEntry): Promise<OAuthEntry>;
  skewMs?: number;
}): SubscriptionAuth {
  let inFlight: Promise<OAuthEntry> | undefined;
  let last: OAuthEntry | undefined;
  const skew = o.skewMs ?? 60_000;
  const find = () => findLogin(o.home(), o.provider, o.env(), o.pi);
  return {
    has: () => {
      try {
        return find() !== undefined;
      } catch {
        return false;
      }
    },
    secrets: () => loginSecrets(last),
    async current(force = false) {
      const found = find();
      if (!found)
        throw new LoginError(
          `not logged in to ${o.provider}`,
          `run \`coil login ${o.provider}\` (or /login ${o.provider} in the TUI)`,
        );
      last = found.entry;
      if (!force && found.entry.expires - skew > Date.now()) return found.entry;
      inFlight ??= o
        .refresh(found.entry)
        .then((fresh) => {
          writeAuthEntry(o.home(), o.provider, fresh);
          last = fresh;
          return fresh;
        })
        .finally(() => {
          inFlight = undefined;
        });
      return inFlight;
    },
  };
}

export interface HttpReply {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** POST (form or JSON) or GET, JSON back; a transport failure names the URL. Tokens in errors are redacted. */
export async function requestJson(
  url: string,
  init: { method?: "GET" | "POST"; form?: Record<string, string>; json?: unknown; headers?: Record<string, string> },
  signal?: AbortSignal,
): Promise<HttpReply> {
  const headers: Record<string, string> = { accept: "application/json", ...init.headers };
  let body: string | undefined;
  if (init.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(init.form).toString();
  } else if (init.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(init.json);
  }
  let res: Response;
  try {
    res = await fetch(url, { method: init.method ?? (body ? "POST" : "GET"), headers, body, signal });
  } catch (error) {
    throw new LoginError(
      `cannot reach ${url}: ${redact((error as Error).cause ? String((error as Error).cause) : (error as Error).message, [])}`,
      "check the network (and a proxy or enterprise host setting), then try again",
    );
  }
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = { error: `non-JSON reply: ${redact(text.slice(0, 200), [])}` };
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** Wait `ms`, or less when `signal` aborts (then throw). */
export function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new LoginError("login cancelled", "run `coil login` again"));
    const t = setTimeout(done, ms);
    function done() {
      signal.removeEventListener("abort", stop);
      resolve();
    }
    function stop() {
      clearTimeout(t);
      reject(new LoginError("login cancelled", "run `coil login` again"));
    }
    signal.addEventListener("abort", stop, { once: true });
  });
}

/**
 * Poll a device-code token endpoint (RFC 8628 §3.4-3.5): wait `interval` seconds between requests,
 * add 5 s on `slow_down`, keep going on `authorization_pending`, stop on `expired_token`,
 * `access_denied` or when `expiresIn` runs out. Returns the successful reply's body.
 */
export async function pollDeviceToken(o: {
  url: string;
  form: Record<string, string>;
  headers?: Record<string, string>;
  intervalSec: number;
  expiresInSec: number;
  signal: AbortSignal;
  /** Milliseconds per second of interval (tests make it small; the protocol's unit is seconds). */
  secondMs?: number;
  retryHint: string;
}): Promise<Record<string, unknown>> {
  const second = o.secondMs ?? 1000;
  let interval = Math.max(1, o.intervalSec);
  const deadline = Date.now() + o.expiresInSec * second;
  for (;;) {
    await wait(interval * second, o.signal);
    if (Date.now() > deadline)
      throw new LoginError("the device code expired before the login was approved", o.retryHint);
    const reply = await requestJson(o.url, { form: o.form, headers: o.headers }, o.signal);
    const error = typeof reply.body.error === "string" ? reply.body.error : undefined;
    if (!error && reply.status < 400 && reply.body.access_token) return reply.body;
    if (error === "authorization_pending") continue;
    if (error === "slow_down") {
      const asked = Number(reply.body.interval);
      interval = Number.isFinite(asked) && asked > interval ? asked : interval + 5;
      continue;
    }
    if (error === "expired_token")
      throw new LoginError("the device code expired before the login was approved", o.retryHint);
    if (error === "access_denied") throw new LoginError("the login was denied in the browser", o.retryHint);
    const said = reply.body.error_description ?? error ?? `HTTP ${reply.status}`;
    throw new LoginError(`the token endpoint ${o.url} answered: ${String(said)}`, o.retryHint);
  }
}

/** Run a login flow and store what it returns; the line to show when it is done. */
export async function runLogin(
  flow: LoginFlow,
  ui: LoginUI,
  args: string[],
  home: string,
): Promise<{ file: string; text: string }> {
  const entry = await flow.login(ui, args);
  const file = writeAuthEntry(home, flow.provider, entry);
  const more = flow.describe?.(entry);
  return {
    file,
    text: `Logged in to ${flow.title}${more ? ` (${more})` : ""}; stored in ${file} (mode 0600). Use it with --model ${flow.provider}/<model> (coil models ${flow.provider} lists them).`,
  };
}
