package main

import (
	"fmt"
	"io"
	"time"

	"github.com/talaria-agent/talaria"
)

// printWaits writes one line per wait.
func printWaits(w io.Writer, waits []talaria.ActivityWait, now time.Time) {
	for _, wt := range waits {
		attempt := fmt.Sprint(wt.Attempt)
		if wt.MaxAttempts > 0 {
			attempt += fmt.Sprintf(" of %d", wt.MaxAttempts)
		}
		if wt.NextAttempt != nil {
			fmt.Fprintf(w, "  waiting: %s attempt %s in %s", wt.What, attempt, wt.NextAttempt.Sub(now).Round(time.Second))
		} else {
			fmt.Fprintf(w, "  waiting: %s attempt %s running for %s", wt.What, attempt, wt.RunningFor.Round(time.Second))
		}
		if wt.LastFailure != "" {
			fmt.Fprintf(w, " — last failure: %s", wt.LastFailure)
		}
		fmt.Fprintln(w)
	}
}
