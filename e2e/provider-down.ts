/** The e2e server whose payment provider is down (e2e/provider-down-server.ts), as its specs see it. */
export const PROVIDER_DOWN = {
  /** Its port, after the main server's (E2E_PORT) and the production one's. */
  portOffset: 2,
  adminToken: "admin_provider_down",
  /** Low, so the throttled answer is reached in a few requests. */
  paymentsPerMinute: 4,
} as const;
