package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
	"github.com/talaria-agent/talaria/internal/cronjob"
	"github.com/talaria-agent/talaria/internal/engine"
	"github.com/talaria-agent/talaria/internal/tools"
	"github.com/talaria-agent/talaria/workflows"
)

// runFlags are the flags of `talaria run`.
type runFlags struct {
	common                    commonFlags
	goal, session, model      string
	tools                     []string
	maxHours, maxCost         float64
	maxIterations, totalIters int
	jsonOut                   bool
}

func newRunCommand() *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "run --goal GOAL",
		Short: "Pursue a goal over as many turns as it takes, within a budget",
		Long: `run --goal works toward GOAL in a new session: it runs a turn with the goal;
when the turn ends (its answer, or its iteration budget spent and summarised)
the model is asked, without tools, whether the goal is done, can go on, or is
blocked, and while it can go on another turn continues the same conversation.
Each turn is printed on stderr as it ends. Compaction keeps the conversation
bounded over hours, and the goal is durable: it goes on across restarts of
serve. 'talaria stop SESSION' ends it, interrupting the running turn.

The goal ends done, blocked, interrupted, failed, or when a budget is spent:
--max-hours (wall time), --max-cost (USD, from the turns' token usage and the
model's price: config.yaml's prices, else the built-in list prices), or
--max-iterations-total (model calls of all turns). Without a budget a goal
stops after 24 hours or 1000 model calls.

Exit status: 0 when the goal is done, 1 when it ended otherwise, 2 for usage
or configuration errors.`,
		Example: `  talaria run --goal "make every test in ./pkg pass" --max-hours 2
  talaria run --goal "migrate the 40 handlers to the new API" --max-iterations 30 --max-cost 5`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runGoal(cmd, f) },
	}
	f.common.register(c)
	c.Flags().StringVar(&f.goal, "goal", "", "the goal to pursue (required)")
	c.Flags().StringVar(&f.session, "session", "", "the goal's session id, which must be new (default: a fresh id)")
	c.Flags().StringVarP(&f.model, "model", "m", "", "model name (env TALARIA_MODEL)")
	c.Flags().StringSliceVar(&f.tools, "tools", nil, "tools or toolsets the turns may use (default: all)")
	c.Flags().IntVar(&f.maxIterations, "max-iterations", 0, fmt.Sprintf("tool-calling iterations per turn (default %d)", config.DefaultMaxIterations))
	c.Flags().IntVar(&f.totalIters, "max-iterations-total", 0, "model calls of all turns together (default 1000 without another budget)")
	c.Flags().Float64Var(&f.maxHours, "max-hours", 0, "wall time in hours (default 24 without another budget)")
	c.Flags().Float64Var(&f.maxCost, "max-cost", 0, "spend in USD, from token usage and the model's price")
	c.Flags().BoolVar(&f.jsonOut, "json", false, "print exactly one JSON object, the goal's result, on stdout")
	return c
}

// Defaults of a goal with no budget.
const (
	defaultGoalHours      = 24
	defaultGoalIterations = 1000
)

func runGoal(cmd *cobra.Command, f runFlags) error {
	ctx := cmd.Context()
	cfg, err := f.common.loadConfig()
	if err != nil {
		return err
	}
	goal := strings.TrimSpace(f.goal)
	switch {
	case goal == "":
		return usagef("run needs --goal GOAL")
	case f.maxHours < 0 || f.maxCost < 0 || f.totalIters < 0 || f.maxIterations < 0:
		return usagef("--max-hours, --max-cost, --max-iterations and --max-iterations-total must not be negative")
	case f.session != "" && !sessionIDPattern.MatchString(f.session):
		return usagef("--session %q: use 1-128 letters, digits, '.', '_', '~' or '-'", f.session)
	}
	if err := cronjob.CheckTools(f.tools); err != nil {
		return usagef("--tools: %v", err)
	}
	if f.model != "" {
		cfg.Model.Name = f.model
	}
	if f.maxIterations > 0 {
		cfg.MaxIterations = f.maxIterations
	}
	budget := workflows.GoalBudget{MaxIterations: f.totalIters, MaxCost: f.maxCost, MaxDuration: time.Duration(f.maxHours * float64(time.Hour))}
	if budget == (workflows.GoalBudget{}) {
		budget.MaxIterations, budget.MaxDuration = defaultGoalIterations, defaultGoalHours*time.Hour
	}
	if price, ok := cfg.PriceOf(cfg.Model.Name); ok {
		budget.InputPrice, budget.OutputPrice = price.Input, price.Output
	} else if f.maxCost > 0 {
		return usagef("--max-cost: no price is known for the model %q; set prices.%s.input and .output (USD per million tokens) in config.yaml", cfg.Model.Name, cfg.Model.Name)
	}
	workdir, err := os.Getwd()
	if err != nil {
		return usagef("cannot read the working directory: %v", err)
	}
	rt, release, err := openRuntime(ctx, cfg, newLogger(cfg.LogLevel))
	if err != nil {
		return err
	}
	defer release()
	session := f.session
	if session == "" {
		session = "goal-" + newSessionID()
	}
	turn := engine.WithModel(engine.TurnTemplate(cfg, workdir), f.model)
	turn.Tools = tools.ExpandToolsets(f.tools)
	err = rt.StartGoal(ctx, workflows.GoalInput{SessionID: session, Goal: goal, Turn: turn, Budget: budget})
	if errors.Is(err, engine.ErrSessionInUse) {
		return usageErr(err)
	}
	if err != nil {
		return err
	}
	errOut := cmd.ErrOrStderr()
	fmt.Fprintf(errOut, "session: %s\n", session)
	res, err := rt.WaitGoal(ctx, session, func(t workflows.GoalTurn) {
		line := fmt.Sprintf("turn %d: %s, %d model calls", t.Number, t.StopReason, t.APICalls)
		if t.Verdict != "" {
			line += " — " + t.Verdict
			if t.Reason != "" {
				line += ": " + t.Reason
			}
		}
		fmt.Fprintln(errOut, line)
	})
	if err != nil {
		return err
	}
	if f.jsonOut {
		if err := writeJSON(cmd.OutOrStdout(), res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(cmd.OutOrStdout(), "goal %s: %s (%d turns, %d model calls, %d tokens, $%.4f)\n",
			res.Outcome, res.Reason, res.TurnCount, res.Iterations, res.Usage.TotalTokens, res.CostUSD)
	}
	if res.Outcome != workflows.GoalDone {
		return &exitError{code: exitFailure}
	}
	return nil
}
