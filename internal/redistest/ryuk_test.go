package redistest

import (
	"context"
	"net"
	"os"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

// dockerForTest is a client of the engine decideRyuk asks, or a skip.
func dockerForTest(t *testing.T) *client.Client {
	t.Helper()
	if !dockerReachable() {
		t.Skip("needs Docker")
	}
	docker, err := client.New(client.FromEnv)
	if err != nil {
		t.Skipf("needs Docker: %v", err)
	}
	t.Cleanup(func() { docker.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := docker.Ping(ctx, client.PingOptions{}); err != nil {
		t.Skipf("needs Docker: %v", err)
	}
	return docker
}

// Ryuk stays on where its image is, is turned off (with the reason) where
// it can be neither found nor pulled, and the user's own setting is left alone.
// The Hub prefix sends the image to a registry on 127.0.0.1 that is not
// there, and a tag stands in for a Ryuk image that is present.
func TestDecideRyuk(t *testing.T) {
	docker := dockerForTest(t)
	t.Setenv("HOME", t.TempDir()) // no ~/.testcontainers.properties
	prefix := "127.0.0.1:1/overshoot-test-" + thisRun.id
	t.Setenv("TESTCONTAINERS_HUB_IMAGE_NAME_PREFIX", prefix)
	image := path.Join(prefix, ryukImage)
	ctx := context.Background()

	t.Run("user setting", func(t *testing.T) {
		t.Setenv(envRyukDisabled, "false")
		if note := decideRyuk(ctx); note != "" || os.Getenv(envRyukDisabled) != "false" {
			t.Errorf("decideRyuk overrode %s=false: %q, now %q", envRyukDisabled, note, os.Getenv(envRyukDisabled))
		}
	})
	t.Run("absent and not pullable", func(t *testing.T) {
		t.Setenv(envRyukDisabled, "")
		note := decideRyuk(ctx)
		if os.Getenv(envRyukDisabled) != "true" || !strings.Contains(note, "Ryuk off: "+image) {
			t.Errorf("want Ryuk off with a reason; got %s=%q, note %q", envRyukDisabled, os.Getenv(envRyukDisabled), note)
		}
		t.Log(note)
	})
	t.Run("present", func(t *testing.T) {
		local := findLocalImage(t, docker)
		if _, err := docker.ImageTag(ctx, client.ImageTagOptions{Source: local, Target: image}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { // removes the tag only: the image has its own
			docker.ImageRemove(context.Background(), image, client.ImageRemoveOptions{})
		})
		t.Setenv(envRyukDisabled, "")
		if note := decideRyuk(ctx); note != "" || os.Getenv(envRyukDisabled) != "" {
			t.Errorf("Ryuk's image is here, yet %s=%q, note %q", envRyukDisabled, os.Getenv(envRyukDisabled), note)
		}
	})
}

// A registry that accepts connections and never answers costs the check
// its answer bound, not the whole pull's.
func TestRyukPullIsBounded(t *testing.T) {
	t.Parallel() // it waits out the answer bound, beside the containers' starts
	docker := dockerForTest(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accept and say nothing
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	start := time.Now()
	err = pullWithin(context.Background(), docker, ln.Addr().String()+"/silent:1", time.Second, time.Minute)
	took := time.Since(start)
	if err == nil || took > 10*time.Second {
		t.Fatalf("pull from a silent registry: %v after %v; want an error after about 1s", err, took)
	}
	t.Logf("%v after %v", err, took.Round(time.Millisecond))
}

// findLocalImage is an image the engine has (the Redis the tests would
// use), or a skip.
func findLocalImage(t *testing.T, docker *client.Client) string {
	t.Helper()
	for _, image := range []string{os.Getenv(EnvImage), DefaultImage, LocalImage} {
		if image == "" {
			continue
		}
		if _, err := docker.ImageInspect(context.Background(), image); err == nil {
			return image
		}
	}
	t.Skip("no Redis image to tag; run `make redis-image`")
	return ""
}
