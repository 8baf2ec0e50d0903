/**
 * What the user has beyond the providers' streaming: `--api-key`, `coil models [search]`,
 * `coil auth set|remove|list`, `coil login`/`coil logout`, and the `/model` slash command, registered
 * by this plugin. Provider plugins read which provider `--api-key` applies to from its `provider-cli`
 * service (api.ts) when they look a key up (lib/provider-kit/keys.ts), so they work, without these
 * commands, in a preset that leaves the plugin out.
 */
import {
  CoilError,
  messageOf,
  type Agent,
  type CliStreams,
  type CustomMessage,
  type ModelInfo,
  type PluginContext,
  type Provider,
} from "../../api/index.js";
import { resolveModel, type ModelChoice } from "../../lib/models.js";
import { describePrice, type CatalogModel } from "../../lib/provider-kit/catalog.js";
import {
  authFile,
  authFileTooOpen,
  coilHome,
  readAuth,
  writeAuthEntry,
  writeAuthKey,
  type OAuthEntry,
} from "../../lib/provider-kit/config.js";
import { skippedNotes } from "../../lib/provider-kit/skipped.js";
import {
  describeExpiry,
  findLogin,
  loginFlows,
  piAuthFile,
  piLogins,
  runLogin,
  type LoginUI,
} from "../../lib/provider-kit/oauth.js";
import type { ProviderCliService } from "./api.js";

/** Register `--api-key`, `coil models`, `coil auth` and `/model` (the `models` plugin's setup). */
export function registerModelCli(ctx: PluginContext<unknown>): ProviderCliService {
  const service: ProviderCliService = {};
  ctx.services.provide("provider-cli", service);
  ctx.flags.register({
    name: "api-key",
    description: "API key for the provider this run uses (never stored or logged)",
    type: "string",
    valueName: "key",
  });
  ctx.onStart((agent) => {
    service.selected = agent.state.provider;
  });
  ctx.subcommands.register({
    name: "models",
    arguments: "[search...]",
    options: [{ name: "json", description: "print JSON (every matching model, with its provider and source)" }],
    description: "list the models of every provider in the preset",
    run: (words, io, options) => listModels(ctx, words.join(" ").trim(), options.json === true, io),
  });
  ctx.subcommands.register({
    name: "auth",
    description: "API keys and subscription logins stored in $COIL_HOME/auth.json (mode 0600)",
    commands: [
      {
        name: "set",
        arguments: "<provider>",
        description: 'store the key for a provider, read from stdin (printf %s "$KEY" | coil auth set <provider>)',
        run: ([provider], io) => authSet(ctx, provider!, io),
      },
      {
        name: "remove",
        arguments: "<provider>",
        description: "remove the stored key (or subscription login) of a provider, saying which it was",
        run: ([provider], io) => forget(ctx, provider!, io),
      },
      {
        name: "list",
        options: [
          {
            name: "json",
            description:
              "print JSON: { file, readableByOthers, providers: { <id>: { stored, type, inPreset, login } } }; type is what coil's auth.json holds (api_key or oauth), login the login coil uses: { from (auth.json or pi), file, expires (ISO 8601), expired, detail } (never a key or token)",
          },
        ],
        description:
          "list the providers with a stored key or a login, and until when a login's access token runs (never a key or token)",
        run: (_args, io, options) => authList(ctx, options.json === true, io),
      },
    ],
  });
  ctx.subcommands.register({
    name: "login",
    arguments: "[provider] [host]",
    description:
      "log in with a subscription (the providers that have one: github-copilot, openai-codex); stored in $COIL_HOME/auth.json",
    help: "host: a GitHub Enterprise host for github-copilot (coil login github-copilot ghe.example.com).\nopenai-codex opens the ChatGPT login in a browser (or prints its address; paste the address it ends on over SSH).\nAPI keys are stored with `coil auth set <provider>` instead.",
    run: (args, io) => loginCommand(ctx, args, io),
  });
  ctx.subcommands.register({
    name: "logout",
    arguments: "<provider>",
    description: "forget a provider's subscription login (or stored key) in $COIL_HOME/auth.json",
    run: ([provider], io) => forget(ctx, provider!, io),
  });
  ctx.commands.register({
    name: "model",
    description: "switch model for the next request (provider/model, fuzzy)",
    argumentHint: "provider/model",
    run: (args, agent) => switchModel(ctx, args, agent),
  });
  return service;
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + " ".repeat(width - text.length);
}

function tokens(n: number): string {
  return n >= 1_000_000 ? `${Number((n / 1_000_000).toFixed(2))}M` : n >= 1000 ? `${Math.round(n / 1000)}K` : String(n);
}

