package config

import "fmt"

// Delivery configures where cron results can be delivered besides local
// files, webhooks and chats.
type Delivery struct {
	SMTP SMTP `yaml:"smtp"`
}

// SMTP is the mail server email deliveries ("email:<address>") go through.
type SMTP struct {
	Host string `yaml:"host"`
	// Port defaults to 587 (465 with security tls, 25 with none).
	Port     int    `yaml:"port"`
	Username string `yaml:"username"`
	// PasswordEnv names the environment variable holding the password,
	// read by the process that delivers (never the file itself).
	PasswordEnv string `yaml:"password_env"`
	// From is the sender, e.g. "Talaria <bot@example.com>".
	From string `yaml:"from"`
	// Security: starttls (the default: refuse a server without it), tls
	// (implicit TLS) or none (a local relay only).
	Security string `yaml:"security"`
}

// problems are what is wrong with d, for Validate. Pure.
func (d Delivery) problems() []string {
	var out []string
	s := d.SMTP
	switch s.Security {
	case "", "starttls", "tls", "none":
	default:
		out = append(out, fmt.Sprintf("delivery.smtp.security %q is not one of starttls, tls, none", s.Security))
	}
	if s.Port < 0 || s.Port > 65535 {
		out = append(out, fmt.Sprintf("delivery.smtp.port %d is out of range", s.Port))
	}
	if s.Host != "" && s.From == "" {
		out = append(out, "delivery.smtp.from is needed with delivery.smtp.host (the sender's address)")
	}
	return out
}
