/**
 * Assembling an agent from presets: the one path the CLI, the SDK (`coil/sdk`) and every rebuild
 * (`/reload`, in process) take, so what a preset means cannot drift between them. Resolve the
 * preset's layers, load every plugin module, set them up in preset order on one host, and build the
 * agent the preset describes.
 */
import { Agent } from "../kernel/agent.js";
import { PluginHost } from "./host.js";
import { CoilError } from "../kernel/errors.js";
import type { AgentEvent } from "../kernel/types.js";
import { existsSync, realpathSync } from "node:fs";
import type { Plugin } from "../api/plugin.js";
import { pluginInspector } from "./inspect.js";
import { mark } from "./marks.js";
import { loadOptionChecks, validateOptions } from "./options.js";
import { fileOf, loadPlugin, needsPlugin, optionsTarget, type RunShape } from "./load.js";
import { CommandLine } from "../lib/command-line.js";
import { formatDiagnostic } from "../lib/front-end.js";
import { applyClaudeEnv } from "../lib/claude-settings.js";
import { chooseModel, MODEL_CHOICE, type ModelChoiceService, resolveModel } from "../lib/models.js";
import { PLUGIN_INSPECTOR } from "../lib/plugin-inspector.js";
import { computeLocations } from "../lib/locations.js";
import { resolvePreset, type ResolvedPreset, type ResolveOptions } from "./preset.js";

type Diagnostic = Extract<AgentEvent, { type: "diagnostic" }>;

export interface AssembleOptions {
  /** Base preset: a built-in name or a YAML file (default "default"). */
  preset?: string;
  cwd: string;
  /** `$COIL_HOME`. */
  home: string;
  /** The project's `.coil/` layer loads (also true for a project with nothing in it to load). */
  trust: boolean;
  /**
   * Trust was given explicitly (`--trust`, a stored answer, the prompt, `trust: true`): only then may npm
   * packages resolve from the project's own folders, and this is what plugins see as `projectTrusted`
   * (a project with nothing to load is not thereby trusted to run its `node_modules/.bin` or its
   * templates' commands). Default: the same as `trust`.
   */
  explicitTrust?: boolean;
  /** `--plugin` entries and `--provider` / `--model`, as the last layer. */
  plugins?: string[];
  provider?: string;
  model?: string;
  /** Only the built-in preset: no user or project layer (the installer host, `preset show --builtin`). */
  builtinOnly?: boolean;
  /**
   * What the run is, when the command line says before loading (`coil -p`, `--mode`): built-in plugins
   * whose manifest serves other modes and subcommands only are then not imported. Absent: all load.
   */
  run?: RunShape;
  /** Services the caller offers every plugin (the CLI's `reload`), provided by `coil` like boot's own. */
  services?: Record<string, unknown>;
  /**
   * A rebuild in the same process (`/reload`): path and package plugins are imported again, so their
   * edits take effect (jiti's `.ts` plugins always are).
   */
  fresh?: number;
}

export interface Assembled {
  preset: ResolvedPreset;
  /** Preset entries this run did not import (their manifest serves other modes and subcommands). */
  skipped: string[];
  host: PluginHost;
  /** The plugins' flags and subcommands, and the flag values (set them before the run). */
  commandLine: CommandLine;
  /** Warnings and errors plugins logged during setup, handed back for the caller to show. */
  setupDiagnostics: Diagnostic[];
}

/** The resolve options an assembly uses (also what `coil preset show` prints). */
export function presetOptions(o: AssembleOptions): ResolveOptions {
  return {
    preset: o.preset,
    cwd: o.cwd,
    home: o.home,
    trust: o.trust,
    builtinOnly: o.builtinOnly,
    cli: { plugins: o.plugins, settings: { provider: o.provider, model: o.model } },
  };
}

