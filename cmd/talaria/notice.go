package main

import (
	"errors"
	"fmt"
)

// notice shows one line about the wait itself (the server stopped
// answering, answers again) on errOut, after ending any streamed line.
func (p *streamPrinter) notice(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.midLine {
		fmt.Fprintln(p.out)
		p.midLine = false
	}
	fmt.Fprintf(p.errOut, "talaria: %s\n", oneLine(errors.New(line)))
}
