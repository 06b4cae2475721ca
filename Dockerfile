# syntax=docker/dockerfile:1
# The ortel CLI in a container, for linux/amd64 and linux/arm64; the Helm
# chart runs it as the node agent (`ortel agent`), docker-compose.yaml as the
# optional "agent" profile. The release workflow
# (.github/workflows/release.yaml) builds it for both platforms on a version
# tag and publishes it; by hand, with a Docker engine:
#
#   docker buildx build --platform linux/amd64,linux/arm64 -t ortel:dev .
#   make image            # the same, for this machine's platform, loaded locally
#
# The build stage runs on the builder's own platform and cross-compiles
# (cgo, Debian's cross gcc) through scripts/release-binaries.sh, the script
# `make release-binaries` runs, so no emulation is needed and the image holds
# the same binary as the release. ortel loads ONNX Runtime at run time only
# for commands that run models (bench, ...); the agent does not need it.
FROM --platform=$BUILDPLATFORM golang:1.26.8-bookworm AS build
ARG TARGETARCH
# What `ortel version` prints (the workflow passes the tag's version).
ARG ORTEL_VERSION=""
WORKDIR /src
COPY scripts/install-cross.sh scripts/apt-install.sh scripts/
RUN scripts/install-cross.sh --arch "$TARGETARCH"
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN ORTEL_VERSION="$ORTEL_VERSION" scripts/release-binaries.sh --arch "$TARGETARCH" /out

FROM debian:12.11-slim
ARG TARGETARCH
COPY --from=build /out/ortel-linux-${TARGETARCH} /usr/local/bin/ortel
ENTRYPOINT ["ortel"]
CMD ["agent"]
