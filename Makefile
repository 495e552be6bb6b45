# mongomig: everything a test needs is started by the tests themselves
# (the embedded FerretDB sandbox); only Go is required.

GO       ?= go
FUZZTIME ?= 30s
PKGS     := ./...

.PHONY: test test-server2 vet build release bench bench-report bench-server2 fuzz fuzz-pass reliability sandbox-info lint-samples clean

## test: vet, run every test, and a short pass of the fuzz targets (what .ci/run runs).
## FuzzStepDifferential is left out of the short pass: it explores a third-party server's
## behaviour, and a new FerretDB quirk must not fail CI at random (its seeds still run as tests).
## The short pass counts executions (3000x) instead of seconds: with a duration, Go 1.26's fuzz
## coordinator can report "context deadline exceeded" as a failure when the time runs out while a
## worker is mid-input (golang/go#75804, fixed in Go 1.27); a count has no deadline to race.
test: vet
	$(GO) test -count=1 $(PKGS)
	$(MAKE) fuzz-pass FUZZTIME=3000x FUZZ_DIFFERENTIAL=

## test-server2: every test that reads MONGOMIG_TEST_URI (all named ...MongoDB), against the second
## test server in ../shared/server2: installed if missing (as root), started on a free port in a
## temporary directory, stopped afterwards (scripts/server2-test; CI runs it after test)
test-server2:
	GO=$(GO) scripts/server2-test

vet:
	$(GO) vet $(PKGS)

## build: a mongomig binary in ./bin
build:
	$(GO) build -o bin/mongomig ./cmd/mongomig

## release: stripped binaries for linux and darwin, amd64 and arm64, in dist/ as
## mongomig-VERSION-OS-ARCH.tar.gz with SHA256SUMS; VERSION defaults to git describe
## (a tag, or the revision with -dirty), and --version prints it
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
RELEASE_TARGETS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
release:
	rm -rf dist && mkdir -p dist
	for t in $(RELEASE_TARGETS); do \
		os=$${t%/*}; arch=$${t#*/}; d=dist/mongomig-$(VERSION)-$$os-$$arch; mkdir -p $$d; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -buildvcs=true \
			-ldflags "-s -w -X github.com/mongomig/mongomig/internal/cli.Version=$(VERSION)" -o $$d/mongomig ./cmd/mongomig || exit 1; \
		cp README.md $$d/ && tar -C dist -czf $$d.tar.gz $$(basename $$d) && rm -rf $$d; \
	done
	cd dist && sha256sum *.tar.gz > SHA256SUMS && cat SHA256SUMS

## bench: every in-process benchmark pair, BENCHCOUNT runs each, as ratios to their baselines;
## the pairs whose halves are sub-benchmarks run one process per round, so that both halves
## of a round see the same load (-count repeats each half back to back)
BENCHCOUNT ?= 10
bench:
	$(GO) test -run '^$$' -bench . -benchtime 300000x -count $(BENCHCOUNT) ./pkg/version | tee bench.out | $(GO) run ./internal/benchratio
	$(GO) test -run '^$$' -bench 'Validate100k' -benchtime 3x -count 5 ./pkg/validator | tee -a bench.out | $(GO) run ./internal/benchratio
	$(GO) test -run '^$$' -bench 'ValidateParallel' -benchtime 200000x -count 3 -cpu 1,2 ./pkg/validator | tee -a bench.out
	for i in 1 2 3 4 5 6 7 8; do $(GO) test -run '^$$' -bench 'BackfillClient' -benchtime 20x -count 1 ./pkg/backfill; done | tee -a bench.out | $(GO) run ./internal/benchratio
	$(GO) test -run '^$$' -bench 'InferClient' -benchtime 200000x -count 5 ./pkg/inspect | tee -a bench.out | $(GO) run ./internal/benchratio
	for i in 1 2 3 4 5 6 7 8 9 10; do $(GO) test -run '^$$' -bench 'Versioned' -benchtime 20000x -count 1 ./pkg/version/versioned; done | tee -a bench.out | $(GO) run ./internal/benchratio

## bench-report: end to end on the sandbox: report vs a plain scan, backfill (1k and 20k users,
## MONGOMIG_BENCH_DOCS to change) vs the fastest hand-written program and --workers 2 vs 1, three
## rounds so that all programs meet the same load of a shared machine, peak heap of a report (10k,
## 200k documents) and of a backfill (20k, 200k) (slow: ~30 minutes)
bench-report:
	for i in 1 2 3; do $(GO) test -run '^$$' -bench 'BackfillEndToEnd' -benchtime 1x -count 1 -timeout 60m ./pkg/backfill; done | tee bench-report.out | $(GO) run ./internal/benchratio
	$(GO) test -run '^$$' -bench 'ReportEndToEnd' -benchtime 3x -count 5 ./pkg/report | tee -a bench-report.out | $(GO) run ./internal/benchratio
	$(GO) test -run '^$$' -bench 'ReportMemory' -benchtime 1x -timeout 30m ./pkg/report | tee -a bench-report.out
	$(GO) test -run '^$$' -bench 'BackfillMemory' -benchtime 1x -timeout 30m ./pkg/backfill | tee -a bench-report.out
	$(GO) test -run '^$$' -bench 'InferEndToEnd|AnalyzeEndToEnd' -benchtime 3x -count 5 ./pkg/inspect | tee -a bench-report.out | $(GO) run ./internal/benchratio
	$(GO) test -run '^$$' -bench 'InferMemory' -benchtime 1x -timeout 30m ./pkg/inspect | tee -a bench-report.out

