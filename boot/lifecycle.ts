/**
 * Starting and stopping the plugins of an assembled host: their `onStart` callbacks once the agent exists
 * (before the front end runs), their `onStop` callbacks at exit. The CLI, the SDK and the test kit run them.
 */
import type { Agent } from "../kernel/agent.js";
import { CoilError } from "../kernel/errors.js";
import type { PluginHost } from "./host.js";
import type { CliStreams, StartInfo } from "../api/plugin.js";

/** Run every plugin's start callback in install order; a failure names the plugin. A `{ exit }` answer stops there. */
export async function startPlugins(
  host: PluginHost,
  agent: Agent,
  io: CliStreams,
  info: StartInfo,
): Promise<number | undefined> {
  for (const { plugin, fn } of host.starters) {
    try {
      const asked = await fn(agent, io, info);
      if (asked && typeof asked.exit === "number") return asked.exit;
    } catch (cause) {
      throw CoilError.wrap(cause, "PLUGIN_START_FAILED", { plugin, phase: "start" });
    }
  }
  return undefined;
}

/** Run every stop callback (reverse install order); failures are reported as diagnostics, never thrown. */
export async function stopPlugins(host: PluginHost): Promise<void> {
  for (const { plugin, fn } of [...host.stoppers].reverse()) {
    try {
      await fn();
    } catch (cause) {
      const error = CoilError.wrap(cause, "PLUGIN_STOP_FAILED", { plugin, phase: "stop" });
      host.emit({ type: "diagnostic", level: "error", message: error.message, plugin, code: error.code });
    }
  }
}
