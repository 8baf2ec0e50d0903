/**
 * The models plugin: what the user has to choose and configure models, across every provider plugin in
 * the preset: `--api-key`, `coil models [search]`, `coil auth set|remove|list`, `coil login`/`coil logout` (the flows come from subscription provider plugins) and `/model` (the rules of
 * lib/models.ts), and the thinking level: `--thinking`, `/thinking` (lib/thinking.ts). A preset lists it once; before, whichever provider plugin loaded first registered them.
 */
import { definePlugin } from "../../kernel/index.js";
import { addDoctorSection } from "../../lib/doctor.js";
import { authLines, registerModelCli } from "../../lib/provider-kit/cli.js";
import { coilHome } from "../../lib/paths.js";
import { registerThinking } from "../../lib/thinking.js";

export default definePlugin({
  id: "models",
  description:
    "--api-key, coil models, coil auth, /model and the thinking level (--thinking, /thinking), for every provider in the preset",
  setup(ctx) {
    registerModelCli(ctx);
    registerThinking(ctx);
    // `coil doctor`: which providers can be used now (never a key, only where one would come from).
    addDoctorSection(ctx, {
      title: "providers",
      report: () =>
        ctx.providers
          .ids()
          .map((id) => {
            const p = ctx.providers.get(id)!;
            const ready = !p.isConfigured || p.isConfigured();
            return ready
              ? `${id}  ready (${p.models?.length ?? 0} models listed)`
              : `${id}  not set up: ${p.setupHint ?? "see docs/providers.md"}`;
          })
          .join("\n"),
    });
    // `coil doctor`: stored keys and subscription logins, and until when each login's token runs (never a token).
    addDoctorSection(ctx, {
      title: "logins",
      report: () => authLines(ctx, coilHome(), process.env).join("\n"),
    });
  },
});
