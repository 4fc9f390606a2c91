# Sourceable helpers for the benchmarks that start a tracer around a workload
# (peers.sh, block.sh).  The tracer's pid is in TRACER_PID.
# shellcheck shell=bash

# Wait (at most 30 s) for a line matching REGEX in the tracer's log: the tools
# say when they are attached.  Fails if the tracer exits first.
wait_line() { # PID LOG REGEX
  for _ in $(seq 3000); do
    grep -q "$3" "$2" 2>/dev/null && return 0
    kill -0 "$1" 2>/dev/null || return 1
    sleep 0.01
  done
  return 1
}

# Ctrl-C the tracer, give it 30 s to write its output, then kill it.
stop_tracer() {
  kill -INT "$TRACER_PID" 2>/dev/null
  for _ in $(seq 300); do kill -0 "$TRACER_PID" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$TRACER_PID" 2>/dev/null && kill -KILL "$TRACER_PID"
  wait "$TRACER_PID" 2>/dev/null
  TRACER_PID=
}
