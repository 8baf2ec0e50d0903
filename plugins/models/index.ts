/**
 * The models plugin: what the user has to choose and configure models, across every provider plugin in
 * the preset: `--api-key`, `coil models [search]`, `coil auth set|remove|list` and `/model` (the rules of
 * lib/models.ts). A preset lists it once; before, whichever provider plugin loaded first registered them.
 */
import { definePlugin } from "../../kernel/index.js";
import { registerModelCli } from "../../lib/provider-kit/cli.js";

export default definePlugin({
  id: "models",
  description: "--api-key, coil models, coil auth and /model, for every provider in the preset",
  setup(ctx) {
    registerModelCli(ctx);
  },
});
