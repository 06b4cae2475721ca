# ortel — two commands do all set-up on a fresh machine:
#   make demo   fetch ONNX Runtime + a real model, profile it, print the report
#   make test   fetch what the tests need, then vet, format-check and test
SHELL := /bin/bash
GO ?= go
ORTEL_CACHE_DIR ?= $(CURDIR)/.cache/ortel
export ORTEL_CACHE_DIR
BIN := $(CURDIR)/bin
DEMO_OUT ?= $(CURDIR)/out/demo
# Quiet build: the go command compiles C through scripts/cc-quiet-nvml.sh,
# which silences go-nvml's deprecation warnings and nothing else (see it).
ifeq ($(origin ORTEL_REAL_CC),undefined)
ORTEL_REAL_CC := $(shell $(GO) env CC)
endif
export ORTEL_REAL_CC
export CC := $(CURDIR)/scripts/cc-quiet-nvml.sh
# staticcheck, pinned: the newest release that knows Go 1.26.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# actionlint, pinned: lints .github/workflows (shellcheck and pyflakes off,
# so the result does not depend on what else this machine has installed).
ACTIONLINT ?= github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

.PHONY: all setup build demo test vet fmt-check staticcheck workflow-lint bench bench-import fuzz clean collector validate-collector e2e faults ebpf ebpf-check release-binaries image capacity

all: build

## setup: fetch the ONNX Runtime library and the models (cached, checksummed)
setup:
	@scripts/fetch.sh all

## build: build the ortel CLI into bin/
build:
	$(GO) build -o $(BIN)/ ./cmd/ortel ./examples/...

## demo: profile the PaddleOCR detection model and print the report
demo: setup build
	@rm -rf $(DEMO_OUT)
	$(BIN)/ortel bench --out $(DEMO_OUT) paddleocr-det

## test: vet, check formatting and generated files, run every test with -race
test: setup vet fmt-check staticcheck workflow-lint
	$(GO) test -race -count=1 -timeout 20m ./...

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) run $(STATICCHECK) ./...

workflow-lint:
	$(GO) run $(ACTIONLINT) -shellcheck= -pyflakes=

## release-binaries: the CLI for linux/amd64 and linux/arm64 (cgo, cross-compiled) into dist/, then checked (test/release)
release-binaries:
	scripts/release-binaries.sh $(CURDIR)/dist
	ORTEL_RELEASE_DIR=$(CURDIR)/dist $(GO) test -count=1 -run '^TestReleaseBinaries$$' ./test/release/

## image: the ortel image for this machine's platform, loaded into the local Docker engine (needs one, with buildx)
IMAGE ?= ghcr.io/ortel-dev/ortel
IMAGE_TAG ?= $(shell sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$$/\1/p' otelcol-config/helm/ortel/Chart.yaml)
image:
	@docker info >/dev/null 2>&1 || { echo "make image: no Docker engine answers here (make release-binaries builds the same binaries without one)"; exit 1; }
	docker buildx build --load --build-arg ORTEL_VERSION=$(IMAGE_TAG) -t $(IMAGE):$(IMAGE_TAG) .

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

## ebpf: regenerate attach's committed eBPF objects from internal/attach/bpf/probes.bpf.c (clang 14: scripts/install-clang.sh)
ebpf:
	@scripts/ebpf.sh

## ebpf-check: fail when the committed eBPF objects are not what the C compiles to (CI; clang 14)
ebpf-check:
	@scripts/ebpf.sh --check

## fuzz: run every fuzz target for FUZZTIME each (default 30s)
FUZZTIME ?= 30s
fuzz:
	@set -e; for t in $$(grep -rl --include='*_test.go' '^func Fuzz' . | grep -v '^./.cache' | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -h '^func Fuzz' $$t/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
	    echo "fuzz $$t $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$t; \
	  done; done

## bench: the performance budgets of docs/ARCHITECTURE.md ("Budgets"), each against its peer
bench: setup
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./instrument/... ./receivers/... ./cmd/ortel/ ./internal/attach/

## bench-import: ortel import of a generated 1 GB profile vs encoding/json and python3 json.load (slow; not in test)
IMPORT_BENCH_SIZE ?= 1073741824
bench-import:
	$(GO) build -o $(BIN)/ortel ./cmd/ortel
	$(GO) build -o $(BIN)/bench-import ./test/benchimport
	$(BIN)/bench-import -size $(IMPORT_BENCH_SIZE) -ortel $(BIN)/ortel -dir $(CURDIR)/.cache/bench-import

## collector: build the local OpenTelemetry Collector from otelcol-config/ (cached)
collector:
	@scripts/build-collector.sh

## validate-collector: otelcol validate on otelcol-config/collector.yaml
validate-collector: collector
	$$(scripts/build-collector.sh 2>/dev/null) validate --config otelcol-config/collector.yaml

## e2e: end-to-end test through a real collector and Prometheus (logs in out/e2e/)
e2e: setup build collector
	@scripts/e2e.sh

## faults: a Silero VAD bench through a collector stopped for 7s and frozen for 20s loses no span after ortel replay (logs in out/faults/);
## then 200 SIGKILLs of the agent and a bench while they write their spool and files, and a full disk freed again: every whole record arrives once after replay, nothing damaged is sent, every exit's counts add up (logs in out/crashes/; needs root for the tmpfs)
faults: setup build collector
	$(GO) test -tags e2e -count=1 -timeout 25m -v -run '^(TestFaults|TestCrashes)$$' ./test/e2e/

## capacity: how many nodes one gateway replica serves, with simulated node agents (about 10 min; not in make test): out/capacity/results.md
CAPACITY_FLAGS ?=
capacity: collector
	@rm -rf $(CURDIR)/out/capacity
	$(GO) build -o $(BIN)/ortel ./cmd/ortel
	@# The node payload: a real agent's export, with the chart's service name and resource.
	env -u OTEL_EXPORTER_OTLP_ENDPOINT OTEL_SERVICE_NAME=ortel-agent \
	  OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION=explicit_bucket_histogram \
	  OTEL_RESOURCE_ATTRIBUTES=service.instance.id=node-0,k8s.node.name=node-0,k8s.pod.name=ortel-agent-0,k8s.namespace.name=observability,k8s.pod.uid=00000000-0000-0000-0000-000000000000 \
	  $(BIN)/ortel agent --interval 1s --duration 2500ms --quiet --out $(CURDIR)/out/capacity/agent
	$(GO) run ./test/capacity -collector $$(scripts/build-collector.sh) -template $(CURDIR)/out/capacity/agent/metrics.jsonl -out $(CURDIR)/out/capacity $(CAPACITY_FLAGS)

clean:
	rm -rf $(BIN) out
