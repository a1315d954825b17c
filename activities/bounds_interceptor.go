package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/talaria-agent/talaria/internal/turnapi"
)

// PayloadTooLarge is the error type of an activity whose result would not
// fit in workflow history (MaxPayloadBytes): the activity is failed, not
// retried, instead of wedging its workflow on a payload Temporal refuses.
const PayloadTooLarge = "PayloadTooLarge"

// NewBoundsInterceptor returns the worker interceptor that keeps what
// activities (local ones included) put into workflow history small: a
// failure's message is cut to MaxErrorBytes (its type, retryability and
// retry delay kept, its cause chain dropped), and a result whose encoding
// is above MaxPayloadBytes fails the activity as PayloadTooLarge. The
// activities bound their own results by construction; this is the net
// under them, for what a future change might forget.
func NewBoundsInterceptor() interceptor.WorkerInterceptor { return &boundsWorker{} }

type boundsWorker struct {
	interceptor.WorkerInterceptorBase
}

func (*boundsWorker) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	b := &boundsActivity{}
	b.Next = next
	return b
}

type boundsActivity struct {
	interceptor.ActivityInboundInterceptorBase
}

func (b *boundsActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	res, err := b.Next.ExecuteActivity(ctx, in)
	if err != nil {
		return res, BoundFailure(err)
	}
	if n := encodedLen(res); n > turnapi.MaxPayloadBytes {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("result of %d bytes is above the history bound of %d bytes", n, turnapi.MaxPayloadBytes), PayloadTooLarge, nil)
	}
	return res, nil
}

// encodedLen is the size of v's JSON encoding (Temporal's default data
// converter); -1 when it does not encode as JSON (then it is left alone).
func encodedLen(v any) int {
	if v == nil {
		return 0
	}
	data, err := json.Marshal(v)
	if err != nil {
		return -1
	}
	return len(data)
}

// BoundFailure returns err, or when its message (its causes included) is
// longer than MaxErrorBytes an application error of the same type,
// retryability and retry delay with the message cut and no cause chain.
// Cancellations and timeouts pass unchanged. Pure.
func BoundFailure(err error) error {
	if err == nil || len(err.Error()) <= turnapi.MaxErrorBytes {
		return err
	}
	var canceled *temporal.CanceledError
	if errors.As(err, &canceled) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	opts := temporal.ApplicationErrorOptions{}
	kind := reflect.TypeOf(err).String()
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		kind = appErr.Type()
		opts.NonRetryable = appErr.NonRetryable()
		opts.NextRetryDelay = appErr.NextRetryDelay()
	}
	return temporal.NewApplicationErrorWithOptions(turnapi.BoundError(err.Error()), kind, opts)
}
