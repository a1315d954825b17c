package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApprovalsNonInteractive: approvals.noninteractive defaults to deny,
// takes deny or wait, and anything else (or a misspelt key) is one line
// naming the problem.
func TestApprovalsNonInteractive(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		yaml string
		want string // the loaded value, when valid
		err  string // substring of the error, when not
	}{
		{"default", "", NonInteractiveDeny, ""},
		{"deny", "approvals:\n  noninteractive: deny\n", NonInteractiveDeny, ""},
		{"wait", "approvals:\n  mode: ask\n  noninteractive: wait\n", NonInteractiveWait, ""},
		{"unknown value", "approvals:\n  noninteractive: maybe\n", "", `approvals.noninteractive "maybe" is not one of deny, wait`},
		{"empty value", "approvals:\n  noninteractive: \"\"\n", "", `approvals.noninteractive "" is not one of deny, wait`},
		{"misspelt key", "approvals:\n  non_interactive: wait\n", "", `config.yaml:2: unknown key "non_interactive" in approvals (did you mean "noninteractive"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, FileName), []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := Load(home, env(nil))
			if err == nil {
				err = c.Validate()
			}
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error = %v, want one line containing %q", err, tt.err)
				}
			case err != nil:
				t.Fatal(err)
			case c.Approvals.NonInteractive != tt.want:
				t.Fatalf("noninteractive = %q, want %q", c.Approvals.NonInteractive, tt.want)
			}
		})
	}
}
