package build_test

import (
	"fmt"

	"github.com/hilrun/hilrun/pkg/build"
)

func ExampleClassify() {
	class, diag, summary := build.Classify(
		"/usr/lib/gcc/arm-none-eabi/12.2.1/../../../arm-none-eabi/bin/ld: region `RAM' overflowed by 3120 bytes\n" +
			"collect2: error: ld returned 1 exit status\n")
	fmt.Println(class)
	fmt.Println(diag.Message)
	fmt.Println(summary)
	// Output:
	// MemoryOverflow
	// region `RAM' overflowed by 3120 bytes
	// region `RAM' overflowed by 3120 bytes
}

func ExampleParseSizes() {
	s, _ := build.ParseSizes("RAM:   [=         ]   6.5% (used 21312 bytes from 327680 bytes)\n" +
		"Flash: [===       ]  25.1% (used 329301 bytes from 1310720 bytes)\n")
	fmt.Println(s.RAMBytes, s.RAMTotal, s.RAMPercent)
	fmt.Println(s.FlashBytes, s.FlashTotal, s.FlashPercent)
	// Output:
	// 21312 327680 6.5
	// 329301 1310720 25.1
}
