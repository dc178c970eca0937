package scenarios

import (
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
)

// Some promises are about what a limiter must NOT depend on: other keys
// (isolation), the nodes' clocks when it claims the store's (clockClaim).
// Such a promise is checked by playing the run again with that one thing
// changed and the same requests, and holding every client to being
// answered exactly as it was.

// answer is what isolation compares of a request: when it was sent and
// its whole answer.
type answer struct {
	send   int64
	d      algos.Decision
	failed bool
}

// playedAgain names a second run and the breach its differences are.
type playedAgain struct {
	kind   breach.Kind
	what   string // what the second run changed, for the error of a run that fails
	why    string // "when ...: ...", after "its request N was answered otherwise "
	first  string // the two runs' names in a trace
	second string
}

// answeredAlike plays again (plain, res being its run, with one thing
// changed) and gives each client whose answers differ a finding of
// p.kind at its first difference, with both runs' answers to it.
func (sc *runScratch) answeredAlike(plain model.Config, res *model.Result, again model.Config, p playedAgain, out *[traffic.NumClients]judge.Kinds) error {
	first, second := &sc.answers[0], &sc.answers[1]
	// Only the closed-loop clients' answers are listed: another client
	// sends the fixed requests alone, the same in both runs at the same
	// places, so its answers are compared in place (fixedAlike).
	var listed [traffic.NumClients]bool
	for _, lc := range append(slices.Clip(plain.Loop), again.Loop...) {
		if lc.Key >= 0 && lc.Key < traffic.NumClients {
			listed[lc.Key] = true
		}
	}
	if len(plain.Requests) != len(again.Requests) || (len(plain.Requests) > 0 && &plain.Requests[0] != &again.Requests[0]) {
		for c := range listed { // other requests: every client listed
			listed[c] = true
		}
	}
	sc.answersOf(&plain, res, first, &listed)
	// A closed-loop client stops at its first answer unlike the first
	// run's: past it the comparison reads nothing, and a limiter that
	// admits what it refused before would have it send for the rest of
	// the run (a retry-after client takes ten times the limit).
	again.Loop = slices.Clone(again.Loop)
	for i, lc := range again.Loop {
		if lc.Key < 0 || lc.Key >= traffic.NumClients {
			continue
		}
		want, newClient := first[lc.Key], lc.New
		again.Loop[i].New = func() record.Client { return &untilDifferent{Client: newClient(), want: want} }
	}
	if err := model.RunInto(again, &sc.againRes); err != nil {
		return fmt.Errorf("the run again with %s: %w", p.what, err)
	}
	width := max(utf8.RuneCountInString(p.first), utf8.RuneCountInString(p.second))
	sc.answersOf(&again, &sc.againRes, second, &listed)
	unlisted := fixedAlike(&plain, res, &sc.againRes, &listed)
	for c := range traffic.NumClients {
		a, b := first[c], second[c]
		n := 0
		if listed[c] {
			for n < min(len(a), len(b)) && a[n] == b[n] {
				n++
			}
			if n == len(a) && n == len(b) {
				continue
			}
		} else {
			d := unlisted[c]
			if d.index < 0 {
				continue
			}
			// The two lists, as answersOf would make them, up to and with
			// their first difference.
			n = d.n
			a = append(make([]answer, n, n+1), answerOf(plain.Requests[d.index].Sent, &res.Outcomes[d.index]))
			b = append(make([]answer, n, n+1), answerOf(plain.Requests[d.index].Sent, &sc.againRes.Outcomes[d.index]))
		}
		f := &judge.Evidence{Kind: p.kind, Violation: &algos.Violation{Reason: fmt.Sprintf("its request %d was answered otherwise %s", n+1, p.why)}}
		for _, side := range []struct {
			name string
			list []answer
		}{{p.first, a}, {p.second, b}} {
			if n < len(side.list) {
				x := side.list[n]
				f.Violation.From, f.Violation.To = x.send, x.send
				f.Trace = append(f.Trace, fmt.Sprintf("%-*s  sent %s  %s", width, side.name, algos.FormatTime(x.send), x.text()))
			} else {
				f.Trace = append(f.Trace, fmt.Sprintf("%-*s  no such request", width, side.name))
			}
		}
		out[c].Keep(f)
	}
	return nil
}

// answersOf lists, per client marked in listed, the client's requests in
// request order (the fixed ones, then the closed-loop ones as sent) with
// their answers, in lists of sc's memory (sc.answers).
func (sc *runScratch) answersOf(cfg *model.Config, res *model.Result, lists *[traffic.NumClients][]answer, listed *[traffic.NumClients]bool) {
	for c := range lists {
		lists[c] = lists[c][:0]
	}
	add := func(key int, send int64, o *model.Outcome) {
		if key >= 0 && key < traffic.NumClients && listed[key] {
			lists[key] = append(lists[key], answerOf(send, o))
		}
	}
	for i, q := range cfg.Requests {
		add(q.Key, q.Sent, &res.Outcomes[i])
	}
	for j, q := range res.LoopRequests {
		add(q.Key, q.Sent, &res.Outcomes[len(cfg.Requests)+j])
	}
}

// answerOf is the answer o records for a request sent at send.
func answerOf(send int64, o *model.Outcome) answer {
	return answer{send: send, d: o.Decision(), failed: o.Failed}
}

// firstDifference is where a client's answers first differ in two runs:
// the request's index in the runs (-1 for none) and how many of the
// client's requests before it were answered alike.
type firstDifference struct {
	index int
	n     int
}

// fixedAlike compares, for every client not listed, its answers in a and
// b, two runs of cfg's fixed requests (a closed-loop client's key is
// listed), and returns each one's first difference. It reads the outcomes
// in place: a client's list (answersOf) is its fixed requests alone, the
// same requests at the same places in both runs, so their answers are all
// that can differ.
func fixedAlike(cfg *model.Config, a, b *model.Result, listed *[traffic.NumClients]bool) [traffic.NumClients]firstDifference {
	var d [traffic.NumClients]firstDifference
	for c := range d {
		d[c].index = -1
	}
	open := 0 // clients not listed whose first difference is not found yet
	for c := range listed {
		if !listed[c] {
			open++
		}
	}
	for i := range cfg.Requests {
		if open == 0 {
			break
		}
		k := cfg.Requests[i].Key
		if k < 0 || k >= traffic.NumClients || listed[k] || d[k].index >= 0 {
			continue
		}
		x, y := &a.Outcomes[i], &b.Outcomes[i]
		if x.Admitted != y.Admitted || x.Remaining != y.Remaining || x.RetryAfter != y.RetryAfter || x.Reset != y.Reset || x.Failed != y.Failed {
			d[k].index = i
			open--
			continue
		}
		d[k].n++
	}
	return d
}

// text is an answer in a trace line's words.
func (a answer) text() string {
	if a.failed {
		return "error"
	}
	return judge.AnswerText(a.d)
}

// untilDifferent is a closed-loop client that sends as the one it wraps
// until an answer differs from want, the answers of the first run, in
// order, and then stops.
type untilDifferent struct {
	record.Client
	want []answer
	n    int
}

// Next stops at the first answer unlike want's, and is the wrapped
// client's Next otherwise.
func (u *untilDifferent) Next(last *record.Record) (int64, bool) {
	if last != nil {
		got := answer{send: last.Sent, d: last.Decision, failed: last.Err != nil}
		if got.failed {
			got.d = algos.Decision{}
		}
		if u.n >= len(u.want) || u.want[u.n] != got {
			return 0, false
		}
		u.n++
	}
	return u.Client.Next(last)
}
