package qemu

import "syscall"

// syscallNoctty keeps the guest's pty from becoming hilrun's controlling
// terminal when Start holds it open.
const syscallNoctty = syscall.O_NOCTTY
