#!/usr/bin/expect -f
# Send/expect round trips with Tcl expect on a serial device path.
#
#     expect expect_rtt.tcl PATH N WARMUP
#
# Opens PATH as an expect user opens a serial port (raw mode with stty,
# open, spawn -open), then WARMUP + N times sends "echo ping-I" and waits
# with expect -exact for the reply "ping-I\r\nsim> ". Prints one JSON
# object: samples_ns, the N measured round trips (clock microseconds
# around send and expect, in nanoseconds).
log_user 0
set timeout 10
lassign $argv path n warmup
exec stty -F $path raw -echo
set fd [open $path {RDWR NOCTTY}]
fconfigure $fd -translation binary -buffering none
spawn -open $fd
send "echo sync\n"
expect {
	-exact "sync\r\nsim> " {}
	timeout { puts stderr "expect_rtt: no reply to echo sync"; exit 1 }
}
set samples {}
for {set i 0} {$i < $warmup + $n} {incr i} {
	set t0 [clock microseconds]
	send "echo ping-$i\n"
	expect {
		-exact "ping-$i\r\nsim> " {}
		timeout { puts stderr "expect_rtt: no reply to ping-$i"; exit 1 }
	}
	set t1 [clock microseconds]
	if {$i >= $warmup} { lappend samples [expr {($t1 - $t0) * 1000}] }
}
puts "{\"samples_ns\":\[[join $samples ,]\]}"
