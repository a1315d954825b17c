package gateway

import (
	"slices"
	"testing"
)

// TestAckable: the updates acknowledged are the first ones, up to the
// first not taken, or on a platform that acknowledges them one by one,
// every one taken.
func TestAckable(t *testing.T) {
	t.Parallel()
	taken := func(flags ...bool) []*slot {
		out := make([]*slot, 0, len(flags))
		for _, f := range flags {
			out = append(out, &slot{taken: f})
		}
		return out
	}
	for _, c := range []struct {
		name  string
		slots []*slot
		each  bool
		want  []int
	}{
		{"none", nil, false, nil},
		{"all taken", taken(true, true, true), false, []int{0, 1, 2}},
		{"the first not taken", taken(false, true, true), false, nil},
		{"a gap", taken(true, false, true), false, []int{0}},
		{"the last not taken", taken(true, true, false), false, []int{0, 1}},
		{"one by one: the first not taken", taken(false, true, true), true, []int{1, 2}},
		{"one by one: a gap", taken(true, false, true), true, []int{0, 2}},
		{"one by one: none taken", taken(false, false), true, nil},
	} {
		got := ackable(c.slots, c.each)
		var idx []int
		for _, s := range got {
			idx = append(idx, slices.Index(c.slots, s))
		}
		if !slices.Equal(idx, c.want) {
			t.Errorf("%s: ackable = %v, want %v", c.name, idx, c.want)
		}
	}
}
