/**
 * pi-extensions: runs Pi's extensions (`export default function (pi: ExtensionAPI) { ... }`) in coil, through
 * coil's own hooks, services and UI API (docs/pi-extensions.md). Discovery reads only the file system; when
 * it finds nothing, the plugin registers nothing and imports nothing else (jiti, pi-tui).
 */
import { definePlugin } from "coil";
import { CLI_EXTENSIONS } from "../../lib/command-line.js";
import { addDoctorSection } from "../../lib/doctor.js";
import { coilHome } from "../../lib/paths.js";
import { discover } from "./discover.js";
import { PiRuntime } from "./runtime.js";

export default definePlugin({
  id: "pi-extensions",
  description: "Pi extensions and Pi packages (~/.pi/agent/extensions, .pi/extensions, -e)",
  setup(ctx) {
    const found = discover({
      cwd: ctx.cwd,
      home: coilHome(process.env),
      trusted: ctx.projectTrusted,
      cli: ctx.services.get(CLI_EXTENSIONS),
    });
    const runtime = found.found.length ? new PiRuntime(ctx) : undefined;
    addDoctorSection(ctx, {
      title: "Pi extensions",
      report: () => {
        const lines: string[] = [];
        for (const ext of runtime?.extensions ?? []) {
          const what = [
            ext.tools.length ? `tools ${ext.tools.join(", ")}` : "",
            ext.commands.length ? `commands ${ext.commands.map((c) => `/${c}`).join(", ")}` : "",
            ext.flags.length ? `flags ${ext.flags.map((f) => `--${f}`).join(", ")}` : "",
            ext.providers.length ? `providers ${ext.providers.join(", ")}` : "",
          ].filter(Boolean);
          const state = ext.error
            ? `not loaded: ${ext.error}`
            : what.length
              ? what.join("; ")
              : ext.deferred
                ? "loads when a run starts (it uses pi-tui or a top-level await while loading), so what it registers is not listed here"
                : "loaded";
          lines.push(`${ext.found.name} (${ext.found.scope}, ${ext.found.file}): ${state}`);
          for (const [call, why] of ext.unsupported) lines.push(`  not supported: ${call}: ${why}`);
        }
        for (const s of found.skipped) lines.push(`skipped: ${s}`);
        return lines.length
          ? lines.join("\n")
          : "none found (~/.pi/agent/extensions, .pi/extensions, settings.json, -e)";
      },
    });
    if (!runtime) return;
    runtime.load(found.found);
    ctx.onStart((agent, _io, info) => runtime.start(agent, info.mode));
    ctx.onStop(() => runtime.stop());
    ctx.on("ui_start", () => runtime.uiStart());
  },
});
