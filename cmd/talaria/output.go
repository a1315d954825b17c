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

// register adds --json and -o/--output to c.
func (o *outputFormat) register(c *cobra.Command) {
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON (same as -o json)")
	c.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text or json")
}

// json reports whether JSON was asked for; an unknown format is a usage
// error.
func (o *outputFormat) json() (bool, error) {
	switch o.output {
	case "text", "":
		return o.asJSON, nil
	case "json":
		return true, nil
	}
	return false, usagef("--output %q: use text or json", o.output)
}