function matches(query: string, text: string): boolean {
  const hay = text.toLowerCase().replace(/[._\s]/g, "-");
  return query
    .toLowerCase()
    .replace(/[._\s]/g, "-")
    .split(/[-/]+/)
    .filter(Boolean)
    .every((part) => hay.includes(part));
}

async function listModels(ctx: PluginContext<unknown>, query: string, json: boolean, io: CliStreams): Promise<number> {
  const rows: { provider: Provider; model: ModelInfo; configured: boolean }[] = [];
  for (const id of ctx.providers.ids()) {
    const provider = ctx.providers.get(id)!;
    const configured = !provider.isConfigured || provider.isConfigured();
    for (const model of provider.models ?? []) {
      if (!query || matches(query, `${provider.id}/${model.id} ${model.name ?? ""}`))
        rows.push({ provider, model, configured });
    }
  }
  const from = (m: ModelInfo) => (m as CatalogModel).source ?? "built-in";
  if (json) {
    // Header values may be secrets (Pi's models.json allows literal ones): only their names are shown.
    const shown = (m: ModelInfo) => ({
      ...m,
      headers: (m as CatalogModel).headers?.map((h) => h.header ?? h.key),
      source: from(m),
    });
    io.stdout.write(
      JSON.stringify(
        rows.map((r) => ({ ...shown(r.model), provider: r.provider.id, configured: r.configured })),
        null,
        2,
      ) + "\n",
    );
    return 0;
  }
  if (rows.length === 0) {
    io.stderr.write(
      `coil: no model matches '${query}'. Known providers: ${ctx.providers.ids().join(", ") || "(none)"}\n`,
    );
    return 1;
  }
  const head = ["model", "ready", "context", "max out", "thinking", "images", "$/M in/out", "from", "name"];
  const mark = (m: ModelInfo) =>
    (m as CatalogModel).default === "user"
      ? ` (default: ${(m as CatalogModel).defaultFrom ? "Pi's settings.json" : "models.yaml"})`
      : (m as CatalogModel).default === "provider"
        ? " (default)"
        : "";
  const table = rows.map(({ provider, model, configured }) => [
    `${provider.id}/${model.id}${configured ? "" : " *"}`,
    configured ? "yes" : "-",
    tokens(model.contextWindow),
    tokens(model.maxOutput),
    model.reasoning ? "yes" : "-",
    model.input?.includes("image") ? "yes" : "-",
    describePrice(model),
    from(model),
    `${model.name ?? ""}${mark(model)}`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : pad(c, widths[i]!)))
      .join("  ")
      .trimEnd();
  io.stdout.write([line(head), ...table.map(line)].join("\n") + "\n");
  const open = query
    ? []
    : ctx.providers
        .ids()
        .map((id) => ctx.providers.get(id)!)
        .filter((p) => !p.models?.length);
  if (open.length) {
    const mark = (p: Provider) => (!p.isConfigured || p.isConfigured() ? p.id : `${p.id} *`);
    io.stdout.write(
      `\nProviders that serve ids they do not list (use --model <provider>/<id>): ${open.map(mark).join(", ")}\n`,
    );
  }
  // What coil read but could not use in Pi's files (Pi's own providers, APIs coil does not speak).
  const notes = query ? [] : skippedNotes();
  if (notes.length) io.stdout.write(`\n${notes.map((n) => `note: ${n}`).join("\n")}\n`);
  const unconfigured = new Map<string, Provider>();
  for (const r of rows) if (!r.configured) unconfigured.set(r.provider.id, r.provider);
  for (const p of open) if (p.isConfigured && !p.isConfigured()) unconfigured.set(p.id, p);
  if (unconfigured.size) {
    io.stdout.write("\n* not configured yet:\n");
    for (const p of unconfigured.values())
      io.stdout.write(`  ${p.id}: ${p.setupHint ?? "see its plugin's documentation"}\n`);
  }
  return 0;
}

async function readStdin(io: CliStreams): Promise<string> {
  let text = "";
  for await (const chunk of io.stdin) {
    text += chunk.toString();
    if (io.stdin.isTTY && text.includes("\n")) break;
  }
  return text;
}

function authList(ctx: PluginContext<unknown>, json: boolean, io: CliStreams): number {
  const home = coilHome(io.env);
  const open = authFileTooOpen(home);
  if (open)
    io.stderr.write(`coil: warning: ${authFile(home)} is readable by other users; run: chmod 600 ${authFile(home)}\n`);
  if (json) {
    const providers = Object.fromEntries(
      authEntries(ctx, home, io.env).map(({ id, ...shown }) => [id, shown] as const),
    );
    io.stdout.write(`${JSON.stringify({ file: authFile(home), readableByOthers: open, providers }, null, 2)}\n`);
    return 0;
  }
  io.stdout.write(`${authLines(ctx, home, io.env).join("\n")}\n`);
  return 0;
}

