# overshoot: every claim is a go test. See README.md.
SHELL := /bin/bash
GO ?= go
# Tests reach Docker on loopback only. Ryuk (testcontainers' reaper) is left to
# internal/redistest: on unless TESTCONTAINERS_RYUK_DISABLED is set or its image
# can be neither found nor pulled; the tests remove their own containers either way.
export TESTCONTAINERS_HOST_OVERRIDE ?= 127.0.0.1
REDIS_IMAGE ?= overshoot/redis:7-local
ACTIONLINT ?= github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

.PHONY: all test test-race table golden mutants redis redis-image redis-bench study load clock-faults drills plan bench libraries lint badges clean-containers ceiling-gate

all: lint test

## test: the whole suite with the race detector, including the Redis tests
## (set OVERSHOOT_REDIS or have Docker; OVERSHOOT_REQUIRE_REDIS=1 forbids skipping them).
## A preflight first checks, in seconds, that a Redis is there (with OVERSHOOT_REQUIRE_REDIS=1 its
## absence fails the run at once), and builds the local image (overshoot/redis:7-local, from
## Debian's redis-server and libfaketime) when it is missing: the clock tests need it everywhere.
## Packages run side by side, as in `go test ./...`: each binary shares one Redis container, the
## live tests judge from the times they recorded, and the few whose claim rests on real time
## (a sustained rate, a deadline, a timing plan) take redistest.LockTiming, so no two of them
## ever run at once.
## The root package's simulated claims (ROOT_SIMULATIONS: the table, the sweeps, the hunts, the
## libraries) run once more without -race instead: each run is one goroutine of the model, and
## the harness that runs them in parallel is raced in package scenarios; under -race they alone
## took over six minutes of CI. So do the other packages' simulations (SIMULATIONS, by exact
## name, so that a test not named there is raced): golang.org/x/time/rate's contract and hunt
## and its fields replayed against the library (two minutes of a loaded CI under -race, 11 s
## without; the fields 5 s more); redis_rate's checks that run the
## library on simredis (one goroutine a run, or a live fleet whose twin replays on simredis;
## simredis's own concurrency is raced in package simredis, the live fleet's in package replay:
## 225 s under -race, 15 s without); adapters/redislib's example script under the properties
## (84 s and 3 s); the rapid properties of whole limiters (package properties: 60 s of a loaded
## run under -race; its Fails and parallel checks stay raced), the judge's one-pass readings
## against its sorted ones and the shards' merge against the whole run (scenarios: it plays every
## run once whole and six times in shards: 2 s under -race alone on two cores, 0.2 s without;
## the shards' refusals stay raced), the reports' and runs' bytes at every worker count and
## GOMAXPROCS (scenarios, model: 29 s of the race run; their sharing stays raced, in
## TestTablesInParallelTestsAgree and TestConcurrentRunsShareOneRequestsSlice), the small
## matrix's cells (scenarios' TestCells: 5 s under -race idle, 13.5 s loaded, 0.1 s without; the
## same worker pipeline stays raced in TestTablesInParallelTestsAgree), the judge's
## verdicts on a user's algorithm, on bad answers and against a named reference (scenarios: one
## goroutine a run, 16 s under -race), the Lua pattern matcher and format fast path against
## gopher-lua's (simredis), the adversary's searches (its determinism test stays raced), the
## planted sliding counter's contract, the key-truncating Lua library's hunt and property on
## simredis (internal/planted: 237 s under -race, 3 s without), and the fast checkers against
## brute force on every small admit set (algos): one goroutine each, 80 s of the race run between
## them. So do algos' envelope against its checker and the checker's linear time, the model's
## deployments against their promises, its clock faults and RunInto against Run (their sharing
## stays raced in TestConcurrentRunsShareOneRequestsSlice), and the differential's limiter
## against itself and RunAgainst against Run: one goroutine each, 33 s of a loaded race run.
## One live drill is here too, for another reason: the blackhole drill's latencies and
## recovery (drills) are the Redis client's own, and the race detector slows that client where no
## stall meter sees it (3 of 15 raced runs on a loaded machine failed them, none of 40 without;
## the middleware and its client are raced in the drills' other tests). The model's
## allocation count runs without -race too, as the only place it means something: under -race
## sync.Pool drops a quarter of what it is given, on purpose.
## Every other test, the root's live ones included, runs with -race.
## gotestsum prints what `go test` prints and keeps the run's JSON record in $(TEST_JSON),
## from which `make badges` makes the findings' badges: the same run, not a second one.
TEST_JSON ?= .test-results/go-test.json
## The test binaries are linked without DWARF (-ldflags=-w): no test reads it (panics and the race
## detector's reports name functions and lines from the symbol table, which stays), and it makes
## each of the run's ~50 links about a fifth cheaper (a raced testcontainers binary: 3.2 CPU-s
## linked with DWARF, 2.6 without).
TEST_LDFLAGS ?= -ldflags=-w
## TEST_P is go test's -p (how many test binaries run at once, and links beside them); empty
## leaves go's default, the number of cores.
TEST_P ?=
MODULE := github.com/overshoot-go/overshoot
ROOT_SIMULATIONS := ^(TestGolden|TestFinding|TestMutants|TestKeyTTL|TestMyLimiter|TestMyLibrary|TestMyTrace)
SIMULATIONS := ^($\
TestKeepsTheContract|TestHuntBehindAStoreIsClean|TestFieldsAreExact|$\
TestAgainstGCRA|TestFieldsAgainstTheLibrary|TestPropertiesItBreaks|TestHuntBehindAStore|TestLiveFleetMatchesItsTwin|TestBreaksNearTheFloatStep|$\
TestAScriptOfYoursIsJudgedInSimulatedTime|ExampleSpec|$\
TestSixKeepTheContract|TestFirstHitWindowKeepsTheContract|TestOwnPromiseIsJudgedLikeTheBuiltIns|TestDoubleRefillIsTheWeaknessOfTheOtherThree|$\
TestKeyExpiringAtHalfItsIdleTimeIsCaught|TestMisbehavingPast64CallsIsCaught|TestStepBackRemainingDropIsNotUniversal|TestKeyTTLExactlyToIdleKeepsTheContract|TestPerKeyLimiterKeepsTheContract|TestStoreClockLimiterKeepsTheContract|$\
TestHonestyInOrderIsHonesty|TestRetriesInOrderIsRetries|TestStoreClockClaimIsCheckedWithNodeClocksApart|$\
TestStoreClockPathCaughtWhenScriptKeepsWholeSeconds|TestScriptsAgreeWithTheirTwinsOnBothPaths|TestPlantedNegativeRefillScriptMatchesItsTwin|$\
TestSimredisPatternsAsGopherLua|TestSimredisFastFormat|TestShardsMergeIntoTheWholeRun|TestReportsDoNotDependOnWorkers|TestSameSeedSameBytes|TestCells|$\
TestUserAlgorithm|TestBadAnswersAreBreachesNotAborts|TestCorrectAlgorithmsNeverResetPastIdle|TestTheTwoJudgesAgreeOnTheHuntsRuns|TestResetPastIdleIsCaughtWhereThePromiseIsKnown|TestOverAgainstTheNamedReferenceShowsABuiltInDefect|$\
TestSearchFindsTheAttacks|TestGoldenAttacks|TestSearchFindsNoneWhereThePromiseHolds|$\
TestSlidingCounterWrongWeightKeepsTheContract|$\
TestFindingBlackholedStoreCostsOnlyTheTimeout|$\
TestFastCheckersAgreeWithBruteForceOnEverySmallAdmitSet|$\
TestKeysTruncatedIsCaughtByTheHunt|TestKeysTruncatedBreaksKeysIsolated|$\
TestEnvelopeAgreesWithCheck|TestCheckIsLinear|$\
TestStoreClockIgnoresNodeClockFaults|TestRunIntoIsRun|TestCorrectDeploymentsKeepPromises|TestOneNodeWithoutLatencyIsIdeal|$\
TestRunAgainstIsRunWithMinesRunGiven|TestLimiterAgainstItself|TestDeterministic|$\
TestJudgeIsSoundAgainstTheTrueTimes|TestHonestRuleIsSoundAgainstTheTrueTimes|TestWaitRulesOnSimulatedRecords|$\
TestNoAllocationPerRequest)$$
SIMULATION_PACKAGES := ./redis/lua ./adapters/xtimerate ./adapters/redisrate ./adapters/redislib ./properties ./scenarios ./simredis ./adversary ./internal/planted ./algos ./model ./drills ./differential ./judge

