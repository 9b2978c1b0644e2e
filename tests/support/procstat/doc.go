// Package procstat reads what benchmarks charge to a process from Linux's
// /proc/<pid>/stat: its parent, its process group and the processor time it used; and
// the machine's processors in use, from /proc/stat.
package procstat
