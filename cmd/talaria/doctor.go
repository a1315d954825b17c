package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/talaria-agent/talaria"

	"github.com/spf13/cobra"

	"github.com/talaria-agent/talaria/config"
)

// doctorTimeout bounds each check that reaches another process.
const doctorTimeout = 5 * time.Second

// Verdicts of a doctor check.
const (
	checkOK   = "ok"
	checkWarn = "warn"
	checkFail = "fail"
)

// doctorCheck is the outcome of one check: what was looked at, the
// verdict, what was found and, unless it is fine, what to do.
type doctorCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

func newDoctorCommand() *cobra.Command {
	var out outputFormat
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check the configuration, store, Temporal, model endpoint and disk, and say what to fix",
		Long: `doctor checks, one line each as it goes: the configuration (strictly, as every
command loads it), $TALARIA_HOME, the store, Temporal (the running serve's, or
the external one configured), the model endpoint turns use (serve's when one
runs) and the free disk space of $TALARIA_HOME. Each problem comes with what to
do about it. It only reads: nothing is created. -o json prints the checks as one
JSON list. Exit status 1 when a check fails (warnings do not count).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			asJSON := out.json()
			var progress io.Writer = cmd.OutOrStdout()
			if asJSON {
				progress = io.Discard
			}
			checks := runDoctor(cmd.Context(), cmd, progress)
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), checks); err != nil {
					return fmt.Errorf("encode checks: %w", err)
				}
			}
			for _, c := range checks {
				if c.Status == checkFail {
					return &exitError{code: exitFailure}
				}
			}
			return nil
		},
	}
	out.register(c)
	return c
}

// runDoctor runs the checks in order, printing each line on w as it ends.
func runDoctor(ctx context.Context, cmd *cobra.Command, w io.Writer) []doctorCheck {
	var checks []doctorCheck
	add := func(c doctorCheck) {
		checks = append(checks, c)
		fmt.Fprintln(w, c.line())
	}
	cfg, err := readOnlyConfig(cmd)
	if err != nil {
		add(doctorCheck{"config", checkFail, oneLine(err), "correct the file or variable named (see 'talaria config --help')"})
		return checks
	}
	add(doctorCheck{"config", checkOK, "loads: " + configSource(cfg.Home), ""})
	add(checkHome(cfg.Home))
	info, serveErr := talaria.ReadServeInfo(cfg.Home)
	serving := serveErr == nil
	add(checkStore(ctx, cfg, info, serving))
	add(checkTemporal(ctx, cfg, info, serving))
	add(checkModel(ctx, cfg, info, serving))
	add(checkDisk(cfg.Home))
	add(checkSandbox(cfg))
	return checks
}

// line is the check as one line of text.
func (c doctorCheck) line() string {
	mark := map[string]string{checkOK: "✓", checkWarn: "!", checkFail: "✗"}[c.Status]
	s := fmt.Sprintf("%s %s: %s", mark, c.Name, c.Detail)
	if c.Fix != "" {
		s += " — " + c.Fix
	}
	return s
}

func configSource(home string) string {
	path := filepath.Join(home, config.FileName)
	if _, err := os.Stat(path); err != nil {
		return "defaults and environment (no " + path + ")"
	}
	return path + ", the environment and flags"
}

// checkSandbox says which sandbox the model's commands run in.
func checkSandbox(cfg config.Config) doctorCheck {
	line, ok := talaria.SandboxLine(cfg)
	switch {
	case !ok:
		return doctorCheck{"sandbox", checkWarn, line, "install bubblewrap (apt-get install bubblewrap), or set sandbox.mode: off"}
	case cfg.SandboxSettings().Mode == talaria.SandboxOff:
		return doctorCheck{"sandbox", checkWarn, line, "set sandbox.mode: workspace-write to confine them"}
	}
	return doctorCheck{"sandbox", checkOK, line, ""}
}

func checkHome(home string) doctorCheck {
	fi, err := os.Stat(home)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return doctorCheck{"home", checkWarn, home + " does not exist yet", "'talaria model set', 'talaria serve' or 'talaria chat' creates it"}
	case err != nil:
		return doctorCheck{"home", checkFail, oneLine(err), "check the path and its permissions (TALARIA_HOME)"}
	case !fi.IsDir():
		return doctorCheck{"home", checkFail, home + " is not a directory", "point TALARIA_HOME at a directory"}
	case fi.Mode().Perm()&0o077 != 0:
		return doctorCheck{"home", checkWarn, fmt.Sprintf("%s is open to other users (mode %04o)", home, fi.Mode().Perm()), "chmod 700 " + home}
	}
	return doctorCheck{"home", checkOK, home, ""}
}

// checkStore opens the store the commands would use (serve's when one
// runs) without creating it.
func checkStore(ctx context.Context, cfg config.Config, info talaria.ServeInfo, serving bool) doctorCheck {
	dsn := cfg.DB
	if serving {
		dsn = info.DB
	}
	shown := redactDSN(dsn)
	if !config.IsPostgres(dsn) {
		if _, err := os.Stat(dsn); errors.Is(err, fs.ErrNotExist) {
			return doctorCheck{"store", checkWarn, "no database at " + shown + " yet", "'talaria serve' or 'talaria chat' creates it"}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	st, err := talaria.OpenExistingStore(ctx, dsn)
	if err != nil {
		return doctorCheck{"store", checkFail, oneLine(err), "check --db / TALARIA_DB and that the database answers"}
	}
	defer st.Close()
	if _, err := st.Sessions(ctx, 1); err != nil {
		return doctorCheck{"store", checkFail, oneLine(err), "check the database's permissions and health"}
	}
	return doctorCheck{"store", checkOK, st.Dialect() + " at " + shown, ""}
}

// checkTemporal asks the Temporal that turns run on for its health: the
// running serve's, else the configured external one.
func checkTemporal(ctx context.Context, cfg config.Config, info talaria.ServeInfo, serving bool) doctorCheck {
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	where := ""
	switch {
	case serving:
		where = fmt.Sprintf("talaria serve (pid %d) at %s", info.PID, info.TemporalAddress)
	case !cfg.Temporal.Embedded():
		where = cfg.Temporal.Address
	default:
		return doctorCheck{"temporal", checkWarn, "no talaria serve runs for this home", "start 'talaria serve' (chat -q embeds its own server meanwhile)"}
	}
	err := talaria.CheckTemporal(ctx, cfg, info, serving)
	if err != nil {
		return doctorCheck{"temporal", checkFail, where + ": " + oneLine(err), "check that it runs and TEMPORAL_ADDRESS / the TLS settings"}
	}
	return doctorCheck{"temporal", checkOK, where + " answers", ""}
}

// checkModel looks at the endpoint turns use: serve's (asked without this
// shell's key) or this configuration's.
func checkModel(ctx context.Context, cfg config.Config, info talaria.ServeInfo, serving bool) doctorCheck {
	configured, endpoint, key, whose := cfg.Model.Configured(), cfg.Model.Endpoint(), cfg.Model.APIKey, "this configuration's"
	if serving {
		configured, endpoint, key, whose = info.ModelConfigured, info.ModelEndpoint, "", "talaria serve's"
	}
	if !configured {
		return doctorCheck{"model", checkFail, "no model endpoint is configured (" + whose + ")", "talaria model set --base-url URL --model NAME"}
	}
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	if err := talaria.Ping(ctx, talaria.Endpoint{BaseURL: endpoint, APIKey: key}); err != nil {
		return doctorCheck{"model", checkFail, oneLine(err), "start the endpoint, or set another with 'talaria model set --base-url URL'"}
	}
	return doctorCheck{"model", checkOK, whose + " endpoint " + talaria.RedactURL(endpoint) + " answers", ""}
}

// Free space below which the disk check warns, and fails.
const (
	diskWarnBytes = 1 << 30
	diskFailBytes = 100 << 20
)

// checkDisk looks at the free space where $TALARIA_HOME is (or would be).
func checkDisk(home string) doctorCheck {
	dir := home
	for {
		if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return doctorCheck{"disk", checkWarn, "cannot read the free space of " + dir + ": " + oneLine(err), ""}
	}
	return diskVerdict(dir, st.Bavail*uint64(st.Bsize))
}

// diskVerdict judges free bytes at dir. Pure.
func diskVerdict(dir string, free uint64) doctorCheck {
	detail := fmt.Sprintf("%s free at %s", humanBytes(free), dir)
	switch {
	case free < diskFailBytes:
		return doctorCheck{"disk", checkFail, detail, "free some space: the store and Temporal's files stop taking writes when the disk is full"}
	case free < diskWarnBytes:
		return doctorCheck{"disk", checkWarn, detail, "less than 1 GiB left: free some space"}
	}
	return doctorCheck{"disk", checkOK, detail, ""}
}

// humanBytes is n in B, KiB, MiB, GiB or TiB. Pure.
func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 3; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGT"[exp])
}
