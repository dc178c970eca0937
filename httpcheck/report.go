package httpcheck

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/record"
)

// Rule names one clause of the contract; a RuleBreach says which it broke.
type Rule string

// The rules, in the order a report lists them (see the package doc).
const (
	RuleStatus          Rule = "status"
	RuleHeaders         Rule = "headers"
	RuleRetryAfter      Rule = "retry-after"
	RuleRemainingBounds Rule = "remaining-bounds"
	RuleRemainingRises  Rule = "remaining-rises"
	RuleResetConsistent Rule = "reset-consistent"
	RuleLimitEnforced   Rule = "limit-enforced"
	RuleRetryHonoured   Rule = "retry-honoured"
)

type ruleInfo struct {
	rule Rule
	says string
}

// rules is every rule with the promise it holds a server to, in report
// order.
var rules = []ruleInfo{
	{RuleStatus, "every response is 2xx (admitted) or 429 (refused)"},
	{RuleHeaders, "every 2xx and 429 carries X-RateLimit-Limit, -Remaining and -Reset as non-negative integers, and the same Limit throughout"},
	{RuleRetryAfter, "every 429 carries Retry-After in whole seconds, at least 1 (or an HTTP-date at least 1 s after Date)"},
	{RuleRemainingBounds, "0 ≤ Remaining ≤ Limit, and a 429 says Remaining 0"},
	{RuleRemainingRises, "Remaining rises only as fast as Limit per Window refills it, or once the earlier Reset may have come"},
	{RuleResetConsistent, "a 429's Retry-After is at most its Reset, and Remaining below Limit comes with Reset at least 1"},
	{RuleLimitEnforced, "a burst past the limit meets a 429, and admits no more than Limit, the refill and the resets allow"},
	{RuleRetryHonoured, "a request sent Retry-After after a 429 arrived is admitted"},
}

// Exchange is one request and the response to it, as the check saw them.
type Exchange struct {
	// N is its place in the check, from 1.
	N int
	// The request: method, URL and the header carrying the key.
	Method, URL    string
	KeyHeader, Key string
	// Sent is when the request was sent and Received when the response's
	// headers arrived, both since the check started.
	Sent, Received time.Duration
	// Status is the response's status code.
	Status int
	// Limit, Remaining, Reset, RetryAfter and Date are the response's
	// X-RateLimit-*, Retry-After and Date headers as sent; "" when absent.
	Limit, Remaining, Reset, RetryAfter, Date string
	// Record is the exchange as live's driver recorded it, its answer read
	// by live.Parse (the IETF RateLimit fields too): what the rules read,
	// and what Report.Live judges.
	Record record.Record
}

// RuleBreach is one breach of a rule with its evidence.
type RuleBreach struct {
	// Rule is the rule broken.
	Rule Rule
	// Why says what was wrong, with the numbers that show it.
	Why string
	// Exchange is the exchange that showed it.
	Exchange Exchange
	// Previous is the earlier exchange it was compared with, for the rules
	// that compare two; nil otherwise.
	Previous *Exchange
}

// Report is what a check did and found.
type Report struct {
	// Method and URL are the request every exchange sent, to URL and, in
	// turn, to each of Nodes (Options.Nodes, with the path).
	Method, URL string
	Nodes       []string
	// Header and Key are the key's header and the key driven.
	Header, Key string
	// Limit is the limit judged against: Options.Limit, or the first one
	// advertised; 0 when neither was.
	Limit int64
	// Window is Options.Window.
	Window time.Duration
	// Start is when the check sent its first request.
	Start time.Time
	// Exchanges is every exchange in order: the burst, then the retry.
	Exchanges []Exchange
	// Burst is how many of the Exchanges are the burst, and BurstTime the
	// time from its first request sent to its last response received.
	Burst     int
	BurstTime time.Duration
	// Admitted and Denied count the burst's 2xx and 429 responses.
	Admitted, Denied int
	// Breaches is every breach found, in rule order, then exchange order.
	Breaches []RuleBreach
	// Unjudged says which rule the exchanges could not judge, and why ("":
	// every rule was judged): a burst that a machine answered so slowly
	// that a limit of Limit per Window may have admitted all of it cannot
	// show that the limit is enforced.
	Unjudged string
	// Live is the same exchanges' records judged by judge.Records, the judge
	// of every live run, against Limit per Window as aligned windows: the
	// promise the contract's own bound, Limit·(⌊span/Window⌋+2), is (at
	// most twice Limit within any span shorter than a Window; a bucket of
	// burst Limit refilling Limit per Window keeps it). It adds the live
	// rules the contract has no words for (Resets against the promise's
	// idle time and the requests that follow them, a retry denied after
	// its wait, an unreadable header), each sound as the contract's are.
	Live judge.Verdict
}

// OK reports whether the check found no breach, by the contract's rules
// or by the live judge.
func (r *Report) OK() bool { return len(r.Breaches) == 0 && len(r.Live.Breaches) == 0 }

// Broken returns the rules breached, each once, in report order.
func (r *Report) Broken() []Rule {
	var out []Rule
	for _, ru := range rules {
		for _, b := range r.Breaches {
			if b.Rule == ru.rule {
				out = append(out, ru.rule)
				break
			}
		}
	}
	return out
}

// shownPerRule is how many breaches of one rule Write shows with their
// evidence; the rest it counts and names by exchange number.
const shownPerRule = 3

