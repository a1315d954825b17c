package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/talaria-agent/talaria"
)

// serveModelWarning is the one line a client of serve prints when this
// shell's environment names another model endpoint or model than the one
// serve's turns use ("" when they agree or the shell names none). Pure.
func serveModelWarning(info talaria.ServeInfo, getenv func(string) string) string {
	s := talaria.ServeSettings(info)
	var ignored []string
	if v := talaria.RedactURL(strings.TrimRight(getenv("OPENAI_BASE_URL"), "/")); v != "" && (!s.Configured || v != s.BaseURL) {
		ignored = append(ignored, "OPENAI_BASE_URL="+v) // shown without credentials, like serve's
	}
	if v := getenv("TALARIA_MODEL"); v != "" && v != s.Model {
		ignored = append(ignored, "TALARIA_MODEL="+v)
	}
	if len(ignored) == 0 {
		return ""
	}
	used := "no model endpoint"
	if s.Configured {
		used = fmt.Sprintf("model endpoint %s (model %s)", s.BaseURL, s.Model)
	}
	verb := "is"
	if len(ignored) > 1 {
		verb = "are"
	}
	return fmt.Sprintf("talaria: using talaria serve's %s; %s in this shell %s not used — set it in $TALARIA_HOME/config.yaml or with 'talaria model set' (-m chooses a model for one turn)",
		used, strings.Join(ignored, " and "), verb)
}

// warnServeModel prints serveModelWarning for the serve running for home,
// if any.
func warnServeModel(w io.Writer, home string) {
	info, err := talaria.ReadServeInfo(home)
	if err != nil {
		return
	}
	if line := serveModelWarning(info, os.Getenv); line != "" {
		fmt.Fprintln(w, line)
	}
}

// noteModelOverride shows, after a turn run with -m, the model that
// answered (the JSON result carries it in "model").
func noteModelOverride(w io.Writer, override string, asJSON bool, res talaria.ConversationResult, err error) {
	if override == "" || asJSON || err != nil || res.Model == "" {
		return
	}
	fmt.Fprintf(w, "talaria: model %s (-m, for this turn)\n", res.Model)
}
