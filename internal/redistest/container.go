package redistest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/overshoot-go/overshoot/internal/atomicfile"
)

// FaketimePreload is the LD_PRELOAD value (Options.Env) under which the
// locally built image's redis-server reads a fake clock, from libfaketime
// steered by FAKETIME (e.g. "+1d", or "@2030-01-01 00:00:00"); with
// FAKETIME_TIMESTAMP_FILE and FAKETIME_NO_CACHE=1 instead, the clock follows
// the file, which Container.CopyFile rewrites to step it (at once, and at a
// lower cost per command, in a SharedDir: the server reads the file at
// every clock call). libfaketime alone hangs this jemalloc-linked server
// (libfaketime issue #130): glibc's libc_malloc_debug, preloaded first,
// gives it glibc's malloc. Only the local image (.ci/redis-image.sh)
// carries both libraries, at these paths on every architecture.
const FaketimePreload = "/usr/lib/overshoot/libc_malloc_debug.so.0 /usr/lib/overshoot/libfaketime.so.1"

// DefaultWaitLog is the line a Redis server logs once it accepts
// connections (Redis 7.0; 7.2 adds " tcp").
const DefaultWaitLog = "Ready to accept connections"

// Options shape the container StartWith starts.
type Options struct {
	// Args are redis-server arguments, after the image's own entrypoint
	// and after "--save '' --appendonly no" (which replace the image's CMD),
	// or after Entrypoint when that is set; e.g. "--maxmemory", "2mb".
	Args []string
	// HostNetwork puts the container on the host's network, listening on
	// 127.0.0.1:Port only: what Sentinel and Cluster need, since they
	// announce their own address to clients, and a mapped port would be
	// the wrong one.
	HostNetwork bool
	// Port is the port on 127.0.0.1, with HostNetwork (0 picks a free one,
	// whose cluster bus port, Port+10000, is free too). Without
	// HostNetwork it must be 0: the server listens on 6379 inside and
	// Docker maps a free port of 127.0.0.1 to it.
	Port int
	// Entrypoint, when set, replaces the image's entrypoint; e.g.
	// {"redis-server", "/tmp/sentinel.conf", "--sentinel"}. Name the binary
	// as redis-server (found on PATH, which Docker gives even an image
	// FROM scratch). StartWith then appends "--port P --bind <address>
	// --protected-mode no" and Args, and none of the image's defaults.
	Entrypoint []string
	// Files are copied in before the server starts: path in the container
	// → content, mode 0644 (parent directories are made). /tmp exists in
	// every image; /data may not.
	Files map[string][]byte
	// SharedDir, when set, is a directory of the container (e.g.
	// "/shared") whose files the test rewrites while the server runs
	// (CopyFile), such as the one FAKETIME_TIMESTAMP_FILE names. With the
	// Docker engine on this machine (DOCKER_HOST unset or a unix socket) it
	// is a fresh directory of this machine, bind-mounted read-only: the
	// Files under it are written there before the start, and CopyFile
	// replaces one at once (a rename), where a copy into a container takes
	// 100-300 ms; and the server reads them faster than files of its
	// image's layers (libfaketime reads its file at every clock call).
	// Elsewhere it is a directory of the container like any other.
	SharedDir string
	// sharedHost is the directory of this machine mounted at SharedDir
	// ("": none), made by startContainers.
	sharedHost string
	// Env is the server's environment, added to the image's.
	Env map[string]string
	// WaitLog is the log line that means ready (default DefaultWaitLog;
	// a Sentinel logs "+monitor master" instead).
	WaitLog string
	// Image is the image to start (default: the one Start would choose),
	// e.g. LocalImage for a test that needs its libfaketime.
	Image string
}

// Container is a Redis started by StartWith, which t.Cleanup removes. Its
// methods steer it during a test; each returns an error, none panics or
// ends the test.
type Container struct {
	Redis
	// Port is the port the server listens on: on 127.0.0.1 with
	// HostNetwork, else 6379 inside the container (Addr has the mapped one).
	Port  int
	Image string
	// ID is the Docker container ID.
	ID string

	host bool
	// sharedDir and sharedHost are Options.SharedDir and the directory of
	// this machine mounted there ("" when none is).
	sharedDir, sharedHost string
	c                     *testcontainers.DockerContainer
	mu                    sync.Mutex // guards Addr across Start
}

// StartWith starts a Redis container shaped by o for t, labelled like
// Start's so that SIGINT/SIGTERM remove it, and removed when t ends. It
// fails t when o is malformed or the server does not answer PING once
// started, and skips t (fails it under OVERSHOOT_REQUIRE_REDIS=1) with the
// reason when no container can be had: under OVERSHOOT_REDIS, which names a
// Redis this package cannot shape, without Docker, or when the start fails.
func StartWith(t testing.TB, o Options) *Container {
	t.Helper()
	return StartWithAll(t, o)[0]
}

