/**
 * permission-gate's contract (types only): the `permissions` service. Other plugins ask it whether the
 * rules deny something before they do it themselves (context-files never imports a file a deny rule
 * covers into the model's context, and asks before importing one from outside the project). Import it with
 * `import type {} from "../permission-gate/api.js"`.
 */
export interface PermissionsService {
  /** The deny rule (its text) that covers reading `path` (absolute, or relative to the working directory), if any. */
  readDenied(path: string): string | undefined;
  /**
   * Whether `path` is inside the project: the working directory, its git root, the `directories` option and
   * Claude Code's `additionalDirectories`, judged on real paths (a symlink counts where it points).
   */
  inProject(path: string): boolean;
}

declare module "coil" {
  interface Services {
    permissions: PermissionsService;
  }
}
