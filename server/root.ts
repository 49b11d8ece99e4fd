import { accountRouter } from "./routers/account";
import { adminRouter } from "./routers/admin";
import { catalogRouter } from "./routers/catalog";
import { ordersRouter } from "./routers/orders";
import { paymentsRouter } from "./routers/payments";
import { webhooksRouter } from "./routers/webhooks";
import { createCallerFactory, router } from "./trpc";

export const appRouter = router({
  account: accountRouter,
  admin: adminRouter,
  catalog: catalogRouter,
  orders: ordersRouter,
  payments: paymentsRouter,
  webhooks: webhooksRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
