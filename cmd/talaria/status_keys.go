package main

import (
	"fmt"
	"io"

	"github.com/talaria-agent/talaria"

	"github.com/talaria-agent/talaria/internal/textline"
)

// printKeyPools writes the key pools, one line a key. Pure.
func printKeyPools(w io.Writer, pools []talaria.KeyPoolStatus) {
	if len(pools) == 0 {
		return
	}
	fmt.Fprintln(w, "  key pools:")
	for _, p := range pools {
		fmt.Fprintf(w, "    %s %s:", p.Role, textline.Visible(p.Endpoint))
		if p.Error != "" {
			fmt.Fprintf(w, " (cool-downs not read: %s)", textline.Of(textline.Visible(p.Error), shownText))
		}
		fmt.Fprintln(w)
		for _, k := range p.Keys {
			if k.Position > 0 {
				fmt.Fprintf(w, "      key %d of %d (%s): %s\n", k.Position, k.Of, k.KeyID, k.State)
			} else {
				fmt.Fprintf(w, "      key %s: %s\n", k.KeyID, k.State)
			}
		}
	}
}
