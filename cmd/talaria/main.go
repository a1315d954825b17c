// Command talaria is the Talaria agent engine: `talaria serve` runs the
// embedded Temporal server, the worker and the store; `talaria chat` talks to
// the agent. Run `talaria --help` for the commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
)

func main() {
	var ctx context.Context
	ctx, sigs = withSignals(context.Background())
	err := newRootCommand().ExecuteContext(ctx)
	sigs.stop()
	os.Exit(report(err))
}

// report prints err as one line on stderr and returns the exit status.
func report(err error) int {
	if err == nil {
		return 0
	}
	var ex *exitError
	if errors.As(err, &ex) {
		if ex.err != nil {
			fmt.Fprintf(os.Stderr, "talaria: %s\n", oneLine(ex.err))
		}
		return ex.code
	}
	fmt.Fprintf(os.Stderr, "talaria: %s\n", oneLine(err))
	return exitFailure
}

var lineBreaks = regexp.MustCompile(`\s*\n\s*`)

// oneLine keeps an error message on one line: some drivers return several.
func oneLine(err error) string {
	return lineBreaks.ReplaceAllString(strings.TrimSpace(err.Error()), "; ")
}