test:
	@.ci/redis-preflight.sh || [ "$(OVERSHOOT_REQUIRE_REDIS)" != 1 ]
	@mkdir -p $(dir $(TEST_JSON))
	@status=0; parts=; \
	run() { part=$$1; shift; parts="$$parts $$part"; \
		$(GO) tool gotestsum --format standard-quiet --jsonfile $(TEST_JSON).$$part -- -count=1 $(TEST_LDFLAGS) $(if $(TEST_P),-p $(TEST_P)) "$$@" || status=1; }; \
	run race -race -skip '$(SIMULATIONS)' $$($(GO) list ./... | grep -v -e '^$(MODULE)$$'); \
	run sim -run '$(SIMULATIONS)' $(SIMULATION_PACKAGES); \
	run root-race -race -skip '$(ROOT_SIMULATIONS)' .; \
	run root-sim -run '$(ROOT_SIMULATIONS)' .; \
	for p in $$parts; do cat $(TEST_JSON).$$p; done > $(TEST_JSON); \
	for p in $$parts; do rm -f $(TEST_JSON).$$p; done; \
	exit $$status

## table: the main job: recompute the deployment matrix, the planted-bug table and the skew
## sweep, print what this run computed, and fail (with the diff) when a test fails or any of
## them differs from golden/ (`make golden` accepts a change).
TABLE_TESTS := ^(TestGoldenTable|TestMutantsCaughtAndCorrectDeploymentsClean|TestGoldenSkew)$$
## FORMAT=json prints the same run's JSON reports instead of its text tables.
TABLE_FILES = $(if $(filter json,$(FORMAT)),table.json mutants.json,table.txt mutants.txt skew.txt)
table:
	@out=$$(mktemp -d); trap 'rm -rf "$$out"' EXIT; \
	$(GO) test -count=1 -run '$(TABLE_TESTS)' . -args -golden.out="$$out" >"$$out/go-test.log" 2>&1; status=$$?; \
	for f in $(TABLE_FILES); do \
		if [ -f "$$out/$$f" ]; then echo "== $$f (computed by this run)"; cat "$$out/$$f"; echo; \
		else echo "make table: this run did not compute $$f"; status=1; fi; \
	done; \
	if [ $$status -ne 0 ]; then cat "$$out/go-test.log"; echo "make table: FAILED (go test's output above says why; \`make golden\` accepts an intended change)"; exit 1; fi; \
	echo "make table: computed by this run, and identical to $(patsubst %,golden/%,$(TABLE_FILES))"

