package deploy

import (
	"os"
	"testing"
)

func TestFailureLine(t *testing.T) {
	// The termination message of a real db-sync pod (make e2e) whose database password
	// was wrong: the end of a long oslo.log traceback, then Python's noise at exit.
	realLog, err := os.ReadFile("testdata/db-sync-access-denied.log")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ msg, want string }{
		"keystone's exception wins over the noise at exit": {string(realLog),
			`sqlalchemy.exc.OperationalError: (pymysql.err.OperationalError) (1045, "Access denied for user 'keystone'@'10.244.0.23' (using password: YES)")`},
		"a CRITICAL line wins": {"2026-11-22 03:07:41.189 1 CRITICAL keystone [-] Unhandled error: boom\n" +
			"2026-11-22 03:07:41.189 1 ERROR keystone ValueError: later", "Unhandled error: boom"},
		"a plain traceback":                  {"Traceback (most recent call last):\n  File \"x\", line 1\nRuntimeError: no database\n", "RuntimeError: no database"},
		"no exception: the message as it is": {"something failed\n", "something failed\n"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := FailureLine(tc.msg); got != tc.want {
				t.Errorf("FailureLine() = %q, want %q", got, tc.want)
			}
		})
	}
}