async function authSet(ctx: PluginContext<unknown>, provider: string, io: CliStreams): Promise<number> {
  const known = ctx.providers.ids();
  if (!known.includes(provider))
    io.stderr.write(
      `coil: warning: no provider '${provider}' in this preset (known: ${known.join(", ") || "none"}); storing the key anyway\n`,
    );
  if (io.stdin.isTTY) io.stderr.write(`Paste the API key for ${provider} and press Enter: `);
  const key = (await readStdin(io)).trim();
  if (!key || /\s/.test(key)) {
    io.stderr.write('coil: no key read from stdin (pipe it in: printf %s "$KEY" | coil auth set <provider>)\n');
    return 2;
  }
  const file = writeAuthKey(coilHome(io.env), provider, key);
  io.stdout.write(`stored the key for ${provider} in ${file} (mode 0600)\n`);
  return 0;
}

/** A provider in `coil auth list --json`: what coil's auth.json holds for it, and its login (never a token). */
export interface AuthListEntry {
  id: string;
  /** coil's auth.json holds an entry for it. */
  stored: boolean;
  /** That entry's type: `api_key` (a key) or `oauth` (a subscription login). */
  type?: "api_key" | "oauth";
  inPreset: boolean;
  /** The login coil uses for it: coil's own, else one read from Pi's auth.json. */
  login?: {
    from: "auth.json" | "pi";
    file: string;
    /** When its access token runs out (ISO 8601); a refresh token gets a new one. */
    expires: string;
    expired: boolean;
    /** What the login flow says of it (e.g. the GitHub host). */
    detail?: string;
  };
}

/** Per provider, a stored key or a login and until when its access token runs; Pi's logins read too. */
export function authEntries(ctx: PluginContext<unknown>, home: string, env: NodeJS.ProcessEnv): AuthListEntry[] {
  const known = ctx.providers.ids();
  const flows = loginFlows(ctx);
  const stored = readAuth(home);
  const now = Date.now();
  const loginOf = (id: string, entry: OAuthEntry, from: "auth.json" | "pi"): AuthListEntry["login"] => {
    const detail = flows.get(id)?.describe?.(entry);
    return {
      from,
      file: from === "pi" ? piAuthFile(env) : authFile(home),
      expires: new Date(entry.expires).toISOString(),
      expired: entry.expires <= now,
      ...(detail ? { detail } : {}),
    };
  };
  const rows = new Map<string, AuthListEntry>();
  for (const [id, entry] of Object.entries(stored)) {
    const type = entry.type === "oauth" ? "oauth" : "api_key";
    rows.set(id, { id, stored: true, type, inPreset: known.includes(id) });
    if (entry.type === "oauth") rows.get(id)!.login = loginOf(id, entry, "auth.json");
  }
  for (const [id, entry] of Object.entries(piLogins(env))) {
    const row = rows.get(id) ?? { id, stored: false, inPreset: known.includes(id) };
    if (!row.login) row.login = loginOf(id, entry, "pi");
    rows.set(id, row);
  }
  return [...rows.values()];
}

/**
 * What `coil auth list` and `coil doctor` show: per provider, a stored key or a login and until when
 * its access token runs (never a token), and the logins read from Pi's auth.json.
 */
export function authLines(ctx: PluginContext<unknown>, home: string, env: NodeJS.ProcessEnv): string[] {
  const lines: string[] = [];
  const entries = authEntries(ctx, home, env);
  for (const row of entries) {
    const note = row.inPreset ? "" : " (no such provider in this preset)";
    if (row.type === "api_key") lines.push(`${row.id}: key stored${note}`);
    const login = row.login;
    if (!login) continue;
    const how = login.from === "pi" ? ` through Pi (${login.file}, read only)` : "";
    lines.push(
      `${row.id}: logged in${how}${login.detail ? ` (${login.detail})` : ""}, ${describeExpiry(Date.parse(login.expires))}${note}`,
    );
  }
  if (lines.length === 0) lines.push(`no keys or logins stored in ${authFile(home)}`);
  return lines;
}

/** One line from stdin; undefined at its end or when `signal` aborts (the listener is removed then). */
function readLine(io: CliStreams, signal?: AbortSignal): Promise<string | undefined> {
  return new Promise((resolve) => {
    let text = "";
    const finish = (line: string | undefined) => {
      io.stdin.off("data", onData);
      io.stdin.off("end", onEnd);
      signal?.removeEventListener("abort", onAbort);
      io.stdin.pause();
      resolve(line?.trim() || undefined);
    };
    const onData = (chunk: Buffer | string) => {
      text += chunk.toString();
      if (text.includes("\n")) finish(text.split("\n")[0]);
    };
    const onEnd = () => finish(text);
    const onAbort = () => finish(undefined);
    if (signal?.aborted) return finish(undefined);
    signal?.addEventListener("abort", onAbort, { once: true });
    io.stdin.on("data", onData);
    io.stdin.on("end", onEnd);
    io.stdin.resume();
  });
}

