/**
 * sandbox-bwrap: bash (and anything else that runs commands through the `operations` service) runs
 * inside bubblewrap. Checked at start-up; when bwrap is missing or cannot create namespaces coil says
 * so, and commands are refused unless the preset sets `allowUnsandboxed: true` (then they run outside,
 * with a warning). `coil doctor` (tools-coding) reports the status through `operations.doctor`. See docs/safety.md.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { definePlugin, Type, type Static } from "../../api/index.js";
import { projectRoot } from "../../lib/locations.js";
import type { ExecOptions } from "../tools-coding/api.js";
import {
  bwrapArgs,
  DEFAULT_PASS_ENV,
  expandPath,
  probe,
  readOnlyPaths,
  runProcess,
  scrubEnv,
  type Probe,
  type SandboxConfig,
} from "./bwrap.js";

export {
  bwrapArgs,
  hooksPathOf,
  isSecretEnv,
  isSecretValue,
  readOnlyPaths,
  scrubEnv,
  probe,
  DEFAULT_PASS_ENV,
} from "./bwrap.js";

/** Credentials, tokens and shell histories in the home directory. */
export const HIDDEN_HOME = [
  "~/.ssh",
  "~/.gnupg",
  "~/.password-store",
  "~/.netrc",
  "~/.git-credentials",
  "~/.config/git/credentials",
  "~/.aws",
  "~/.azure",
  "~/.config/gcloud",
  "~/.oci",
  "~/.config/doctl",
  "~/.kube",
  "~/.docker",
  "~/.terraform.d",
  "~/.vault-token",
  "~/.config/gh",
  "~/.config/hub",
  "~/.config/glab-cli",
  "~/.npmrc",
  "~/.pypirc",
  "~/.cargo/credentials",
  "~/.cargo/credentials.toml",
  "~/.gem/credentials",
  "~/.pgpass",
  "~/.my.cnf",
  "~/.claude/.credentials.json",
  "~/.codex/auth.json",
  "~/.gemini/oauth_creds.json",
  "~/.coil",
  "~/.bash_history",
  "~/.zsh_history",
  "~/.history",
  "~/.local/share/fish/fish_history",
  "~/.python_history",
  "~/.node_repl_history",
  "~/.psql_history",
  "~/.mysql_history",
  "~/.sqlite_history",
];
/** Sockets of local services: reachable through the file system even without a network (Docker and systemd run anything as root). */
export const HIDDEN_SOCKETS = [
  "/run/user",
  "/run/dbus",
  "/run/docker.sock",
  "/run/containerd",
  "/run/podman",
  "/run/systemd/private",
  "/run/snapd.socket",
  "/run/postgresql",
  "/run/mysqld",
];

export const SandboxOptions = Type.Object({
  /** Extra writable paths besides the working directory (relative to the preset file; `~` allowed). */
  writable: Type.Array(Type.String(), { default: [] }),
  /** Allow network access from inside the sandbox. */
  network: Type.Boolean({ default: false }),
  /** Paths hidden inside the sandbox (an empty directory, or /dev/null for a file). */
  hide: Type.Array(Type.String(), { default: [...HIDDEN_HOME, ...HIDDEN_SOCKETS] }),
  /**
   * Paths inside the project (relative to its root and to the working directory) that commands cannot
   * change although the project is writable: a planted git hook or config would run later, outside the
   * sandbox, at your next `git commit` or `git status`. The folder `core.hooksPath` names is kept with
   * `.git/hooks`. `[]` leaves them writable.
   */
  readOnly: Type.Array(Type.String(), { default: [".git/hooks", ".git/config"] }),
  /** Paths to leave visible although `hide` lists them (e.g. `~/.docker` for docker builds). */
  unhide: Type.Array(Type.String(), { default: [] }),
  /** Environment variables passed besides the built-in allowlist (a trailing `*` matches a prefix); secret-looking values still stay out. */
  passEnv: Type.Array(Type.String(), { default: [] }),
  /** Environment variables passed as they are, even when the name or the value looks like a secret. */
  keepEnv: Type.Array(Type.String(), { default: [] }),
  /** When bwrap is unusable, run commands without a sandbox (with a warning) instead of refusing them. */
  allowUnsandboxed: Type.Boolean({ default: false }),
  /** The bwrap executable. */
  bwrap: Type.String({ default: "bwrap" }),
});
export type SandboxOptions = Static<typeof SandboxOptions>;

const USERNS: Record<NonNullable<Probe["userns"]>, string> = {
  locked: "new, no further ones inside",
  new: "new (bwrap older than 0.8 cannot forbid nested ones)",
  none: "none (bwrap runs privileged here and could not make one); capabilities are dropped",
};

