#!/usr/bin/expect -f
# Timed sends with Tcl expect: a line, after DELAY, another line.
#
#     expect expect_delay.tcl PATH DELAY_US N WARMUP
#
# For I in 0 .. WARMUP+N-1: sends "echo aI", waits with `after` (whole
# milliseconds, Tcl's own sleep), sends "echo bI" and waits for the reply
# "bI\r\nsim> ". The accuracy is measured on the device; sleep_ns is how
# long `after` took, for reference.
log_user 0
set timeout 10
lassign $argv path delay_us n warmup
set delay_ms [expr {$delay_us / 1000}]
exec stty -F $path raw -echo
set fd [open $path {RDWR NOCTTY}]
fconfigure $fd -translation binary -buffering none
spawn -open $fd
send "echo sync\n"
expect {
	-exact "sync\r\nsim> " {}
	timeout { puts stderr "expect_delay: no reply to echo sync"; exit 1 }
}
set slept {}
for {set i 0} {$i < $warmup + $n} {incr i} {
	send "echo a$i\n"
	set t0 [clock microseconds]
	after $delay_ms
	set t1 [clock microseconds]
	send "echo b$i\n"
	expect {
		-exact "b$i\r\nsim> " {}
		timeout { puts stderr "expect_delay: no reply to b$i"; exit 1 }
	}
	if {$i >= $warmup} { lappend slept [expr {($t1 - $t0) * 1000}] }
}
puts "{\"sleep_ns\":\[[join $slept ,]\]}"
