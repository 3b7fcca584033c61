# p4ctl — make targets. `make` lists them.
SHELL := /bin/bash
GO ?= go
BIN := bin/p4ctl
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.1.0-dev)
LDFLAGS := -X github.com/p4ctl/p4ctl/pkg/version.release=$(VERSION)
# Benchmarks: `make bench BENCH=BenchmarkDecideC` narrows the set.
BENCH ?= .
BENCHTIME ?= 1s
# staticcheck, pinned; fetched through the Go module proxy by `go run`.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

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

.PHONY: race
race: deps ## Run all tests under the race detector (slower; not part of make test)
	$(GO) test -race -count=1 ./...

.PHONY: bench
bench: deps ## Run benchmarks (ratios against in-run baselines are printed by the benchmarks)
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) ./...

.PHONY: lint
lint: ## gofmt, go vet, staticcheck and go mod tidy -diff (part of make test, so CI fails on unformatted code, a vet or staticcheck finding, or an untidy module)
	@files=$$(git ls-files '*.go' 2>/dev/null) || files=$$(find . -name '*.go' -not -path './out/*'); \
	out=$$(gofmt -l $$files); if [ -n "$$out" ]; then echo "make lint: gofmt needed (run gofmt -w):" >&2; echo "$$out" >&2; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	@$(GO) mod tidy -diff || { echo "make lint: go.mod/go.sum are not tidy (run go mod tidy)" >&2; exit 1; }

.PHONY: demo
demo: deps ## Run the end-to-end demo on the embedded switch (no hardware, no API key)
	$(GO) run ./cmd/p4ctl demo

# Minimising a new input may take up to a minute by default, which is the
# whole run for a target with large inputs (FuzzParse once ran 10 execs in
# 30 s): FUZZMINTIME bounds it.
FUZZMINTIME ?= 2s

.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZTIME (default 10s), minimising new inputs for at most FUZZMINTIME (2s)
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $${FUZZTIME:-10s} -fuzzminimizetime $(FUZZMINTIME) $$pkg || exit 1; \
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

