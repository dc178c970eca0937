// Package drift is the config-drift gate: the limit an API's public
// documentation states, the limit its code configures and the limit a live
// run measures must be the same three numbers, and Gate fails, with a
// table of all three per operation, when they are not.
//
//   - Documented reads an OpenAPI 3 description (loaded and validated by
//     kin-openapi) and, per operation, its x-ratelimit extension
//     ({limit, window, burst}, or the flat x-ratelimit-limit,
//     x-ratelimit-window and x-ratelimit-burst) or the example of its
//     responses' RateLimit-Policy header ("100;w=60", or
//     "name";q=100;w=60). A malformed description or limit is an error
//     naming its file, line and JSON pointer (LocationError).
//   - Configured reads the routes a service is built from (Route: an
//     operation, a limiter.Spec, an algos.Limit), the same list Handler
//     serves behind the reference middleware, httplimit.
//   - Measure probes each operation of a running service over HTTP under a
//     fresh key, one request at a time until the first 429, recording
//     every request as live does (record.Record, live.Parse): the admits
//     before the denial are the burst it enforces.
//   - Gate compares them within a stated Tolerance; the measured burst is
//     judged with the refill its recorded span allows
//     (Measurement.Allowance), so a loaded machine can hide a small drift
//     but never invent one.
//
// # What it owns, and what it must not import
//
// The three readings, the comparison and its table. It imports algos,
// limiter, httplimit (QuotaOf, and the middleware Handler serves), live
// (its header parsing) and record (the record of each request) of this
// module, and
// github.com/getkin/kin-openapi/openapi3; nothing of the simulator, and
// no Redis: a service on a shared store is measured over HTTP like any
// other.
package drift
