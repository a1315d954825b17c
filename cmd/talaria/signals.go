package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// signals routes SIGINT and SIGTERM. SIGTERM, and SIGINT when no handler is
// installed, cancel the command's context. While a handler is installed
// (the interactive chat during a turn), SIGINT calls it instead.
type signals struct {
	mu      sync.Mutex
	onInt   func()
	cancel  context.CancelFunc
	stopped chan struct{}
}

// withSignals returns a context cancelled by SIGTERM or an unhandled SIGINT.
func withSignals(parent context.Context) (context.Context, *signals) {
	ctx, cancel := context.WithCancel(parent)
	s := &signals{cancel: cancel, stopped: make(chan struct{})}
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-s.stopped:
				return
			case sig := <-ch:
				s.mu.Lock()
				h := s.onInt
				s.mu.Unlock()
				if sig == os.Interrupt && h != nil {
					h()
					continue
				}
				cancel()
			}
		}
	}()
	return ctx, s
}

// handleInterrupt installs h for SIGINT until the returned func is called.
func (s *signals) handleInterrupt(h func()) (restore func()) {
	s.mu.Lock()
	s.onInt = h
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.onInt = nil
		s.mu.Unlock()
	}
}

// stop releases the signal handlers.
func (s *signals) stop() {
	close(s.stopped)
	s.cancel()
}

// sigs is the process's signal router, set up by main.
var sigs *signals
