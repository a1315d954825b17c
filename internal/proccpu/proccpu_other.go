//go:build !unix

package proccpu

// Seconds is 0 where the platform does not tell a process's CPU time.
func Seconds() float64 { return 0 }
