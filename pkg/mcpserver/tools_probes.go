package mcpserver

import (
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/steps"
)

// probeTools read and write target memory through a probe's session.
var probeTools = []tool{
	{
		spec: mcp.NewTool("mem_read", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("Read target memory"),
			mcp.WithDescription("Read target memory through the probe's persistent OpenOCD session. Returns the values as numbers and as hex."),
			mcp.WithInteger("count", mcp.Min(1), mcp.Description("How many values to read; default 1.")),
			lockTimeout(),
			outputSchema[memResult](),
			mcp.WithReadOnlyHintAnnotation(true),
			mcp.WithOpenWorldHintAnnotation(false),
		}, memOptions...)...),
		can:     does(steps.CapMemRead | steps.CapReadFiles).always(steps.CapMemRead),
		handler: handle((*Server).memRead),
	},
	{
		spec: mcp.NewTool("mem_write", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("Write target memory"),
			mcp.WithDescription("Write target memory through the probe's persistent OpenOCD session. Refused when the server is --read-only, and outside the --allow-mem-write ranges when any are given."),
			numberText("value", "The value, as text: \"0x40\" (hex), or decimal; a JSON number is accepted too."),
			mcp.WithArray("values", mcp.WithStringItems(mcp.Pattern(numberPattern)), mcp.Description("Several values written from the address on, instead of value, as text like value (JSON numbers are accepted too).")),
			mcp.WithBoolean("verify", mcp.Description("Read back and compare.")),
			lockTimeout(),
			outputSchema[memResult](),
			mcp.WithReadOnlyHintAnnotation(false),
			mcp.WithDestructiveHintAnnotation(true),
			mcp.WithOpenWorldHintAnnotation(false),
		}, memOptions...)...),
		can:     does(steps.CapMemWrite | steps.CapReadFiles).always(steps.CapMemWrite),
		handler: handle((*Server).memWrite),
	},
}

// memOptions are what mem_read and mem_write both take: where to read or
// write.
var memOptions = []mcp.ToolOption{
	mcp.WithString("probe", mcp.Description("A probe of the server's bench file, or any name under --sim (the virtual board); may be left out when there is one.")),
	numberText("address", "The address, as text: \"0x48000014\" (hex), or decimal; a JSON number is accepted too."),
	mcp.WithString("symbol", mcp.Description("A symbol of the ELF file instead of address; its size gives the width.")),
	mcp.WithString("elf", mcp.Description("The ELF file for symbol, under a --root (elf_path is accepted too).")),
	mcp.WithString("elf_path", mcp.Description("Same as elf.")),
	mcp.WithInteger("offset", mcp.Description("Added to the address or symbol, in bytes.")),
	mcp.WithInteger("width", mcp.Description("Access width in bits: 8, 16, 32 (the default) or 64. Where the target has no 64-bit bus accesses (a 32-bit core such as a Cortex-M), a 64-bit value is read or written as two 32-bit words, low word first (little-endian), so not in one access.")),
}
