package sandbox

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// checks caches Check's answer per bwrap program and network setting.
var checks sync.Map // checkKey -> error

type checkKey struct {
	bwrap string
	net   Network
}

// Check says whether commands can be sandboxed with s on this machine:
// nil, or an error matching ErrUnavailable that says why in one line. With
// ModeOff it is always nil. The first call for a program and a network
// setting starts a trial sandbox; later ones answer from memory.
func Check(s Settings) error {
	s, err := s.Normalized()
	if err != nil {
		return err
	}
	if s.Mode == ModeOff {
		return nil
	}
	key := checkKey{s.Bwrap, s.Network}
	if v, ok := checks.Load(key); ok {
		err, _ := v.(error)
		return err
	}
	err = trial(s)
	checks.Store(key, err) // nil too: a sandbox can be made
	return err
}

// trial runs `true` in a sandbox made as every command's is.
func trial(s Settings) error {
	path, err := exec.LookPath(s.Bwrap)
	if err != nil {
		return fmt.Errorf("%w: bubblewrap (%s) is not installed (apt-get install bubblewrap), or set sandbox.mode: off to run commands unconfined", ErrUnavailable, s.Bwrap)
	}
	if s.Network == NetworkOn && len(s.Ports) > 0 {
		if abi, err := ll.LandlockGetABIVersion(); err != nil || abi < 4 {
			return fmt.Errorf("%w: sandbox.network: on needs Landlock's network rules (Linux 6.7 or later) to keep Talaria's own ports out of reach; set sandbox.network: off", ErrUnavailable)
		}
	}
	s.Bwrap = path
	s.Cache = "" // a trial makes nothing on disk
	cmd, err := command(Command{Settings: s, Dir: "/"}, "true")
	if err != nil {
		return err
	}
	out, err := startAndWait(cmd, s)
	if err != nil {
		msg := cmp.Or(strings.TrimSpace(string(out)), err.Error())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return fmt.Errorf("%w: bubblewrap cannot start a sandbox here (%s); set sandbox.mode: off to run commands unconfined", ErrUnavailable, msg)
	}
	return nil
}

// startAndWait runs cmd to its end and returns its combined output.
func startAndWait(cmd *exec.Cmd, s Settings) ([]byte, error) {
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	wait, err := start(cmd, s)
	if err != nil {
		return nil, err
	}
	err = wait()
	return []byte(buf.String()), err
}

// Wrap turns cmd (its Path, Args, Dir and environment already set) into
// the same program run in a sandbox made for c, ready for [Start]. With
// ModeOff it leaves cmd as it is. It fails, matching ErrUnavailable, when
// no sandbox can be made.
func Wrap(cmd *exec.Cmd, c Command) error {
	s, err := c.Settings.Normalized()
	if err != nil {
		return err
	}
	if s.Mode == ModeOff {
		return nil
	}
	if err := Check(s); err != nil {
		return err
	}
	c.Settings = s
	if path, err := exec.LookPath(s.Bwrap); err == nil {
		c.Settings.Bwrap = path
	}
	c.Dir = cmp.Or(c.Dir, cmd.Dir)
	wrapped, err := command(c, cmd.Path, cmd.Args[1:]...)
	if err != nil {
		return err
	}
	cmd.Path, cmd.Args = wrapped.Path, wrapped.Args
	cmd.ExtraFiles = append(wrapped.ExtraFiles, cmd.ExtraFiles...)
	return nil
}

// command is bwrap running program with args in a sandbox made for c
// (normalized, not off).
func command(c Command, program string, args ...string) (*exec.Cmd, error) {
	prog, err := seccompProgram()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	// The filter is small (a few hundred bytes): it fits in the pipe's
	// buffer, so it is written at once and read by bwrap when it starts.
	if _, err := w.Write(prog); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("sandbox: write the seccomp filter: %w", err)
	}
	w.Close()
	cmd := exec.Command(c.Bwrap, append(append(bwrapArgs(c, hostMounts(c), 3), program), args...)...)
	cmd.ExtraFiles = []*os.File{r}
	return cmd, nil
}

// hostMounts resolves c's paths on the host: symbolic links followed,
// missing paths left out, hidden ones made empty files or directories as
// they are.
func hostMounts(c Command) []mount {
	var ms []mount
	add := func(k kind, paths ...string) {
		for _, p := range paths {
			real, info, ok := resolve(p)
			if !ok {
				continue
			}
			mk := k
			switch {
			case k == hiddenDir && !info.IsDir():
				mk = hiddenFile
			case (k == writable || k == readOnly) && !info.IsDir() && !info.Mode().IsRegular():
				continue
			}
			ms = append(ms, mount{kind: mk, dst: real})
		}
	}
	if c.Mode == ModeWorkspaceWrite {
		add(writable, c.Writable...)
		add(writable, c.Anchors...)
		for _, s := range c.Stand {
			src, sinfo, ok1 := resolve(s.Src)
			dst, dinfo, ok2 := resolve(s.Dst)
			switch {
			case ok1 && ok2 && sinfo.IsDir() && dinfo.IsDir():
				ms = append(ms, mount{kind: standIn, src: src, dst: dst})
			case ok2:
				ms = append(ms, mount{kind: readOnly, dst: dst}) // no stand-in: read-only, not as it is
			}
		}
	} else {
		// Read-only: the roots are still seen (one below /tmp too).
		add(readOnly, c.Writable...)
	}
	add(writable, c.Binds...)
	if c.Cache != "" {
		if home, err := os.UserHomeDir(); err == nil && os.MkdirAll(c.Cache, 0o700) == nil {
			if cache, _, ok := resolve(filepath.Join(home, ".cache")); ok && !under(cache, c.Writable) {
				ms = append(ms, mount{kind: writable, src: c.Cache, dst: cache})
			}
		}
	}
	add(readOnly, c.ReadOnly...)
	add(hiddenDir, c.Hidden...)
	for _, p := range c.Sealed {
		if _, _, ok := resolve(p); ok {
			add(readOnly, p)
		} else if parent, info, ok := resolve(filepath.Dir(p)); ok && info.IsDir() && c.Mode == ModeWorkspaceWrite {
			ms = append(ms, mount{kind: emptyDir, dst: filepath.Join(parent, filepath.Base(p))})
		}
	}
	// /run is hidden; a resolver configuration kept there stays readable.
	if real, info, ok := resolve("/etc/resolv.conf"); ok && info.Mode().IsRegular() && under(real, []string{"/run"}) {
		ms = append(ms, mount{kind: readOnly, dst: real})
	}
	return ms
}

