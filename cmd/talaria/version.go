package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// Set at link time by the Makefile's build target
// (-ldflags "-X main.version=... -X main.commit=... -X main.modified=true"),
// since it builds with -buildvcs=false; empty means "read the build info".
var (
	version  string
	commit   string
	modified string
)

// Module paths whose versions `talaria version` reports.
const (
	temporalServerModule = "go.temporal.io/server"
	temporalSDKModule    = "go.temporal.io/sdk"
)

// unknown stands for a value neither the linker nor the build info holds.
const unknown = "unknown"

// versionInfo is what `talaria version` prints.
type versionInfo struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	Modified       bool   `json:"modified"`
	CommitTime     string `json:"commit_time,omitempty"`
	GoVersion      string `json:"go_version"`
	Platform       string `json:"platform"`
	TemporalServer string `json:"temporal_server"`
	TemporalSDK    string `json:"temporal_sdk"`
}

// linkInfo is what the linker set (see the variables above).
type linkInfo struct {
	version, commit, modified string
}

// currentVersion describes the running binary.
func currentVersion() versionInfo {
	bi, _ := debug.ReadBuildInfo()
	return resolveVersion(bi, linkInfo{version: version, commit: commit, modified: modified},
		runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

// resolveVersion merges the linker's values (which win) with the build info
// (bi may be nil: a binary built without module support).
func resolveVersion(bi *debug.BuildInfo, link linkInfo, goVersion, platform string) versionInfo {
	v := versionInfo{Version: "devel", Commit: unknown, GoVersion: goVersion, Platform: platform,
		TemporalServer: unknown, TemporalSDK: unknown}
	if bi != nil {
		if mv := bi.Main.Version; mv != "" && mv != "(devel)" {
			v.Version = mv
		}
		if bi.GoVersion != "" {
			v.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = shortRevision(s.Value)
			case "vcs.modified":
				v.Modified = s.Value == "true"
			case "vcs.time":
				v.CommitTime = s.Value
			}
		}
		v.TemporalServer = moduleVersion(bi.Deps, temporalServerModule)
		v.TemporalSDK = moduleVersion(bi.Deps, temporalSDKModule)
	}
	if s := strings.TrimSpace(link.version); s != "" {
		v.Version = s
	}
	if s := strings.TrimSpace(link.commit); s != "" {
		v.Commit = s
		v.Modified = strings.TrimSpace(link.modified) == "true"
		v.CommitTime = ""
	}
	return v
}

// shortRevision shortens a full commit hash the way `git rev-parse --short=12` does.
func shortRevision(rev string) string {
	const n = 12
	if rev == "" {
		return unknown
	}
	if len(rev) > n {
		return rev[:n]
	}
	return rev
}

// moduleVersion is path's version among deps, following a replace directive.
func moduleVersion(deps []*debug.Module, path string) string {
	for _, m := range deps {
		if m == nil || m.Path != path {
			continue
		}
		if r := m.Replace; r != nil {
			if r.Version != "" {
				return r.Version + " (replaced by " + r.Path + ")"
			}
			return m.Version + " (replaced by " + r.Path + ")"
		}
		return cmp.Or(m.Version, unknown)
	}
	return unknown
}

// text renders v for a terminal.
func (v versionInfo) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "talaria version %s\n", v.Version)
	c := v.Commit
	if v.Modified {
		c += " (modified)"
	}
	if v.CommitTime != "" {
		c += ", " + v.CommitTime
	}
	rows := [][2]string{
		{"commit", c},
		{"go", v.GoVersion + " " + v.Platform},
		{"temporal server", v.TemporalServer},
		{"temporal sdk", v.TemporalSDK},
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-16s %s\n", r[0], r[1])
	}
	return b.String()
}

// writeVersion prints v in format ("text" or "json").
func writeVersion(w io.Writer, v versionInfo, format string) error {
	switch format {
	case "", "text":
		_, err := io.WriteString(w, v.text())
		return err
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	default:
		return usagef("unknown output format %q: use text or json", format)
	}
}

// setVersion gives root its --version flag, printing what `talaria version` prints.
func setVersion(root *cobra.Command) {
	v := currentVersion()
	root.Version = v.Version
	// The template is text/template source: keep any braces literal.
	root.SetVersionTemplate(`{{"` + templateEscape(v.text()) + `"}}`)
	// Declared here only for its help line; cobra prints the template when it is set.
	root.Flags().BoolP("version", "v", false, "print the version, commit, Go and Temporal versions")
}

// templateEscape makes s safe inside a text/template double-quoted string.
func templateEscape(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

func newVersionCommand() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, Go and Temporal versions",
		Long: `Print Talaria's version, the commit it was built from (and whether the tree was
modified), the Go toolchain and the Temporal server and SDK versions it embeds.
'talaria --version' prints the same.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return usagef("unknown output format %q for -o: use text or json", output)
			}
			if err := writeVersion(cmd.OutOrStdout(), currentVersion(), output); err != nil {
				return fmt.Errorf("print version: %w", err)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return c
}
