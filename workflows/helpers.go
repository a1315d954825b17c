package workflows

import "sort"

// sortedKeys returns m's keys in a deterministic order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	//workflowcheck:ignore the keys are sorted before they are returned
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