// resolve follows p's symbolic links; ok is false when it does not exist.
func resolve(p string) (string, os.FileInfo, bool) {
	if p == "" || !filepath.IsAbs(p) {
		return "", nil, false
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", nil, false
	}
	info, err := os.Stat(real)
	if err != nil {
		return "", nil, false
	}
	return real, info, true
}

// under reports whether p is one of roots or below one.
func under(p string, roots []string) bool {
	return slices.ContainsFunc(roots, func(r string) bool { return Within(p, r) })
}

// Start starts cmd, made by Wrap for s, and returns the function that
// waits for it (use it instead of cmd.Wait). With the network on, the
// thread that starts it first takes on a Landlock ruleset that keeps
// Talaria's ports, and whatever is outside the sandbox, out of reach of
// everything the command runs; the thread is kept for the command's
// life (its parent-death signal is tied to it) and then ends.
func Start(cmd *exec.Cmd, s Settings) (wait func() error, err error) {
	s, err = s.Normalized()
	if err != nil {
		return nil, err
	}
	return start(cmd, s)
}

func start(cmd *exec.Cmd, s Settings) (func() error, error) {
	if s.Mode == ModeOff || s.Network == NetworkOff {
		if err := cmd.Start(); err != nil {
			closeExtra(cmd)
			return nil, err
		}
		closeExtra(cmd)
		return cmd.Wait, nil
	}
	fd, err := portRuleset(protected(s.Ports))
	if err != nil {
		closeExtra(cmd)
		return nil, err
	}
	started := make(chan error, 1)
	release := make(chan struct{})
	go func() {
		// Never unlocked: the thread carries the ruleset and ends with
		// this goroutine.
		runtime.LockOSThread()
		if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, unixPrSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
			started <- fmt.Errorf("sandbox: no_new_privs: %w", errno)
			return
		}
		if err := ll.LandlockRestrictSelf(fd, 0); err != nil {
			started <- fmt.Errorf("sandbox: Landlock: %w", err)
			return
		}
		started <- cmd.Start()
		<-release
	}()
	if err := <-started; err != nil {
		closeExtra(cmd)
		return nil, err
	}
	closeExtra(cmd)
	return func() error {
		defer close(release)
		return cmd.Wait()
	}, nil
}

const unixPrSetNoNewPrivs = 38

// closeExtra closes the parent's copies of the descriptors handed to the
// child.
func closeExtra(cmd *exec.Cmd) {
	for _, f := range cmd.ExtraFiles {
		if f != nil {
			f.Close()
		}
	}
}

var (
	rulesetMu sync.Mutex
	rulesets  = map[string]int{}
)

// portRuleset is a Landlock ruleset allowing TCP connect and bind on every
// port but ports, and scoping abstract Unix sockets and signals to the
// sandbox; made once per set of ports and kept.
func portRuleset(ports []int) (int, error) {
	sorted := slices.Clone(ports)
	slices.Sort(sorted)
	key := fmt.Sprint(sorted)
	rulesetMu.Lock()
	defer rulesetMu.Unlock()
	if fd, ok := rulesets[key]; ok {
		return fd, nil
	}
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 4 {
		return -1, fmt.Errorf("%w: Landlock's network rules are not available", ErrUnavailable)
	}
	attr := ll.RulesetAttr{HandledAccessNet: ll.AccessNetBindTCP | ll.AccessNetConnectTCP}
	if abi >= 6 {
		attr.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, fmt.Errorf("sandbox: Landlock ruleset: %w", err)
	}
	for p := 1; p <= 65535; p++ {
		if _, found := slices.BinarySearch(sorted, p); found {
			continue
		}
		rule := ll.NetPortAttr{AllowedAccess: ll.AccessNetBindTCP | ll.AccessNetConnectTCP, Port: uint64(p)}
		if err := ll.LandlockAddNetPortRule(fd, &rule, 0); err != nil {
			syscall.Close(fd)
			return -1, fmt.Errorf("sandbox: Landlock rule for port %d: %w", p, err)
		}
	}
	rulesets[key] = fd
	return fd, nil
}
