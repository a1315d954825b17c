package prompt

import (
	"cmp"
	"fmt"
	"strings"
)

// dateLine renders "Current date: 2026-11-29 (Sunday). Model: X via Y.
// Working directory: Z." from in.Now in UTC; parts without a value are
// left out (an unknown model is named "unknown").
func dateLine(in Inputs) string {
	now := in.Now.UTC()
	var b strings.Builder
	fmt.Fprintf(&b, "Current date: %s (%s).", now.Format("2006-01-02"), now.Weekday())
	model := cmp.Or(strings.TrimSpace(in.Model), "unknown")
	fmt.Fprintf(&b, " Model: %s", model)
	if p := strings.TrimSpace(in.Provider); p != "" {
		fmt.Fprintf(&b, " via %s", p)
	}
	b.WriteString(".")
	if in.Workdir != "" {
		fmt.Fprintf(&b, " Working directory: %s.", in.Workdir)
	}
	return b.String()
}
