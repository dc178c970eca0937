package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// envRyukDisabled is testcontainers' switch for Ryuk, its reaper container.
const envRyukDisabled = "TESTCONTAINERS_RYUK_DISABLED"

// ryukImage is the reaper image this testcontainers-go version runs
// (testcontainers/ryuk:0.14.0 in v0.45.0). The exported name is deprecated
// but is the only one; if a release drops it, this stops compiling rather
// than checking a stale image.
var ryukImage = testcontainers.ReaperDefaultImage

// Bounds of the check for Ryuk's image: an engine without a registry
// refuses a pull in well under a second, but a black-holed network would
// hang, so the registry gets a few seconds to answer; once it has, the
// download (which testcontainers would make anyway) gets a minute.
const (
	ryukAnswerWithin = 5 * time.Second
	ryukPullWithin   = time.Minute
)

// decideRyuk leaves Ryuk on (testcontainers' default) unless the user has
// set TESTCONTAINERS_RYUK_DISABLED or ryuk.disabled in
// ~/.testcontainers.properties (then theirs is the say), or the engine has
// not got Ryuk's image and cannot pull it (it holds the locally built Redis
// image and not the registry's, or a pull fails): then Ryuk could not start and
// every container start would fail on it, so it sets
// TESTCONTAINERS_RYUK_DISABLED=true and returns a note saying why. When the
// engine cannot be asked, it leaves Ryuk to testcontainers.
//
// It must run before anything calls testcontainers, which reads its
// configuration once per process; so it asks the engine through the Docker
// client directly (DOCKER_HOST, else the default socket, as dockerReachable).
func decideRyuk(ctx context.Context) string {
	if os.Getenv(envRyukDisabled) != "" {
		return ""
	}
	props := tcProperties()
	if props["ryuk.disabled"] != "" {
		return ""
	}
	image := ryukImage
	// testcontainers puts its Docker Hub prefix in front of Ryuk's image too.
	prefix := os.Getenv("TESTCONTAINERS_HUB_IMAGE_NAME_PREFIX")
	if prefix == "" {
		prefix = props["hub.image.name.prefix"]
	}
	if prefix != "" {
		image = path.Join(prefix, image)
	}

	docker, err := client.New(client.FromEnv)
	if err != nil {
		return ""
	}
	defer docker.Close()
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = docker.Ping(pingCtx, client.PingOptions{})
	cancel()
	if err != nil {
		return ""
	}
	if _, err := docker.ImageInspect(ctx, image); err == nil {
		return ""
	}
	// An engine that has the locally built Redis and not the registry's was
	// set up without a registry (`make redis-image`): asking it to pull would
	// only send it looking for one.
	_, errDefault := docker.ImageInspect(ctx, DefaultImage)
	_, errLocal := docker.ImageInspect(ctx, LocalImage)
	if errDefault != nil && errLocal == nil {
		os.Setenv(envRyukDisabled, "true")
		return fmt.Sprintf("redistest: Ryuk off: %s is not here, and this engine has %s but not %s, so it has no registry to pull from; "+
			"containers are removed by t.Cleanup, and on SIGINT/SIGTERM by this package", image, LocalImage, DefaultImage)
	}
	if err := pullWithin(ctx, docker, image, ryukAnswerWithin, ryukPullWithin); err != nil {
		os.Setenv(envRyukDisabled, "true")
		return fmt.Sprintf("redistest: Ryuk off: %s is not here and cannot be pulled (%v); "+
			"containers are removed by t.Cleanup, and on SIGINT/SIGTERM by this package", image, err)
	}
	return ""
}

// pullWithin pulls image, giving the registry answer to answer (the first
// progress message comes after it has resolved the image) and the whole
// pull total.
func pullWithin(ctx context.Context, docker *client.Client, image string, answer, total time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, total)
	defer cancel()
	answered := false
	silent := time.AfterFunc(answer, cancel)
	defer silent.Stop()
	timedOut := func(err error) error {
		if ctx.Err() == nil {
			return err
		}
		if !answered {
			return fmt.Errorf("the registry did not answer in %v", answer)
		}
		return fmt.Errorf("the pull took over %v", total)
	}
	resp, err := docker.ImagePull(ctx, image, client.ImagePullOptions{})
	if err != nil {
		return timedOut(err)
	}
	for msg, err := range resp.JSONMessages(ctx) {
		if err != nil {
			return timedOut(err)
		}
		if msg.Error != nil {
			return errors.New(msg.Error.Message)
		}
		if !answered {
			answered = silent.Stop()
		}
	}
	return timedOut(nil)
}

// tcProperties reads the key=value lines of ~/.testcontainers.properties,
// which testcontainers also reads; a missing file is no properties.
func tcProperties() map[string]string {
	props := map[string]string{}
	home, err := os.UserHomeDir()
	if err != nil {
		return props
	}
	f, err := os.Open(filepath.Join(home, ".testcontainers.properties"))
	if err != nil {
		return props
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			props[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return props
}
