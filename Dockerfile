# Production image for the Audience and Signal Platform API.
#
# The embedded PostgreSQL that `npm start` uses without DATABASE_URL is a developer default:
# inside a container its data would die with the container, so give the image a real server.
# At run time it expects:
#   DATABASE_URL    postgres://user:password@host:5432/database (migrations run at start)
#   JWT_SECRET      at least 32 characters; required because NODE_ENV=production
#   ENCRYPTION_KEY  32 random bytes in base64 (`openssl rand -base64 32`); encrypts OAuth tokens
# and optionally REDIS_URL, PUBLIC_BASE_URL, LOG_LEVEL (see src/config/app-config.ts).
# docker-compose.yml wires all of this up with PostgreSQL and Redis.
#
# The admin CLI ships in the same image:
#   docker compose exec api node dist/src/cli/audience-admin.js customer create --name Acme

FROM node:20-bookworm-slim AS build
WORKDIR /app
# The image's npm 10 ignores package.json `allowScripts` and runs every install script;
# this keeps the one that only reports telemetry quiet.
ENV DO_NOT_TRACK=1 \
    SCARF_ANALYTICS=false
# Manifests first, so source edits reuse the cached dependency layer.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
    && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
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
CMD ["node", "dist/src/main.js"]
