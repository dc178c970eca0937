# overshoot: every claim is a go test. See README.md.
SHELL := /bin/bash
GO ?= go
# Tests reach Docker on loopback only, and clean up their own containers.
export TESTCONTAINERS_HOST_OVERRIDE ?= 127.0.0.1
export TESTCONTAINERS_RYUK_DISABLED ?= true
REDIS_IMAGE ?= overshoot/redis:7-local
ACTIONLINT ?= github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

.PHONY: all test test-race table golden mutants redis redis-image redis-bench study bench lint badges clean-containers

all: lint test

## test: the whole suite with the race detector, including the Redis tests
## (set OVERSHOOT_REDIS or have Docker; OVERSHOOT_REQUIRE_REDIS=1 forbids skipping them).
## One package at a time (-p 1): the study's live trials measure whether workers stay in
## lockstep over a real network delay, and on 2 cores a race-instrumented simulation running
## beside them knocks them out of step (seen in CI: 15-22 over the limit where lockstep gives 28).
test:
	$(GO) test -race -count=1 -p 1 ./...

## table: the main job: rerun the deployment matrix and the skew sweep and print them.
table:
	$(GO) test -count=1 -run 'TestGolden' -v ./scenarios/ | grep -v '^=== RUN'
	@cat golden/table.txt golden/skew.txt

## golden: rewrite every golden file from the current code (written only when the bytes change).
golden:
	$(GO) test -count=1 ./... -update

## mutants: planted bugs must be caught and correct deployments stay clean, on 200 seeds.
mutants:
	$(GO) test -count=1 -run 'TestMutants|TestPlanted' -v .

## redis-image: build the Redis 7 image from Debian's redis-server, for engines that cannot pull.
redis-image:
	.ci/redis-image.sh $(REDIS_IMAGE)

## redis: the Lua differential (20,000 calls each) and every live replay case, with the report.
redis:
	$(GO) test -count=1 -run 'TestLua|TestAtomicity|TestLive' -v . -redis.calls=20000 -redis.live=all

## redis-bench: script throughput through go-redis, and redis-benchmark EVALSHA on the same script.
redis-bench:
	$(GO) test -count=1 -run '^$$' -bench 'Lua' .
	@test -n "$$OVERSHOOT_REDIS" || { echo "set OVERSHOOT_REDIS=host:port for the redis-benchmark half"; exit 1; }
	algos/lua/bench.sh "$$OVERSHOOT_REDIS"

## study: the concurrency study against a real Redis, full sweep, live numbers printed.
study:
	$(GO) test -count=1 -timeout 30m -v ./study/ -study.full

## bench: the decision and simulator benchmarks.
bench:
	$(GO) test -count=1 -run '^$$' -bench 'Decide|Simulate' -benchmem ./algos/ ./model/

## lint: gofmt, go vet, and actionlint on the GitHub workflow.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt wants: $$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(ACTIONLINT) .github/workflows/ci.yml

## badges: one shields.io endpoint badge per TestFinding, from a JSON test run.
badges:
	set -o pipefail; $(GO) test -count=1 -json ./... | $(GO) run ./cmd/badges -dir badges

## clean-containers: remove containers a killed test run left behind (Ryuk is off).
clean-containers:
	-docker rm -f $$(docker ps -aq --filter label=org.testcontainers.lang=go) 2>/dev/null