## golden: rewrite every golden file from the current code (written only when the bytes change),
## in the test packages that import internal/golden (the others do not take -update).
GOLDEN_PACKAGES = $(shell $(GO) list -f '{{.ImportPath}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}' ./... | \
	awk '{for (i = 2; i <= NF; i++) if ($$i ~ /\/internal\/golden$$/) {print $$1; break}}')
golden:
	$(GO) test -count=1 $(GOLDEN_PACKAGES) -update

## ceiling-gate: the live ceiling's judged rates, written to $(OVERSHOOT_CEILING_ARTIFACT)/ceiling.json
## and compared with the one an earlier run left there (±5%, naming both runs).
OVERSHOOT_CEILING_ARTIFACT ?= .ceiling
OVERSHOOT_CEILING_RUN ?= local
ceiling-gate:
	mkdir -p $(OVERSHOOT_CEILING_ARTIFACT)
	OVERSHOOT_REQUIRE_REDIS=1 OVERSHOOT_CEILING_ARTIFACT=$(abspath $(OVERSHOOT_CEILING_ARTIFACT)) \
	OVERSHOOT_CEILING_RUN=$(OVERSHOOT_CEILING_RUN) $(GO) test ./ceiling/ -run 'TestFindingAcceptedRateAcrossNodes$$' -count=1 -v

