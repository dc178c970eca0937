package breach

import "fmt"

// Kind is one way a limiter can break its contract with its callers.
type Kind uint8

// The kinds. A judge names only the kinds it can show (see the package
// doc); each kind means the same whichever judge names it.
const (
	// OverAdmission: admits of one key broke the limiter's promise. The
	// hunt checks every admit at its decision time; the judge of records only
	// the admits certainly decided within a span the promise allows fewer
	// in.
	OverAdmission Kind = iota + 1
	// HonestTurnedAway: a request was refused where one more admit, after
	// the instance's admits before it, would have kept the promise (the
	// judge of records: after every admit of the key that may have been
	// decided before it).
	HonestTurnedAway
	// RetryDenied: a request sent after the wait a denial's Retry-After
	// named, with nothing else of the key decided between them, was denied
	// too.
	RetryDenied
	// RetryExtended: a retry that came before the wait its denial named
	// was over, nothing else of the key between them, was denied and told
	// a later deadline than the one it came early for.
	RetryExtended
	// OffReference: in some aligned window the limiter admitted more or
	// fewer than a named reference algorithm did on the same requests.
	OffReference
	// BadAnswer: an answer no limiter under the limit may give, whatever
	// its algorithm (algos.AnswerBounds): a negative Remaining, Retry-After
	// or Reset, a Retry-After on an admit, a Remaining or a wait beyond any
	// limit of its size; or a panic.
	BadAnswer
	// RemainingTooHigh: an answer's Remaining said more requests would be
	// admitted than the promise allows after the key's admits before it.
	RemainingTooHigh
	// ResetTooShort: an answer's Reset named a time before which the
	// promise, after the key's admits, cannot give a whole burst: a client
	// that comes back at its Reset for a fresh burst is refused (the live
	// judge sees that refusal), or the limiter admits it by breaking its
	// promise.
	ResetTooShort
	// KeysShareState: a key's answers changed when other keys moved onto
	// keys that fall together in common tables: the limiter folds keys
	// into shared state.
	KeysShareState
	// ReadsNodeClock: a limiter that claims the store's clock answered
	// otherwise when the nodes' clocks were set apart: it decides by a
	// time a node sends.
	ReadsNodeClock
	// MalformedAnswer: a rate-limit header was present but unreadable.
	MalformedAnswer
	// ResetBeforeRetryAfter: an answer's Reset was shorter than its own
	// Retry-After by more than any rounding of honest waits explains.
	ResetBeforeRetryAfter
	// ResetPastIdle: an answer's Reset was later than any key of the
	// promise needs to become idle, left alone (algos.Promise.LongestIdle),
	// by more than the clocks' spread or a header's rounding explains: a
	// client told to come back then for a fresh burst waits for nothing.
	ResetPastIdle
	// NumKinds is one more than the last kind: an array indexed by Kind
	// has NumKinds elements, the zero Kind's unused.
	NumKinds
)

var names = [NumKinds]string{"", "over-admission", "honest turned away", "retry denied", "retry extended", "off reference",
	"bad answer", "remaining too high", "reset too short", "keys share state", "reads node clock",
	"malformed answer", "reset before retry-after", "reset past idle"}

// String is the kind in the words every report prints.
func (k Kind) String() string {
	if k > 0 && k < NumKinds {
		return names[k]
	}
	return fmt.Sprintf("breach.Kind(%d)", uint8(k))
}
