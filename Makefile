# mongomig: everything a test needs is started by the tests themselves
# (the embedded FerretDB sandbox); only Go is required.

GO       ?= go
FUZZTIME ?= 30s
PKGS     := ./...

.PHONY: test vet build bench fuzz sandbox-info lint-samples clean

## test: vet and run every test (what .ci/run runs)
test: vet
	$(GO) test -count=1 $(PKGS)

vet:
	$(GO) vet $(PKGS)

## build: a mongomig binary in ./bin
build:
	$(GO) build -o bin/mongomig ./cmd/mongomig

## bench: every benchmark pair, BENCHCOUNT runs each, as ratios to their baselines
BENCHCOUNT ?= 10
bench:
	$(GO) test -run '^$$' -bench . -benchtime 300000x -count $(BENCHCOUNT) ./pkg/version | tee bench.out | $(GO) run ./internal/benchratio

## fuzz: run each fuzz target for FUZZTIME (default 30s)
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./pkg/migration
	$(GO) test -run '^$$' -fuzz '^FuzzCompile$$' -fuzztime $(FUZZTIME) ./pkg/validator

## sandbox-info: the tool against the embedded sandbox in .sandbox/
sandbox-info:
	$(GO) run ./cmd/mongomig --embedded .sandbox info

lint-samples:
	$(GO) run ./cmd/mongomig lint --dir migrations

clean:
	rm -rf bin .sandbox
