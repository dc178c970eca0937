package ceiling

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Stampede is what n requests for one key, sent at the same instant, were
// answered: the race a GET-then-INCR limiter loses.
type Stampede struct {
	Sent, Accepted, Rejected, Failed int
	FirstFailure                     string
}

// Stamp sends n requests to url at once, each on a connection of its own
// opened beforehand (so that no request waits for a dial), carrying
// header, and counts the answers. The connections are warmed first with
// n requests carrying warmHeader, which must name another key.
func Stamp(ctx context.Context, url string, header, warmHeader http.Header, n int) (Stampede, error) {
	if n <= 0 {
		return Stampede{}, fmt.Errorf("ceiling: a stampede needs at least one request, got %d", n)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: n, Proxy: nil}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	send := func(h http.Header) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, err
		}
		req.Header = h.Clone()
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer res.Body.Close()
		_, err = io.Copy(io.Discard, res.Body)
		return res.StatusCode, err
	}
	// n concurrent warm-up requests leave n idle connections in the pool.
	var warm sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		warm.Go(func() {
			if _, err := send(warmHeader); err != nil {
				errs <- err
			}
		})
	}
	warm.Wait()
	close(errs)
	if err := errors.Join(func() (all []error) {
		for e := range errs {
			all = append(all, e)
		}
		return all
	}()...); err != nil {
		return Stampede{}, fmt.Errorf("ceiling: warming %d connections: %w", n, err)
	}

	var (
		start = make(chan struct{})
		codes = make([]int, n)
		fails = make([]error, n)
		done  sync.WaitGroup
	)
	for i := range n {
		done.Go(func() {
			<-start
			codes[i], fails[i] = send(header)
		})
	}
	close(start)
	done.Wait()
	st := Stampede{Sent: n}
	for i, code := range codes {
		switch {
		case fails[i] != nil:
			st.Failed++
			if st.FirstFailure == "" {
				st.FirstFailure = fails[i].Error()
			}
		case code >= 200 && code < 300:
			st.Accepted++
		case code == http.StatusTooManyRequests:
			st.Rejected++
		default:
			st.Failed++
			if st.FirstFailure == "" {
				st.FirstFailure = fmt.Sprintf("status %d", code)
			}
		}
	}
	return st, nil
}
