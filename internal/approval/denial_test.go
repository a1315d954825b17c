package approval

import (
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

func TestDenialMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		a      turnapi.Assessment
		denied bool
		want   []string
	}{
		{"blocked", outside("rm -rf /"), false, []string{"BLOCKED", "root filesystem", "root_delete", "Do not retry", "safer approach"}},
		{"blocked though denied", outside("rm -rf /"), true, []string{"BLOCKED", "never allowed"}},
		{"denied", outside("git reset --hard"), true, []string{"DENIED", "did not approve", "git reset --hard", "git_reset_hard", "Do not retry the same command", "ask the user"}},
		{"no approval given", outside("git clean -f"), false, []string{"NOT APPROVED", "git_clean", "Do not retry"}},
		{"empty assessment", turnapi.Assessment{}, true, []string{"DENIED", "needs approval"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := turnapi.DenialMessage(tt.a, tt.denied)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("DenialMessage = %q, missing %q", got, w)
				}
			}
		})
	}
}