export default definePlugin({
  id: "sandbox-bwrap",
  description:
    "Run shell commands inside bubblewrap: read-only root, writable project, private /tmp, no network, no secrets",
  options: SandboxOptions,
  setup(ctx) {
    const o = ctx.options;
    const homeOf = (env: Record<string, string | undefined>) => env.HOME || homedir();
    const config = (cwd: string, env: Record<string, string | undefined>, userns?: Probe["userns"]): SandboxConfig => {
      const expand = (p: string) => expandPath(p, ctx.baseDir, homeOf(env));
      const shown = new Set(o.unhide.map(expand));
      const writable = o.writable.map(expand);
      return {
        bwrap: o.bwrap,
        cwd,
        network: o.network,
        userns,
        writable,
        readOnly: readOnlyPaths([projectRoot(cwd), cwd], o.readOnly, [cwd, ...writable], homeOf(env)),
        hide: [...new Set([...o.hide.map(expand), ...(env.COIL_HOME ? [env.COIL_HOME] : [])])].filter(
          (p) => !shown.has(p),
        ),
      };
    };
    const envPolicy = { pass: o.passEnv, keep: o.keepEnv };
    let checked: Promise<Probe> | undefined;
    const check = () => (checked ??= probe(config(ctx.cwd, process.env)));
    let warned = false;

    const describe = (p: Probe, env: Record<string, string | undefined>) => {
      const c = config(ctx.cwd, env);
      const { dropped } = scrubEnv(env, envPolicy);
      const status = p.ok
        ? `ok (${p.version ?? "bwrap"})`
        : o.allowUnsandboxed
          ? `NOT AVAILABLE, commands run WITHOUT a sandbox: ${p.problem}`
          : `NOT AVAILABLE, bash is refused: ${p.problem}`;
      const uid = process.getuid?.();
      return [
        `sandbox-bwrap: ${status}`,
        `  root file system: read-only; /tmp private; /dev and /proc minimal`,
        ...(p.capEff !== undefined
          ? [
              `  capabilities inside: ${/[^0]/.test(p.capEff) ? `KEPT (CapEff ${p.capEff})` : "none (CapEff 0)"}${uid === 0 ? "; coil runs as root" : ""}`,
            ]
          : []),
        ...(p.userns ? [`  user namespace: ${USERNS[p.userns]}`] : []),
        `  writable: ${[ctx.cwd, ...c.writable].join(", ")}${c.writable
          .filter((w) => !existsSync(w))
          .map((w) => ` (${w} does not exist: skipped)`)
          .join("")}`,
        `  read-only inside: ${c.readOnly?.join(", ") || "(none)"}${o.readOnly.length ? " (readOnly: [] makes them writable)" : ""}`,
        `  network: ${o.network ? "allowed" : "none"}`,
        `  hidden: ${c.hide.filter((h) => existsSync(h)).join(", ") || "(none present)"}`,
        `  environment: an allowlist (${DEFAULT_PASS_ENV.slice(0, 4).join(", ")} ...; passEnv adds names), no secret-looking values; left out: ${dropped.join(", ") || "nothing"}`,
        `  not covered: read, write, edit and the search tools run in coil's process (use permission-gate rules); unix sockets not in hide`,
      ].join("\n");
    };

    ctx.onStart(async () => {
      for (const w of config(ctx.cwd, process.env).writable)
        if (!existsSync(w)) ctx.log.warn(`writable path ${w} does not exist; it is not mounted`);
      const p = await check();
      if (p.ok) return;
      if (o.allowUnsandboxed)
        ctx.log.warn(`NO SANDBOX: ${p.problem}. allowUnsandboxed is set, so bash runs directly with your rights.`);
      else
        ctx.log.error(
          `${p.problem}. bash commands will be refused; fix the sandbox, remove sandbox-bwrap from the preset, or set allowUnsandboxed: true to run without it.`,
        );
    });

    ctx.services.provide("operations", {
      async exec(command: string, x: ExecOptions) {
        const p = await check();
        const given = x.env ?? (process.env as Record<string, string | undefined>);
        const shell = x.shell ?? (existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh");
        const run = { cwd: x.cwd, signal: x.signal, killGraceMs: x.killGraceMs, onData: x.onData };
        if (p.ok)
          return runProcess(o.bwrap, [...bwrapArgs(config(x.cwd, given, p.userns)), shell, "-c", command], {
            ...run,
            env: scrubEnv(given, envPolicy).env,
          });
        if (!o.allowUnsandboxed) {
          throw Object.assign(
            new Error(
              `[sandbox-bwrap] the sandbox is not available, so the command was not run: ${p.problem}. Tell the user; they can fix it (see coil doctor) or set allowUnsandboxed: true.`,
            ),
            { code: "ESANDBOX" },
          );
        }
        if (!warned) ctx.log.warn(`running WITHOUT a sandbox (allowUnsandboxed): ${p.problem}`);
        warned = true;
        return runProcess(shell, ["-c", command], { ...run, env: given as Record<string, string>, endWithCoil: true });
      },
      /** The status `coil doctor` prints. */
      async doctor(env: Record<string, string | undefined>) {
        const p = await check();
        return { ok: p.ok, report: describe(p, env) };
      },
    });
  },
});
