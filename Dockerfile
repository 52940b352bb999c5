# strait: one image for the gateway daemon, node agent, control module and code-hosting
# server (the command picks the component). Multi-stage: build with the toolchain,
# run on a slim base with only the system programs strait calls.
#   docker build -t strait .
#   docker run --rm strait node dist/src/cli/main.js --help

FROM node:20-bookworm AS build
WORKDIR /src
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends build-essential python3 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json .npmrc ./
COPY scripts ./scripts
# install without the prepare step (sources are not copied yet); native modules build here
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.json eslint.config.mjs ./
COPY src ./src
COPY daemon ./daemon
COPY agents ./agents
COPY native ./native
COPY bin ./bin
# the Node headers of the image: point node-gyp at the image's own install
RUN node_modules/.bin/tsc -p tsconfig.json \
 && node_modules/.bin/node-gyp rebuild --loglevel=error --nodedir=/usr/local --directory native \
 && npm prune --omit=dev

FROM node:20-bookworm-slim AS runtime
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends iproute2 nftables git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system strait && useradd --system --gid strait --home-dir /var/lib/strait --create-home strait
WORKDIR /opt/strait
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/src ./dist/src
COPY --from=build /src/dist/daemon ./dist/daemon
COPY --from=build /src/dist/agents ./dist/agents
COPY --from=build /src/native/build/Release/strait_native.node ./native/build/Release/strait_native.node
COPY --from=build /src/bin ./bin
# the control module and the code-hosting server run as this user; the gateway and
# the node agent need NET_ADMIN and /dev/net/tun, granted by their DaemonSets
USER strait
ENV NODE_ENV=production STRAIT_STATE_DIR=/var/lib/strait
ENTRYPOINT ["node"]
CMD ["dist/src/cli/main.js", "--help"]
