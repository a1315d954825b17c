package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"
)

// Lease timing: a holder renews every leaseRenew; a holder that died is
// replaced within leaseTTL + leaseRenew.
const (
	leaseTTL   = 20 * time.Second
	leaseRenew = 5 * time.Second
)

// LeaseName is the lease of one platform account: one consumer of its
// updates at a time, across every gateway replica.
func LeaseName(p Platform) string { return fmt.Sprintf("gateway/%s/%s", p.Name(), p.Account()) }

// NewHolder names this process as a lease holder: host, pid and a random
// part (a restarted process with the same pid is another holder).
func NewHolder() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// consume polls p while this process holds its lease, and waits for the
// lease while another does; it returns when ctx ends, giving the lease up.
func (g *Gateway) consume(ctx context.Context, p Platform) {
	name := LeaseName(p)
	waiting := ""
	for ctx.Err() == nil {
		held, holder, err := g.rt.Store.TakeLease(ctx, name, g.holder, leaseTTL, time.Now())
		switch {
		case err != nil:
			g.logger.Warn("gateway: take the lease", "lease", name, "error", err)
		case !held:
			if holder != waiting {
				g.logger.Info("gateway: another process takes this platform's updates; standing by", "lease", name, "holder", holder)
				waiting = holder
			}
		default:
			waiting = ""
			g.logger.Info("gateway: taking this platform's updates", "lease", name)
			g.holding(ctx, p, name)
			continue
		}
		sleep(ctx, leaseRenew)
	}
}

// holding polls p until ctx ends or the lease is lost, renewing it.
func (g *Gateway) holding(ctx context.Context, p Platform, name string) {
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		defer stop()
		renewed := time.Now()
		for {
			select {
			case <-pctx.Done():
				return
			case <-time.After(leaseRenew):
			}
			now := time.Now()
			held, holder, err := g.rt.Store.TakeLease(pctx, name, g.holder, leaseTTL, now)
			switch leaseState(held, err, now.Sub(renewed)) {
			case leaseHeld:
				renewed = now
			case leaseTaken:
				g.logger.Warn("gateway: the lease went to another process", "lease", name, "holder", holder)
				return
			case leaseExpired:
				g.logger.Warn("gateway: the lease could not be renewed before it expired; stopping (another process may take it)",
					"lease", name, "error", err)
				return
			}
		}
	}()
	g.poll(pctx, p)
	if ctx.Err() != nil {
		release, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = g.rt.Store.ReleaseLease(release, name, g.holder)
	}
}

// leaseRenewal is what a renewal of the lease says.
type leaseRenewal int

// What a renewal of the lease says.
const (
	leaseHeld    leaseRenewal = iota // renewed
	leaseTaken                       // another process holds it
	leaseUnsure                      // the store did not answer; the lease has not expired yet
	leaseExpired                     // the store did not answer for longer than the lease lasts
)

// leaseState is what a renewal says: held, taken, or, with the store not
// answering, unsure until the lease renewed last (since ago) would have
// expired. Pure.
func leaseState(held bool, err error, since time.Duration) leaseRenewal {
	switch {
	case err == nil && held:
		return leaseHeld
	case err == nil:
		return leaseTaken
	case since >= leaseTTL:
		return leaseExpired
	}
	return leaseUnsure
}
