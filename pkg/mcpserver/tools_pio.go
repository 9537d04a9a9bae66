package mcpserver

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/hilrun/hilrun/pkg/pio"
	"github.com/hilrun/hilrun/pkg/steps"
)

// pioHost and pioTaskNote end the descriptions of the PlatformIO tools.
const (
	pioHost     = " Runs PlatformIO (pio) on the host: needs --allow-exec and a --root."
	pioTaskNote = " The whole output is the resource log_resource; a failing run is a result (ok false), a tool error means pio did not run (refused, not installed, cancelled)."
)

// What the PlatformIO tools that work on a project take.
var (
	pioProjectDirArg = mcp.WithString("project_dir", mcp.Required(), mcp.Description("The PlatformIO project folder (holding platformio.ini), under a --root: absolute, or relative to the first --root."))
	pioEnvArg        = mcp.WithString("env", mcp.Description("A platformio.ini environment ([env:NAME]); default: the project's default environments. environment is accepted too."))
	pioEnvAliasArg   = mcp.WithString("environment", mcp.Description("Same as env."))
	pioBackgroundArg = mcp.WithBoolean("background", mcp.Description("Return {task_id} at once and run in the background; follow it with task_status (the last lines of output, then the result), stop it with task_cancel."))
	pioLibraryArg    = mcp.WithString("library", mcp.Required(), mcp.Description("A library name or specification: owner/name, owner/name@^1.2.3, a Git URL."))
)

