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
test: deps ## Run all tests (what CI runs); BMv2/p4c/root tests skip with a reason when absent
	$(GO) vet ./...
	$(GO) test -count=1 ./...

.PHONY: bench
bench: deps ## Run benchmarks (ratios against in-run baselines are printed by the benchmarks)
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) ./...

.PHONY: lint
lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

.PHONY: demo
demo: deps ## Run the end-to-end demo on the embedded switch (no hardware, no API key)
	$(GO) run ./cmd/p4ctl demo

.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZTIME (default 10s)
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $${FUZZTIME:-10s} $$pkg || exit 1; \
	  done; done

.PHONY: clean
clean: ## Remove build outputs
	rm -rf bin out
