package cmdutil

import "fmt"

// ExitError asks main to exit with Code without printing anything: the
// error was reported already (by a child process cowboy ran).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }
