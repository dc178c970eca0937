// Package httpcheck checks, over real HTTP and in real time, that a
// rate-limited endpoint keeps the header contract of package httplimit: the
// check a user points at their own handler (CheckHandler) or base URL
// (Check, Assert) from a Go test.
//
// It drives one key past its limit with a burst of requests sent back to
// back, one after another (to the base URL and Options.Nodes in turn, as a
// round-robin balancer would, with Options.Body when given), and carries
// the burst on until it ends on a 429; then it waits that last 429's
// Retry-After, from the moment the response arrived, and sends one more.
// (The last, not the first: the promise of a Retry-After is for a client
// that sends nothing meanwhile.) The requests are package live's: its
// driver sends them (a closed-loop client of the check's own on live's
// HTTP target) and live.Parse reads every answer, so the check reads the
// header conventions as every judge of this module does: X-RateLimit-*,
// and in their absence the IETF RateLimit, RateLimit-Policy and
// RateLimit-* fields, a Reset in seconds, milliseconds (Options.Reset) or
// Unix seconds, Retry-After in seconds or as an HTTP-date. Each Exchange
// carries its record.Record. Then it judges every exchange against the
// rules below and reports each breach with the request and response that
// showed it, and judges the same records with judge.Records (Report.Live).
//
// # The rules
//
//   - status: every response is 2xx (admitted) or 429 (refused).
//   - headers: every 2xx and 429 carries the Limit, the Remaining and the
//     Reset (X-RateLimit-Limit, -Remaining and -Reset, or the IETF fields),
//     each a non-negative number, and the same Limit throughout
//     (Options.Limit when set), and every rate-limit header can be read.
//   - retry-after: every 429 carries Retry-After in whole seconds, at least
//     1, or as an HTTP-date at least 1 s after the response's Date.
//   - remaining-bounds: 0 ≤ Remaining ≤ Limit, and a 429 says Remaining 0.
//   - remaining-rises: Remaining rises between two responses only by what
//     Limit per Window refills in the time between them, unless the first
//     one's Reset may have come.
//   - reset-consistent: a 429's Retry-After is at most its Reset (the
//     true waits behind them, whatever their rounding), and a response with
//     Remaining below Limit does not say the key is idle already (a Reset
//     whose true wait is 0).
//   - limit-enforced: the burst meets a 429, and no more of it is admitted
//     than Limit, plus what the rate refills during it, plus what the
//     responses showed coming back at a reset; and, whatever Reset says, no
//     more than Limit·(⌊span/Window⌋+2) within a span: a count starts over
//     at most once a Window. The first bound catches a limiter one admit
//     over; the second one that a whole-second Reset under a short Window
//     would excuse (nodes behind a balancer that each admit a limit).
//   - retry-honoured: the request sent Retry-After after the burst's last
//     429 is admitted, and that Retry-After is at most Options.MaxWait.
//
// # Why a correct limiter cannot fail it
//
// Every timed rule measures from the first request's sending to the second
// response's arrival, an interval that contains the one between the two
// decisions however slow the network or the machine: delay only ever
// widens an allowance.
//
// Waits are rounded up, and judge.TrueWait says by how much: a Reset
// stated as a delay of R in whole seconds (X-RateLimit-Reset, the IETF
// reset) is idle more than R−1 s after it was decided, one in milliseconds
// more than R−1 ms, and one stated as an instant (Unix seconds, read
// against the response's Date) more than R−2 s. remaining-rises excuses
// any rise once that much has passed since the earlier request was sent.
// That is when the reset may have come, not when it certainly came, and it
// is what keeps a correct fixed window legal at its boundary: there
// Remaining leaps from 0 to Limit−1 within a millisecond, far more than
// the rate refills, and the window's end, which the earlier Reset counted
// down to, lies between the two decisions, so the elapsed time exceeds it.
// The rule is conservative in the other direction too: it ignores the
// request the later response spent.
//
// limit-enforced, for the same boundary, credits the burst with every rise
// seen where a reset may have come, rather than assuming none: a fixed
// window's admits are exactly Limit − the last Remaining + what those
// rises gave back, and a bucket's fit in Limit plus the refill. It holds
// every prefix of the burst to the bound, and counts only a burst whose
// every response carries Remaining and Reset.
//
// Retry-After is rounded up too, so a retry sent that long after the
// refusal arrived is decided at least that long after the refusal was. A
// Retry-After of 2 s beside a Reset of 1 s is certain (the true wait is
// more than 1 s, the key idle within 1 s); an instant is allowed the
// second its Date is truncated to.
//
// The price of never flagging a correct limiter is looseness: a Reset of 1
// excuses any rise after it. And a limiter whose Remaining comes back in
// steps away from its Reset (a sliding log, whose entries admitted in a
// burst expire in a bunch) would be flagged by remaining-rises if the
// check saw such a step between two close responses; it does not while the
// burst is shorter than the Window, as it is at any Window of a second or
// more on a machine that answers in milliseconds.
//
// # The live judge
//
// Report.Live is judge.Records of the same records against Limit per Window
// as aligned windows, the promise the contract's own bound is (at most
// 2·Limit within any span shorter than a Window, which a bucket of burst
// Limit refilling Limit per Window keeps too). It adds what the contract
// has no rule for, each sound as the contract's rules are: a Reset later
// than any key of that promise needs to become idle, requests sent at a
// Reset that are denied, a retry denied after its wait, an unreadable
// header, an over-admission. Report.OK is false when it caught anything;
// Broken lists the contract's rules only.
//
// # What it owns
//
// The contract's check: its options, its rules, its report. It speaks
// only HTTP and judges what came back over it: it imports live (the
// driver, the parser and the judge of every live run) and record (what
// live records of an exchange), and algos for the Limit and the promise
// judge.Records reads, never an algorithm. It must not import httplimit, the
// limiters or the simulator, whose limiters it would then be judging by
// their own code; its header names are live's, tested equal to
// httplimit's.
package httpcheck
