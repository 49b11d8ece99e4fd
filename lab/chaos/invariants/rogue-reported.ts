import { type Invariant, reported } from "./types";

/**
 * Every charge made behind our back that looks like ours (our source tag, or a payment id) is
 * reported, and still reported after a run that could not list the provider was followed by
 * one that listed only a narrow window: an open mismatch lives until evidence resolves it.
 */
export const rogueReported: Invariant = {
  name: "every charge behind our back reported, also after a run without the provider",
  check(e) {
    const { reportAfterDrain, reportAfterOutage } = e.books;
    return e.journal.rogue.flatMap((r) => {
      if (!r.looksOurs) return [];
      const what = `charge ${r.chargeId} made behind our back (metadata ${JSON.stringify(r.metadata)})`;
      if (!reported(reportAfterDrain, (m) => m.chargeId === r.chargeId))
        return [{ invariant: this.name, detail: `${what} is not reported` }];
      if (!reported(reportAfterOutage, (m) => m.chargeId === r.chargeId))
        return [
          {
            invariant: this.name,
            detail: `${what} was reported, then dropped after a run without the provider (report: ${reportAfterOutage ? `${reportAfterOutage.mismatches.length} mismatches` : "none"})`,
          },
        ];
      return [];
    });
  },
};
