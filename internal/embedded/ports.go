package embedded

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"
)

// portReuseDelay is how long a port handed out by freePort is not handed out
// again in this process, so servers starting concurrently never receive the
// same port even if the first has not bound it yet.
const portReuseDelay = 2 * time.Minute

var (
	portsMu     sync.Mutex
	portsIssued = map[int]time.Time{}
)

// freePort asks the kernel for an unused TCP port on ip and reserves it within
// this process. Another process may still take it before the server binds it;
// the window is a few milliseconds.
func freePort(ip string) (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	now := time.Now()
	for p, at := range portsIssued {
		if now.Sub(at) > portReuseDelay {
			delete(portsIssued, p)
		}
	}
	for range 50 {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			return 0, fmt.Errorf("pick free port on %s: %w", ip, err)
		}
		addr, ok := l.Addr().(*net.TCPAddr)
		if err := l.Close(); err != nil {
			return 0, fmt.Errorf("release probe listener: %w", err)
		}
		if !ok {
			return 0, fmt.Errorf("pick free port: unexpected address type %T", l.Addr())
		}
		port := addr.Port
		if _, taken := portsIssued[port]; taken {
			continue
		}
		portsIssued[port] = now
		return port, nil
	}
	return 0, errors.New("pick free port: kernel kept returning ports already issued")
}

// checkBindable reports whether ip:port can be listened on right now.
func checkBindable(ip string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPortUnavailable, err)
	}
	if err := l.Close(); err != nil {
		return fmt.Errorf("release probe listener: %w", err)
	}
	return nil
}
