package main

import (
	"github.com/spf13/cobra"
)

// outputFormat is the --json / -o,--output choice of a command that prints
// data: "text" (the default) or "json".
type outputFormat struct {
	asJSON bool
	output string
}

// register adds --json and -o/--output to c; an unknown format is a
// usage error before c runs.
func (o *outputFormat) register(c *cobra.Command) {
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON (same as -o json)")
	c.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	c.PreRunE = func(*cobra.Command, []string) error {
		if o.output != "text" && o.output != "json" && o.output != "" {
			return usagef("--output %q: use text or json", o.output)
		}
		return nil
	}
}

// json reports whether JSON was asked for.
func (o *outputFormat) json() bool { return o.output == "json" || o.asJSON }
