package httplimit

import (
	"errors"
	"fmt"
	"net"
	"net/http"
)

// KeyFunc names whose request r is: the key the limiter counts it under.
// An error turns the request away with 400, undecided.
type KeyFunc func(r *http.Request) (string, error)

// ErrNoKey is what a KeyFunc returns when r does not carry its key, so
// that FirstOf can try the next.
var ErrNoKey = errors.New("httplimit: the request carries no key")

// ByHeader keys a request by the value of header name (an API key), and
// reports ErrNoKey when it is absent or empty.
func ByHeader(name string) KeyFunc {
	return func(r *http.Request) (string, error) {
		if v := r.Header.Get(name); v != "" {
			return "h:" + v, nil
		}
		return "", fmt.Errorf("%w: no %s header", ErrNoKey, name)
	}
}

// ByIP keys a request by the IP address it came from (RemoteAddr, without
// the port). It trusts no forwarding header: behind a proxy, key by the
// header the proxy sets instead.
func ByIP(r *http.Request) (string, error) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if host == "" {
		return "", fmt.Errorf("%w: no remote address", ErrNoKey)
	}
	return "ip:" + host, nil
}

// FirstOf keys a request by the first of keys that finds a key, and fails
// with the last one's error when none does. An error other than ErrNoKey
// stops the search.
func FirstOf(keys ...KeyFunc) KeyFunc {
	return func(r *http.Request) (string, error) {
		err := fmt.Errorf("%w: no key function", ErrNoKey)
		for _, k := range keys {
			var key string
			if key, err = k(r); err == nil || !errors.Is(err, ErrNoKey) {
				return key, err
			}
		}
		return "", err
	}
}
