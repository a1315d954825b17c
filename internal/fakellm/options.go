package fakellm

// Option configures a Server at creation. A Step is itself an Option that
// appends the step to the script, so New(TextStep("hi")) works.
type Option interface {
	apply(c *config)
}

// config holds what options set before the server starts.
type config struct {
	apiKey    string
	models    []string
	steps     []Step
	responder Responder
	// forgetBodies: WithoutRequestBodies.
	forgetBodies bool
	// extra are the endpoints beside the model calls (extra.go).
	extra extras
}

// DefaultModel is the model name listed when WithModels is not used.
const DefaultModel = "fake-model"

type optionFunc func(c *config)

func (f optionFunc) apply(c *config) { f(c) }

func (st Step) apply(c *config) { c.steps = append(c.steps, st) }

// WithSteps appends steps to the initial script.
func WithSteps(steps ...Step) Option {
	return optionFunc(func(c *config) { c.steps = append(c.steps, steps...) })
}

// WithAPIKey makes the server require the key on every endpoint, as each
// wire format sends it ("Authorization: Bearer <key>"; for Anthropic
// Messages also "x-api-key: <key>"); other requests get HTTP 401. An empty
// key disables the check (the default).
func WithAPIKey(key string) Option {
	return optionFunc(func(c *config) { c.apiKey = key })
}

// WithModels sets the model names listed by GET /v1/models. The first one is
// reported in answers to requests that name no model. Without this option
// the list is [DefaultModel].
func WithModels(names ...string) Option {
	return optionFunc(func(c *config) { c.models = append([]string(nil), names...) })
}

// WithResponder sets the Responder used when the script is exhausted.
func WithResponder(r Responder) Option {
	return optionFunc(func(c *config) { c.responder = r })
}

// WithoutRequestBodies makes the server forget each request's body,
// headers and query once its answer is chosen: Requests still lists every
// request with its index, wire, status, timings and flags, and the
// Responder still sees the whole request. It is for load benchmarks, whose thousands of
// request bodies would otherwise stay in memory (and in the garbage
// collector's work) until the server is closed.
func WithoutRequestBodies() Option {
	return optionFunc(func(c *config) { c.forgetBodies = true })
}
