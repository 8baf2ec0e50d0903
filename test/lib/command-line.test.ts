/** The command line's registries (lib/command-line.ts): which flags and subcommands a plugin may register. */
import { describe, expect, it } from "vitest";
import { definePlugin, type CoilError, type PluginContext } from "../../api/index.js";
import { PluginHost } from "../../boot/host.js";
import { COIL_OPTIONS, CommandLine, type FlagSpec } from "../../lib/command-line.js";

function thrown(fn: () => unknown): CoilError {
  try {
    fn();
  } catch (error) {
    return error as CoilError;
  }
  throw new Error("expected a throw");
}

function rig() {
  const commandLine = new CommandLine();
  const host = new PluginHost({ declare: commandLine.declarations });
  const install = (id: string, setup: (ctx: PluginContext) => void) => host.install(definePlugin({ id, setup }));
  const flag = (id: string, spec: Partial<FlagSpec> & { name: string }) =>
    install(id, (ctx) => ctx.flags.register({ description: "d", type: "boolean", ...spec }));
  return { commandLine, host, install, flag };
}

describe("plugin flags", () => {
  it("may take none of coil's own options, long, short or --no- (every one, --yes and --trust included)", () => {
    const { flag } = rig();
    for (const own of COIL_OPTIONS) {
      const e = thrown(() => flag(`takes-${own.name}`, { name: own.name }));
      expect(e.code).toBe("REGISTRY_DUPLICATE");
      expect(e.message).toBe(
        `[plugin takes-${own.name}] setup: REGISTRY_DUPLICATE flag --${own.name} is coil's own option --${own.name}`,
      );
      expect(thrown(() => flag(`negates-${own.name}`, { name: `no-${own.name}` })).code).toBe("REGISTRY_DUPLICATE");
      if (own.short)
        expect(thrown(() => flag(`short-${own.name}`, { name: `x-${own.name}`, short: own.short })).message).toContain(
          `is coil's own -${own.short} (--${own.name})`,
        );
    }
    expect(COIL_OPTIONS.map((o) => o.name)).toEqual(expect.arrayContaining(["yes", "trust", "print", "help"]));
  });

  it("may not reuse another plugin's name, letter or negation; the message names that plugin", () => {
    const { flag, install, commandLine } = rig();
    flag("a", { name: "continue", short: "c" });
    expect(thrown(() => flag("b", { name: "count", short: "c", type: "number" })).message).toContain(
      "flag -c (for --count) is already -c of --continue, registered by plugin a",
    );
    expect(thrown(() => flag("c", { name: "continue" })).message).toMatch(
      /REGISTRY_DUPLICATE flag 'continue' is registered by both plugin a .*and plugin c/,
    );
    expect(thrown(() => flag("d", { name: "no-continue" })).message).toContain(
      "flag --no-continue would negate --continue, registered by plugin a",
    );
    // one plugin may own both halves of a pair
    install("e", (ctx) => {
      ctx.flags.register({ name: "color", description: "d", type: "boolean" });
      ctx.flags.register({ name: "no-color", description: "d", type: "boolean" });
    });
    expect(commandLine.flags.names()).toEqual(["continue", "color", "no-color"]);
  });

  it("reads the value the command line parsed", () => {
    const { commandLine, install } = rig();
    let get: ((name: string) => unknown) | undefined;
    install("reader", (ctx) => {
      ctx.flags.register({ name: "depth", description: "d", type: "number" });
      get = (name) => ctx.flags.get(name);
    });
    commandLine.values = { depth: 3 };
    expect(get!("depth")).toBe(3);
  });
});

describe("plugin subcommands", () => {
  it("may not take coil's own commands, and need a run or subcommands of their own", () => {
    const { install } = rig();
    for (const name of ["trust", "untrust", "preset", "help"])
      expect(
        thrown(() =>
          install(`takes-${name}`, (ctx) => ctx.subcommands.register({ name, description: "d", run: () => 0 })),
        ).message,
      ).toContain(`REGISTRY_DUPLICATE subcommand '${name}' is coil's own command`);
    expect(
      thrown(() => install("empty", (ctx) => ctx.subcommands.register({ name: "empty", description: "d" }))).message,
    ).toContain("needs a run function or subcommands of its own");
    expect(
      thrown(() =>
        install("helpful", (ctx) =>
          ctx.subcommands.register({
            name: "x",
            description: "d",
            options: [{ name: "help", description: "" }],
            run: () => 0,
          }),
        ),
      ).message,
    ).toContain("option --help of subcommand 'x'");
  });
});
