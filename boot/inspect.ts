/**
 * The `plugin-inspector` service (lib/plugin-inspector.ts) that boot provides to every host it assembles:
 * a package's plugins, loaded and set up on a throwaway host to list what they register.
 */
import { messageOf } from "../kernel/errors.js";
import { PluginHost } from "./host.js";
import { CommandLine } from "../lib/command-line.js";
import type { PluginInspector } from "../lib/plugin-inspector.js";
import { refOf } from "../lib/preset-file.js";
import { loadPlugin } from "./load.js";
import { loadOptionChecks, validateOptions } from "./options.js";
import { stopPlugins } from "./lifecycle.js";

export function pluginInspector(home: string): PluginInspector {
  return {
    async inspect(name, baseDir) {
      const ref = refOf(name);
      const plugins = await loadPlugin({ ref, kind: "npm", key: name, baseDir }, { home });
      await loadOptionChecks(plugins.map((plugin) => ({ plugin, options: {} })));
      const host = new PluginHost({
        cwd: baseDir,
        projectTrusted: false,
        validate: validateOptions,
        declare: new CommandLine().declarations,
      });
      const notes: string[] = [];
      for (const plugin of plugins) {
        try {
          host.install(plugin, {}, { ref });
        } catch (error) {
          notes.push(`plugin ${plugin.id} did not set up here (${messageOf(error)}); a run will report why`);
        }
      }
      const tools = host.tools.names();
      await stopPlugins(host);
      return { tools, notes };
    },
  };
}
