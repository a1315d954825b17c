package engine

import (
	"strings"
	"testing"
)

func TestServerWatchNext(t *testing.T) {
	t.Parallel()
	const name = "talaria serve at 127.0.0.1:7233"
	tests := []struct {
		name     string
		prev     serverWatch
		answered bool
		want     serverWatch
		wantMsg  string
	}{
		{"answers", serverWatch{}, true, serverWatch{}, ""},
		{"one miss is a blip", serverWatch{}, false, serverWatch{misses: 1}, ""},
		{"a blip passes", serverWatch{misses: 1}, true, serverWatch{}, ""},
		{"two misses in a row are said", serverWatch{misses: 1}, false, serverWatch{down: true, misses: 2},
			name + " stopped answering; the turn goes on when it is back, and this client waits for it (Ctrl-C stops waiting)"},
		{"said once", serverWatch{down: true, misses: 2}, false, serverWatch{down: true, misses: 3}, ""},
		{"back", serverWatch{down: true, misses: 9}, true, serverWatch{}, name + " answers again; waiting for the turn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := tt.prev.next(tt.answered, name)
			if got != tt.want || msg != tt.wantMsg {
				t.Errorf("next = %+v, %q; want %+v, %q", got, msg, tt.want, tt.wantMsg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("message spans lines: %q", msg)
			}
		})
	}
}

func TestServerName(t *testing.T) {
	t.Parallel()
	rt := &Runtime{}
	rt.Config.Temporal.Address = "temporal.example:7233"
	if got := rt.ServerName(); got != "temporal at temporal.example:7233" {
		t.Errorf("ServerName = %q", got)
	}
	rt.Peer = "talaria serve at 127.0.0.1:7233"
	if got := rt.ServerName(); got != rt.Peer {
		t.Errorf("ServerName = %q, want the peer", got)
	}
}
