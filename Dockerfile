# syntax=docker/dockerfile:1
# Build stage: compile TypeScript with the dev dependencies.
FROM node:22-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm ci --omit=dev

# Runtime stage: production dependencies and the compiled code only, as a non-root user.
FROM node:22-slim
# MALLOC_ARENA_MAX: glibc otherwise gives each busy thread (SMTP/HTTP, parser, storage, readers) an
# arena of its own; two arenas measured 20-37 MB less peak RSS under the SMTP benchmark, same speed.
# MALLOC_MMAP_THRESHOLD_: a fixed threshold stops glibc raising it after a large block is freed,
# which let 128 KB+ buffers pin ~50 MB of the main arena in about one run in five. Figures in
# docs/PERFORMANCE.md, "Allocator, GC and thread settings". glibc reads both at start, so they are
# set here, not in the code.
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072 \
    MAILSTEAD_DATA_DIR=/data \
    MAILSTEAD_HTTP_PORT=8080 \
    MAILSTEAD_SMTP_PORT=2525
WORKDIR /app
# pg_dump and pg_restore: `mailstead backup` and `restore` in PostgreSQL mode (README, "Backup").
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-client && rm -rf /var/lib/apt/lists/*
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
COPY bin ./bin
# The dashboard: plain ES modules and CSS served as they are (src/web).
COPY web ./web
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
# 8080: REST API. 2525: SMTP, published as 25 on the host (docker run -p 25:2525). 993 and 143:
# IMAP (implicit TLS, STARTTLS) and 587 and 465: submission (STARTTLS, implicit TLS), on their own
# numbers, which imap_credentials and submission_credentials name; Docker lets a container's
# unprivileged user bind ports below 1024 (ip_unprivileged_port_start is 0 there). ACME's HTTP-01
# challenge arrives on the HTTP listener: publish host port 80 to 8080 when MAILSTEAD_ACME_EMAIL is set.
EXPOSE 8080 2525 993 143 587 465
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.MAILSTEAD_HTTP_PORT||8080)+'/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
STOPSIGNAL SIGTERM
# The same command as `npm start` (package.json; a test keeps them equal, and ENV above carries
# the variables it sets). What --max-semi-space-size and --no-allocation-site-pretenuring buy:
# docs/PERFORMANCE.md, "Allocator, GC and thread settings".
CMD ["node", "--max-semi-space-size=8", "--no-allocation-site-pretenuring", "dist/src/main.js"]
