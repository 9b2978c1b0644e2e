package deploy

import (
	"regexp"
	"strings"
)

var (
	// osloLogLine is a line of oslo.log's default format at ERROR or CRITICAL:
	// "2026-11-22 03:07:41.189 1 ERROR keystone [-] text".
	osloLogLine = regexp.MustCompile(`^\S+ \S+ \d+ (ERROR|CRITICAL) \S+ (?:\[[^\]]*\] )?(.*)$`)
	// exceptionLine is the last line of a Python traceback: "module.SomeError: text".
	exceptionLine = regexp.MustCompile(`^[A-Za-z_][\w.]*(Error|Exception|Failure)\b.*`)
)

// FailureLine picks the line of a failed keystone-manage's log (the end of it, as the
// pod's termination message: the Jobs fall back to their logs) that says why: the last
// CRITICAL line, else the last exception that Keystone logged, else the last exception
// printed at all (Python's noise at exit comes last and ranks lowest), else the whole
// message. The KeystoneAPI's job steps and kubectl keystone tree both report it.
func FailureLine(msg string) string {
	best, rank := msg, 0
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		r, text := 0, line
		if m := osloLogLine.FindStringSubmatch(line); m != nil {
			text = m[2]
			switch {
			case m[1] == "CRITICAL":
				r = 3
			case exceptionLine.MatchString(text):
				r = 2
			}
		} else if exceptionLine.MatchString(line) {
			r = 1
		}
		if r > 0 && r >= rank {
			best, rank = text, r
		}
	}
	return best
}
