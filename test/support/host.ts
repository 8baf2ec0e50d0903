/** A bare PluginHost as boot builds one: plugin options validated and defaulted (boot/options.ts). */
import { type HostOptions, PluginHost } from "../../kernel/host.js";
import { validateOptions } from "../../boot/options.js";

export function testHost(options: HostOptions = {}): PluginHost {
  return new PluginHost({ validate: validateOptions, ...options });
}
