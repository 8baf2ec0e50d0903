/**
 * The models plugin: what the user has to choose and configure models, across every provider plugin in
 * the preset: `--api-key`, `coil models [search]`, `coil auth set|remove|list`, `coil login`/`coil logout` (the flows come from subscription provider plugins) and `/model` (the rules of
 * lib/models.ts), and the thinking level: `--thinking`, `/thinking` (thinking.ts). A preset lists it once; before, whichever provider plugin loaded first registered them.
 * It also reads Pi's settings.json `defaultThinkingLevel` and says in `coil doctor` what coil reads of Pi's
 * settings files and what it does not (lib/pi-settings.ts).
 */
import { definePlugin } from "../../api/index.js";
import { addDoctorSection } from "../../lib/doctor.js";
import { readPiSettings } from "../../lib/pi-settings.js";
import { authLines, registerModelCli } from "./cli.js";
import { skippedNotes } from "../../lib/provider-kit/skipped.js";
import { registerThinking } from "./thinking.js";
import { locationsOf } from "../../lib/locations.js";
import type {} from "../skills/api.js"; // types the `skills` service (its `compat` is the shared setting)

export default definePlugin({
  id: "models",
  description:
    "--api-key, coil models, coil auth, /model and the thinking level (--thinking, /thinking), for every provider in the preset",
  setup(ctx) {
    // Pi's files are read unless the shared compat setting (the skills plugin's) turns Pi off.
    const pi = () =>
      ctx.services.get("skills")?.compat.pi === false
        ? undefined
        : readPiSettings({ cwd: ctx.cwd, trusted: ctx.projectTrusted });
    registerModelCli(ctx);
    registerThinking(ctx, () => pi()?.defaultThinkingLevel?.level);
    // `coil doctor`: which providers can be used now (never a key, only where one would come from).
    addDoctorSection(ctx, {
      title: "providers",
      report: () =>
        [
          ...ctx.providers.ids().map((id) => {
            const p = ctx.providers.get(id)!;
            const ready = !p.isConfigured || p.isConfigured();
            return ready
              ? `${id}  ready (${p.models?.length ?? 0} models listed)`
              : `${id}  not set up: ${p.setupHint ?? "see docs/providers.md"}`;
          }),
          ...skippedNotes().map((n) => `note: ${n}`),
        ].join("\n"),
    });
    addDoctorSection(ctx, {
      title: "Pi settings",
      report: () => {
        const s = pi();
        if (!s) return "not read (compat.pi is off)";
        if (!s.files.length) return "none (~/.pi/agent/settings.json, .pi/settings.json)";
        const lines = s.files.map((f) => (f.read ? `read: ${f.file}` : `not read: ${f.file}: ${f.why}`));
        if (s.defaultModel)
          lines.push(
            `start model: ${s.defaultModel.spec} (defaultProvider + defaultModel, ${s.defaultModel.file}; models.yaml default:, the preset's model and --model win over it)`,
          );
        if (s.defaultThinkingLevel)
          lines.push(
            `thinking level: ${s.defaultThinkingLevel.level} (defaultThinkingLevel, ${s.defaultThinkingLevel.file}; the preset, --thinking and a resumed session win over it)`,
          );
        for (const p of s.skills) lines.push(`skills: ${p.path} (${p.written} in ${p.file})`);
        for (const p of s.prompts) lines.push(`prompts: ${p.path} (${p.written} in ${p.file})`);
        for (const n of s.elsewhere) lines.push(`elsewhere: ${n}`);
        for (const n of s.notRead) lines.push(`not read: ${n}`);
        return lines.join("\n");
      },
    });
    // `coil doctor`: stored keys and subscription logins, and until when each login's token runs (never a token).
    addDoctorSection(ctx, {
      title: "logins",
      report: () => authLines(ctx, locationsOf(ctx).coilHome, process.env).join("\n"),
    });
  },
});
