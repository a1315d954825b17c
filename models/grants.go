package models

import (
	"context"
	"fmt"

	"gorm.io/gorm/clause"
)

// AlwaysScope is the scope of approvals granted for every session.
const AlwaysScope = "*"

// approvalGrant records that a dangerous command is approved in a scope:
// one session, or AlwaysScope. Rule is the grant key: "cmd:" and a command
// pattern (at most approval.MaxGrantKey bytes), or, in grants stored before
// patterns existed, a rule id.
type approvalGrant struct {
	Scope string `gorm:"primaryKey;size:128"`
	Rule  string `gorm:"primaryKey;size:320;serializer:text"`
}

// Grants returns the rules approved for a session and those approved always,
// each sorted.
func (s *Store) Grants(ctx context.Context, sessionID string) (session, always []string, err error) {
	var rows []approvalGrant
	err = s.db.WithContext(ctx).Where("scope IN ?", []string{sessionID, AlwaysScope}).Order("rule").Find(&rows).Error
	if err != nil {
		return nil, nil, fmt.Errorf("models: approval grants of %q: %w", sessionID, err)
	}
	for _, r := range rows {
		if r.Scope == AlwaysScope {
			always = append(always, r.Rule)
		} else {
			session = append(session, r.Rule)
		}
	}
	return session, always, nil
}

// AddGrant approves a rule in a scope (a session id or AlwaysScope).
func (s *Store) AddGrant(ctx context.Context, scope, rule string) error {
	if err := checkID("grant scope", scope, maxSessionIDLen); err != nil {
		return fmt.Errorf("models: add grant: %w", err)
	}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&approvalGrant{Scope: scope, Rule: rule}).Error
	if err != nil {
		return fmt.Errorf("models: add grant %s/%s: %w", scope, rule, err)
	}
	return nil
}
