package embedded

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
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

// freePort picks a TCP port on ip that can be bound now, below the
// kernel's ephemeral range, and reserves it within this process. A port of
// that range (what a listener on port 0 gets) may be taken by any outgoing
// connection before the server binds it; below it, only a program that
// binds that very port can, in the few milliseconds until the server does.
func freePort(ip string) (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	now := time.Now()
	for p, at := range portsIssued {
		if now.Sub(at) > portReuseDelay {
			delete(portsIssued, p)
		}
	}
	low := ephemeralLow()
	first := max(1024, low-16000)
	for range 1000 {
		port := first + rand.IntN(low-first)
		if _, taken := portsIssued[port]; taken || checkBindable(ip, port) != nil {
			continue
		}
		portsIssued[port] = now
		return port, nil
	}
	return 0, errors.New("pick free port: none of 1,000 tried below the ephemeral range could be bound")
}

// internalIP is where this process's servers bind their history, matching
// and worker services (and the frontend, when no port is asked for): its own
// loopback address, 127.a.b.c from the process id, where all of 127.0.0.0/8
// is loopback (Linux). No other living process has that id, so servers
// started by concurrent processes never race each other for a port, whatever
// they pick; within the process freePort keeps them apart. Where such an
// address cannot be bound it is 127.0.0.1.
var internalIP = sync.OnceValue(func() string {
	pid := os.Getpid()
	if pid <= 1 || pid >= 1<<24 {
		return defaultIP
	}
	ip := fmt.Sprintf("127.%d.%d.%d", pid>>16&0xff, pid>>8&0xff, pid&0xff)
	if checkBindable(ip, 0) != nil {
		return defaultIP
	}
	return ip
})

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// default when it cannot be read).
func ephemeralLow() int {
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 4096 {
				return n
			}
		}
	}
	return 32768
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
