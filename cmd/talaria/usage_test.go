package main

import (
	"strings"
	"testing"
	"time"

	"github.com/talaria-agent/talaria/models"
)

func TestParseSince(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"7d", 7 * 24 * time.Hour, false},
		{"2w", 14 * 24 * time.Hour, false},
		{"1.5d", 36 * time.Hour, false},
		{"90m", 90 * time.Minute, false},
		{" 24h ", 24 * time.Hour, false},
		{"0d", 0, true},
		{"-3h", 0, true},
		{"soon", 0, true},
		{"d", 0, true},
		{"", 0, true},
		{"1e300d", 0, true},
		{"Infd", 0, true},
		{"NaNd", 0, true},
	} {
		got, err := parseSince(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("parseSince(%q) = %v, %v", tt.in, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), "--since") {
			t.Errorf("parseSince(%q) error %q does not name the flag", tt.in, err)
		}
	}
}

func TestCostText(t *testing.T) {
	for _, tt := range []struct {
		row  models.UsageRow
		want string
	}{
		{models.UsageRow{Calls: 3, CostUSD: 1.234}, "$1.23"},
		{models.UsageRow{Calls: 3, CostUSD: 0.00123}, "$0.0012"},
		{models.UsageRow{Calls: 2, Unpriced: 2}, "unknown (no price)"},
		{models.UsageRow{Calls: 3, Unpriced: 1, CostUSD: 0.5}, "$0.50 (+1 calls without a price)"},
		{models.UsageRow{}, "$0"},
	} {
		if got := costText(tt.row); got != tt.want {
			t.Errorf("costText(%+v) = %q, want %q", tt.row, got, tt.want)
		}
	}
}

// TestEmptyUsageJSON: the report of nothing, said when there is no
// database yet, is the report an empty store gives.
func TestEmptyUsageJSON(t *testing.T) {
	var b strings.Builder
	if err := writeJSON(&b, usageReport{Rows: nonNil(nil), Total: sumUsage(nil)}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strings.Fields(b.String()), ""); got != emptyUsageJSON {
		t.Fatalf("empty report = %s\nwant %s", got, emptyUsageJSON)
	}
}