## mutants: planted bugs must be caught and correct deployments stay clean, on 200 seeds.
mutants:
	$(GO) test -count=1 -run 'TestMutants|TestPlanted' -v .

## redis-image: build (again) the local Redis 7 image from Debian's packages; `make test` builds it when missing.
redis-image:
	.ci/redis-image.sh $(REDIS_IMAGE)

## redis: the claims about Redis: the Lua differential (20,000 calls each), the race, and every
## live replay case, with the report.
redis:
	$(GO) test -count=1 -run 'TestLua|TestAtomicity|TestLive' -v . -redis.calls=20000 -redis.live=all

## redis-bench: script throughput through go-redis, and redis-benchmark EVALSHA on the same script.
redis-bench:
	$(GO) test -count=1 -run '^$$' -bench 'Lua' ./redis/lua/
	@test -n "$$OVERSHOOT_REDIS" || { echo "set OVERSHOOT_REDIS=host:port for the redis-benchmark half"; exit 1; }
	redis/lua/bench.sh "$$OVERSHOOT_REDIS"

## study: the concurrency study against a real Redis, full sweep, live numbers printed.
study:
	$(GO) test -count=1 -timeout 30m -v ./study/ -study.full

## load: the accepted-rate table in full (one key through N = 1, 3, 5 real HTTP nodes: a shared
## Lua token bucket, per-instance buckets and GET-then-INCR, 100/s, offered 600/s for 60 s each),
## the stampede of 50 against a limit of 10, and the path's ceiling beside redis-benchmark.
load:
	$(GO) test -count=1 -timeout 30m -v -run 'TestFindingAcceptedRateAcrossNodes|TestFindingStampede|TestPathCeiling' ./ceiling/ -ceiling.full

## plan: the capacity-planning reports (golden/planning-*.txt) as this run computes them: the
## boundary trace, Zipf tenants, the sliding counter's error sign, the gateway fleet's sync
## interval, and the limit sweep; it fails, with go test's output, when a claim or a file differs.
PLAN_FILES := planning-boundary.txt planning-zipf.txt planning-sign.txt planning-sync.txt planning-sweep.txt planning-comparison.txt
PLAN_TESTS := ^(TestFindingBoundaryTraceDoublesTheFixedWindow|TestFindingZipfStarvesTheLargestTenant|TestFindingSlidingCounterErrorChangesSign|TestFindingCachedCounterOvershootGrowsWithTheSyncInterval|TestGoldenPlanningSweep|TestGoldenPlanningComparison)$$
plan:
	@out=$$(mktemp -d); trap 'rm -rf "$$out"' EXIT; \
	$(GO) test -count=1 -run '$(PLAN_TESTS)' . -args -golden.out="$$out" >"$$out/go-test.log" 2>&1; status=$$?; \
	for f in $(PLAN_FILES); do \
		if [ -f "$$out/$$f" ]; then echo "== $$f (computed by this run)"; cat "$$out/$$f"; echo; \
		else echo "make plan: this run did not compute $$f"; status=1; fi; \
	done; \
	if [ $$status -ne 0 ]; then cat "$$out/go-test.log"; echo "make plan: FAILED (go test's output above says why)"; exit 1; fi; \
	echo "make plan: computed by this run, and identical to golden/"

