# strait: one image for the gateway daemon, node agent, control module and code-hosting
# server (the command picks the component). Multi-stage: build with the toolchain,
# run on a slim base with only the system programs strait calls.
#   docker build --build-arg VERSION="$(node -p 'require("./package.json").version')" -t strait .
#   docker run --rm strait dist/src/cli/main.js --version
# The base images are arguments so that a build without docker.io can use local ones
# (test/image/build-image.sh: buildah, vfs storage, chroot isolation, debootstrap's
# bookworm plus Node laid out as in the official image). NPM_FLAGS=--offline builds from
# a bind-mounted npm cache.

ARG BUILD_IMAGE=node:20-bookworm
ARG RUNTIME_IMAGE=node:20-bookworm-slim

FROM ${BUILD_IMAGE} AS build
ARG NPM_FLAGS=""
# strait's version: package.json's (the one place it is written); the build refuses another
ARG VERSION=""
WORKDIR /src
# .npmrc points node-gyp at the Node headers of a Debian install (/usr); the node image
# keeps them under /usr/local (the environment overrides the project's .npmrc)
ENV npm_config_nodedir=/usr/local
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends build-essential python3 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json .npmrc ./
RUN want="$(node -p 'require("./package.json").version')" \
 && if [ "$VERSION" != "$want" ]; then echo "strait: --build-arg VERSION=$VERSION is not package.json's version $want" >&2; exit 1; fi
COPY scripts ./scripts
# install without the prepare step (sources are not copied yet); native modules build here
RUN npm ci --ignore-scripts ${NPM_FLAGS} && npm rebuild better-sqlite3 ${NPM_FLAGS}
COPY tsconfig.json eslint.config.mjs ./
COPY src ./src
COPY daemon ./daemon
COPY agents ./agents
COPY native ./native
COPY bin ./bin
# the Node headers of the image: point node-gyp at the image's own install
# the resource kinds' validators as code (ajv standalone) and the web console's bundle
# (esbuild, a dev dependency): built before the prune
RUN node_modules/.bin/tsc -p tsconfig.json \
 && node scripts/build-validators.mjs \
 && node scripts/build-console.mjs \
 && node_modules/.bin/node-gyp rebuild --loglevel=error --nodedir=/usr/local --directory native \
 && npm prune --omit=dev

FROM ${RUNTIME_IMAGE} AS runtime
ARG VERSION
LABEL org.opencontainers.image.title=strait \
      org.opencontainers.image.version=${VERSION} \
      org.opencontainers.image.licenses=Apache-2.0
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends iproute2 nftables git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 strait \
 && useradd --system --uid 10001 --gid strait --home-dir /var/lib/strait --create-home strait
WORKDIR /opt/strait
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/src ./dist/src
COPY --from=build /src/dist/daemon ./dist/daemon
COPY --from=build /src/dist/agents ./dist/agents
COPY --from=build /src/dist/console ./dist/console
COPY --from=build /src/native/build/Release/strait_native.node ./native/build/Release/strait_native.node
COPY --from=build /src/bin ./bin
# the control module and the code-hosting server run as this user; the gateway and
# the node agent need NET_ADMIN and /dev/net/tun, granted by their DaemonSets
# numeric, so that Kubernetes' runAsNonRoot can verify it (deploy/ sets runAsUser: 10001)
USER 10001:10001
ENV NODE_ENV=production STRAIT_STATE_DIR=/var/lib/strait
ENTRYPOINT ["node"]
CMD ["dist/src/cli/main.js", "--help"]
