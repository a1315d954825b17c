// Package testrules holds checks that keep the project's tests honest under
// load. It has no code of its own: its tests read the tree's _test.go files
// and fail on a rule broken anywhere in the module.
//
// The rule checked: no test asserts a wall-clock time. A test that compares
// an elapsed time (time.Since, time.Until, a Sub of two times) against a
// bound fails on a loaded machine for no fault of the code; what it wanted to
// show belongs in a benchmark, and a wait belongs on a state. A deliberate
// comparison (say, a lower bound that shows a backoff was waited, which load
// can only lengthen) carries a `// wallclock: <reason>` comment on its line
// or the line above.
package testrules
