/**
 * Values in models.yaml (and Pi's models.json) that are not written out: `apiKey` and `headers` may
 * hold `${NAME}` (an environment variable, anywhere in the text) or `!command` (the whole value: a
 * shell command whose trimmed standard output is the value). A command runs at most once per
 * process, the first time its value is needed (never at start-up, never for `coil models`).
 */
import { spawnSync } from "../child-process.js";
import { CoilError } from "../../api/index.js";

/** A templated value and where it was written, for error messages. */
export interface ConfigValue {
  /** The text as written: `${NAME}`, `Bearer ${NAME}`, `!pass show api/acme`, or plain text. */
  raw: string;
  file: string;
  line?: number;
  provider: string;
  /** The field: `apiKey`, `headers.X-Team`, `models[0].headers.X-Route`. */
  key: string;
  /** For a header: its name. */
  header?: string;
  /** The text is the value itself (Pi's models.json may hold a key): no `${}`, no command. */
  literal?: boolean;
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const COMMAND_TIMEOUT_MS = 30_000;

/** Whether the value is a `!command`. */
export function isCommand(v: ConfigValue): boolean {
  return !v.literal && v.raw.startsWith("!");
}

/** The environment variables a value names (`${NAME}`), in order. */
export function variablesOf(v: ConfigValue): string[] {
  if (v.literal) return [];
  return [...v.raw.matchAll(VAR)].map((m) => m[1]!);
}

function where(v: ConfigValue): string {
  return `provider '${v.provider}' ${v.key}`;
}

const ran = new Map<string, { value?: string; error?: CoilError }>();

/** Forget the outputs of commands run so far (tests; a long-lived embedder that wants fresh secrets). */
export function forgetCommandOutputs(): void {
  ran.clear();
}

function runCommand(v: ConfigValue, env: NodeJS.ProcessEnv): string {
  const command = v.raw.slice(1).trim();
  const cached = ran.get(command);
  if (cached) {
    if (cached.error) throw cached.error;
    return cached.value!;
  }
  const fail = (why: string): never => {
    const error = new CoilError("CONFIG_INVALID", `${where(v)}: the command \`${command}\` ${why}`, {
      file: v.file,
      line: v.line,
      hint: "run the command in a shell to see what is wrong; its standard output (trimmed) is the value",
    });
    ran.set(command, { error });
    throw error;
  };
  if (!command) fail("is empty");
  const shell =
    process.platform === "win32"
      ? { file: "cmd.exe", args: ["/d", "/s", "/c", command] }
      : { file: "/bin/sh", args: ["-c", command] };
  const out = spawnSync(shell.file, shell.args, {
    encoding: "utf8",
    env,
    timeout: COMMAND_TIMEOUT_MS,
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 1024 * 1024,
  });
  const stderr = (out.stderr ?? "").trim().split("\n").slice(-5).join(" / ");
  if (out.error)
    fail(
      `could not run: ${(out.error as NodeJS.ErrnoException).code === "ETIMEDOUT" ? `no answer within ${COMMAND_TIMEOUT_MS / 1000}s` : out.error.message}`,
    );
  if (out.status !== 0)
    fail(`failed (${out.signal ? `killed by ${out.signal}` : `exit ${out.status}`})${stderr ? `: ${stderr}` : ""}`);
  const value = (out.stdout ?? "").trim();
  if (!value) fail(`printed nothing${stderr ? ` (stderr: ${stderr})` : ""}`);
  ran.set(command, { value });
  return value;
}

/**
 * The value, with variables filled in and a command run (once). A variable that is not set gives
 * undefined when `missing` is `undefined`, else throws naming it; a failing command always throws.
 */
export function resolveValue(
  v: ConfigValue,
  missing: "undefined" | "throw" = "throw",
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (v.literal) return v.raw;
  if (isCommand(v)) return runCommand(v, env);
  let unset: string | undefined;
  const out = v.raw.replace(VAR, (_, name: string) => {
    const value = env[name];
    if (value === undefined || value === "") unset ??= name;
    return value ?? "";
  });
  if (unset !== undefined) {
    if (missing === "undefined") return undefined;
    throw new CoilError("CONFIG_INVALID", `${where(v)}: the environment variable ${unset} is not set`, {
      file: v.file,
      line: v.line,
      hint: `export ${unset}=… before starting coil, or change the value in ${v.file}`,
    });
  }
  return out;
}

/**
 * Headers with every value resolved (throws naming the header whose variable or command failed), and
 * the values that came from a variable or a command: those may be secrets, to redact from messages.
 * Text written out in the file is not (redacting `platform` from every error would garble them).
 */
export function resolveHeaders(...lists: (readonly ConfigValue[] | undefined)[]): {
  headers: Record<string, string>;
  secrets: string[];
} {
  const headers: Record<string, string> = {};
  const secrets: string[] = [];
  for (const h of lists.flatMap((l) => l ?? [])) {
    const value = resolveValue(h)!;
    headers[h.header ?? h.key] = value;
    if (isCommand(h) || variablesOf(h).length) secrets.push(value);
  }
  return { headers, secrets };
}
