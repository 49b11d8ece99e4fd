import { router } from "../../trpc";
import { adminAuthorizationsRouter } from "./authorizations";
import { adminKeysRouter } from "./keys";
import { adminLedgerRouter } from "./ledger";
import { adminOperatorsRouter } from "./operators";
import { adminOrdersRouter } from "./orders";
import { adminOutboxRouter } from "./outbox";
import { adminOutcomesRouter } from "./outcomes";
import { adminPaymentsRouter } from "./payments";
import { adminReconcileRouter } from "./reconcile";
import { adminRefundsRouter } from "./refunds";
import { adminAuditRouter, adminSessionsRouter } from "./sessions";
import { adminWebhooksRouter } from "./webhooks";

/** Everything behind the admin pages; every procedure is an adminProcedure. */
export const adminRouter = router({
  keys: adminKeysRouter,
  orders: adminOrdersRouter,
  ledger: adminLedgerRouter,
  reconcile: adminReconcileRouter,
  refunds: adminRefundsRouter,
  payments: adminPaymentsRouter,
  authorizations: adminAuthorizationsRouter,
  outcomes: adminOutcomesRouter,
  outbox: adminOutboxRouter,
  webhooks: adminWebhooksRouter,
  sessions: adminSessionsRouter,
  audit: adminAuditRouter,
  operators: adminOperatorsRouter,
});
