/**
 * The models plugin's contracts with other plugins (types only: `import type` from here). The plugin
 * provides two services: `provider-cli`, which provider `--api-key` applies to (the provider plugins pass
 * it to lib/provider-kit/keys.ts's lookup), and `thinking`, the thinking level front ends show and cycle
 * (the TUI's Shift+Tab and footer).
 */
import type { Agent } from "../../api/index.js";
import type { THINKING_LEVELS } from "./thinking.js";

/** What the provider plugins read of the models plugin: the provider `--api-key` applies to. */
export interface ProviderCliService {
  /** Provider chosen at start-up; `--api-key` applies to it only. Undefined before start (and when embedded). */
  selected?: string;
}

export type ThinkingLevel = (typeof THINKING_LEVELS)[number];

export interface ThinkingService {
  /** The level the next request carries; undefined when none was set (the provider's default). */
  level(agent: Agent): ThinkingLevel | undefined;
  /** Set the level for the next requests and record it in the session; returns what to tell the user. */
  set(agent: Agent, level: ThinkingLevel): string;
  /** Step to the next level (off → minimal → … → xhigh → off); returns what to tell the user. */
  cycle(agent: Agent): string;
  /** Why the level does nothing for the agent's model (it does not reason), or undefined. */
  unused(agent: Agent): string | undefined;
}

declare module "coil" {
  interface Services {
    "provider-cli": ProviderCliService;
    thinking: ThinkingService;
  }
}