// StartWithAll is StartWith for several containers, started at once and
// returned in the order of opts: a test whose servers need not wait for each
// other to start (a primary, its replica and a Sentinel, each told of the
// others once all answer) waits for the slowest start, not for their sum.
// Every one is removed when t ends, whatever happened to the others.
func StartWithAll(t testing.TB, opts ...Options) []*Container {
	t.Helper()
	if addr := os.Getenv(EnvAddr); addr != "" {
		cannotShape(t, fmt.Sprintf("%s=%s names an existing server, which cannot be shaped", EnvAddr, addr))
	}
	if !dockerReachable() {
		cannotShape(t, "there is no Docker socket")
	}
	for _, o := range opts {
		if o.Port != 0 && !o.HostNetwork {
			t.Fatalf("redistest: Options.Port %d without HostNetwork: a mapped container listens on 6379", o.Port)
		}
		if o.Port < 0 || o.Port > 65535-10000 {
			t.Fatalf("redistest: Options.Port %d out of range (its cluster bus port is Port+10000)", o.Port)
		}
		if d := o.SharedDir; d != "" && (!path.IsAbs(d) || path.Clean(d) != d || d == "/") {
			t.Fatalf("redistest: Options.SharedDir %q is not a clean absolute path below /", d)
		}
	}
	if note := configure(); note != "" {
		t.Log(note)
	}
	cts, reason := startContainers(t, opts)
	if cts == nil {
		cannotShape(t, reason)
	}
	return cts
}

// startContainers starts a container shaped by each of opts, all at once,
// each removed when t ends, and returns them; or nil and why not all could
// be had (the caller skips or fails t). It fails t itself when a container
// starts but is not a Redis that answers.
func startContainers(t testing.TB, opts []Options) ([]*Container, string) {
	t.Helper()
	type started struct {
		ct     *Container
		c      *testcontainers.DockerContainer
		reason string
		err    error
	}
	opts = slices.Clone(opts)
	for i := range opts {
		if err := opts[i].shareFromHost(t); err != nil {
			t.Fatalf("redistest: %v", err)
		}
	}
	res := make([]started, len(opts))
	var wg sync.WaitGroup
	for i, o := range opts {
		wg.Go(func() {
			r := &res[i]
			r.ct, r.c, r.reason, r.err = launch(o)
		})
	}
	wg.Wait()
	// A half-started container is removed too; at once (SIGKILL): nothing
	// of a test's server outlives the test.
	for _, r := range res {
		removeWhenDone(t, r.c)
	}
	cts := make([]*Container, len(res))
	for i, r := range res {
		if r.err != nil {
			t.Fatalf("redistest: %v", r.err)
		}
		if r.ct == nil {
			return nil, r.reason
		}
		cts[i] = r.ct
	}
	return cts, ""
}

// launch starts a container shaped by o and returns it, with the
// testcontainers handle the caller must remove (non-nil whenever Docker
// created something, whether or not it started). It returns a nil Container
// and the reason when no container could be had, and an error when one
// started but does not answer as a Redis should.
func launch(o Options) (ct *Container, c *testcontainers.DockerContainer, reason string, err error) {
	port := 6379
	if o.HostNetwork {
		port = o.Port
		if port == 0 {
			if port, err = freePort(); err != nil {
				return nil, nil, "", fmt.Errorf("no free loopback port: %v", err)
			}
		}
	}

	runCtx, ok := thisRun.begin()
	if !ok {
		select {} // the process is being interrupted: its signal handler exits it
	}
	ctx, cancel := context.WithTimeout(runCtx, 90*time.Second)
	defer cancel()
	image := o.Image
	if image == "" {
		image = chooseImage(ctx)
	} else if image == LocalImage && !imagePresent(ctx, image) {
		thisRun.end()
		return nil, nil, LocalImage + " is not built: `OVERSHOOT_REQUIRE_REDIS=1 make test` builds it, as does .ci/redis-image.sh", nil
	}
	c, err = testcontainers.Run(ctx, image, o.customizers(port)...)
	thisRun.end()
	if err != nil {
		if runCtx.Err() != nil {
			select {} // as above: not a Redis problem, so no failure to report
		}
		return nil, c, fmt.Sprintf("testcontainers could not start %s shaped by %s: %v", image, o, err), nil
	}
	ct = &Container{Redis: Redis{Password: thisRun.password}, Port: port, Image: image, ID: c.GetContainerID(), host: o.HostNetwork,
		sharedDir: o.SharedDir, sharedHost: o.sharedHost, c: c}
	if err := ct.locate(ctx); err != nil {
		return nil, c, "", err
	}
	if err := ping(ct.Addr, ct.Password, pingContainer); err != nil {
		return nil, c, "", fmt.Errorf("container %s (%s) started but does not answer PING at %s: %v\n%s", image, o, ct.Addr, err, ct.logTail(ctx))
	}
	if err := ct.loopbackOnly(ctx, o.sentinel()); err != nil {
		return nil, c, "", err
	}
	return ct, c, "", nil
}

