/**
 * sandbox-bwrap: bash (and anything else that runs commands through the `operations` service) runs
 * inside bubblewrap. Checked at start-up; when bwrap is missing or cannot create namespaces coil says
 * so, and commands are refused unless the preset sets `allowUnsandboxed: true` (then they run outside,
 * with a warning). `coil doctor` reports the status. See docs/safety.md.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { definePlugin, Type, type CliStreams, type Static } from "../../kernel/index.js";
import { bwrapArgs, expandPath, probe, runProcess, scrubEnv, type Probe, type SandboxConfig } from "./bwrap.js";

export { bwrapArgs, isSecretEnv, scrubEnv, probe } from "./bwrap.js";

export const SandboxOptions = Type.Object({
  /** Extra writable paths besides the working directory (relative to the preset file; `~` allowed). */
  writable: Type.Array(Type.String(), { default: [] }),
  /** Allow network access from inside the sandbox. */
  network: Type.Boolean({ default: false }),
  /** Paths hidden inside the sandbox (an empty directory, or /dev/null for a file). */
  hide: Type.Array(Type.String(), {
    default: ["~/.ssh", "~/.gnupg", "~/.aws", "~/.azure", "~/.kube", "~/.docker", "~/.config/gcloud", "~/.config/gh", "~/.netrc", "~/.npmrc", "~/.pypirc", "~/.git-credentials", "~/.coil"],
  }),
  /** Environment variables to pass even though their names look like secrets. */
  keepEnv: Type.Array(Type.String(), { default: [] }),
  /** When bwrap is unusable, run commands without a sandbox (with a warning) instead of refusing them. */
  allowUnsandboxed: Type.Boolean({ default: false }),
  /** The bwrap executable. */
  bwrap: Type.String({ default: "bwrap" }),
});
export type SandboxOptions = Static<typeof SandboxOptions>;

/** The part of tools-coding's ExecOptions this backend uses (plugins do not import each other). */
interface ExecOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  shell?: string;
  signal?: AbortSignal;
  killGraceMs?: number;
  onData(chunk: Uint8Array, stream: "stdout" | "stderr"): void;
}

export default definePlugin({
  id: "sandbox-bwrap",
  description: "Run shell commands inside bubblewrap: read-only root, writable project, private /tmp, no network, no secrets",
  options: SandboxOptions,
  setup(ctx) {
    const o = ctx.options;
    const homeOf = (env: Record<string, string | undefined>) => env.HOME || homedir();
    const config = (cwd: string, env: Record<string, string | undefined>): SandboxConfig => ({
      bwrap: o.bwrap,
      cwd,
      network: o.network,
      writable: o.writable.map((p) => expandPath(p, ctx.baseDir, homeOf(env))),
      hide: [...new Set([...o.hide.map((p) => expandPath(p, ctx.baseDir, homeOf(env))), ...(env.COIL_HOME ? [env.COIL_HOME] : [])])],
    });
    let checked: Promise<Probe> | undefined;
    const check = () => (checked ??= probe(config(ctx.cwd, process.env)));
    let warned = false;

    const describe = (p: Probe, env: Record<string, string | undefined>) => {
      const c = config(ctx.cwd, env);
      const { dropped } = scrubEnv(env, o.keepEnv);
      const status = p.ok ? `ok (${p.version ?? "bwrap"})` : o.allowUnsandboxed ? `NOT AVAILABLE, commands run WITHOUT a sandbox: ${p.problem}` : `NOT AVAILABLE, bash is refused: ${p.problem}`;
      return [
        `sandbox-bwrap: ${status}`,
        `  root file system: read-only; /tmp private; /dev and /proc minimal`,
        `  writable: ${[ctx.cwd, ...c.writable].join(", ")}${c.writable.filter((w) => !existsSync(w)).map((w) => ` (${w} does not exist: skipped)`).join("")}`,
        `  network: ${o.network ? "allowed" : "none"}`,
        `  hidden: ${c.hide.filter((h) => existsSync(h)).join(", ") || "(none present)"}`,
        `  environment: ${dropped.length ? `without ${dropped.join(", ")}` : "nothing removed (no secret-looking variables set)"}`,
      ].join("\n");
    };

    ctx.onStart(async () => {
      for (const w of config(ctx.cwd, process.env).writable) if (!existsSync(w)) ctx.log.warn(`writable path ${w} does not exist; it is not mounted`);
      const p = await check();
      if (p.ok) return;
      if (o.allowUnsandboxed) ctx.log.warn(`NO SANDBOX: ${p.problem}. allowUnsandboxed is set, so bash runs directly with your rights.`);
      else ctx.log.error(`${p.problem}. bash commands will be refused; fix the sandbox, remove sandbox-bwrap from the preset, or set allowUnsandboxed: true to run without it.`);
    });

    ctx.services.provide("operations", {
      async exec(command: string, x: ExecOptions) {
        const p = await check();
        const given = x.env ?? (process.env as Record<string, string | undefined>);
        const shell = x.shell ?? (existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh");
        const run = { cwd: x.cwd, signal: x.signal, killGraceMs: x.killGraceMs, onData: x.onData };
        if (p.ok) return runProcess(o.bwrap, [...bwrapArgs(config(x.cwd, given)), shell, "-c", command], { ...run, env: scrubEnv(given, o.keepEnv).env });
        if (!o.allowUnsandboxed) {
          throw Object.assign(new Error(`[sandbox-bwrap] the sandbox is not available, so the command was not run: ${p.problem}. Tell the user; they can fix it (see coil doctor) or set allowUnsandboxed: true.`), { code: "ESANDBOX" });
        }
        if (!warned) ctx.log.warn(`running WITHOUT a sandbox (allowUnsandboxed): ${p.problem}`);
        warned = true;
        return runProcess(shell, ["-c", command], { ...run, env: given as Record<string, string> });
      },
    });

    ctx.subcommands.register({
      name: "doctor",
      description: "report the sandbox status",
      async run(_argv: string[], io: CliStreams) {
        const p = await check();
        io.stdout.write(describe(p, io.env) + "\n");
        return p.ok ? 0 : 1;
      },
    });
  },
});
