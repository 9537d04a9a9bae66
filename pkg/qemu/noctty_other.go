//go:build !linux

package qemu

const syscallNoctty = 0
