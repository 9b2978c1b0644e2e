package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Stat is one process as /proc/<pid>/stat describes it.
type Stat struct {
	PID, PPID, PGRP int
	// CPU is the user and system processor time used so far.
	CPU time.Duration
	// Start is when the process started, in clock ticks since the machine booted.
	Start uint64
}

// clockTick is Linux's USER_HZ unit of utime and stime: 1/100 s on every architecture
// Go runs on here.
const clockTick = 10 * time.Millisecond

// Read reads the stat of process pid.
func Read(pid int) (Stat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Stat{}, err
	}
	// The fields after the command, which is in parentheses and may hold spaces:
	// state(3) ppid(4) pgrp(5) ... utime(14) stime(15) ... starttime(22).
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 {
		return Stat{}, fmt.Errorf("/proc/%d/stat: %d fields after the command", pid, len(f))
	}
	st := Stat{PID: pid}
	var utime, stime uint64
	for _, parse := range []error{
		atoi(f[1], &st.PPID), atoi(f[2], &st.PGRP),
		parseUint(f[11], &utime), parseUint(f[12], &stime), parseUint(f[19], &st.Start),
	} {
		if parse != nil {
			return Stat{}, fmt.Errorf("/proc/%d/stat: %w", pid, parse)
		}
	}
	st.CPU = time.Duration(utime+stime) * clockTick
	return st, nil
}

// All reads every live process; one that ends meanwhile is left out.
func All() ([]Stat, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("reading /proc: %w", err)
	}
	var out []Stat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue // not a process
		}
		if st, err := Read(pid); err == nil {
			out = append(out, st)
		}
	}
	return out, nil
}

func atoi(s string, out *int) (err error) {
	*out, err = strconv.Atoi(s)
	return err
}

func parseUint(s string, out *uint64) (err error) {
	*out, err = strconv.ParseUint(s, 10, 64)
	return err
}

// Node is a reading of /proc/stat's first line, the machine's processors together:
// processor time in use (all but idle and iowait: user, nice, system, irq, softirq,
// steal) and in all, in clock ticks summed over processors.
type Node struct{ Busy, Total uint64 }

// ReadNode reads /proc/stat.
func ReadNode() (Node, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return Node{}, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return parseNode(line)
}

// parseNode reads /proc/stat's first line.
func parseNode(line string) (Node, error) {
	fields := strings.Fields(line)
	if len(fields) < 6 || fields[0] != "cpu" {
		return Node{}, fmt.Errorf("/proc/stat begins %q, not with the processors' line", line)
	}
	var n Node
	for i, f := range fields[1:min(len(fields), 9)] { // guest and guest_nice are in user and nice already
		var v uint64
		if err := parseUint(f, &v); err != nil {
			return Node{}, fmt.Errorf("/proc/stat: %q: %w", line, err)
		}
		n.Total += v
		if i != 3 && i != 4 { // idle, iowait
			n.Busy += v
		}
	}
	return n, nil
}

// ProcessorsSince is the number of processors of processors in all that were in use on
// average between earlier and n.
func (n Node) ProcessorsSince(earlier Node, processors int) float64 {
	if n.Total == earlier.Total {
		return 0
	}
	return float64(n.Busy-earlier.Busy) / float64(n.Total-earlier.Total) * float64(processors)
}
