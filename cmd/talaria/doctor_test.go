package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiskVerdict(t *testing.T) {
	for _, tt := range []struct {
		free   uint64
		status string
		shown  string
	}{
		{50 << 20, checkFail, "50.0 MiB"},
		{diskFailBytes, checkWarn, "100.0 MiB"},
		{512 << 20, checkWarn, "512.0 MiB"},
		{diskWarnBytes, checkOK, "1.0 GiB"},
		{3 << 40, checkOK, "3.0 TiB"},
		{900, checkFail, "900 B"},
	} {
		c := diskVerdict("/h", tt.free)
		if c.Status != tt.status || !strings.HasPrefix(c.Detail, tt.shown+" free at /h") || (c.Status != checkOK) != (c.Fix != "") {
			t.Errorf("diskVerdict(%d) = %+v, want %s %q", tt.free, c, tt.status, tt.shown)
		}
	}
}

func TestCheckHome(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	file := filepath.Join(dir, "file")
	private := filepath.Join(dir, "private")
	for _, p := range []struct {
		path string
		mode os.FileMode
	}{{open, 0o755}, {private, 0o700}} {
		if err := os.Mkdir(p.path, p.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p.path, p.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		home, status, says string
	}{
		{filepath.Join(dir, "absent"), checkWarn, "does not exist yet"},
		{file, checkFail, "not a directory"},
		{open, checkWarn, "open to other users"},
		{private, checkOK, private},
	} {
		c := checkHome(tt.home)
		if c.Status != tt.status || !strings.Contains(c.Detail, tt.says) {
			t.Errorf("checkHome(%s) = %+v, want %s saying %q", tt.home, c, tt.status, tt.says)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "absent")); !os.IsNotExist(err) {
		t.Fatal("checkHome created the home")
	}
}

func TestDoctorLine(t *testing.T) {
	if got := (doctorCheck{"model", checkFail, "unreachable", "start it"}).line(); got != "✗ model: unreachable — start it" {
		t.Fatalf("line = %q", got)
	}
	if got := (doctorCheck{"disk", checkOK, "2.0 GiB free at /h", ""}).line(); got != "✓ disk: 2.0 GiB free at /h" {
		t.Fatalf("line = %q", got)
	}
}
