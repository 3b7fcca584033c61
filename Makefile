# p4ctl — make targets. `make` lists them.
SHELL := /bin/bash
GO ?= go
BIN := bin/p4ctl
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.1.0-dev)
LDFLAGS := -X github.com/p4ctl/p4ctl/pkg/version.release=$(VERSION)
# Benchmarks: `make bench BENCH=BenchmarkDecideC` narrows the set.
BENCH ?= .
BENCHTIME ?= 1s

.DEFAULT_GOAL := help

.PHONY: help
help: ## List targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: deps
deps: ## Download Go modules (the only install step the demo and tests need)
	$(GO) mod download

.PHONY: build
build: deps ## Build bin/p4ctl
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/p4ctl

.PHONY: test
test: deps lint ## Run lint, then all tests (what CI runs); BMv2/p4c/root tests skip with a reason when absent
	$(GO) test -count=1 ./...

.PHONY: bench
bench: deps ## Run benchmarks (ratios against in-run baselines are printed by the benchmarks)
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) ./...

.PHONY: lint
lint: ## gofmt, go vet and go mod tidy -diff (part of make test, so CI fails on unformatted code or an untidy module)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "make lint: gofmt needed (run gofmt -w):" >&2; echo "$$out" >&2; exit 1; fi
	$(GO) vet ./...
	@$(GO) mod tidy -diff || { echo "make lint: go.mod/go.sum are not tidy (run go mod tidy)" >&2; exit 1; }

.PHONY: demo
demo: deps ## Run the end-to-end demo on the embedded switch (no hardware, no API key)
	$(GO) run ./cmd/p4ctl demo

.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZTIME (default 10s)
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $${FUZZTIME:-10s} $$pkg || exit 1; \
	  done; done

