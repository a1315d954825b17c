package embedded

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// ErrSearchAttributeType reports a custom search attribute registered with
// another type than the one asked for.
var ErrSearchAttributeType = errors.New("search attribute registered with another type")

// AddSearchAttributes makes sure namespace has attrs (name -> type) as
// custom search attributes, through Temporal's operator service, as
// `temporal operator search-attribute create` does; it works against any
// Temporal server the client may administer. added reports whether any was
// missing: a server may take a few seconds (its namespace cache refresh)
// before it accepts workflows that use ones just added.
func AddSearchAttributes(ctx context.Context, c client.Client, namespace string,
	attrs map[string]enumspb.IndexedValueType) (added bool, err error) {
	ops := c.OperatorService()
	have, err := ops.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return false, fmt.Errorf("list search attributes of %s: %w", namespace, err)
	}
	missing, err := missingAttributes(have.GetCustomAttributes(), attrs)
	if err != nil || len(missing) == 0 {
		return false, err
	}
	_, err = ops.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: namespace, SearchAttributes: missing,
	})
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return false, fmt.Errorf("add search attributes %v to %s: %w", slices.Sorted(maps.Keys(missing)), namespace, err)
	}
	return true, nil
}

// missingAttributes are the attributes of want that have lacks, or an
// error naming one that has another type. Pure.
func missingAttributes(have, want map[string]enumspb.IndexedValueType) (map[string]enumspb.IndexedValueType, error) {
	missing := map[string]enumspb.IndexedValueType{}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		got, ok := have[name]
		switch {
		case !ok:
			missing[name] = want[name]
		case got != want[name]:
			return nil, fmt.Errorf("%w: %s is %s, want %s", ErrSearchAttributeType, name, got, want[name])
		}
	}
	return missing, nil
}