# TNA: `make p4-tna` runs the Tofino compiler (p4c-barefoot, p4c's
# open-source tofino backend, built outside the repo) on p4src/tna and
# commits what a deployment needs and what the tests check: the P4Info (std
# externs, so names match v1model's), bfrt.json, the pipe's context.json and
# tofino.bin, bf-p4c's resources.json and metrics.json, the resource report
# RESOURCES.md generated from them (internal/bfreport), BUILDINFO (compiler,
# command, exit status) and the sources' SHA-256. If the backend rejects the
# program, BUILDINFO records its errors and the target exits 1.
P4C_TNA ?= p4c-barefoot
P4_TNA_OUT := p4src/build/tna
P4_TNA_SOURCES = $(sort $(wildcard p4src/shared/*.p4 p4src/tna/*.p4))
P4_TNA_FLAGS := --target tofino --arch tna --std p4-16 --p4runtime-force-std-externs -g

.PHONY: p4-tna
p4-tna: ## Compile p4src/tna with p4c-barefoot (Tofino 1) into p4src/build/tna (P4Info, bfrt.json, context.json, tofino.bin, RESOURCES.md, BUILDINFO)
	@command -v $(P4C_TNA) >/dev/null 2>&1 || { echo "make p4-tna: $(P4C_TNA) not found on PATH; build p4c with its tofino backend outside this repo (docs/DEVELOPERS.md) and put it on PATH, or set P4C_TNA" >&2; exit 1; }
	@mkdir -p $(P4_TNA_OUT)
	@tmp=$$(mktemp -d); \
	inc=$$(dirname $$(command -v $(P4C_TNA)))/p4include; [ -d "$$inc" ] && incflag="-I $$inc" || incflag=""; \
	cmd="$(P4C_TNA) $(P4_TNA_FLAGS) -o OUT --p4runtime-files OUT/p4ctl.p4info.txtpb --bf-rt-schema OUT/bfrt.json p4src/tna/p4ctl.p4"; \
	start=$$(date +%s); \
	$(P4C_TNA) $(P4_TNA_FLAGS) $$incflag -o $$tmp --p4runtime-files $$tmp/p4ctl.p4info.txtpb --bf-rt-schema $$tmp/bfrt.json p4src/tna/p4ctl.p4 >$$tmp/log 2>&1; rc=$$?; \
	secs=$$(( $$(date +%s) - start )); \
	cat $$tmp/log; \
	if [ ! -s $$tmp/p4ctl.p4info.txtpb ]; then echo "make p4-tna: no P4Info produced (exit $$rc)" >&2; rm -rf $$tmp; exit 1; fi; \
	rm -f $(P4_TNA_OUT)/bfrt.json $(P4_TNA_OUT)/context.json $(P4_TNA_OUT)/tofino.bin $(P4_TNA_OUT)/resources.json $(P4_TNA_OUT)/metrics.json $(P4_TNA_OUT)/phv_usage.json $(P4_TNA_OUT)/RESOURCES.md; \
	cp $$tmp/p4ctl.p4info.txtpb $(P4_TNA_OUT)/p4ctl.p4info.txtpb; \
	if [ $$rc -eq 0 ]; then \
	  cp $$tmp/bfrt.json $(P4_TNA_OUT)/bfrt.json; \
	  cp $$tmp/pipe/context.json $$tmp/pipe/logs/resources.json $(P4_TNA_OUT)/; \
	  for f in $$tmp/pipe/tofino.bin $$tmp/pipe/logs/metrics.json; do [ -f $$f ] && cp $$f $(P4_TNA_OUT)/; done; \
	  $(GO) run ./internal/bfreport/cmd/bfreport -summarize-phv $$tmp/pipe/logs/phv.json > $(P4_TNA_OUT)/phv_usage.json || { rm -rf $$tmp; exit 1; }; \
	  [ -f $$tmp/pipe/tofino.bin ] || echo "make p4-tna: no tofino.bin (the assembler bfas is not on PATH): resources and stages come from the compiler's placement" >&2; \
	fi; \
	{ echo "compiler: $$($(P4C_TNA) --version 2>&1 | tr -s '\n' ' ')"; \
	  echo "command: $$cmd"; \
	  echo "exit status: $$rc"; \
	  echo "compile time: $${secs} s"; \
	  if [ $$rc -eq 0 ]; then echo "result: the backend accepted the program; placement and whether it fits Tofino 1's stages: RESOURCES.md"; else echo "result: P4Info only; the backend rejected the program:"; grep -E 'error' $$tmp/log | grep -v 'errors\?, ' | sed 's/^/  /'; fi; } > $(P4_TNA_OUT)/BUILDINFO; \
	sha256sum $(P4_TNA_SOURCES) > $(P4_TNA_OUT)/SOURCES.sha256; \
	rm -f $(P4_TNA_OUT)/PENDING; \
	rm -rf $$tmp; \
	if [ $$rc -ne 0 ]; then echo "make p4-tna: p4c-barefoot exited $$rc: the program is not compiled for Tofino (see $(P4_TNA_OUT)/BUILDINFO)" >&2; exit 1; fi; \
	$(GO) run ./internal/bfreport/cmd/bfreport -dir $(P4_TNA_OUT) > $(P4_TNA_OUT)/RESOURCES.md || exit 1; \
	echo "wrote $(P4_TNA_OUT): p4ctl.p4info.txtpb, bfrt.json, context.json, resources.json, RESOURCES.md, BUILDINFO, SOURCES.sha256 (tofino.bin, metrics.json when produced)"; \
	if $(GO) run ./internal/bfreport/cmd/bfreport -dir $(P4_TNA_OUT) -check-fits; then echo "fits Tofino 1: yes (RESOURCES.md)" >> $(P4_TNA_OUT)/BUILDINFO; \
	else echo "fits Tofino 1: NO, more MAU stages than the chip has (RESOURCES.md)" >> $(P4_TNA_OUT)/BUILDINFO; echo "make p4-tna: the program does not fit Tofino 1's stages (p4src/build/tna/RESOURCES.md)" >&2; exit 1; fi

# Soak: the controller daemon against embedded switches under faults
# (internal/testing/soak) for SOAK_DURATION of wall time over SOAK_HOURS replayed
# hours (default one per 2 s); the JSON report goes to out/soak/report.json.
SOAK_DURATION ?= 10m
SOAK_HOURS ?=

.PHONY: soak
soak: deps ## Soak with faults: controller and switch kills/restarts (one switch the XDP program, as root), carbon outages, delayed P4Runtime (SOAK_DURATION=10m, SOAK_HOURS)
	P4CTL_SOAK=1 SOAK_DURATION=$(SOAK_DURATION) SOAK_HOURS=$(SOAK_HOURS) $(GO) test -count=1 -run '^TestSoak$$' -v -timeout 0 ./internal/testing/soak

.PHONY: mininet
mininet: ## BMv2-in-Mininet testbed run (root, Mininet, BMv2, p4c outputs); MININET_SWITCH=embedded|xdp on p4ctl switch [--datapath xdp], MININET_DURATION=30s for a short run
	@mininet/run.sh

.PHONY: clean
clean: ## Remove build outputs
	rm -rf bin out
