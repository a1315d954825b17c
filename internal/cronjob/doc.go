// Package cronjob holds what every way of managing scheduled jobs shares:
// the rules a new or changed job must pass (the CLI's `cron add` and
// `cron edit`, and the HTTP API's /api/jobs, apply the same ones) and the
// JSON shape of a job and of its runs.
package cronjob
