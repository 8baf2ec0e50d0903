/**
 * Model resolution, written once: `--model` and presets (boot/assemble.ts), `/model` (the models plugin)
 * and RPC `set_model` (ui-rpc) all go through `resolveModel`, so a model name means the same everywhere.
 *
 * Rules, in order: `provider/id` names the provider when the part before the first `/` is a registered
 * provider id; otherwise the whole text is the id (`meta/llama-3` listed by a provider, or with `--provider`). With a provider named,
 * its listed ids match exactly, then its `resolveModel` (a server that serves ids it does not list), then
 * a fuzzy match of its catalog (case, a date suffix, words in order). Without one, an exact listed id on any
 * provider, configured providers first, then the fuzzy match across them. A provider that is not
 * configured is refused with its setup hint.
 */
import { CoilError } from "../kernel/errors.js";
import type { ModelInfo, Provider } from "../kernel/types.js";
import { findModel, type CatalogModel } from "./provider-kit/catalog.js";
import { skippedProvider } from "./provider-kit/skipped.js";

/** The `model-choice` service boot provides to every host it assembles: how the start model was chosen. */
export const MODEL_CHOICE = "model-choice";

export interface ModelChoiceService {
  /** Set when no `--model`, preset or models.yaml named the start model: which one was picked, and why (the start line shows it). */
  chosen?: { model: string; why: string };
}

declare module "coil" {
  interface Services {
    "model-choice": ModelChoiceService;
  }
}

export interface ModelChoice {
  provider: Provider;
  model: ModelInfo;
}

const usable = (p: Provider) => !p.isConfigured || p.isConfigured();
const known = (providers: readonly Provider[]) => providers.map((p) => p.id).join(", ") || "(none)";

/** No provider `id`: said with the reason when a model file named it and coil could not read it (Pi's models.json). */
function unknownProvider(providers: readonly Provider[], id: string): CoilError {
  const skipped = skippedProvider(id);
  if (skipped) return new CoilError("PROVIDER_MISSING", skipped, { hint: `providers coil has: ${known(providers)}` });
  return new CoilError("PROVIDER_MISSING", `unknown provider '${id}'`, {
    hint: providers.length ? `known providers: ${known(providers)}` : "add a provider plugin to the preset",
  });
}

/** Split `provider/id` when the head is a registered provider; `provider` (if given) must agree. */
function split(providers: readonly Provider[], spec: string, providerId?: string): { providerId?: string; id: string } {
  const slash = spec.indexOf("/");
  if (slash <= 0) return { providerId, id: spec };
  const head = spec.slice(0, slash);
  const listedWhole = providers.some((p) => p.models?.some((m) => m.id === spec));
  if (providers.some((p) => p.id === head) && (!providerId || providerId === head))
    return { providerId: head, id: spec.slice(slash + 1) };
  if (!providerId && !listedWhole) throw unknownProvider(providers, head);
  return { providerId, id: spec };
}

/** The provider and model `spec` names (`id` or `provider/id`), by the rules above; throws a CoilError. */
export function resolveModel(providers: readonly Provider[], spec: string, providerId?: string): ModelChoice {
  const want = split(providers, spec.trim(), providerId);
  let found: ModelChoice | undefined;
  if (want.providerId) {
    const provider = providers.find((p) => p.id === want.providerId);
    if (!provider) throw unknownProvider(providers, want.providerId);
    const model =
      provider.models?.find((m) => m.id === want.id) ??
      provider.resolveModel?.(want.id) ??
      findModel((provider.models ?? []) as CatalogModel[], want.id);
    if (model) found = { provider, model };
    else {
      const ids = provider.models?.map((m) => m.id) ?? [];
      throw new CoilError("MODEL_NOT_FOUND", `provider '${provider.id}' has no model '${want.id}'`, {
        hint: ids.length ? `its models: ${ids.join(", ")}` : undefined,
      });
    }
  } else {
    const ordered = [...providers.filter(usable), ...providers.filter((p) => !usable(p))];
    for (const provider of ordered) {
      const model = provider.models?.find((m) => m.id === want.id);
      if (model) found ??= { provider, model };
    }
    for (const provider of ordered) {
      const model = findModel((provider.models ?? []) as CatalogModel[], want.id);
      if (model) found ??= { provider, model: { ...model, provider: provider.id } as ModelInfo };
    }
    if (!found)
      throw new CoilError("MODEL_NOT_FOUND", `no model '${want.id}'`, {
        hint: "see `coil models`; name the provider for a model it does not list: provider/id",
      });
  }
  if (!usable(found.provider))
    throw new CoilError("PROVIDER_MISSING", `provider '${found.provider.id}' is not configured`, {
      hint: found.provider.setupHint,
    });
  return found;
}

/**
 * The provider and model a run starts with: the preset's (or `--provider` / `--model`) `provider` and
 * `model` through `resolveModel`; else the models.yaml `default:`; else a provider's balanced default
 * (its catalog's `default` entry, else its first model): the named provider's, or the first configured
 * provider's that lists models. `why` says how a model was chosen when nothing named it or its provider (for the start line).
 */
/** A provider's own default: the models.yaml `default:` on it, else its catalog's balanced default, else its first model. */
export function providerDefault(p: Provider): ModelInfo | undefined {
  return marked(p, "user") ?? marked(p, "provider") ?? p.models?.[0];
}

const marked = (p: Provider, kind: "user" | "provider") =>
  (p.models as readonly CatalogModel[] | undefined)?.find((m) => m.default === kind);

export function chooseModel(
  providers: readonly Provider[],
  settings: { provider?: string; model?: string },
): ModelChoice & { why?: string } {
  if (settings.model) return resolveModel(providers, settings.model, settings.provider);
  const hints = () => providers.map((p) => `  ${p.id}: ${p.setupHint ?? "see its plugin's documentation"}`).join("\n");
  if (!settings.provider) {
    for (const provider of providers) {
      const model = marked(provider, "user");
      if (!model) continue;
      if (!usable(provider))
        throw new CoilError(
          "PROVIDER_MISSING",
          `provider '${provider.id}' of the ${(model as CatalogModel).defaultFrom ?? "models.yaml"} default '${provider.id}/${model.id}' is not configured`,
          { hint: provider.setupHint },
        );
      return { provider, model, why: `default: in ${(model as CatalogModel).defaultFrom ?? "models.yaml"}` };
    }
  }
  const provider = settings.provider
    ? providers.find((p) => p.id === settings.provider)
    : (providers.find((p) => usable(p) && p.models?.length) ?? providers.find(usable));
  if (!provider) {
    if (settings.provider)
      throw new CoilError("PROVIDER_MISSING", `unknown provider '${settings.provider}'`, {
        hint: providers.length ? `known providers: ${known(providers)}` : "add a provider plugin to the preset",
      });
    throw new CoilError(
      "PROVIDER_MISSING",
      `no usable provider. Configure one of:\n${hints() || "  (no provider plugin in this preset)"}`,
    );
  }
  if (!usable(provider))
    throw new CoilError("PROVIDER_MISSING", `provider '${provider.id}' is not configured`, {
      hint: provider.setupHint,
    });
  const model = providerDefault(provider);
  if (!model)
    throw new CoilError("MODEL_NOT_FOUND", `provider '${provider.id}' has no model '(default)'`, {
      hint: "name one with --model provider/id",
    });
  // Said in the start line only when nothing named the provider either (`--provider x` already says where the model is from).
  return {
    provider,
    model,
    why: settings.provider ? undefined : `default: ${provider.id} is the first provider with a key`,
  };
}
