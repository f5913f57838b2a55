# Knowledge Gateway image.
#   docker build -t knowledge-gateway .
#   docker run -p 8787:8787 -v kgw-data:/data knowledge-gateway
# Node 24 runs the TypeScript sources directly (type stripping), so there is no build step:
# the first stage only installs the production dependencies.

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# The `node` npm package is a runtime dependency; its install script fetches its own
# platform binary from the npm registry. The image's /usr/local/bin/node is what runs the gateway.
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    KGW_HOST=0.0.0.0 \
    KGW_PORT=8787 \
    KGW_DATA_DIR=/data
WORKDIR /app

# Unprivileged user; /data (the only writable place) belongs to it. The code stays root-owned.
RUN groupadd --system --gid 10001 kgw \
 && useradd --system --uid 10001 --gid kgw --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin kgw \
 && mkdir -p /data \
 && chown kgw:kgw /data

COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
COPY src ./src
COPY connectors ./connectors

USER kgw
VOLUME ["/data"]
EXPOSE 8787

# The slim image has no curl: use node's fetch.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=5 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8787/healthz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

CMD ["node", "src/cli/kgw.ts", "serve"]
