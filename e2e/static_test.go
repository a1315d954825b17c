package e2e

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os/exec"
	"strings"
	"testing"
)

// TestStaticBinary: the binary is built without cgo and links one SQLite,
// the pure-Go modernc.org/sqlite (no github.com/mattn/go-sqlite3), so it is
// a static executable: no program interpreter (dynamic loader) and no
// shared libraries to find at run time.
func TestStaticBinary(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "version", "-m", binary).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m %s: %v\n%s", binary, err, out)
	}
	deps, settings := buildInfoLines(out)
	for _, forbidden := range []string{"github.com/mattn/go-sqlite3", "gorm.io/driver/sqlite"} {
		if _, ok := deps[forbidden]; ok {
			t.Errorf("the binary links %s (cgo SQLite)", forbidden)
		}
	}
	if _, ok := deps["modernc.org/sqlite"]; !ok {
		t.Errorf("the binary does not link modernc.org/sqlite; deps: %v", deps)
	}
	if got := settings["CGO_ENABLED"]; got != "0" {
		t.Errorf("build setting CGO_ENABLED = %q, want 0", got)
	}

	f, err := elf.Open(binary)
	if err != nil {
		t.Fatalf("read %s as ELF: %v", binary, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary has a program interpreter (PT_INTERP): it is dynamically linked")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v (%v)", libs, err)
	}
}

// buildInfoLines parses `go version -m` output into its dependencies
// (module path -> version) and build settings (key -> value).
func buildInfoLines(out []byte) (deps, settings map[string]string) {
	deps, settings = map[string]string{}, map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "dep", "=>":
			version := ""
			if len(fields) > 2 {
				version = fields[2]
			}
			deps[fields[1]] = version
		case "build":
			key, value, _ := strings.Cut(fields[1], "=")
			settings[key] = value
		}
	}
	return deps, settings
}
