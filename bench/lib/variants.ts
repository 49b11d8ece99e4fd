import type { LoadResult } from "./load";

export interface VariantDeps {
  url: string;
  providerUrl: string;
  accountId: string;
  orders(n: number): Promise<string[]>;
  clients: readonly number[];
}

/** Comparisons beyond the HTTP server: none yet. */
export async function extraComparisons(_deps: VariantDeps): Promise<Record<string, LoadResult>> {
  return {};
}
