#!/bin/sh
# check.sh ELF [NM] - verify hilrun's QEMU firmware image: the addresses,
# sizes and kinds of the symbols hilrun's sequences and tests use. Run by
# `make check`.
set -eu

elf=$1
nm=${2:-arm-none-eabi-nm}

syms=$($nm -S "$elf")
flash=000
. "$(dirname "$0")/../symcheck.sh"

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
