// Package transcript converts stored messages to the OpenAI wire format and
// holds pure text helpers shared by the workflow and its activities, such as
// removing reasoning blocks and repairing a message sequence before a call.
package transcript
