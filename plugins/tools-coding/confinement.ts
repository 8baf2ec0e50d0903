/**
 * Whether commands are confined, said plainly: the one-time notice the first unconfined bash call
 * prints, and the `confinement` service `coil doctor` (the doctor plugin) prints. A backend that
 * confines commands (sandbox-bwrap) provides `operations.doctor` and reports for itself.
 */
import { userInfo } from "node:os";
import type { CliStreams, PluginLog, StartInfo } from "../../api/index.js";
import type { OperationsStatus } from "./local-operations.js";

function who(): string {
  const uid = process.getuid?.();
  let name = "";
  try {
    name = userInfo().username;
  } catch {
    // no passwd entry for this uid
  }
  return uid === 0
    ? `root (uid 0): every file on the machine, devices and system services`
    : `${name || "your user"}${uid === undefined ? "" : ` (uid ${uid})`}: every file you can`;
}

export const HOW_TO_CONFINE =
  "to confine them: coil --preset safe, or add sandbox-bwrap to your preset (docs/safety.md)";

export function unconfinedNotice(): string {
  return `bash runs commands WITHOUT a sandbox, with the rights of ${who()}; they can also use the network and see coil's environment (API keys included). ${HOW_TO_CONFINE}`;
}

/** Says once per process, at the first unconfined command, that commands run unconfined. */
export class ConfinementNotice {
  private said = false;
  private io: CliStreams | undefined;
  private mode = "";
  constructor(private readonly log: PluginLog) {}

  started(io: CliStreams, info: StartInfo): void {
    this.io = io;
    this.mode = info.mode;
  }

  /** Call before running a command locally (no `operations.exec` provided). */
  unconfined(): void {
    if (this.said) return;
    this.said = true;
    // JSON and RPC modes own stdout: the notice goes to stderr only; elsewhere it is a diagnostic
    // (print mode writes it to stderr, the TUI shows it).
    if (this.io && (this.mode === "json" || this.mode === "rpc"))
      this.io.stderr.write(`coil: warn: [plugin tools-coding] ${unconfinedNotice()}\n`);
    else this.log.warn(unconfinedNotice());
  }
}

/** `coil doctor`: the backend's own report when it has one, otherwise the plain statement that commands run unconfined. */
export async function confinementReport(
  service: OperationsStatus | undefined,
  hasBash: boolean,
  env: NodeJS.ProcessEnv,
): Promise<{ ok: boolean; report: string }> {
  if (service?.doctor) {
    const r = await service.doctor(env);
    return { ok: r.ok, report: r.report.replace(/\n+$/, "") };
  }
  if (!hasBash) return { ok: true, report: "bash: not in this preset; no tool here runs commands." };
  return {
    ok: true,
    report: `sandbox: none\n  ${unconfinedNotice().replace(`. ${HOW_TO_CONFINE}`, ".")}\n  ${HOW_TO_CONFINE}`,
  };
}
