/**
 * Where hook definitions come from, read at setup without the hooks' run-time side (hooks.ts, imported only when
 * some hook is configured): settings files, this plugin's options, hook files and installed Claude Code plugins.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import type { PluginContext, Static } from "../../api/index.js";
import { claudePluginHooks } from "../../lib/claude-plugins.js";
import { locationsOf } from "../../lib/locations.js";
import { coilHome } from "../../lib/paths.js";
import type {} from "../skills/api.js"; // types the `skills` service (its `compat` is the shared setting)
import type { HooksOptions } from "./index.js";
import { parseHooks, readSettings, type HookDef, type SkippedHook } from "./settings.js";

type Ctx = PluginContext<Static<typeof HooksOptions>>;

/** The hook definitions from settings files and options, each identical command once per event, and those not run. */
export function loadHooks(ctx: Ctx): { defs: HookDef[]; skipped: SkippedHook[]; files: string[] } {
  const o = ctx.options;
  const env = process.env;
  const home = env.HOME || homedir();
  const warn = (m: string) => ctx.log.warn(m);
  const defs: HookDef[] = [];
  const skipped: SkippedHook[] = [];
  const files: string[] = [];
  const parse = (hooks: unknown, source: string) => {
    if (hooks && typeof hooks === "object") files.push(source);
    return parseHooks(hooks, source, o.timeout, warn, skipped);
  };
  if (o.user) {
    const file = join(home, ".claude", "settings.json");
    defs.push(...parse(readSettings(file, warn), file));
  }
  const root = locationsOf(ctx).projectRoot;
  const projectFiles = [join(root, ".claude", "settings.json"), join(root, ".claude", "settings.local.json")].filter(
    (f) => f !== join(home, ".claude", "settings.json"),
  );
  const loadProject = o.project === true || (o.project === "trusted" && ctx.projectTrusted);
  if (loadProject) for (const file of projectFiles) defs.push(...parse(readSettings(file, warn), file));
  else if (o.project === "trusted" && projectFiles.some((f) => readSettings(f, () => undefined))) {
    ctx.onStart(() =>
      warn(`project hooks in ${join(root, ".claude")} are not run: the project is not trusted (coil trust)`),
    );
  }
  defs.push(...parse(o.hooks, `the ${ctx.id} options`));
  // Extra hook files, each with its own environment: the `sources` option's, and installed Claude Code
  // plugins' hooks/hooks.json (run with CLAUDE_PLUGIN_ROOT set to the plugin's folder).
  const sources = [
    ...o.sources.map((s) => ({
      hooks: readSettings(s.file, warn, true),
      source: s.file,
      env: { ...(s.root ? { CLAUDE_PLUGIN_ROOT: s.root } : {}), ...s.env },
    })),
    ...claudePluginHooks(
      {
        home: coilHome(),
        cwd: locationsOf(ctx).projectRoot,
        trusted: ctx.projectTrusted,
        claudeCode: ctx.services.get("skills")?.compat.claude !== false,
      },
      warn,
    ),
  ];
  for (const h of sources) defs.push(...parse(h.hooks, h.source).map((d) => ({ ...d, env: h.env })));
  // Claude Code runs an identical command once per event even if several groups list it.
  const unique = defs.filter(
    (d, i) =>
      defs.findIndex(
        (e) =>
          e.event === d.event &&
          e.command === d.command &&
          e.type === d.type &&
          e.if === d.if &&
          e.matcher === d.matcher &&
          JSON.stringify(e.env) === JSON.stringify(d.env),
      ) === i,
  );
  return { defs: unique, skipped, files };
}
