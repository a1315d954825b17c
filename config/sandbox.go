package config

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/talaria-agent/talaria/internal/sandbox"
)

// Sandbox configures the kernel sandbox every command the model starts
// runs in (terminal, execute_code, process).
type Sandbox struct {
	// Mode is workspace-write (the default: the working directory,
	// tools.write_roots and a private /tmp are writable), read-only (only
	// a private /tmp) or off (commands run unconfined as this user; said
	// at every start).
	Mode string `yaml:"mode"`
	// Network is off (the default: no network inside) or on (outbound
	// allowed; Talaria's own ports stay out of reach).
	Network string `yaml:"network"`
	// Bwrap is the bubblewrap program (default: bwrap on PATH).
	Bwrap string `yaml:"bwrap"`
	// Workspace is the working directory of chats and of API turns that
	// name none (default: talaria-workspace beside $TALARIA_HOME). It must
	// lie outside $TALARIA_HOME, which commands never see.
	Workspace string `yaml:"workspace"`
}

// problems lists what is wrong with the sandbox settings. Pure.
func (s Sandbox) problems(home string) []string {
	var out []string
	if _, err := (sandbox.Settings{Mode: sandbox.Mode(s.Mode), Network: sandbox.Network(s.Network)}).Normalized(); err != nil {
		out = append(out, strings.TrimPrefix(err.Error(), sandbox.ErrInvalid.Error()+": "))
	}
	if s.Workspace != "" {
		if !filepath.IsAbs(s.Workspace) {
			out = append(out, fmt.Sprintf("sandbox.workspace %q must be an absolute path", s.Workspace))
		} else if home != "" && sandbox.Within(filepath.Clean(s.Workspace), filepath.Clean(home)) {
			out = append(out, fmt.Sprintf("sandbox.workspace %q must lie outside $TALARIA_HOME (%s), which commands never see", s.Workspace, home))
		}
	}
	return out
}

// WorkspaceDir is where chats and API turns without a directory of their
// own work: sandbox.workspace, or talaria-workspace beside $TALARIA_HOME.
func (c Config) WorkspaceDir() string {
	if c.Sandbox.Workspace != "" {
		return filepath.Clean(c.Sandbox.Workspace)
	}
	return filepath.Join(filepath.Dir(filepath.Clean(c.Home)), strings.TrimPrefix(filepath.Base(c.Home), ".")+"-workspace")
}

// SandboxSettings are the sandbox settings of this configuration, with
// Talaria's own TCP ports (the Temporal frontend and Web UI, the API,
// metrics, a PostgreSQL database) kept out of reach of commands.
func (c Config) SandboxSettings() sandbox.Settings {
	return sandbox.Settings{
		Mode:    sandbox.Mode(c.Sandbox.Mode),
		Network: sandbox.Network(c.Sandbox.Network),
		Bwrap:   c.Sandbox.Bwrap,
		Ports:   c.OwnPorts(),
		Cache:   filepath.Join(c.Home, "sandbox", "cache"),
	}
}

// OwnPorts are the TCP ports Talaria's own listeners and database use,
// sorted. Pure.
func (c Config) OwnPorts() []int {
	var ports []int
	add := func(p int) {
		if p > 0 && p <= 65535 && !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	addHostPort := func(hp string) {
		if _, p, err := net.SplitHostPort(hp); err == nil {
			if n, err := strconv.Atoi(p); err == nil {
				add(n)
			}
		}
	}
	add(c.Temporal.Port)
	add(c.Temporal.UIPort)
	if c.Temporal.Port > 0 {
		// The embedded server's other services listen next to the frontend.
		for i := 1; i <= 3; i++ {
			add(c.Temporal.Port + i)
		}
	}
	addHostPort(c.Temporal.Address)
	if c.Temporal.Address != "" {
		// An external Temporal server's other listeners, at their defaults:
		// the frontend's HTTP API (unauthenticated in a dev cluster), the
		// history, matching and worker services and their membership ports.
		for _, p := range []int{7233, 7234, 7235, 7239, 7243, 7246, 6933, 6934, 6935, 6939} {
			add(p)
		}
	}
	addHostPort(c.API.Listen)
	add(8642) // the API's default listener
	addHostPort(c.Metrics.Listen)
	if strings.Contains(c.DB, "://") {
		if u, err := url.Parse(c.DB); err == nil {
			if u.Port() != "" {
				addHostPort(u.Host)
			} else {
				add(5432)
			}
		}
	}
	slices.Sort(ports)
	return ports
}
