/**
 * A bare PluginHost as boot builds one: plugin options validated and defaulted (boot/options.ts), and the
 * command line's `flags` and `subcommands` declared (pass a CommandLine to set flag values or read them).
 */
import { type HostOptions, PluginHost } from "../../boot/host.js";
import { useOptionChecks, validateOptions } from "../../boot/options.js";
import { Value } from "typebox/value";
import { CommandLine } from "../../lib/command-line.js";

useOptionChecks(Value); // its hosts install synchronously, with any options

export function testHost(options: HostOptions = {}, commandLine = new CommandLine()): PluginHost {
  return new PluginHost({ validate: validateOptions, declare: commandLine.declarations, ...options });
}
