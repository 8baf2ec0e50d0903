/**
 * The contract between the command line and a plugin that may decide a project's trust before coil asks
 * (Pi extensions' `project_trust`): the CLI asks the `project-trust` service of the host it assembled while
 * the project was undecided (not trusted, nothing stored, not asked), and only then asks the user.
 */
export const PROJECT_TRUST = "project-trust";

/** The few questions a decider may put to the user before any front end runs (on the terminal). */
export interface TrustPrompts {
  confirm(title: string, message: string): Promise<boolean>;
  select(title: string, options: readonly string[]): Promise<string | undefined>;
  input(title: string, placeholder?: string): Promise<string | undefined>;
  notify(message: string, level?: "info" | "warn" | "error"): void;
}

export interface TrustQuestion {
  /** The project's root (its real path). */
  dir: string;
  /** Whether the user can be asked (a terminal, not print or JSON mode); `ui` answers no/nothing otherwise. */
  hasUI: boolean;
  /** `print` for -p and --mode json/rpc, else `interactive`. */
  mode: "print" | "interactive";
  ui: TrustPrompts;
}

/** A decision: `trusted`, whether to keep it (`remember`), and who made it, for the message. */
export interface TrustAnswer {
  trusted: boolean;
  remember: boolean;
  by: string;
}

export interface ProjectTrustService {
  /** The first decision a plugin's deciders make, or undefined when none decides (coil asks as usual). */
  decide(question: TrustQuestion): Promise<TrustAnswer | undefined>;
}

declare module "coil" {
  interface Services {
    "project-trust": ProjectTrustService;
  }
}
