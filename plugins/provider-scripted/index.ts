/**
 * provider-scripted: replays a script of replies and records every request it receives.
 * For tests, demos and plugin authors: `coil --provider scripted --script replies.yaml -p "..."`.
 */
import { Type } from "typebox";
import { definePlugin, type ProviderRequest } from "../../api/index.js";
import { ScriptedProvider } from "./provider.js";
import type { ScriptStep } from "./script.js";

export const ScriptedOptions = Type.Object({
  /** A YAML or JSON file of replies, relative to the preset file. `--script` overrides it. */
  script: Type.Optional(Type.String()),
  /** Inline replies (same shape as the file). */
  replies: Type.Optional(Type.Array(Type.Unknown())),
  /** Inline replies per conversation, keyed by the start of its first user message (as in a script file). */
  conversations: Type.Optional(Type.Record(Type.String(), Type.Array(Type.Unknown()))),
  /** Append every request as one JSON line to this file. */
  recordTo: Type.Optional(Type.String()),
  /** Characters per streamed delta. */
  chunkSize: Type.Integer({ minimum: 1, default: 16 }),
  model: Type.String({ default: "scripted" }),
  contextWindow: Type.Integer({ minimum: 1, default: 200_000 }),
  maxOutput: Type.Integer({ minimum: 1, default: 32_000 }),
});

/** The `scripted` service: what tests and plugins use to script and inspect the fake model. */
export interface ScriptedService {
  /** Every request received, in order. */
  readonly requests: ProviderRequest[];
  /** Add steps at the end of the script. */
  push(...steps: ScriptStep[]): void;
  /** Steps not yet replayed. */
  remaining(): number;
}

declare module "coil" {
  interface Services {
    scripted: ScriptedService;
  }
}

export default definePlugin({
  id: "provider-scripted",
  description: "A provider that replays scripted replies (tests, demos, plugin development)",
  options: ScriptedOptions,
  setup(ctx) {
    ctx.flags.register({
      name: "script",
      description: "replies file for the scripted provider (YAML or JSON), which the run then uses",
      type: "string",
      valueName: "file",
      provider: "scripted",
    });
    const scripted = new ScriptedProvider(ctx);
    ctx.onStart(async () => {
      if (scripted.hasScript()) await scripted.load();
    });
    ctx.providers.register(scripted.provider());
    ctx.services.provide("scripted", scripted.service());
  },
});
