# lockzoo: make test runs everything CI runs; make redis-image builds the
# local Redis image for the docker test backend (with
# LOCKZOO_REDIS_SERVER=valkey-server, the Valkey one); make example runs the quick
# start against a Redis node the test harness starts; make compare runs the
# race-condition suite and the benchmarks on every technique and prints how
# they compare (COMPARE_FLAGS passes flags, e.g. COMPARE_FLAGS="-html r.html");
# make compare-cluster does the same through a cluster.Pool on a 3-master
# Redis Cluster it starts (lockcompare -cluster);
# make compare-peers does the same with redsync, bsm/redislock and
# rueidislock as rows beside lockzoo's techniques (the peers/ module) and
# writes the HTML report to $(COMPARE_PEERS_HTML); make test-peers runs the
# peers module's vet and tests; make chaos runs the chaos test (internal/chaos)
# on lua_release and redlock for CHAOS_SECONDS each (make test runs it for
# 10 s each), printing its seed: CHAOS_SEED=<seed> replays a run and
# CHAOS_FAULTS=latency,cut,swallow picks the fault kinds.
# make docs-report runs make compare with -json and writes the tables to
# docs/report.md and the guarantees grid into README.md (make
# docs-report-peers: compare-peers to docs/peers-report.md), naming the
# command, the commit and the date: reports are made so, never by hand.
GO ?= go
COMPARE_PEERS_HTML ?= $(CURDIR)/compare-peers.html
CHAOS_SECONDS ?= 60
DOCS_REPORT_JSON ?= $(CURDIR)/docs-report.json
DOCS_COMMIT = $(shell git describe --always --dirty 2>/dev/null || echo unknown)

.PHONY: test fmt-check vet redis-image example compare compare-cluster compare-peers test-peers chaos docs-report docs-report-peers

# -p 4: the tests wait on Redis and on timers more than they compute
# (a 2-core machine ran make test at about one core with -p 2), so four
# packages at once take about two thirds of the time.
test: fmt-check vet
	$(GO) test -race -count=1 -p 4 -parallel 4 -timeout 15m ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

redis-image:
	bash scripts/redis-image.sh $(LOCKZOO_REDIS_SERVER)

example:
	$(GO) test -count=1 -v -run TestQuickStart ./examples/quickstart/

compare:
	$(GO) run ./cmd/lockcompare $(COMPARE_FLAGS)

compare-cluster:
	bash scripts/compare-cluster.sh $(COMPARE_FLAGS)

compare-peers:
	cd peers && $(GO) run ./cmd/comparepeers -html $(COMPARE_PEERS_HTML) $(COMPARE_FLAGS)

test-peers:
	cd peers && $(GO) vet ./... && $(GO) test -race -count=1 -parallel 4 -timeout 15m ./...

chaos:
	CHAOS_SECONDS=$(CHAOS_SECONDS) $(GO) test -race -count=1 -v -timeout 30m -run '^TestChaos$$' ./internal/chaos/

# The run's exit status is kept and returned after the page is written: a
# run with problems still gets its page, which lists them.
docs-report:
	$(GO) run ./cmd/lockcompare -json $(DOCS_REPORT_JSON) $(COMPARE_FLAGS); status=$$?; \
	$(GO) run ./cmd/lockcompare report -in $(DOCS_REPORT_JSON) -out docs/report.md -readme README.md \
		-command 'make docs-report COMPARE_FLAGS="$(COMPARE_FLAGS)"' -commit "$(DOCS_COMMIT)" || exit $$?; \
	rm -f $(DOCS_REPORT_JSON); exit $$status

docs-report-peers:
	cd peers && $(GO) run ./cmd/comparepeers -json $(DOCS_REPORT_JSON) $(COMPARE_FLAGS); status=$$?; \
	cd $(CURDIR) && $(GO) run ./cmd/lockcompare report -in $(DOCS_REPORT_JSON) -out docs/peers-report.md \
		-command 'make docs-report-peers COMPARE_FLAGS="$(COMPARE_FLAGS)"' -commit "$(DOCS_COMMIT)" || exit $$?; \
	rm -f $(DOCS_REPORT_JSON); exit $$status
