/** cost-audit's contract (types only): `session-stats` (what `coil sessions stats` renders) and `cost-audit`. */
import type { EntryLike, TurnAudit } from "./audit.js";

export type { EntryLike, TurnAudit };

/** What `coil sessions stats` asks for (the session plugin looks this service up by name). */
export interface SessionStatsService {
  /** `width`: fit the table to a terminal this wide (reasons under each row, shorter model names). */
  render(entries: readonly EntryLike[], options?: { json?: boolean; title?: string; width?: number }): string;
}

export interface CostAuditService {
  /** Records of this process's requests, oldest first. */
  records(): readonly TurnAudit[];
}

declare module "coil" {
  interface Services {
    "session-stats": SessionStatsService;
    "cost-audit": CostAuditService;
  }
}
