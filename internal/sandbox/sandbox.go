package sandbox

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Mode says what a sandboxed command may write.
type Mode string

// Modes, named as in OpenAI's Codex CLI.
const (
	// ModeWorkspaceWrite: the working directory, the write roots and a
	// private /tmp are writable; everything else is read-only or hidden.
	ModeWorkspaceWrite Mode = "workspace-write"
	// ModeReadOnly: only a private /tmp is writable.
	ModeReadOnly Mode = "read-only"
	// ModeOff runs commands unconfined, as the worker's user.
	ModeOff Mode = "off"
)

// Modes lists the modes, the default first.
var Modes = []Mode{ModeWorkspaceWrite, ModeReadOnly, ModeOff}

// Network says whether a sandboxed command reaches the network.
type Network string

// Network settings.
const (
	NetworkOff Network = "off"
	NetworkOn  Network = "on"
)

// ErrUnavailable: no sandbox can be made here (no bwrap, no user
// namespaces, not Linux...). Commands are then refused, not run
// unconfined.
var ErrUnavailable = errors.New("no sandbox can be made")

// ErrInvalid: a setting is not one of its values.
var ErrInvalid = errors.New("invalid sandbox setting")

// Settings are the worker's sandbox configuration. The zero value is the
// default: workspace-write, no network, bwrap from PATH.
type Settings struct {
	Mode    Mode
	Network Network
	// Bwrap is the bubblewrap program; empty: "bwrap" on PATH.
	Bwrap string
	// Ports are TCP ports no sandboxed command may connect to or bind,
	// with the network on: Talaria's own listeners.
	Ports []int
	// Cache, when set, is a directory mounted writable at the user's
	// ~/.cache inside the sandbox, so that build caches (go, pip, npm)
	// persist between commands without sharing the host's own caches.
	Cache string
}

// Normalized fills in the defaults and checks the values.
func (s Settings) Normalized() (Settings, error) {
	s.Mode = cmp.Or(s.Mode, ModeWorkspaceWrite)
	s.Network = cmp.Or(s.Network, NetworkOff)
	if !slices.Contains(Modes, s.Mode) {
		return s, fmt.Errorf("%w: sandbox.mode %q is not one of %s", ErrInvalid, s.Mode, joinModes())
	}
	if s.Network != NetworkOff && s.Network != NetworkOn {
		return s, fmt.Errorf("%w: sandbox.network %q is not off or on", ErrInvalid, s.Network)
	}
	for _, p := range s.Ports {
		if p < 1 || p > 65535 {
			return s, fmt.Errorf("%w: port %d is out of range", ErrInvalid, p)
		}
	}
	s.Bwrap = cmp.Or(s.Bwrap, "bwrap")
	return s, nil
}

func joinModes() string {
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}

// Command is what one command may see and touch.
type Command struct {
	Settings
	// Dir is the directory the command starts in.
	Dir string
	// Writable are the directories it may write (workspace-write mode).
	Writable []string
	// Binds are directories it may always write, whatever the mode: a
	// tool's own private directory (execute_code's helper and socket).
	Binds []string
	// ReadOnly are files or directories kept read-only inside a writable
	// one: the files that enter the system prompt.
	ReadOnly []string
	// Hidden are files and directories it may not see: each becomes an
	// empty file or directory.
	Hidden []string
	// Anchors are directories inside the writable roots that hold a
	// read-only or hidden path: each is mounted on itself, so that it
	// cannot be renamed away and the path replaced (workspace-write).
	Anchors []string
	// Sealed are directories kept read-only: when one does not exist it
	// is made an empty read-only directory (a repository's .git/hooks).
	Sealed []string
	// Stand are directories shown, writable, in place of others inside
	// the writable roots (workspace-write): what is written there goes to
	// the stand-in (a repository's git directory, whose top the command
	// writes in a staging directory, see tools' git staging).
	Stand []StandIn
}

// StandIn shows the directory Src at Dst.
type StandIn struct {
	Src, Dst string
}

// Within reports whether the clean path p is root or below it.
func Within(p, root string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// Describe says in one line what a command run with s may do.
func (s Settings) Describe() string {
	s, err := s.Normalized()
	if err != nil {
		return err.Error()
	}
	if s.Mode == ModeOff {
		return "sandbox off: commands run unconfined as this user (sandbox.mode: off)"
	}
	writes := "the working directory, tools.write_roots and a private /tmp"
	if s.Mode == ModeReadOnly {
		writes = "only a private /tmp"
	}
	net := "no network"
	if s.Network == NetworkOn {
		net = "network on, Talaria's own ports out of reach"
	}
	return fmt.Sprintf("sandbox %s (bubblewrap): commands write %s; %s; Talaria's home and credentials are hidden", s.Mode, writes, net)
}

// ownPorts are the TCP ports this process listens on for Talaria itself
// (the embedded Temporal server's services, ...), added to every
// command's Settings.Ports.
var ownPorts struct {
	sync.Mutex
	ports []int
}

// ProtectPorts adds ports this process listens on for Talaria itself: no
// sandboxed command, even with the network on, may connect to or bind
// them.
func ProtectPorts(ports ...int) {
	ownPorts.Lock()
	defer ownPorts.Unlock()
	for _, p := range ports {
		if p > 0 && p <= 65535 && !slices.Contains(ownPorts.ports, p) {
			ownPorts.ports = append(ownPorts.ports, p)
		}
	}
}

// protected is ports with those of ProtectPorts.
func protected(ports []int) []int {
	ownPorts.Lock()
	defer ownPorts.Unlock()
	out := slices.Clone(ports)
	for _, p := range ownPorts.ports {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