// shareFromHost makes o.SharedDir a directory of this machine when the
// engine runs here: a fresh one, removed when t ends, holding the Files
// under SharedDir.
func (o *Options) shareFromHost(t testing.TB) error {
	if o.SharedDir == "" || !localEngine() {
		return nil
	}
	dir, err := os.MkdirTemp("", "overshoot-shared-")
	if err != nil {
		return err
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// Readable by the container's user, whoever the engine maps it to.
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	o.sharedHost = dir
	for p, content := range o.Files {
		if rel, ok := o.sharedRel(p); ok {
			if err := atomicfile.WriteAll(filepath.Join(dir, filepath.FromSlash(rel)), content); err != nil {
				return err
			}
		}
	}
	return nil
}

// sharedRel is p relative to SharedDir, and whether p is under it.
func (o Options) sharedRel(p string) (string, bool) {
	rel, ok := strings.CutPrefix(path.Clean(p), o.SharedDir+"/")
	return rel, ok && o.SharedDir != "" && rel != ""
}

// localEngine reports whether the Docker engine runs on this machine (its
// socket is local), so that a directory of this machine can be mounted.
func localEngine() bool {
	host := os.Getenv("DOCKER_HOST")
	return host == "" || strings.HasPrefix(host, "unix://")
}

// cannotShape is unavailable for StartWith, whose advice differs: an
// external Redis (OVERSHOOT_REDIS) is no help to it.
func cannotShape(t testing.TB, reason string) {
	t.Helper()
	msg := "redis: this test needs a Redis container of its own (its arguments, network or files), and " + reason +
		"; it needs Docker with an image (`make redis-image`, then " + EnvImage + "=" + LocalImage + ") and " + EnvAddr + " unset"
	if os.Getenv(EnvRequire) == "1" {
		t.Fatal(msg + " (" + EnvRequire + "=1)")
	}
	t.Skip(msg)
}

// customizers turns o into testcontainers options for a server on port.
func (o Options) customizers(port int) []testcontainers.ContainerCustomizer {
	var cmd []string
	if o.Entrypoint == nil {
		cmd = []string{"--save", "", "--appendonly", "no"}
	}
	if o.HostNetwork {
		cmd = append(cmd, "--port", strconv.Itoa(port), "--bind", "127.0.0.1")
	} else if o.Entrypoint != nil {
		cmd = append(cmd, "--port", "6379", "--bind", "0.0.0.0")
	}
	if o.Entrypoint != nil {
		cmd = append(cmd, "--protected-mode", "no")
	}
	// Every server requires the run's password, and a replica (or a
	// cluster node that becomes one) gives it to its primary; a Sentinel
	// takes only its own (its conf says the primary's: sentinel auth-pass).
	cmd = append(cmd, "--requirepass", thisRun.password)
	if !o.sentinel() {
		cmd = append(cmd, "--masterauth", thisRun.password)
	}
	cmd = append(cmd, o.Args...)
	waitLog := o.WaitLog
	if waitLog == "" {
		waitLog = DefaultWaitLog
	}
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithLabels(map[string]string{LabelRun: thisRun.id}),
		testcontainers.WithCmd(cmd...),
		// Polled every 50 ms rather than testcontainers' 100 (each poll is
		// two calls to the engine, which is busy starting the others).
		testcontainers.WithWaitStrategy(wait.ForLog(waitLog).WithStartupTimeout(30 * time.Second).WithPollInterval(50 * time.Millisecond)),
	}
	if o.Entrypoint != nil {
		opts = append(opts, testcontainers.WithEntrypoint(o.Entrypoint...))
	}
	if len(o.Env) > 0 {
		opts = append(opts, testcontainers.WithEnv(o.Env))
	}
	if o.HostNetwork {
		opts = append(opts, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
		}))
	} else {
		// Docker publishes a port on every interface unless told which:
		// 127.0.0.1 only, a free port chosen by Docker.
		opts = append(opts, testcontainers.WithExposedPorts(redisPort),
			testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
				hc.PortBindings = network.PortMap{network.MustParsePort(redisPort): {{HostIP: netip.MustParseAddr("127.0.0.1")}}}
			}))
	}
	if o.sharedHost != "" {
		opts = append(opts, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.Binds = append(hc.Binds, o.sharedHost+":"+o.SharedDir+":ro")
		}))
	}
	paths := make([]string, 0, len(o.Files))
	for p := range o.Files {
		if _, shared := o.sharedRel(p); shared && o.sharedHost != "" {
			continue // written to the mounted directory already
		}
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		opts = append(opts, testcontainers.WithFiles(testcontainers.ContainerFile{
			Reader: bytes.NewReader(o.Files[p]), ContainerFilePath: p, FileMode: 0o644,
		}))
	}
	return opts
}

