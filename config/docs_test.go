package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// yamlBlock is a fenced YAML example in Markdown.
var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// TestDocumentedExamplesLoad: every config.yaml example in README.md and
// docs/ loads under the strict rules, so a user copying one gets no error.
// Blocks that are not Talaria configuration (a compose file, Prometheus
// alerting rules) are skipped by their top-level key.
func TestDocumentedExamplesLoad(t *testing.T) {
	t.Parallel()

	files, _ := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	files = append(files, filepath.Join("..", "README.md"))
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range yamlBlock.FindAllStringSubmatch(string(data), -1) {
			block := m[1]
			if foreignYAML(block) {
				continue
			}
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, FileName), []byte(block), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(home, env(nil)); err != nil {
				t.Errorf("%s: example does not load: %v\n%s", f, err, block)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no YAML example found in README.md or docs/")
	}
}

// foreignYAML says a YAML block is another program's file: a compose file
// (services:) or Prometheus rules (groups:).
func foreignYAML(block string) bool {
	for _, key := range []string{"services:", "groups:"} {
		if strings.HasPrefix(block, key) || strings.Contains(block, "\n"+key) {
			return true
		}
	}
	return false
}
