/**
 * The contract between the CLI and a front end that has coil rebuilt in process (`/reload` in the TUI):
 * the CLI provides the `reload` service to every host it assembles (owner `coil`), so the front end
 * names no CLI code and no new process is spawned.
 */
export const RELOAD = "reload";

export interface ReloadRequest {
  /** The command line the next assembly reads, from the current one (the session to open, the model in effect). */
  args(argv: readonly string[]): string[];
  /** Handed to the next front end as it starts (the editor's history and unsent text). */
  handover?: unknown;
}

export interface ReloadService {
  /**
   * Once the running front end returns: stop every plugin, resolve the preset and load its plugins afresh
   * (path and package plugins are imported again), start them and run the front end of the same mode.
   */
  request(request: ReloadRequest): void;
  /** What the previous front end handed over; undefined on a first start. Read once. */
  handover(): unknown;
}

declare module "coil" {
  interface Services {
    reload: ReloadService;
  }
}