# P4: `make p4` compiles p4src/v1model with p4c-bm2-ss (built outside the
# repo, see docs/DEVELOPERS.md) into p4src/build/v1model/ and records the
# SHA-256 of the sources in p4src/build/SOURCES.sha256 (checked by
# pkg/pipeline's tests). Warnings are errors.
P4C ?= p4c-bm2-ss
P4_OUT := p4src/build/v1model
P4_SOURCES = $(sort $(wildcard p4src/shared/*.p4 p4src/v1model/*.p4))

.PHONY: p4
p4: ## Compile the v1model P4 program (needs p4c-bm2-ss on PATH) into p4src/build/v1model
	@command -v $(P4C) >/dev/null 2>&1 || { echo "make p4: $(P4C) not found on PATH; build p4c outside this repo (docs/DEVELOPERS.md) and put it on PATH" >&2; exit 1; }
	@mkdir -p $(P4_OUT)
	$(P4C) --arch v1model --std p4-16 --Werror \
	  -o $(P4_OUT)/p4ctl.json.tmp \
	  --p4runtime-files $(P4_OUT)/p4ctl.p4info.tmp.txtpb \
	  p4src/v1model/p4ctl.p4 \
	  || { rm -f $(P4_OUT)/*.tmp $(P4_OUT)/*.tmp.txtpb; exit 1; }
	@mv $(P4_OUT)/p4ctl.json.tmp $(P4_OUT)/p4ctl.json
	@mv $(P4_OUT)/p4ctl.p4info.tmp.txtpb $(P4_OUT)/p4ctl.p4info.txtpb
	@{ echo "compiler: $$($(P4C) --version 2>&1 | tr -s '\n' ' ')"; \
	   echo "command: $(P4C) --arch v1model --std p4-16 --Werror -o $(P4_OUT)/p4ctl.json --p4runtime-files $(P4_OUT)/p4ctl.p4info.txtpb p4src/v1model/p4ctl.p4"; } > $(P4_OUT)/BUILDINFO
	@sha256sum $(P4_SOURCES) > p4src/build/SOURCES.sha256
	@echo "wrote $(P4_OUT)/p4ctl.json, $(P4_OUT)/p4ctl.p4info.txtpb, p4src/build/SOURCES.sha256"

# TNA: `make p4-tna` runs the Tofino compiler (p4c-barefoot from p4c's
# open-source tofino backend, built outside the repo) on p4src/tna and
# commits what it gives: the P4Info (std externs, so names match v1model's)
# and BUILDINFO with the compiler's verdict. The backend does not yet
# accept the program (p4src/tna/README.md, Status); the target then exits 1
# after writing both, and pkg/pipeline's tests compare the P4Info with
# v1model's.
P4C_TNA ?= p4c-barefoot
P4_TNA_OUT := p4src/build/tna
P4_TNA_SOURCES = $(sort $(wildcard p4src/shared/*.p4 p4src/tna/*.p4))

.PHONY: p4-tna
p4-tna: ## Compile p4src/tna with p4c-barefoot (Tofino); writes p4src/build/tna (P4Info, BUILDINFO)
	@command -v $(P4C_TNA) >/dev/null 2>&1 || { echo "make p4-tna: $(P4C_TNA) not found on PATH; build p4c with its tofino backend outside this repo (docs/DEVELOPERS.md) and put it on PATH, or set P4C_TNA" >&2; exit 1; }
	@mkdir -p $(P4_TNA_OUT)
	@tmp=$$(mktemp -d); \
	inc=$$(dirname $$(command -v $(P4C_TNA)))/p4include; [ -d "$$inc" ] && incflag="-I $$inc" || incflag=""; \
	cmd="$(P4C_TNA) --target tofino --arch tna --std p4-16 --p4runtime-force-std-externs -o OUT --p4runtime-files OUT/p4ctl.p4info.txtpb p4src/tna/p4ctl.p4"; \
	$(P4C_TNA) --target tofino --arch tna --std p4-16 $$incflag --p4runtime-force-std-externs -o $$tmp --p4runtime-files $$tmp/p4ctl.p4info.txtpb p4src/tna/p4ctl.p4 >$$tmp/log 2>&1; rc=$$?; \
	cat $$tmp/log; \
	if [ ! -s $$tmp/p4ctl.p4info.txtpb ]; then echo "make p4-tna: no P4Info produced (exit $$rc)" >&2; rm -rf $$tmp; exit 1; fi; \
	cp $$tmp/p4ctl.p4info.txtpb $(P4_TNA_OUT)/p4ctl.p4info.txtpb; \
	{ echo "compiler: $$($(P4C_TNA) --version 2>&1 | tr -s '\n' ' ')"; \
	  echo "command: $$cmd"; \
	  echo "exit status: $$rc"; \
	  if [ $$rc -eq 0 ]; then echo "result: compiled"; else echo "result: P4Info only; the backend rejected the program:"; grep -E 'error' $$tmp/log | grep -v 'errors\?, ' | sed 's/^/  /'; fi; } > $(P4_TNA_OUT)/BUILDINFO; \
	sha256sum $(P4_TNA_SOURCES) > $(P4_TNA_OUT)/SOURCES.sha256; \
	rm -rf $$tmp; \
	echo "wrote $(P4_TNA_OUT)/p4ctl.p4info.txtpb, BUILDINFO, SOURCES.sha256"; \
	if [ $$rc -ne 0 ]; then echo "make p4-tna: p4c-barefoot exited $$rc: the program is not yet compiled for Tofino (see $(P4_TNA_OUT)/BUILDINFO)" >&2; exit 1; fi

# Soak: the controller daemon against embedded switches under faults
# (internal/soak) for SOAK_DURATION of wall time over SOAK_HOURS replayed
# hours (default one per 2 s); the JSON report goes to out/soak/report.json.
SOAK_DURATION ?= 10m
SOAK_HOURS ?=

.PHONY: soak
soak: deps ## Soak with faults: controller and switch kills/restarts, carbon outages, delayed P4Runtime (SOAK_DURATION=10m, SOAK_HOURS)
	P4CTL_SOAK=1 SOAK_DURATION=$(SOAK_DURATION) SOAK_HOURS=$(SOAK_HOURS) $(GO) test -count=1 -run '^TestSoak$$' -v -timeout 0 ./internal/soak

.PHONY: mininet
mininet: ## BMv2-in-Mininet testbed run (root, Mininet, BMv2, p4c outputs); MININET_SWITCH=embedded on p4ctl switch, MININET_DURATION=30s for a short run
	@mininet/run.sh

.PHONY: clean
clean: ## Remove build outputs
	rm -rf bin out
