package workflows

import (
	"errors"
	"sort"
)

// asError is errors.As, named for readability at call sites.
func asError(err error, target any) bool { return errors.As(err, target) }

// sortedKeys returns m's keys in a deterministic order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
