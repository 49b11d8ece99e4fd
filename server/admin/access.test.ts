import { beforeAll, describe, expect, it } from "vitest";
import { appRouter, createCaller } from "../root";
import { contextFor, createTestAccount, type TestAccount } from "../test/fixtures";

let customer: TestAccount;
beforeAll(async () => {
  customer = await createTestAccount("customer");
});

const everyAdminCall = (admin: ReturnType<typeof createCaller>["admin"]) => ({
  "keys.list": () => admin.keys.list(),
  "keys.get": () => admin.keys.get({ id: "1" }),
  "keys.counts": () => admin.keys.counts(),
  "keys.redrive": () => admin.keys.redrive({ id: "1" }),
  "orders.get": () => admin.orders.get({ orderId: "00000000-0000-4000-8000-000000000000" }),
  "ledger.verify": () => admin.ledger.verify(),
  "ledger.balances": () => admin.ledger.balances(),
  "ledger.transactions": () => admin.ledger.transactions(),
  "reconcile.run": () => admin.reconcile.run(),
  "reconcile.latest": () => admin.reconcile.latest(),
  "reconcile.resolve": () => admin.reconcile.resolve({ id: "1", note: "x" }),
  "refunds.create": () =>
    admin.refunds.create({ paymentId: "00000000-0000-4000-8000-000000000000", amountMinor: 1, reason: "x" }),
  "payments.capture": () => admin.payments.capture({ id: "00000000-0000-4000-8000-000000000000" }),
  "payments.cancel": () => admin.payments.cancel({ id: "00000000-0000-4000-8000-000000000000" }),
  "authorizations.list": () => admin.authorizations.list({ limit: 10 }),
  "outcomes.chart": () => admin.outcomes.chart(),
  "outcomes.totals": () => admin.outcomes.totals(),
  "outbox.stats": () => admin.outbox.stats(),
  "webhooks.overview": () => admin.webhooks.overview(),
  "sessions.list": () => admin.sessions.list(),
  "sessions.end": () => admin.sessions.end({ id: "00000000-0000-4000-8000-000000000000" }),
  "audit.list": () => admin.audit.list(),
  "operators.list": () => admin.operators.list(),
  "operators.invite": () =>
    admin.operators.invite({ email: "nobody@ops.example", name: "Nobody", role: "viewer" }),
  "operators.setRole": () =>
    admin.operators.setRole({ id: "00000000-0000-4000-8000-000000000000", role: "viewer" }),
  "operators.remove": () => admin.operators.remove({ id: "00000000-0000-4000-8000-000000000000" }),
  "operators.reissue": () => admin.operators.reissue({ id: "00000000-0000-4000-8000-000000000000" }),
  "payments.list": () => admin.payments.list(),
  "orders.list": () => admin.orders.list(),
  "refunds.list": () => admin.refunds.list(),
});

describe("admin procedures", () => {
  it("answer UNAUTHORIZED to a customer and to an anonymous caller, every one of them", async () => {
    for (const who of [customer, null]) {
      // With a key header, so that an idempotent procedure gets as far as its authentication.
      const calls = everyAdminCall(createCaller(contextFor(who, { "idempotency-key": "access-test" })).admin);
      for (const [name, call] of Object.entries(calls)) {
        await expect(call(), `${name} as ${who ? "customer" : "anonymous"}`).rejects.toMatchObject({
          code: "UNAUTHORIZED",
        });
      }
    }
  });

  it("cover the whole admin router (a new procedure must be added above)", () => {
    const calls = Object.keys(everyAdminCall(createCaller(contextFor(null)).admin)).map((c) => `admin.${c}`);
    const procedures = Object.keys(appRouter._def.procedures).filter((p) => p.startsWith("admin."));
    expect(calls.sort()).toEqual(procedures.sort());
  });
});
