# Knowledge Gateway image.
#   docker build -t knowledge-gateway .
#   docker run -p 8787:8787 -v kgw-data:/data knowledge-gateway
#
# The build stage packs the installable package exactly as `npm pack` does everywhere (the
# TypeScript compiled to dist/, scripts/build.ts), and the runtime stage installs that tarball
# globally with its production dependencies only: `kgw` is on PATH (`docker compose exec
# gateway kgw …`), and the image holds no sources, tests, dev dependencies or second Node.
# test/package/pack.test.ts installs the same tarball the same way and serves from it.

ARG NODE_IMAGE=node:24.21.0-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No install scripts: the build needs neither the `node` package's binary (the image has Node
# 24; its link is removed so that npm scripts find the image's) nor the Inspector's clients.
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && rm -f node_modules/.bin/node
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY scripts ./scripts
COPY src ./src
COPY connectors ./connectors
COPY docs ./docs
COPY README.md ./
RUN npm pack --pack-destination /pkg \
 && mv /pkg/knowledge-gateway-*.tgz /pkg/knowledge-gateway.tgz

FROM ${NODE_IMAGE} AS runtime
# V8's young generation grows to 64 MiB a half on a large machine, most of a loaded gateway's
# memory; 8 MiB costs no measured throughput. glibc's allocator keeps what V8's compiler threads
# freed (PGlite's code) in arenas of their own; two arenas and a fixed trim threshold return it
# (README, "Memory"; docs/decisions.md, "The C allocator").
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=8 \
    MALLOC_ARENA_MAX=2 \
    MALLOC_TRIM_THRESHOLD_=131072 \
    KGW_HOST=0.0.0.0 \
    KGW_PORT=8787 \
    KGW_DATA_DIR=/data

# Unprivileged user with a home (npx and npm need one); /data, the only place the gateway
# writes, belongs to it. The installed code stays root-owned.
RUN groupadd --system --gid 10001 kgw \
 && useradd --system --uid 10001 --gid kgw --create-home --home-dir /home/kgw --shell /usr/sbin/nologin kgw \
 && mkdir -p /data /org \
 && chown kgw:kgw /data

COPY --from=build /pkg/knowledge-gateway.tgz /tmp/knowledge-gateway.tgz
RUN npm install --global --omit=dev --no-audit --no-fund /tmp/knowledge-gateway.tgz \
 && rm /tmp/knowledge-gateway.tgz \
 && npm cache clean --force

# Numeric, so that a runtime checking for a non-root user can tell without the image's passwd.
USER 10001:10001
WORKDIR /home/kgw
VOLUME ["/data"]
EXPOSE 8787

# The slim image has no curl: node's fetch does the request.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=5 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8787/healthz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

CMD ["kgw", "serve"]