// redisPort is the port a mapped container's server listens on inside.
const redisPort = "6379/tcp"

// sentinel reports whether o starts a Sentinel rather than a server.
func (o Options) sentinel() bool {
	return slices.Contains(o.Entrypoint, "--sentinel") || slices.Contains(o.Args, "--sentinel")
}

// String is o in short, for messages.
func (o Options) String() string {
	var b strings.Builder
	if o.Entrypoint != nil {
		fmt.Fprintf(&b, "entrypoint %q ", o.Entrypoint)
	}
	fmt.Fprintf(&b, "args %q", o.Args)
	if o.HostNetwork {
		fmt.Fprintf(&b, " on the host network (port %d)", o.Port)
	}
	return b.String()
}

// locate sets Addr and Source from where the container listens now (a
// mapped port may change when a stopped container starts again).
func (ct *Container) locate(ctx context.Context) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ct.Port))
	source := fmt.Sprintf("testcontainers %s on the host network", ct.Image)
	if !ct.host {
		host, err := ct.c.Host(ctx)
		if err != nil {
			return err
		}
		p, err := ct.c.MappedPort(ctx, redisPort)
		if err != nil {
			return err
		}
		addr = net.JoinHostPort(host, strconv.Itoa(int(p.Num())))
		source = "testcontainers " + ct.Image
	}
	ct.mu.Lock()
	ct.Addr, ct.Source = addr, source
	ct.mu.Unlock()
	return nil
}

// loopbackOnly checks, once its server answers, that ct is reachable from
// this machine only: a mapped container's every published port is on
// loopback, as the Docker engine reports it (PortBindings); a container
// on the host's network publishes none, and its server binds loopback
// addresses only (Bind; a Sentinel, which has no CONFIG GET, is given
// --bind 127.0.0.1 as every server is, and is taken at its word).
func (ct *Container) loopbackOnly(ctx context.Context, sentinel bool) error {
	bindings, err := PortBindings(ctx, ct.ID)
	if err != nil {
		return err
	}
	for _, b := range bindings {
		if ip, err := netip.ParseAddr(b); err != nil || !ip.IsLoopback() {
			return fmt.Errorf("container %.12s publishes a port on %q, not on loopback (all: %v)", ct.ID, b, bindings)
		}
	}
	if !ct.host {
		return nil
	}
	if len(bindings) > 0 {
		return fmt.Errorf("container %.12s is on the host's network but publishes ports on %v", ct.ID, bindings)
	}
	if sentinel {
		return nil
	}
	binds, err := ct.Bind(ctx)
	if err != nil {
		return err
	}
	for _, b := range binds {
		// Redis marks an address it may fail to bind with a leading "-".
		if ip, err := netip.ParseAddr(strings.TrimPrefix(b, "-")); err != nil || !ip.IsLoopback() {
			return fmt.Errorf("container %.12s is on the host's network and its server binds %q, not loopback only (all: %v)", ct.ID, b, binds)
		}
	}
	return nil
}

// Bind is the addresses ct's server listens on, as it reports them
// (CONFIG GET bind).
func (ct *Container) Bind(ctx context.Context) ([]string, error) {
	c := redis.NewClient(ct.Options())
	defer c.Close()
	v, err := c.ConfigGet(ctx, "bind").Result()
	if err != nil {
		return nil, fmt.Errorf("container %.12s: CONFIG GET bind: %w", ct.ID, err)
	}
	binds := strings.Fields(v["bind"])
	if len(binds) == 0 {
		return nil, fmt.Errorf("container %.12s: its server binds every address (CONFIG GET bind is empty)", ct.ID)
	}
	return binds, nil
}

