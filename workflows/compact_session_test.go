package workflows

import (
	"errors"
	"strings"
	"testing"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

func TestCompactionReport(t *testing.T) {
	cases := []struct {
		name string
		res  turnapi.CompressContextResult
		err  error
		want string
	}{
		{"compacted", turnapi.CompressContextResult{Compacted: true, Before: 9000, After: 1200}, nil, "Compacted: ~9000 → ~1200 tokens"},
		{"fallback", turnapi.CompressContextResult{Compacted: true, Fallback: true, Before: 9000, After: 1500}, nil, "without a model summary"},
		{"short", turnapi.CompressContextResult{Before: 300, After: 300}, nil, "Nothing to compact"},
		{"failed", turnapi.CompressContextResult{}, errors.New("store unreachable"), "The compaction failed: store unreachable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := CompactionReport(c.res, c.err); !strings.Contains(got, c.want) {
				t.Errorf("CompactionReport = %q, want it to contain %q", got, c.want)
			}
		})
	}
}
