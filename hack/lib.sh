# Shared by the hack/ scripts; source it. Every wait has a bound, watches the process
# it waits on, and says what failed.

# wait_until WHAT SECONDS PID LOG CMD...
# Runs CMD every 0.2 s until it succeeds. Fails, naming WHAT and showing the end of LOG,
# when SECONDS pass or when process PID (0: none) exits first.
wait_until() {
	local what=$1 limit=$2 pid=$3 log=$4
	shift 4
	local deadline=$((SECONDS + limit))
	until "$@" >/dev/null 2>&1; do
		if [[ $pid != 0 ]] && ! kill -0 "$pid" 2>/dev/null; then
			echo "${0##*/}: waiting for $what: the process ($pid) exited; the end of $log:" >&2
			tail -n 30 "$log" >&2 || true
			return 1
		fi
		if ((SECONDS >= deadline)); then
			echo "${0##*/}: $what: not after $limit s; the end of $log:" >&2
			tail -n 30 "$log" >&2 || true
			return 1
		fi
		sleep 0.2
	done
}

# nonempty FILE succeeds when FILE exists and is not empty.
nonempty() { [[ -s $1 ]]; }

# contains FILE TEXT succeeds when FILE holds the fixed string TEXT.
contains() { grep -qF -- "$2" "$1"; }

# stop_pids SECONDS PID... interrupts each process (as Ctrl-C would, so it stops what it
# started), waits up to SECONDS for all to exit, then kills the ones left.
stop_pids() {
	local limit=$1 pid
	shift
	for pid in "$@"; do kill -INT "$pid" 2>/dev/null || true; done
	local deadline=$((SECONDS + limit))
	for pid in "$@"; do
		while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
		if kill -0 "$pid" 2>/dev/null; then
			echo "${0##*/}: process $pid did not stop in $limit s; killing it" >&2
			kill -KILL "$pid" 2>/dev/null || true
		fi
		wait "$pid" 2>/dev/null || true
	done
}
