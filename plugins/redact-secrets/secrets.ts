/**
 * Which values are secrets, and replacing them in text. Values come from the environment (variables
 * named like credentials, and the password in any `scheme://user:password@host` value), from
 * `$COIL_HOME/auth.json`, from `--api-key`, and from the plugin's options.
 */

/**
 * Variable names whose values are credentials: `…KEY`, `…TOKEN`, `…SECRET`, `…PASSWORD`, `…CREDENTIALS`,
 * `…COOKIE` (at the end or before `_`), and `AUTH`/`PASS`/`PAT` as a whole word. `GIT_AUTHOR_NAME`,
 * `TOKENIZERS_PARALLELISM` and `KEYTIMEOUT` are not.
 */
export const SECRET_NAME =
  /(KEY|TOKEN|SECRET|PASSW(?:OR)?D|PASSPHRASE|CREDENTIALS?|COOKIE)(?:_|$)|(?:^|_)(?:AUTH|AUTHORIZATION|PASS|PAT)(?:_|$)/i;
/** Names that match SECRET_NAME but hold no secret. */
const NOT_SECRET = new Set(["SSH_AUTH_SOCK"]);
/** A URL with a password: `postgres://user:password@host/db`. */
const URL_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:([^\s@/]+)@/gi;

export const REDACTED = "[redacted]";

/** The secret values in an environment: credential-named variables, and passwords inside URLs. */
export function secretsInEnv(env: Record<string, string | undefined>, extraNames: readonly string[] = []): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    const named = extraNames.includes(name) || (SECRET_NAME.test(name) && !NOT_SECRET.has(name));
    // paths and plain switches are not secrets, even under a secret-looking name
    if (named && !/^[/~]/.test(value) && !/^(true|false|yes|no|on|off|\d+)$/i.test(value)) out.push(value);
    for (const m of value.matchAll(URL_PASSWORD)) out.push(m[1]!);
  }
  return out;
}

/**
 * Every secret in an auth.json object: the `key` of stored API keys (`{ provider: { type, key } }`) and the
 * `access` and `refresh` tokens of subscription logins (`{ type: "oauth", access, refresh, expires }`).
 */
export function secretsInAuth(auth: unknown): string[] {
  if (!auth || typeof auth !== "object") return [];
  return Object.values(auth as Record<string, unknown>).flatMap((entry) => {
    const e = (entry ?? {}) as { key?: unknown; access?: unknown; refresh?: unknown };
    return [e.key, e.access, e.refresh].filter((v): v is string => typeof v === "string");
  });
}

/** A replacer for these values (longest first, shorter than `minLength` ignored), or undefined when there is none. */
export function redactor(values: readonly string[], minLength: number): ((text: string) => string) | undefined {
  const list = [...new Set(values.filter((v) => v.length >= minLength))].sort((a, b) => b.length - a.length);
  if (list.length === 0) return undefined;
  return (text) => {
    let out = text;
    for (const v of list) if (out.includes(v)) out = out.split(v).join(REDACTED);
    return out;
  };
}
