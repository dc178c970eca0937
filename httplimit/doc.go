// Package httplimit is overshoot's reference net/http middleware: any
// limiter that decides a request for a string key (Limiter) put in front of
// a handler, answering with the header contract that package httpcheck
// checks.
//
// Every response carries X-RateLimit-Limit (the most requests a fresh key
// is admitted at once), X-RateLimit-Remaining (how many more would be
// admitted now) and X-RateLimit-Reset (whole seconds, rounded up, until the
// key is back to its idle state). A denial is 429 Too Many Requests with
// Retry-After in whole seconds, rounded up and never below 1, so that a
// client that waits exactly that long is admitted.
//
// When the limiter fails (the store unreachable or slower than
// Options.Timeout) the Policy decides: FailClosed answers 503 with
// Retry-After 1, FailOpen serves the request. Either way the response says
// so in X-RateLimit-Degraded, carries no Remaining or Reset it cannot know,
// and a counter in Stats goes up: a limiter that fails open without a
// signal is an unlimited API that looks healthy. Script, after a call the
// store did not answer, pings it in the background with a budget of its
// own, so that a store that comes back slow is reached again (see Script).
//
// # Metrics
//
// The same counts are Prometheus metrics, for the registry the caller
// serves: Middleware.Register (or Collector) adds
// httplimit_decisions_total{result="admitted"|"denied"|"fail_open"|"fail_closed"},
// a counter read from the counters behind Stats at each scrape, and
// httplimit_decision_seconds{result=...}, a histogram of each limiter
// call's duration with buckets from 100 µs to 1 s. Nothing is registered
// with the default registry. The alert an operator wants on a FailOpen
// middleware is rate(httplimit_decisions_total{result="fail_open"}[1m])
// > 0; the blackhole drill (package drills) scrapes it over HTTP while the
// store is blackholed and after.
//
// # What it owns
//
// The middleware, its keying functions and three Limiters: Script (one of
// overshoot's Lua scripts on a shared Redis, deciding by the store's
// clock), Local (any limiter.Spec held in this process: a per-instance
// limiter) and GetThenIncr (the racy fixed window, kept to measure its
// excess), and their metrics (metrics.go). It imports algos, redis/lua and
// limiter, and github.com/prometheus/client_golang/prometheus for the
// metrics (not promhttp: serving them is the caller's); nothing of the
// simulator.
package httplimit