// PortBindings lists, as the Docker engine reports them (the ports it has
// published, not those asked for), the host address of every published port
// of container id: "127.0.0.1" for each on a container this package
// started; none on the host network, where the server binds 127.0.0.1.
func PortBindings(ctx context.Context, id string) ([]string, error) {
	d, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	res, err := d.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return nil, fmt.Errorf("inspecting container %.12s: %w", id, err)
	}
	var hosts []string
	if res.Container.NetworkSettings != nil {
		for _, bs := range res.Container.NetworkSettings.Ports {
			for _, b := range bs {
				hosts = append(hosts, b.HostIP.String())
			}
		}
	}
	slices.Sort(hosts)
	return hosts, nil
}

// Address is Addr, read safely while another goroutine may be calling Start.
func (ct *Container) Address() string {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	return ct.Addr
}

// Kill ends the server at once (SIGKILL): no shutdown, no last write to its
// replicas, as when a machine dies. The container stays until t ends, and
// Start starts it again.
func (ct *Container) Kill(ctx context.Context) error {
	return ct.docker(ctx, func(d *testcontainers.DockerClient) error {
		_, err := d.ContainerKill(ctx, ct.ID, client.ContainerKillOptions{Signal: "SIGKILL"})
		return err
	})
}

// Stop stops the server as `docker stop` does: SIGTERM, and SIGKILL after
// timeout. A Redis primary given time waits for its replicas to catch up.
func (ct *Container) Stop(ctx context.Context, timeout time.Duration) error {
	return ct.c.Stop(ctx, &timeout)
}

// Start starts a killed or stopped container again and waits until it
// answers PING. With HostNetwork the address stays; without, the mapped
// port may change, and Addr (Address) is updated.
func (ct *Container) Start(ctx context.Context) error {
	if err := ct.c.Start(ctx); err != nil {
		return err
	}
	if err := ct.locate(ctx); err != nil {
		return err
	}
	return ping(ct.Address(), ct.Password, pingContainer)
}

// Pause freezes every process of the container (the cgroup freezer):
// connections stay open and nothing answers, as on a stalled host.
func (ct *Container) Pause(ctx context.Context) error {
	return ct.docker(ctx, func(d *testcontainers.DockerClient) error {
		_, err := d.ContainerPause(ctx, ct.ID, client.ContainerPauseOptions{})
		return err
	})
}

// Unpause undoes Pause.
func (ct *Container) Unpause(ctx context.Context) error {
	return ct.docker(ctx, func(d *testcontainers.DockerClient) error {
		_, err := d.ContainerUnpause(ctx, ct.ID, client.ContainerUnpauseOptions{})
		return err
	})
}

// CopyFile writes content to file in the container (mode 0644), running or
// not: e.g. the file FAKETIME_TIMESTAMP_FILE names. Under a SharedDir
// mounted from this machine it replaces the file there, which the
// container sees at once; elsewhere it copies it in through the engine.
func (ct *Container) CopyFile(ctx context.Context, file string, content []byte) error {
	if rel, ok := (Options{SharedDir: ct.sharedDir}).sharedRel(file); ok && ct.sharedHost != "" {
		return atomicfile.WriteAll(filepath.Join(ct.sharedHost, filepath.FromSlash(rel)), content)
	}
	return ct.c.CopyToContainer(ctx, content, file, 0o644)
}

// Logs is what the server has logged so far, stdout and stderr.
func (ct *Container) Logs(ctx context.Context) (string, error) {
	r, err := ct.c.Logs(ctx)
	if err != nil {
		return "", err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	return string(b), err
}

// logTail is the last lines of the log, for a failure message.
func (ct *Container) logTail(ctx context.Context) string {
	logs, err := ct.Logs(ctx)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(logs, "\n"), "\n")
	return "last lines of its log:\n" + strings.Join(lines[max(0, len(lines)-20):], "\n")
}

func (ct *Container) docker(ctx context.Context, f func(*testcontainers.DockerClient) error) error {
	if ct == nil || ct.c == nil {
		return errors.New("redistest: no container")
	}
	d, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := f(d); err != nil {
		return fmt.Errorf("redistest: container %.12s: %w", ct.ID, err)
	}
	return nil
}

// freePort is a free port of 127.0.0.1 whose cluster bus port (+10000) is
// free too, both below Linux's ephemeral range (32768 up), so that no
// outgoing connection takes either before the server binds it.
func freePort() (int, error) {
	const lo, hi = 10000, 32768 - 10000
	var last error
	for range 100 {
		port := lo + mrand.IntN(hi-lo)
		ok := true
		for _, p := range []int{port, port + 10000} {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				last, ok = err, false
				break
			}
			l.Close()
		}
		if ok {
			return port, nil
		}
	}
	return 0, fmt.Errorf("100 tries found no free pair of ports (last: %v)", last)
}
