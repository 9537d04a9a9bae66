#!/bin/sh
# check.sh ELF [NM] - verify hilrun's QEMU firmware image: the addresses,
# sizes and kinds of the symbols hilrun's sequences and tests use. Run by
# `make check`.
set -eu

elf=$1
nm=${2:-arm-none-eabi-nm}
fail=0

syms=$($nm -S "$elf")

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
	flash) case $5 in 000*) ok=1 ;; *) ok=0 ;; esac ;;
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

sym counter       20000000 00000004 B
sym blink         20000004 00000004 B
sym flag          20000008 00000004 B
sym flag_at       2000000c 00000004 B
sym status_word   ram      00000002 B
sym led_pattern   ram      00000008 D
sym fw_version    flash    00000012 R
sym vector_table  00000000 00000100 R
sym Reset_Handler 00000100 -        T

if [ $fail != 0 ]; then
	echo "check failed"
	exit 1
fi
echo "check passed"
