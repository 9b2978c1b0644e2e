// Package bench measures how fast the operator converges and what it costs (make bench); it reports, it does not pass or fail.
package bench
