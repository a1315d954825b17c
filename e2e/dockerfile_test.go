package e2e

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDockerfile: no container engine runs here, so the Dockerfile is kept
// to its promises by reading it: BuildKit syntax, a build stage on the Go
// release go.mod names, cache mounts for the module and build caches, a
// static binary, a runtime that does not run as root, no floating tags.
func TestDockerfile(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	lines := dockerfileInstructions(string(data))
	if !strings.HasPrefix(string(data), "# syntax=docker/dockerfile:1") {
		t.Error("the Dockerfile does not start with # syntax=docker/dockerfile:1 (cache mounts need it)")
	}
	goVersion := goDirective(t)
	var froms, users []string
	var build string
	for _, l := range lines {
		switch kw, rest, _ := strings.Cut(l, " "); strings.ToUpper(kw) {
		case "FROM":
			froms = append(froms, rest)
			image := strings.Fields(rest)[0]
			if !strings.Contains(image, ":") || strings.Contains(image, ":latest") {
				t.Errorf("FROM %s: pin a version", image)
			}
			if strings.HasPrefix(image, "golang:") && !strings.HasPrefix(image, "golang:"+goVersion+"-") {
				t.Errorf("FROM %s: go.mod names Go %s", image, goVersion)
			}
		case "USER":
			users = append(users, rest)
		case "RUN":
			if strings.Contains(rest, "go build") {
				build = rest
			}
		}
	}
	if len(froms) < 2 {
		t.Errorf("want a multi-stage build, found %d stages", len(froms))
	}
	for _, want := range []string{"--mount=type=cache,target=/go/pkg/mod", "--mount=type=cache,target=/root/.cache/go-build", "./cmd/talaria"} {
		if !strings.Contains(build, want) {
			t.Errorf("the go build step lacks %s: %q", want, build)
		}
	}
	if !strings.Contains(string(data), "CGO_ENABLED=0") {
		t.Error("the binary is not built static (CGO_ENABLED=0)")
	}
	if len(users) == 0 || users[len(users)-1] == "root" || users[len(users)-1] == "0" {
		t.Errorf("the runtime runs as root (USER %v)", users)
	}
}

// TestDockerBuildContext: the build context .dockerignore leaves holds
// everything the binary is built from (and no .git): the files it lets
// through, alone in a directory, build ./cmd/talaria.
func TestDockerBuildContext(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary once more")
	}
	patterns := dockerignorePatterns(t)
	for _, must := range []string{".git", "e2e", "docs"} {
		if !dockerignored(patterns, must) {
			t.Errorf(".dockerignore lets %s into the build context", must)
		}
	}
	dir := t.TempDir()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if dockerignored(patterns, rel) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		return copyFile(p, filepath.Join(dir, filepath.FromSlash(rel)))
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "talaria"), "./cmd/talaria")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=go1.27.3", "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false -trimpath -mod=readonly")
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(9 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("the build in the context did not finish within 9 minutes")
	}
	if err != nil {
		t.Fatalf("go build in the Docker build context: %v\n%s", err, out)
	}
}

// dockerfileInstructions joins continued lines and drops comments.
func dockerfileInstructions(text string) []string {
	var out []string
	var cur strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || line == "" && cur.Len() == 0 {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		out = append(out, cur.String())
		cur.Reset()
	}
	return out
}

// goDirective is go.mod's go line ("1.27.3").
func goDirective(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("go.mod has no go line")
	return ""
}

type ignorePattern struct {
	glob   string
	negate bool
}

func dockerignorePatterns(t *testing.T) []ignorePattern {
	t.Helper()
	data, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var ps []ignorePattern
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		p := ignorePattern{}
		if rest, ok := strings.CutPrefix(l, "!"); ok {
			p.negate, l = true, rest
		}
		p.glob = strings.TrimPrefix(strings.TrimSuffix(l, "/"), "/")
		ps = append(ps, p)
	}
	return ps
}

// dockerignored applies the patterns as Docker does for these forms: the
// last matching pattern decides; "**/" matches any number of leading
// directories; a pattern matching a directory excludes what is under it.
func dockerignored(ps []ignorePattern, rel string) bool {
	ignored := false
	for _, p := range ps {
		if globMatch(p.glob, rel) {
			ignored = !p.negate
		}
	}
	return ignored
}

func globMatch(glob, rel string) bool {
	if rest, ok := strings.CutPrefix(glob, "**/"); ok {
		parts := strings.Split(rel, "/")
		for i := range parts {
			if globMatch(rest, strings.Join(parts[i:], "/")) {
				return true
			}
		}
		return false
	}
	ok, _ := path.Match(glob, rel)
	return ok
}

func copyFile(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
