# symcheck.sh - sourced by the firmware folders' check.sh: checks symbols of
# an ELF against what hilrun's sequences and tests expect. The sourcing
# script sets syms (the output of nm -S) and flash (the leading hex digits
# of a flash address, such as 080 or 000), and reads fail afterwards.

fail=0

# sym NAME ADDR SIZE KINDS: NAME must be at ADDR (hex, or "ram" / "flash"
# for anywhere in that region), be SIZE bytes (hex, as nm prints it; "-"
# for any non-zero size) and have an nm kind letter in KINDS.
sym() {
	line=$(printf '%s\n' "$syms" | awk -v n="$1" '$4 == n { print; exit }')
	if [ -z "$line" ]; then
		echo "FAIL $1: not in the symbol table (or no size)"
		fail=1
		return
	fi
	set -- "$@" $line
	# $1..$4 expected; $5 address, $6 size, $7 kind, $8 name
	bad=0
	case $2 in
	ram) case $5 in 2000*) ok=1 ;; *) ok=0 ;; esac ;;
	flash) case $5 in "$flash"*) ok=1 ;; *) ok=0 ;; esac ;;
	*) [ "$5" = "$2" ] && ok=1 || ok=0 ;;
	esac
	if [ $ok = 0 ]; then
		echo "FAIL $1: at 0x$5, want $2"
		bad=1
	fi
	if [ "$3" != - ] && [ "$6" != "$3" ]; then
		echo "FAIL $1: size 0x$6, want 0x$3"
		bad=1
	fi
	case $4 in
	*"$7"*) ;;
	*) echo "FAIL $1: kind $7, want one of $4"; bad=1 ;;
	esac
	if [ $bad = 0 ]; then
		echo "ok   $1 0x$5 size $((0x$6)) ($7)"
	else
		fail=1
	fi
}
