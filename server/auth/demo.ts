// The demo customers that development seeds (server/seed.ts). Their credentials are public (they
// are in this file), so production refuses them whatever the database holds (decision 0061).

export const DEMO_CUSTOMERS = [
  { handle: "alice", name: "Alice Martin", email: "alice@example.com", token: "sk_test_alice" },
  { handle: "bob", name: "Bob Okafor", email: "bob@example.com", token: "sk_test_bob" },
] as const;

/** The demo customers' password: development's one-click sign-in uses it; production refuses it. */
export const DEMO_PASSWORD = "demo-password-not-secret";
