# The ortel CLI in a container; docker-compose.yaml runs it as the hardware
# agent (`ortel agent`, profile "agent"). Two stages: build with the Go
# toolchain the module asks for, run on the matching Debian release.
# ortel loads ONNX Runtime at run time only for commands that run models
# (bench, ...); the agent does not need it.
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# cgo: the ONNX Runtime binding needs it.
RUN CGO_ENABLED=1 go build -trimpath -ldflags="-s -w" -o /out/ortel ./cmd/ortel

FROM debian:12.11-slim
COPY --from=build /out/ortel /usr/local/bin/ortel
ENTRYPOINT ["ortel"]
CMD ["agent"]