// pioTools run PlatformIO Core's verbs: boards, devices, projects, static
// analysis, unit tests and libraries.
var pioTools = []tool{
	{
		spec: mcp.NewTool("list_boards", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("List PlatformIO boards"),
			mcp.WithDescription("List the boards PlatformIO knows (pio boards --json-output): id, name, platform, MCU, clock, flash and RAM in bytes, frameworks, vendor, URL, debug tools." + pioHost),
			mcp.WithString("filter", mcp.Description("Only boards whose data mention this text (an id, MCU, vendor, platform or framework).")),
			outputSchema[boardsResult](),
		}, hints(true)...)...),
		can:     needs(pioCaps),
		handler: handle((*Server).pioListBoards),
	},
	{
		spec: mcp.NewTool("get_board_info", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("Show a PlatformIO board"),
			mcp.WithDescription("Show one board by its exact id (pio boards --json-output): an unknown id is an error naming boards that mention it." + pioHost),
			mcp.WithString("board_id", mcp.Required(), mcp.Description("The board id, as in platformio.ini's board = (esp32dev, uno, nucleo_f401re).")),
			outputSchema[pio.Board](),
		}, hints(true)...)...),
		can:     needs(pioCaps),
		handler: handle((*Server).pioBoardInfo),
	},
	{
		spec: mcp.NewTool("list_devices", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("List serial devices (PlatformIO)"),
			mcp.WithDescription("List serial ports as PlatformIO sees them (pio device list --json-output): port, description, hwid, VID, PID, serial number, and the likely board or adapter for a well-known VID:PID. list_ports does the same without PlatformIO." + pioHost),
			outputSchema[devicesResult](),
		}, hints(true)...)...),
		can:     needs(pioCaps),
		handler: handle((*Server).pioListDevices),
	},
	{
		spec: mcp.NewTool("system_info", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("Show PlatformIO system information"),
			mcp.WithDescription("Show PlatformIO's version, Python, system type, core folder and counts of installed platforms and tools (pio system info --json-output)." + pioHost),
			outputSchema[systemInfoResult](),
		}, hints(true)...)...),
		can:     needs(pioCaps),
		handler: handle((*Server).pioSystemInfo),
	},
	{
		spec: mcp.NewTool("search_libraries", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("Search PlatformIO libraries"),
			mcp.WithDescription("Search the PlatformIO registry for libraries (pio pkg search \"type:library QUERY\"): owner, name, type, latest version, publication date, description; 10 a page." + pioHost),
			mcp.WithString("query", mcp.Required(), mcp.Description("What to look for: words, or the registry's fields (name:OneWire, keyword:sensor, framework:arduino).")),
			mcp.WithInteger("page", mcp.Min(1), mcp.Description("The page of results; default 1.")),
			outputSchema[pio.SearchResult](),
		}, hints(true)...)...),
		can:     needs(pioCaps),
		handler: handle((*Server).pioSearch),
	},
	{
		spec: mcp.NewTool("init_project", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("Create a PlatformIO project"),
			mcp.WithDescription("Create (or add a board to) a PlatformIO project (pio project init -d DIR -b BOARD [-O framework=...]), which may download the board's platform. The board is checked first: an unknown board is an error before anything is written. The folder is made when missing; its parent must be under a --root." + pioHost + pioTaskNote),
			mcp.WithString("board", mcp.Required(), mcp.Description("The board id (see list_boards).")),
			mcp.WithString("framework", mcp.Description("arduino, espidf, zephyr, stm32cube...; default: none set.")),
			mcp.WithString("project_dir", mcp.Required(), mcp.Description("The project folder, under a --root.")),
			pioBackgroundArg,
			outputSchema[pioResult](),
			mcp.WithDestructiveHintAnnotation(false),
		}, hints(false)...)...),
		can:     needs(pioProjectCaps),
		handler: handle((*Server).pioInitProject),
	},
	{
		spec: mcp.NewTool("get_project_config", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("Show a PlatformIO project's configuration"),
			mcp.WithDescription("Show platformio.ini as PlatformIO reads it (pio project config --json-output): environments, and each section's options with their values (list options also as values)." + pioHost),
			pioProjectDirArg,
			outputSchema[configResult](),
		}, hints(true)...)...),
		can:     needs(pioProjectCaps),
		handler: handle((*Server).pioProjectConfig),
	},
	{
		spec: mcp.NewTool("clean_project", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("Clean a PlatformIO project"),
			mcp.WithDescription("Delete a project's build output (pio run -d DIR [-e ENV] -t clean)." + pioHost + pioTaskNote),
			pioProjectDirArg, pioEnvArg, pioEnvAliasArg, pioBackgroundArg,
			outputSchema[pioResult](),
			mcp.WithDestructiveHintAnnotation(false),
			mcp.WithIdempotentHintAnnotation(true),
		}, hints(false)...)...),
		can:     needs(pioProjectCaps),
		handler: handle((*Server).pioClean),
	},
	{
		spec: mcp.NewTool("upload_filesystem", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("Upload a PlatformIO filesystem image"),
			mcp.WithDescription("Build the data folder into a SPIFFS/LittleFS image and write it to the board (pio run -d DIR [-e ENV] -t uploadfs [--upload-port PORT]). The port is held for the upload; a port open as a connection must be closed first. Refused when the server is --read-only." + pioHost + pioTaskNote),
			pioProjectDirArg, pioEnvArg, pioEnvAliasArg, pioBackgroundArg,
			mcp.WithString("port", mcp.Description("The upload port path; default: PlatformIO's upload_port or the one it finds.")),
			outputSchema[pioResult](),
			mcp.WithDestructiveHintAnnotation(true),
		}, hints(false)...)...),
		can:     does(pioProjectCaps | steps.CapMemWrite | steps.CapDevice).always(pioProjectCaps | steps.CapMemWrite),
		handler: handle((*Server).pioUploadFS),
	},
	{
		spec: mcp.NewTool("check_project", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("Check a PlatformIO project (static analysis)"),
			mcp.WithDescription("Run PlatformIO's static analysis (pio check -d DIR [-e ENV] --json-output) and return its defects as data: per environment and tool, each defect's severity (high, medium, low), category, file, line, column, id (the tool's rule) and message." + pioHost + pioTaskNote),
			pioProjectDirArg, pioEnvArg, pioEnvAliasArg, pioBackgroundArg,
			outputSchema[pioResult](),
			mcp.WithIdempotentHintAnnotation(true),
		}, hints(true)...)...),
		can:     needs(pioProjectCaps),
		handler: handle((*Server).pioCheck),
	},
	{
		spec: mcp.NewTool("run_tests", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("Run a PlatformIO project's unit tests"),
			mcp.WithDescription("Build, upload and run the project's unit tests (pio test -d DIR [-e ENV] --json-output), on the board or natively, as a run of a pio_test step: returns every test case (tests: suite, name, status PASSED, FAILED, SKIPPED or ERRORED, message, file, line), and the run's report (report_resource) holds them too. port names a connection (id, label or path) or a port path: a connection's console lends the port for the run and takes it back after. Refused when the server is --read-only (it flashes the board)." + pioHost + pioTaskNote),
			pioProjectDirArg, pioEnvArg, pioEnvAliasArg, pioBackgroundArg,
			mcp.WithArray("filter", mcp.WithStringItems(), mcp.Description("Only tests matching these patterns (pio test -f).")),
			mcp.WithArray("ignore", mcp.WithStringItems(), mcp.Description("Leave out tests matching these patterns (pio test -i).")),
			mcp.WithString("port", mcp.Description("The upload port (--upload-port): a connection id, label or port path; held for the run.")),
			mcp.WithString("test_port", mcp.Description("The port the test results come from (--test-port); held for the run.")),
			mcp.WithBoolean("without_uploading", mcp.Description("Run the tests already on the board.")),
			lockTimeout(),
			outputSchema[buildResult](),
			mcp.WithDestructiveHintAnnotation(true),
		}, hints(false)...)...),
		can:     does(pioProjectCaps | steps.CapMemWrite | steps.CapDevice).always(pioProjectCaps | steps.CapMemWrite).eachStep(),
		handler: handle((*Server).pioRunTests),
	},

	libraryTool("install_library", "Install a library into a PlatformIO project", "Install a library into the project and add it to lib_deps (pio pkg install -d DIR [-e ENV] -l LIB).", pio.Install),
	{
		spec: mcp.NewTool("list_installed_libraries", append([]mcp.ToolOption{
			mcp.WithTitleAnnotation("List a PlatformIO project's libraries"),
			mcp.WithDescription("List the libraries installed for the project, per environment, with their dependencies (pio pkg list -d DIR [-e ENV] --only-libraries): name, version, the specification required, depth (0 for lib_deps)." + pioHost),
			pioProjectDirArg, pioEnvArg, pioEnvAliasArg,
			outputSchema[librariesResult](),
		}, hints(true)...)...),
		can:     needs(pioProjectCaps),
		handler: handle((*Server).pioListLibraries),
	}, libraryTool("uninstall_library", "Uninstall a library from a PlatformIO project", "Remove a library from the project and from lib_deps (pio pkg uninstall -d DIR [-e ENV] -l LIB).", pio.Uninstall),
	libraryTool("update_library", "Update a library of a PlatformIO project", "Update a library of the project within its specification (pio pkg update -d DIR [-e ENV] -l LIB).", pio.Update),
}

// libraryTool is a PlatformIO tool that changes a project's libraries.
func libraryTool(name, title, what string, verb pio.LibraryVerb) tool {
	return tool{
		spec: mcp.NewTool(name, append([]mcp.ToolOption{
			mcp.WithTitleAnnotation(title),
			mcp.WithDescription(what + " Always scoped to the project, never global." + pioHost + pioTaskNote),
			pioProjectDirArg, pioEnvArg, pioEnvAliasArg, pioLibraryArg, pioBackgroundArg,
			outputSchema[pioResult](),
			mcp.WithDestructiveHintAnnotation(verb == pio.Uninstall),
		}, hints(false)...)...),
		can: needs(pioProjectCaps),
		handler: func(s *Server) server.ToolHandlerFunc {
			return toolHandler(s, s.pioLibrary(verb, name))
		},
	}
}

// pioCaps is what a verb that runs pio needs: running a host program.
const pioCaps = steps.CapHostExec

// pioProjectCaps is what a verb on a project needs: a program in a folder
// under a root.
const pioProjectCaps = steps.CapHostExec | steps.CapReadFiles
