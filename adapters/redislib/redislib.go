package redislib

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/simredis"
)

// DefaultEpoch is the store's clock, in µs of Unix time, at the
// simulator's time 0: 2025-01-01T00:00:00Z, a realistic instant, so that a
// script's arithmetic on TIME (floats, offsets from its own epoch) runs on
// numbers of the size it meets in production.
const DefaultEpoch int64 = 1_735_689_600_000_000

// KeyPrefix starts the Redis key of every simulated key
// (limiter.KeyName): key 7 is "overshoot:7", and a key at or above 1024 is
// this prefix, its number mod 1024 and a long non-ASCII tail.
const KeyPrefix = limiter.KeyPrefix

// SimStore is a simredis.Server and a go-redis client connected to it in
// process, for one limiter: the client has one connection, made before Open
// returns, and never retries (a script is never sent twice).
type SimStore struct {
	Server *simredis.Server
	Client *redis.Client
	// Epoch is the store's clock, in µs of Unix time, at now = 0.
	Epoch int64
}

// Open starts a SimStore whose clock reads epoch at now = 0 (DefaultEpoch
// when epoch is 0; at least 0, the Unix epoch, since the store has no
// clock before it).
func Open(epoch int64) (*SimStore, error) {
	if epoch == 0 {
		epoch = DefaultEpoch
	}
	if epoch < 0 || epoch > simredis.MaxClock {
		return nil, fmt.Errorf("redislib: epoch %d µs is not within 0 and simredis.MaxClock", epoch)
	}
	srv, err := simredis.Start()
	if err != nil {
		return nil, fmt.Errorf("redislib: %w", err)
	}
	rdb := redis.NewClient(&redis.Options{
		Dialer:          srv.Dial, // in process, no TCP
		PoolSize:        1,
		MaxIdleConns:    1,
		MaxRetries:      -1,
		DialerRetries:   1,
		DisableIdentity: true,
	})
	// Connected before the first request, so that no call dials.
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		_ = rdb.Close()
		srv.Close()
		return nil, fmt.Errorf("redislib: %w", err)
	}
	return &SimStore{Server: srv, Client: rdb, Epoch: epoch}, nil
}

// At sets the store's clock to Epoch + now: TIME answers it, and keys
// expire by it. now never goes back (simredis.ErrClockBackwards), and a now
// before -Epoch or past the store's last clock is an error.
func (s *SimStore) At(now int64) error {
	if now < -s.Epoch || now > simredis.MaxClock-s.Epoch {
		return fmt.Errorf("redislib: %s is outside the store's clock (epoch %d µs)", algos.FormatTime(now), s.Epoch)
	}
	if err := s.Server.SetClock(s.Epoch + now); err != nil {
		return fmt.Errorf("redislib: at %s: %w", algos.FormatTime(now), err)
	}
	return nil
}

// Close closes the client, then the server.
func (s *SimStore) Close() error {
	err := s.Client.Close()
	s.Server.Close()
	return err
}

// AllowFunc asks a library about one key (its Redis key,
// limiter.KeyName of the key's number: "overshoot:7", or for a key at or
// above 1024 a name of over 256 bytes, mostly non-ASCII, built to collide
// with its neighbours' names in a truncated, sanitized or slot-hashed
// store) at the store's current clock, and maps its answer to an
// algos.Decision. An error is an error, never a denial.
//
// It is an alias of the plain function type, so that a package that may
// not import this one (internal/planted) can still write a Library's New.
type AllowFunc = func(ctx context.Context, key string) (algos.Decision, error)

// Library is a go-redis-based limiter as Spec takes it.
type Library struct {
	// Name labels it in reports.
	Name string
	// Promise is what it guarantees under a limit, on one node with a
	// true clock (e.g. algos.BucketPromise for a GCRA or token bucket).
	Promise func(l algos.Limit) algos.Promise
	// ExactRetry and Conservative are as in limiter.Spec.
	ExactRetry   bool
	Conservative bool
	// Epoch is the store's clock at now = 0 (DefaultEpoch when 0).
	Epoch int64
	// New builds the library on rdb (a fresh store, every key absent) to
	// enforce l, and returns how to ask it.
	New func(rdb *redis.Client, l algos.Limit) (AllowFunc, error)
}

// Spec is lib as a limiter.Spec reading the store's clock: each limiter
// it makes opens a SimStore of its own (its Limiter implements io.Closer,
// closing it), builds the library on its client, and answers each call by
// setting the store's clock to Epoch + now and asking the library about
// limiter.KeyName(key), so that the isolation checks' keys (scenarios'
// collidingKey, properties.KeysIsolated) reach it as names that collide in
// the common ways. A limit that does not validate, a negative key, a clock
// that cannot be set and the library's own errors are errors, each naming
// lib.Name.
func Spec(lib Library) limiter.Spec {
	return limiter.Spec{
		Name:         lib.Name,
		Clock:        limiter.StoreClock,
		Promise:      lib.Promise,
		ExactRetry:   lib.ExactRetry,
		Conservative: lib.Conservative,
		New: func(l algos.Limit) (limiter.Limiter, error) {
			if lib.New == nil {
				return nil, errors.New(lib.Name + ": Library.New is nil")
			}
			if err := l.Validate(); err != nil {
				return nil, fmt.Errorf("%s: %w", lib.Name, err)
			}
			st, err := Open(lib.Epoch)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", lib.Name, err)
			}
			allow, err := lib.New(st.Client, l)
			if err == nil && allow == nil {
				err = errors.New("Library.New returned no AllowFunc")
			}
			if err != nil {
				_ = st.Close()
				return nil, fmt.Errorf("%s: %w", lib.Name, err)
			}
			return &simulated{name: lib.Name, store: st, allow: allow}, nil
		},
	}
}

// simulated is one limiter of Spec.
type simulated struct {
	name  string
	store *SimStore
	allow AllowFunc
}

func (s *simulated) Allow(ctx context.Context, key int, now int64) (algos.Decision, error) {
	if key < 0 {
		return algos.Decision{}, fmt.Errorf("%s: negative key %d", s.name, key)
	}
	if err := s.store.At(now); err != nil {
		return algos.Decision{}, fmt.Errorf("%s: %w", s.name, err)
	}
	d, err := s.allow(ctx, limiter.KeyName(key))
	if err != nil {
		return algos.Decision{}, fmt.Errorf("%s: %w", s.name, err)
	}
	return d, nil
}

func (s *simulated) Close() error { return s.store.Close() }
