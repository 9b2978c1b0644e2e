package manager

import (
	"os"
	"strconv"
	"strings"
)

// DefaultGCPercent is the garbage collector's target (GOGC) when the environment sets
// none: a heap may grow to three times what is live before a collection, where Go's
// default is twice. Collections were a tenth of the manager's processor time through a
// rollout; at 200 the manager used 0.36 s instead of 0.42 s for 5 rollouts, and its RSS
// with 1,000 registrations stayed within BENCHMARKS.md row 7's bound (make bench, rows 7
// and 12).
const DefaultGCPercent = 200

// MemoryLimitShare is the part of the container's memory limit the manager sets as Go's
// soft memory limit (GOMEMLIMIT) when the environment sets none: near it the garbage
// collector works harder rather than let the heap reach the limit, where the container
// would be killed.
const MemoryLimitShare = 0.8

// GCSettings are the garbage collector's settings for the manager: percent (GOGC) and
// limit (GOMEMLIMIT, bytes), each 0 when the environment already sets it or, for the
// limit, when the process has no memory limit (limit reads the container's, cgroup v2
// or v1).
func GCSettings(getenv func(string) string, limit func() (int64, bool)) (percent int, softLimit int64) {
	if getenv("GOGC") == "" {
		percent = DefaultGCPercent
	}
	if getenv("GOMEMLIMIT") == "" {
		if bytes, ok := limit(); ok {
			softLimit = int64(float64(bytes) * MemoryLimitShare)
		}
	}
	return percent, softLimit
}

// CgroupMemoryLimit is the memory limit of the process's cgroup (v2's memory.max, else
// v1's memory.limit_in_bytes); false when there is none.
func CgroupMemoryLimit() (int64, bool) {
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		data, err := os.ReadFile(path) //nolint:gosec // fixed paths
		if err != nil {
			continue
		}
		return parseMemoryLimit(string(data))
	}
	return 0, false
}

// parseMemoryLimit reads a cgroup memory limit: "max" (v2) or a number of bytes, v1's
// "no limit" being a number near the largest int64.
func parseMemoryLimit(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	bytes, err := strconv.ParseInt(s, 10, 64)
	if err != nil || bytes <= 0 || bytes >= 1<<62 {
		return 0, false
	}
	return bytes, true
}