## clock-faults: the simulated clock faults (nodes' clocks and the store's stepping and drifting,
## on the model; no Docker): their three findings, and golden/clock-faults.txt computed by this run
## and checked against golden/, printed.
CLOCK_FAULT_TESTS := ^(TestGoldenClockFaults|TestFindingStoreClockIgnoresNodeClockFaults|TestFindingStoreClockStepLocksOutOrHandsOutABurst|TestFindingNodeClockStepBreaksTheTokenBucket)$$
clock-faults:
	@out=$$(mktemp -d); trap 'rm -rf "$$out"' EXIT; \
	$(GO) test -count=1 -v -run '$(CLOCK_FAULT_TESTS)' . -args -golden.out="$$out" || exit 1; \
	echo "== clock-faults.txt (computed by this run, identical to golden/)"; cat "$$out/clock-faults.txt"

## drills: the live failure drills in full (eviction, cluster, failover with a cut replication
## stream, blackhole, a real store's clock stepped; they need Docker), their longer versions, with
## everything they measured printed. The simulated clock faults are `make clock-faults`.
drills:
	$(GO) test -count=1 -timeout 20m -v ./drills/ -drills.full

## libraries: redis_rate, a real Redis-backed library run unchanged on simredis, through the checks at
## the built-ins' sizes: the default hunt (200 seeds), the default matrix (seeds 1-10) and every
## property at its default number of cases (about 4.5 million script calls, 11 minutes on a 2-core machine).
libraries:
	$(GO) test -count=1 -timeout 30m -v -run 'TestDefault' ./adapters/redisrate/ -redisrate.defaults

## bench: the decision and simulator benchmarks (sim-req/s/core), and the judged hunt of the
## mutants set (judged-req/s/core, s/hunt).
bench:
	$(GO) test -count=1 -run '^$$' -bench 'Decide|Simulate|MutantsHunt' -benchmem ./algos/ ./model/ .
	$(GO) test -count=1 -run '^$$' -bench 'ScriptCall' -cpu 1 ./simredis/

## lint: gofmt, go vet, and actionlint on the GitHub workflow.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt wants: $$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(ACTIONLINT) .github/workflows/ci.yml

## badges: one shields.io endpoint badge per TestFinding, from the JSON record of the last
## `make test` (a broken finding is a red badge with its number; one the record shows did not
## run, red "not run: <why>"). With BADGES_NOT_RUN=<step> (.ci/run sets it when a step before
## the tests failed) no record is read: every finding's badge is red, "not run: <step>".
## TEST_JSON=<file> reads another record: make merge's, or CI's (make test's with make merge's
## after it: where two verdicts on a finding are read, the later is kept). BADGES_DIR is where they
## are written.
BADGES_DIR ?= badges
badges:
	$(GO) run ./cmd/badges -json $(TEST_JSON) -dir $(BADGES_DIR)$(if $(BADGES_NOT_RUN), -not-run '$(BADGES_NOT_RUN)')