/** Resolve the preset and set its plugins up on a new host, in preset order. */
export async function assemble(o: AssembleOptions): Promise<Assembled> {
  // Claude Code's settings `env` (yours always, the project's when trusted) is set before anything reads
  // the environment; variables coil was started with win.
  applyClaudeEnv(o.cwd, o.trust);
  const preset = resolvePreset(presetOptions(o));
  mark("coil:preset");
  const explicit = o.explicitTrust ?? o.trust;
  // Where the project and the user's folders are, worked out once for every plugin (lib/locations.ts).
  const locations = computeLocations({ cwd: o.cwd, trusted: explicit, coilHome: o.home });
  const untrustedProject = explicit ? undefined : locations.projectRoot;
  const choice: ModelChoiceService = {};
  const services = {
    [PLUGIN_INSPECTOR]: pluginInspector(o.home),
    [MODEL_CHOICE]: choice,
    locations,
    ...o.services,
  };
  const commandLine = new CommandLine();
  const host = new PluginHost({
    cwd: o.cwd,
    projectTrusted: explicit,
    services,
    validate: validateOptions,
    declare: commandLine.declarations,
  });
  // Load every module first (in parallel), then set up in preset order: nothing starts half-configured.
  const entries = preset.entries.filter((entry) => needsPlugin(entry, o.run));
  const setupDiagnostics: Diagnostic[] = [];
  // Your own preset files (user, project) are where `coil install` enables packages: one that is not installed
  // there (a fresh checkout, a deleted node_modules) is skipped with a warning, so `coil install` can restore it.
  const own = new Set(
    preset.layers.filter((l) => (l.name === "user" || l.name === "project") && !l.skipped).map((l) => l.file),
  );
  const projectFile = preset.layers.find((l) => l.name === "project")?.file;
  const plugins = await Promise.all(
    entries.map((entry) =>
      loadPlugin({ ...entry, source: entry.source }, { home: o.home, untrustedProject, fresh: o.fresh }).catch(
        (error: unknown) => {
          if (
            !(
              error instanceof CoilError &&
              error.code === "PLUGIN_NOT_FOUND" &&
              error.npmSpec &&
              entry.kind === "npm" &&
              own.has(entry.source.file)
            )
          )
            throw error;
          const message = `npm package '${entry.key}' is enabled in ${entry.source.file}${entry.source.line ? `:${entry.source.line}` : ""} but not installed, so it is skipped: \`coil install${entry.source.file === projectFile ? " --project" : ""}\` restores what coil-lock.json records, \`coil install ${error.npmSpec}\` installs it, \`coil disable ${entry.key}\` stops this warning`;
          setupDiagnostics.push({ type: "diagnostic", level: "warn", message, code: "PLUGIN_NOT_FOUND" });
          return [] as Plugin[];
        },
      ),
    ),
  );
  mark("coil:imported");
  const stop = host.subscribe(
    "diagnostic",
    (d) => void (d.type === "diagnostic" && d.level !== "info" && setupDiagnostics.push(d)),
  );
  // A plugin file loads once: `--preset npm:x` names x's plugin by path and the user preset enables x by name.
  const seen = new Set<string>();
  const firstTime = (plugin: Plugin) => {
    const file = fileOf(plugin);
    if (!file) return true;
    const real = existsSync(file) ? realpathSync(file) : file;
    if (seen.has(real)) return false;
    seen.add(real);
    return true;
  };
  const installs = entries.flatMap((entry, i) =>
    plugins[i]!.flatMap((plugin, j, all) => {
      if (!firstTime(plugin)) return [];
      const own = j === optionsTarget(all, entry.key);
      const source = {
        ref: entry.ref,
        ...entry.source,
        baseDir: entry.baseDir,
        optionSources: own ? entry.optionSources : {},
      };
      return [{ plugin, options: own ? entry.options : {}, source }];
    }),
  );
  await loadOptionChecks(installs);
  try {
    for (const { plugin, options, source } of installs) {
      host.install(plugin, options, source);
      mark("coil:setup", plugin.id);
    }
  } finally {
    stop();
  }
  claudeModelFallback(preset, host, setupDiagnostics);
  return {
    preset,
    host,
    commandLine,
    setupDiagnostics,
    skipped: preset.entries.filter((e) => !entries.includes(e)).map((e) => e.key),
  };
}

/**
 * A model from Claude Code (boot/preset.ts) gives way to models.yaml's `default:`, and when this run
 * cannot use it (no Anthropic provider configured, an alias no catalog knows) the usual choice stands,
 * with a warning naming where it came from.
 */
function claudeModelFallback(preset: ResolvedPreset, host: PluginHost, diagnostics: Diagnostic[]): void {
  const from = preset.modelFromClaude;
  if (!from || !preset.settings.model) return;
  const providers = host.providers.values();
  const drop = () => {
    delete preset.settings.model;
    delete preset.settingSources.model;
    delete preset.modelFromClaude;
  };
  if (
    providers.some((p) => (p.models as readonly { default?: string }[] | undefined)?.some((m) => m.default === "user"))
  ) {
    drop(); // coil's own default wins over Claude Code's
    return;
  }
  try {
    resolveModel(providers, preset.settings.model, preset.settings.provider);
  } catch (error) {
    const message = `the model ${preset.settings.model} from ${from.source} (Claude Code's) is not used: ${(error as Error).message}; coil chooses as usual`;
    diagnostics.push({ type: "diagnostic", level: "warn", message, code: "MODEL_NOT_FOUND" });
    drop();
    return;
  }
  if (from.note) diagnostics.push({ type: "diagnostic", level: "warn", message: `${from.source}: ${from.note}` });
}

/** The agent a resolved preset describes: its provider and model (boot/models.ts) and its settings. */
export function agentFor(host: PluginHost, preset: ResolvedPreset): Agent {
  const chosen = chooseModel(host.providers.values(), preset.settings);
  const { provider, model } = chosen;
  const why = preset.modelFromClaude ? `Claude Code's model, from ${preset.modelFromClaude.source}` : chosen.why;
  // How a model nobody named was chosen, for the front ends' start line (the `model-choice` service).
  const choice = host.services.get(MODEL_CHOICE) as ModelChoiceService | undefined;
  if (choice) choice.chosen = why ? { model: `${provider.id}/${model.id}`, why } : undefined;
  const { toolExecution, reserveTokens, thinking } = preset.settings;
  return new Agent(host, {
    provider: provider.id,
    model,
    toolExecution,
    reserveTokens,
    requestOptions: thinking ? { thinking: thinking as never } : {},
  });
}

/** Write setup diagnostics to stderr; `errorsOnly` for subcommands (the warnings are about runs). */
export function showSetupDiagnostics(
  diagnostics: readonly Diagnostic[],
  stderr: NodeJS.WritableStream,
  errorsOnly = false,
): void {
  for (const d of diagnostics) if (!errorsOnly || d.level === "error") stderr.write(`coil: ${formatDiagnostic(d)}\n`);
}
