#!/bin/sh
# check.sh ELF BIN [NM] - verify the hilrun virtual board firmware image:
# symbol addresses, sizes and kinds (with nm), the first two vector table
# words of the binary, and the ELF's size. Run by `make check`.
set -eu

elf=$1
bin=$2
nm=${3:-arm-none-eabi-nm}

syms=$($nm -S "$elf")
flash=080
. "$(dirname "$0")/../symcheck.sh"

sym counter       20000000 00000004 B
sym blink         20000004 00000004 B
sym boot_count    ram      00000004 B
sym led_pattern   ram      00000008 D
sym status_word   ram      00000002 B
sym config        ram      00000010 D
sym fw_version    flash    00000011 R
sym vector_table  08000000 00000100 R
sym Reset_Handler 08000100 -        T

# The image starts like hilrun's board model's power-on flash: initial
# stack pointer 0x20010000, reset vector 0x08000101 (Thumb bit set).
words=$(od -An -v -t x1 -N 8 "$bin" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
if [ "$words" != "00 00 01 20 01 01 00 08" ]; then
	echo "FAIL $bin: first vector words are \"$words\", want 0x20010000 0x08000101"
	fail=1
else
	echo "ok   vectors: sp 0x20010000, reset 0x08000101"
fi

size=$(wc -c <"$elf")
if [ "$size" -ge 65536 ]; then
	echo "FAIL $elf: $size bytes, want under 64 KiB"
	fail=1
else
	echo "ok   $elf: $size bytes"
fi

if [ $fail != 0 ]; then
	echo "check failed"
	exit 1
fi
echo "check passed"
