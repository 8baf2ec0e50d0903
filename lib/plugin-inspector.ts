/**
 * The contract between boot/ and a plugin that shows what other plugins offer (the packages plugin's
 * "active now" report): boot provides it to every host it assembles (owner `coil`), so no plugin imports
 * boot/ to load plugin code or builds a host of its own.
 */
export const PLUGIN_INSPECTOR = "plugin-inspector";

export interface PluginInspector {
  /**
   * Load the plugins of the npm package `name` (resolved from `baseDir`, then `$COIL_HOME/packages`) and set
   * them up on a throwaway host: the tools they register, and a note for each plugin that did not set up.
   */
  inspect(name: string, baseDir: string): Promise<{ tools: string[]; notes: string[] }>;
}

declare module "coil" {
  interface Services {
    "plugin-inspector": PluginInspector;
  }
}
