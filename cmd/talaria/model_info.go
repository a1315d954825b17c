package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/talaria-agent/talaria"

	"github.com/talaria-agent/talaria/config"
)

// modelKnowledge is what this configuration knows of model (empty: the
// configured one): context window, output cap, prices and vision, each with where
// it comes from (config, discovered, bundled, unknown). The configured
// endpoint is asked when the configuration leaves something unknown, for
// a few seconds at most; nil when the configuration does not load.
func modelKnowledge(ctx context.Context, model string) *talaria.ModelInfo {
	home, err := config.HomeDir(os.Getenv)
	if err != nil {
		return nil
	}
	cfg, err := config.Load(home, os.Getenv)
	if err != nil {
		return nil
	}
	r := talaria.NewModelConfig(cfg).ModelInfo(ctx, model)
	return &r
}

// printModelKnowledge prints r under model show's settings; nothing when
// r is nil.
func printModelKnowledge(w io.Writer, r *talaria.ModelInfo) {
	if r == nil {
		return
	}
	window := "unknown"
	if r.ContextWindow > 0 {
		window = fmt.Sprintf("%d tokens (%s)", r.ContextWindow, r.ContextWindowFrom)
	}
	fmt.Fprintf(w, "  context_window: %s\n", window)
	if r.MaxOutput > 0 {
		fmt.Fprintf(w, "  max_output: %d tokens (%s)\n", r.MaxOutput, r.MaxOutputFrom)
	}
	fmt.Fprintf(w, "  vision: %s\n", visionLine(r))
	if !r.Price.Known() {
		fmt.Fprintln(w, "  prices: unknown (set models.<name>.input and .output in config.yaml)")
		return
	}
	p := r.Price
	fmt.Fprintf(w, "  prices per million tokens (%s): input %s, output %s", r.PriceFrom, usd(p.Input), usd(p.Output))
	if p.CacheRead > 0 {
		fmt.Fprintf(w, ", cache read %s", usd(p.CacheRead))
	}
	if p.CacheWrite > 0 {
		fmt.Fprintf(w, ", cache write %s", usd(p.CacheWrite))
	}
	fmt.Fprintln(w)
}

// visionLine says whether r's model takes pictures, and who says so.
func visionLine(r *talaria.ModelInfo) string {
	switch {
	case r.Vision == nil:
		return "unknown: not shown pictures (set models.<name>.vision in config.yaml)"
	case *r.Vision:
		return fmt.Sprintf("yes (%s)", r.VisionFrom)
	}
	return fmt.Sprintf("no (%s)", r.VisionFrom)
}

// usd is a price per million tokens as shown: $0.15, $2.50, $0.075.
func usd(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	if s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	return "$" + s
}
