package mcpserver

import (
	"github.com/mark3labs/mcp-go/mcp"
)

// taskTools follow and cancel the background tasks of build, upload and
// the PlatformIO verbs.
var taskTools = []tool{
	{
		spec: mcp.NewTool("task_status",
			mcp.WithTitleAnnotation("Show a build or upload task"),
			mcp.WithDescription(`Show a build or upload task: state (running, done, failed: it could not run, cancelled), started, duration_ms, the last lines of output (progress), and when done the result, as build and upload return it. The last 50 tasks are kept.`),
			mcp.WithString("task_id", mcp.Required(), mcp.Description("The task_id build or upload returned.")),
			outputSchema[taskStatus](),
			mcp.WithReadOnlyHintAnnotation(true),
			mcp.WithIdempotentHintAnnotation(true),
			mcp.WithOpenWorldHintAnnotation(false),
		),
		can:     does(0),
		handler: handle((*Server).taskStatus),
	},
	{
		spec: mcp.NewTool("task_cancel", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("Cancel a background task"),
			mcp.WithDescription("Stop a task started with background: true (build, upload, clean_project, check_project, run_tests, library verbs...): its tool and what it started are stopped, and the call returns once the task has ended (state cancelled). Only the session that started the task may cancel it, until that session ends."),
			mcp.WithString("task_id", mcp.Required(), mcp.Description("The task_id the tool returned.")),
			outputSchema[cancelResult](),
			mcp.WithDestructiveHintAnnotation(false),
			mcp.WithIdempotentHintAnnotation(true),
		}, hints(false)...)...),
		can:     does(0),
		handler: handle((*Server).taskCancel),
	},
}
