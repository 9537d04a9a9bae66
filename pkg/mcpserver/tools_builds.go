package mcpserver

import (
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/steps"
)

// buildTools build and upload firmware, as a call or as a background
// task.
var buildTools = []tool{
	{
		spec: mcp.NewTool("build", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("Build firmware"),
			mcp.WithDescription(`Build firmware with a command (make, cmake, ninja, a compiler) or PlatformIO, inside the server's --root folders, and return a compact outcome: ok, and on failure the class (MissingHeader, UndefinedReference, MemoryOverflow, SyntaxError, MissingPackage, ...) with the first diagnostic (file, line, column, message) and the tail of the output; on success the flash and RAM use (from elf, or from PlatformIO's summary).
The whole output is the resource log_resource (hilrun://tasks/{task_id}/log). With a progress token, output lines arrive as progress notifications (at most 10 a second). A failing build is a result (ok false), not a tool error; a tool error means the build did not run (refused, a tool that is not installed, cancelled).`),
			mcp.WithString("elf", mcp.Description("The image the build makes, relative to dir, for its sizes; a build that does not make it fails.")),
			outputSchema[buildResult](),
			mcp.WithReadOnlyHintAnnotation(false),
			mcp.WithDestructiveHintAnnotation(false),
			mcp.WithIdempotentHintAnnotation(true),
			mcp.WithOpenWorldHintAnnotation(false),
		}, buildOptions...)...),
		can:     needs(steps.CapHostExec | steps.CapReadFiles).eachStep(),
		handler: handle((*Server).buildTool),
	},
	{
		spec: mcp.NewTool("upload", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("Upload firmware"),
			mcp.WithDescription(`Upload firmware: with a command (an uploader run inside a --root folder), with PlatformIO (pio run -t upload), or by writing an image file (under a --root) through the probe's OpenOCD session (openocd: program into flash, or load into RAM). Refused when the server is --read-only.
port names a connection (id, label or port path) or a port path: the connection's console lets go of the port for the upload and takes it back after, and the port is held for the whole upload, so serial_read, serial_expect and sequences on it get "busy" (or wait lock_timeout_ms) instead of disturbing it. Returns the same outcome as build.`),
			mcp.WithObject("openocd", mcp.Description("Write an image through OpenOCD instead: {file (ELF, hex, S-record or binary, under a --root), method: program (flash, the default) or load (RAM, load_image), verify, reset, offset}."),
				mcp.Properties(map[string]any{
					"file": map[string]any{"type": "string"}, "method": map[string]any{"type": "string", "enum": []string{"program", "load"}},
					"verify": map[string]any{"type": "boolean"}, "reset": map[string]any{"type": "boolean"},
					"offset": map[string]any{"type": "string", "pattern": numberPattern, "description": "Where the image goes, as text (\"0x08004000\"); a JSON number is accepted too."},
				}), mcp.AdditionalProperties(false)),
			mcp.WithString("probe", mcp.Description("The probe for openocd: one of the server's bench file, or any name under --sim; may be left out when there is one.")),
			mcp.WithString("port", mcp.Description("The upload port: a connection id, label or port path; its console is released for the upload and taken back after.")),
			outputSchema[buildResult](),
			mcp.WithReadOnlyHintAnnotation(false),
			mcp.WithDestructiveHintAnnotation(true),
			mcp.WithIdempotentHintAnnotation(false),
			mcp.WithOpenWorldHintAnnotation(false),
		}, buildOptions...)...),
		can:     does(steps.CapHostExec | steps.CapMemWrite | steps.CapReadFiles | steps.CapDevice).always(steps.CapMemWrite | steps.CapReadFiles).eachStep(),
		handler: handle((*Server).uploadTool),
	},
}

// buildOptions are what build and upload both take: the command or
// PlatformIO, and how to run it.
var buildOptions = []mcp.ToolOption{
	mcp.WithArray("command", mcp.WithStringItems(), mcp.Description(`The command as an argument vector, run without a shell: ["make", "-C", "firmware"].`)),
	mcp.WithString("dir", mcp.Description("The command's working folder, under a --root: absolute, or relative to the first --root (the default).")),
	mcp.WithObject("env", mcp.Description("Variables added to the command's environment: name -> value."), mcp.AdditionalProperties(map[string]any{"type": "string"})),
	mcp.WithObject("pio", mcp.Description("Run PlatformIO instead of command: {project_dir (under a --root), env, verbose, clean}."),
		mcp.Properties(map[string]any{
			"project_dir": map[string]any{"type": "string"}, "env": map[string]any{"type": "string"},
			"verbose": map[string]any{"type": "boolean"}, "clean": map[string]any{"type": "boolean"},
		}), mcp.AdditionalProperties(false)),
	mcp.WithInteger("timeout_ms", mcp.Min(0), mcp.Description("Stops the tool after this many milliseconds (ok false, class Timeout); 0 means no bound.")),
	mcp.WithBoolean("background", mcp.Description("Return {task_id} at once and run in the background; follow it with task_status.")),
	lockTimeout(),
}
