package activities

import "path/filepath"

// outputDir is where a tool output longer than the model's cap is kept in
// full: $TALARIA_HOME/outputs of this worker (none without a home).
func (a *Activities) outputDir() string {
	if a.Home == "" {
		return ""
	}
	return filepath.Join(a.Home, "outputs")
}
