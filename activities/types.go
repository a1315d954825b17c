package activities

import "fmt"

// Idempotency keys of the messages a turn writes.
func userKey(turnID string) string { return turnID + "/user" }
func replyKey(turnID string, call int) string {
	return fmt.Sprintf("%s/call-%d/assistant", turnID, call)
}
func toolKey(turnID string, call int, id string) string {
	return fmt.Sprintf("%s/call-%d/tool/%s", turnID, call, id)
}
func explanationKey(turnID string, call int) string {
	return fmt.Sprintf("%s/call-%d/explanation", turnID, call)
}
func finalKey(turnID string) string { return turnID + "/final" }
func steerKey(turnID string, call, i int) string {
	return fmt.Sprintf("%s/call-%d/steer-%d", turnID, call, i)
}