// Write writes the report for a person: a summary, then each broken rule
// with its breaches and the exchanges that showed them (the first few of
// each rule in full, the rest by number).
func (r *Report) Write(w io.Writer) error {
	var b strings.Builder
	verdict := "OK, no breach"
	if len(r.Breaches) > 0 {
		names := make([]string, 0, len(rules))
		for _, ru := range r.Broken() {
			names = append(names, string(ru))
		}
		verdict = fmt.Sprintf("%d %s of %s", len(r.Breaches), plural(len(r.Breaches), "breach", "breaches"), strings.Join(names, ", "))
	}
	if len(r.Live.Breaches) > 0 {
		kinds := make([]string, 0, len(r.Live.Breaches))
		for _, br := range r.Live.Breaches {
			kinds = append(kinds, br.Kind.String())
		}
		caught := "the live judge caught " + strings.Join(kinds, ", ")
		if len(r.Breaches) == 0 {
			verdict = caught
		} else {
			verdict += "; " + caught
		}
	}
	url := r.URL
	if len(r.Nodes) > 0 {
		url += fmt.Sprintf(" and %d more %s in turn", len(r.Nodes), plural(len(r.Nodes), "node", "nodes"))
	}
	fmt.Fprintf(&b, "httpcheck: %s %s with %s: %s: %s\n", r.Method, url, r.Header, r.Key, verdict)
	limit := "no limit known"
	if r.Limit > 0 {
		limit = fmt.Sprintf("limit %d per %v", r.Limit, r.Window)
	}
	fmt.Fprintf(&b, "  %s; burst of %d in %s: %d admitted, %d refused", limit, r.Burst, dur(r.BurstTime), r.Admitted, r.Denied)
	if other := r.Burst - r.Admitted - r.Denied; other > 0 {
		fmt.Fprintf(&b, ", %d neither", other)
	}
	if len(r.Exchanges) > r.Burst {
		last, retry := r.Exchanges[r.Burst-1], r.Exchanges[r.Burst]
		fmt.Fprintf(&b, "; retried %s after #%d (Retry-After: %s): %d", dur(retry.Sent-last.Received), last.N, last.RetryAfter, retry.Status)
	} else {
		b.WriteString("; no retry")
	}
	b.WriteString("\n")
	if r.Unjudged != "" {
		fmt.Fprintf(&b, "  not judged: %s\n", r.Unjudged)
	}
	for _, ru := range rules {
		var mine []RuleBreach
		for _, br := range r.Breaches {
			if br.Rule == ru.rule {
				mine = append(mine, br)
			}
		}
		if len(mine) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s: %s\n", ru.rule, ru.says)
		shown, rest := pick(mine, shownPerRule)
		for i, br := range shown {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, br.Why)
			if br.Previous != nil {
				writeExchange(&b, *br.Previous)
			}
			writeExchange(&b, br.Exchange)
		}
		if len(rest) > 0 {
			nums := make([]string, 0, len(rest))
			for _, br := range rest[:min(len(rest), 10)] {
				nums = append(nums, fmt.Sprintf("#%d", br.Exchange.N))
			}
			if len(rest) > 10 {
				nums = append(nums, "…")
			}
			fmt.Fprintf(&b, "  … and %d more like these, at %s\n", len(rest), strings.Join(nums, ", "))
		}
	}
	if len(r.Live.Breaches) > 0 {
		fmt.Fprintf(&b, "\nlive judge (%s):\n", r.Live.Promise)
		for _, br := range r.Live.Breaches {
			fmt.Fprintf(&b, "  %s %d: %s\n     first: %s\n", br.Kind, br.Count, br.Why, br.First)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// pick chooses up to n of one rule's breaches to show in full: the first
// of each kind (the same Why but for its numbers), then the earliest, so
// that a few repeats cannot hide a different breach of the same rule. The
// rest keep their order.
func pick(bs []RuleBreach, n int) (shown, rest []RuleBreach) {
	chosen := make([]bool, len(bs))
	kinds := map[string]bool{}
	count := 0
	for i, b := range bs {
		k := strings.Map(func(r rune) rune {
			if unicode.IsDigit(r) || r == '.' {
				return -1
			}
			return r
		}, b.Why)
		if !kinds[k] && count < n {
			kinds[k], chosen[i] = true, true
			count++
		}
	}
	for i := range bs {
		if !chosen[i] && count < n {
			chosen[i] = true
			count++
		}
	}
	for i, b := range bs {
		if chosen[i] {
			shown = append(shown, b)
		} else {
			rest = append(rest, b)
		}
	}
	return shown, rest
}

func writeExchange(b *strings.Builder, e Exchange) {
	fmt.Fprintf(b, "     #%-3d +%-9s %s %s  %s: %s\n", e.N, dur(e.Sent), e.Method, e.URL, e.KeyHeader, e.Key)
	fmt.Fprintf(b, "          +%-9s %d %s  %s: %s  %s: %s  %s: %s",
		dur(e.Received), e.Status, http.StatusText(e.Status),
		HeaderLimit, shown(e.Limit), HeaderRemaining, shown(e.Remaining), HeaderReset, shown(e.Reset))
	if e.RetryAfter != "" || e.Status == http.StatusTooManyRequests {
		fmt.Fprintf(b, "  %s: %s", HeaderRetryAfter, shown(e.RetryAfter))
	}
	b.WriteString("\n")
}

// shown is a header value as a report prints it.
func shown(v string) string {
	if v == "" {
		return "(absent)"
	}
	return v
}

// dur prints a duration to the precision a report needs.
func dur(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.3fs", d.Seconds())
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
