/**
 * Claude Code plugins and marketplaces as coil packages (issue #18): the functions `coil install`,
 * `remove`, `enable`, `disable` and `list` call for a spec that names a Claude Code plugin, and the
 * `coil marketplace` command. See docs/packages.md, "Claude Code plugins and marketplaces".
 */
export {
  detectClaudePlugin,
  installClaudePlugin,
  restoreClaudePlugins,
  updateClaudePlugins,
  removeClaudePlugin,
  setClaudePluginEnabled,
  listClaudePlugins,
  formatReport,
  type ClaudeOptions,
  type InstallReport,
} from "./install.js";
export {
  marketplaceCommand,
  addMarketplace,
  removeMarketplace,
  readMarketplace,
  type Marketplace,
  type MarketplaceRecord,
} from "./marketplace.js";