## bench-server2: backfill on the server of MONGOMIG_TEST_URI (e.g. ../shared/server2) vs the
## hand-written guarded program and pipeline updateMany, three rounds at 20k, then one at 100k (slow)
bench-server2:
	for i in 1 2 3; do $(GO) test -run '^$$' -bench 'BackfillServerMongoDB' -benchtime 1x -count 1 -timeout 30m ./pkg/backfill; done | tee bench-server2.out | $(GO) run ./internal/benchratio
	MONGOMIG_BENCH_DOCS=100000 $(GO) test -run '^$$' -bench 'BackfillServerMongoDB' -benchtime 1x -count 1 -timeout 60m ./pkg/backfill | tee -a bench-server2.out | $(GO) run ./internal/benchratio

## fuzz: run each fuzz target for FUZZTIME (default 30s, or a count such as 100000x); crashers
## land in testdata/fuzz and then run as regression tests in every `go test`. A bare "context
## deadline exceeded" with no crasher written is Go 1.26's coordinator race (golang/go#75804), not
## a finding: rerun, or give a count
FUZZ_DIFFERENTIAL ?= yes
fuzz:
	$(MAKE) fuzz-pass FUZZTIME=$(FUZZTIME)

fuzz-pass:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./pkg/migration
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) ./pkg/migration
	$(GO) test -run '^$$' -fuzz '^FuzzCompile$$' -fuzztime $(FUZZTIME) ./pkg/validator
	$(GO) test -run '^$$' -fuzz '^FuzzValidate$$' -fuzztime $(FUZZTIME) ./pkg/validator
	$(GO) test -run '^$$' -fuzz '^FuzzSchemaAndDocument$$' -fuzztime $(FUZZTIME) ./pkg/validator
	$(GO) test -run '^$$' -fuzz '^FuzzUpgradeRaw$$' -fuzztime $(FUZZTIME) ./pkg/version
	$(GO) test -run '^$$' -fuzz '^FuzzVersionOfRaw$$' -fuzztime $(FUZZTIME) ./pkg/version
	$(GO) test -run '^$$' -fuzz '^FuzzStoredDocument$$' -fuzztime $(FUZZTIME) ./pkg/version
	$(GO) test -run '^$$' -fuzz '^FuzzLockFile$$' -fuzztime $(FUZZTIME) ./internal/sandbox
	$(GO) test -run '^$$' -fuzz '^FuzzRedactURI$$' -fuzztime $(FUZZTIME) ./internal/cli
	$(GO) test -run '^$$' -fuzz '^FuzzInferFile$$' -fuzztime $(FUZZTIME) ./pkg/inspect
	$(if $(FUZZ_DIFFERENTIAL),$(GO) test -run '^$$' -fuzz '^FuzzStepDifferential$$' -fuzztime $(FUZZTIME) ./pkg/version)

## reliability: the fault and load trials with MONGOMIG_TRIALS (default 100) each, the lease
## conformance suite with LEASE_ROUNDS (default 100) rounds of contention, the lease process
## tests LEASE_REPEATS (default 20) times, and a longer fuzz pass (FUZZTIME, default 2m per target)
MONGOMIG_TRIALS ?= 100
reliability:
	MONGOMIG_TRIALS=$(MONGOMIG_TRIALS) $(GO) test -count=1 -timeout 2h -v -run 'Fault|Load|KilledRepeatedly' ./pkg/runner ./pkg/backfill | grep -E '^(---|ok|FAIL)|trials|rounds'
	MONGOMIG_INTERLEAVINGS=$(or $(INTERLEAVINGS),300) $(GO) test -count=1 -timeout 2h -run 'TestInterleavings|TestExplore' ./pkg/runner
	MONGOMIG_LEASE_ROUNDS=$(or $(LEASE_ROUNDS),100) $(GO) test -count=1 -timeout 1h -v -run 'TestConformance' ./pkg/lease
	$(GO) test -count=$(or $(LEASE_REPEATS),20) -timeout 1h -run 'TestPausedHolderSendsNothingAfterTakeover|TestForcedUnlockStopsTheHolder|TestUpProcessesConcurrently|TestStaleLockTakenOverOnlyAfterExpiry|TestSIGTERMReleasesTheLock|TestLedgerTransaction' ./pkg/runner ./cmd/mongomig
	$(MAKE) fuzz-pass FUZZTIME=$(or $(LONGFUZZ),2m)

## sandbox-info: the tool against the embedded sandbox in .sandbox/
sandbox-info:
	$(GO) run ./cmd/mongomig --embedded .sandbox info

lint-samples:
	$(GO) run ./cmd/mongomig lint --dir migrations

clean:
	rm -rf bin dist .sandbox