function cliLoginUI(io: CliStreams, signal: AbortSignal): LoginUI {
  return {
    signal,
    show: (text) => io.stderr.write(`${text}\n`),
    ask: (question, stop) => {
      io.stderr.write(`${question} `);
      return readLine(io, stop ? AbortSignal.any([signal, stop]) : signal);
    },
  };
}

async function loginCommand(ctx: PluginContext<unknown>, argv: string[], io: CliStreams): Promise<number> {
  const flows = loginFlows(ctx);
  const [provider, ...rest] = argv;
  const flow = provider ? flows.get(provider) : undefined;
  if (!flow) {
    const list =
      [...flows.keys()].join(", ") || "none (add provider-github-copilot or provider-openai-codex to the preset)";
    io.stderr.write(
      `${provider ? `coil: no subscription login for '${provider}'. ` : ""}usage: coil login <provider> [host]   (providers with a login: ${list})\n` +
        "       API keys are stored with `coil auth set <provider>` instead.\n",
    );
    return 2;
  }
  const abort = new AbortController();
  const stop = () => abort.abort();
  process.once("SIGINT", stop);
  try {
    const done = await runLogin(flow, cliLoginUI(io, abort.signal), rest, coilHome(io.env));
    io.stdout.write(`${done.text}\n`);
    return 0;
  } catch (error) {
    const e = error as CoilError;
    io.stderr.write(
      `coil: login to ${flow.title} failed: ${e.detail ?? messageOf(error)}${e.hint ? `; ${e.hint}` : ""}\n`,
    );
    return 1;
  } finally {
    process.off("SIGINT", stop);
  }
}

/** `coil logout` and `coil auth remove`: remove what coil's auth.json holds for a provider and say what it was. */
function forget(ctx: PluginContext<unknown>, provider: string, io: CliStreams): number {
  const home = coilHome(io.env);
  const had = readAuth(home)[provider];
  if (had) writeAuthEntry(home, provider, undefined);
  const fromPi = piLogins(io.env)[provider];
  if (had?.type === "oauth") {
    const detail = loginFlows(ctx).get(provider)?.describe?.(had);
    io.stdout.write(`removed the login for ${provider}${detail ? ` (${detail})` : ""} from ${authFile(home)}\n`);
  } else if (had) io.stdout.write(`removed the stored key for ${provider} from ${authFile(home)}\n`);
  else io.stdout.write(`no login or key for ${provider} in ${authFile(home)}\n`);
  if (fromPi && findLogin(home, provider, io.env, true)?.from === "pi")
    io.stdout.write(
      `note: Pi's login for ${provider} in ${piAuthFile(io.env)} is still there and coil still reads it; coil never rewrites that file (log out in Pi, or remove the entry yourself)\n`,
    );
  return 0;
}

/** `/model provider/id`: switch, and record the switch in the session (or in history as a custom message). */
async function switchModel(ctx: PluginContext<unknown>, args: string, agent: Agent): Promise<string> {
  const want = args.trim();
  const current = agent.state;
  if (!want) return `current model: ${current.provider}/${current.model.id}`;
  let found: ModelChoice;
  try {
    found = resolveModel(
      ctx.providers.ids().map((p) => ctx.providers.get(p)!),
      want,
    );
  } catch (error) {
    return error instanceof CoilError ? `${error.detail}${error.hint ? `: ${error.hint}` : ""}` : messageOf(error);
  }
  agent.setModel(found.provider.id, found.model);
  const record: CustomMessage<{ from: { provider: string; model: string }; to: { provider: string; model: string } }> =
    {
      role: "custom",
      customType: "model_change",
      content: `Model switched from ${current.provider}/${current.model.id} to ${found.provider.id}/${found.model.id}`,
      display: true,
      details: {
        from: { provider: current.provider, model: current.model.id },
        to: { provider: found.provider.id, model: found.model.id },
      },
      timestamp: Date.now(),
    };
  // A session store (the `session` service, e.g. session-jsonl) records the switch as its own entry;
  // without one, the record goes into history as a custom message, which no model ever sees.
  const session = ctx.services.get("session") as
    | { appendModelChange?(provider: string, modelId: string): unknown }
    | undefined;
  if (typeof session?.appendModelChange === "function") session.appendModelChange(found.provider.id, found.model.id);
  else if (!agent.state.isRunning) agent.replaceMessages([...agent.state.messages, record]);
  ctx.log.info(record.content as string);
  return `switched to ${found.provider.id}/${found.model.id}`;
}
