/**
 * The contract between the CLI's install-on-first-use and the plugin that installs coil packages
 * (the `packages` plugin provides it). The CLI finds the installer as a service, so it names no plugin.
 */
import type { CliStreams } from "../api/plugin.js";

export const PACKAGE_INSTALLER = "package-installer";

export interface PackageInstaller {
  /**
   * Install `specs` into `dir` (`$COIL_HOME/packages`), pinned by the lock file there when it records a
   * package, and rewrite the lock file, as `coil install` does. False (npm's error on stderr) if npm failed.
   */
  install(specs: string[], dir: string, io: CliStreams): Promise<boolean>;
  /**
   * What the loaded preset names that is not installed yet, beyond npm packages (Claude Code marketplaces
   * and plugins in the packages plugin's options); undefined when nothing is missing. The CLI asks (or
   * takes `--yes`), installs, and loads the preset again.
   */
  pending?(): Promise<PendingInstall | undefined>;
}

export interface PendingInstall {
  /** One line per missing thing, for the question. */
  describe: string[];
  /** Install them; false if any failed (each failure on stderr). */
  install(io: CliStreams): Promise<boolean>;
}
