# syntax=docker/dockerfile:1
# One image for every service of the stack (compose.yaml): the app is Next's standalone server,
# the worker, the provider and the migration step are esbuild bundles in dist/ (no tsx, no
# node_modules at run time). docs/production.md tells how to build and run it.

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY . .
# postinstall generates the Prisma client; the embedded PostgreSQL is not needed in the image.
RUN npm ci --no-audit --no-fund
# `npm run build`: next build (output: standalone), then scripts/build-dist.ts.
RUN npm run build

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    APP_ENV=production \
    HOSTNAME=0.0.0.0 \
    PORT=3000 \
    NEXT_TELEMETRY_DISABLED=1
WORKDIR /app
COPY --from=build --chown=node:node /src/.next/standalone ./
COPY --from=build --chown=node:node /src/dist ./dist
COPY --from=build --chown=node:node /src/prisma/migrations ./prisma/migrations
USER node
EXPOSE 3000
# node itself is PID 1's child only through the runtime's init (compose: `init: true`); it gets
# SIGTERM directly and stops in order (docs/decisions/0151).
CMD ["node", "server.js"]
