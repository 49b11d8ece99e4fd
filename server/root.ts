import { accountRouter } from "./routers/account";
import { catalogRouter } from "./routers/catalog";
import { createCallerFactory, router } from "./trpc";

export const appRouter = router({
  account: accountRouter,
  catalog: catalogRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