## report: one static HTML report of a run in $(REPORT_DIR) (open its index.html; CI keeps it as an
## artifact): the findings' verdicts and measured numbers, the matrix, the hunt with a link to each
## breach's trace, and the charts. The matrix, the hunt and the charts are always computed by this
## run (REPORT_TESTS and the metrics chart, their reports kept with -golden.out), never golden/'s
## files. The verdicts come from the record in REPORT_RECORD when it is set (`make test report` sets
## it to the record make test just kept, and so does .ci/run), else from running every TestFinding
## here too (about two minutes; the live ones need a Redis, as in make test). The report is then
## opened in headless Chromium (package report's browser test: skipped without Chromium unless
## OVERSHOOT_REQUIRE_BROWSER=1). It fails when a test failed, after writing the report.
.PHONY: report
REPORT_DIR ?= .report
REPORT_RECORD ?= $(if $(filter test,$(MAKECMDGOALS)),$(TEST_JSON))
REPORT_TESTS := ^(TestGoldenTable|TestMutantsCaughtAndCorrectDeploymentsClean|TestGoldenSkew|TestGoldenSweeps|TestGoldenPlanningComparison|TestFindingCachedCounterOvershootGrowsWithTheSyncInterval)$$
report:
	@out=$$(mktemp -d); trap 'rm -rf "$$out"' EXIT; status=0; \
	run() { part=$$1; shift; \
		$(GO) tool gotestsum --format standard-quiet --jsonfile "$$out/$$part.json" -- -count=1 "$$@" || status=1; }; \
	record='$(REPORT_RECORD)'; \
	if [ -n "$$record" ]; then \
		[ -s "$$record" ] || { echo "make report: no test record at $$record"; exit 1; }; \
		echo "make report: the findings' verdicts from $$record; the tables and charts computed now"; \
		run root -run '$(REPORT_TESTS)' . -args -golden.out="$$out/reports"; \
	else \
		echo "make report: running every finding, and the tables and charts"; \
		pkgs=$$($(GO) run ./cmd/report -packages) || exit 1; pkgs=$$(grep -vx '$(MODULE)' <<<"$$pkgs" || true); \
		run root -run '$(REPORT_TESTS)|^TestFinding' . -args -golden.out="$$out/reports"; \
		if [ -n "$$pkgs" ]; then run findings -run '^TestFinding' $$pkgs; fi; \
		record="$$out/record.json"; cat "$$out"/root.json $$([ -z "$$pkgs" ] || echo "$$out/findings.json") > "$$record"; \
	fi; \
	run charts -run '^TestReportsAreDeterministicAndMatchTestdata$$' ./metrics -args -golden.out="$$out/reports"; \
	$(GO) run ./cmd/report -record "$$record" -reports "$$out/reports" -out $(REPORT_DIR) || exit 1; \
	$(GO) test -count=1 -v -run '^TestReportRendersInABrowser$$' ./report -args -report.dir=$(abspath $(REPORT_DIR)) || exit 1; \
	if [ $$status -ne 0 ]; then echo "make report: the report is written, but a test failed (above)"; fi; \
	exit $$status

## clean-containers: remove the Redis containers a SIGKILLed or timed-out test run left behind
## (internal/redistest labels them; SIGINT and SIGTERM already remove them). Not during a run.
clean-containers:
	@ids=$$(docker ps -aq --filter label=overshoot.redistest.run); \
	if [ -n "$$ids" ]; then docker rm -f $$ids; else echo "no redistest containers"; fi

## shard, merge: the runs the root's findings share split by seed across machines: the table, the
## skew sweep, the seven curves (golden/sweep-*) and the mutants' hunt. `make shard SHARD=i/n`
## plays shard i of n of each (the seed at position j of each run goes to shard j mod n + 1; n is
## at most 3, the curves' seeds) and writes its documents (schema overshoot.shard/v2) to
## $(SHARD_DIR). `make merge` runs the root's simulated claims (ROOT_SIMULATIONS) with
## -overshoot.merge: each test reads those runs merged from every shard's documents there instead
## of computing them (the others compute theirs), so it fails, with the diff, unless the merged
## reports are golden/'s byte for byte, and each finding that reads them is measured on the merged
## runs. Its record, in $(MERGE_JSON), gives the badges (make badges TEST_JSON=$(MERGE_JSON); CI
## reads it after make test's). Neither needs Redis.
SHARD_DIR ?= .test-results/shards
MERGE_JSON ?= .test-results/merge.json
.PHONY: shard merge
shard:
	@test -n "$(SHARD)" || { echo "make shard: say which shard, SHARD=i/n (1/3, say)"; exit 2; }
	$(GO) test -count=1 -run '^TestShardRuns$$' -v . -args -overshoot.shard=$(SHARD) -overshoot.shards=$(abspath $(SHARD_DIR))
merge:
	@mkdir -p $(dir $(MERGE_JSON))
	$(GO) tool gotestsum --format testname --jsonfile $(MERGE_JSON) -- -count=1 -run '$(ROOT_SIMULATIONS)|^TestShardsMerge$$' . \
		-args -overshoot.merge -overshoot.shards=$(abspath $(SHARD_DIR))
