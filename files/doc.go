// Package files implements every file operation of the action server with
// the behaviour OpenHands' host and agents expect, plus live watching.
//
// What the executor calls, per action:
//
//   - read, impl_source "default": Read(ctx, shellCwd, path, start, end). The
//     observation's path is Resolve(shellCwd, path); a *Error's message is
//     the error observation's content.
//   - read, impl_source "oh_aci": upstream first refuses files that look
//     binary (IsBinary on the path; error observation BinaryFileMessage),
//     then runs Editor.Do with Command "view", the action's path and
//     view_range; content is the output, or "ERROR:\n"+msg for a *Error.
//   - write: Write(ctx, shellCwd, path, content, start, end, sandboxOwner); the
//     observation's path is Resolve(shellCwd, path).
//   - edit (oh_aci): Editor.Do with the action's fields; content as for
//     oh_aci read; the observation's diff is Diff(path, res.OldContent,
//     res.NewContent) ("" on an error).
//
// And per endpoint: ExtractZip for a zip upload (after the upload is
// streamed to a file), WriteZip for download_files (streamed straight into
// the response), List for list_files, and one shared Watchers (its Max caps
// concurrent watches) whose Watch feeds /watch until the request's context
// ends.
//
// One Editor lives as long as the server (NewEditor(workdir)); Close it on
// shutdown to remove its on-disk undo history.
//
// Errors: a *Error (see IsError) is a failure the agent should read, with
// the exact upstream text; any other error is a server fault.
//
// Whose rights: this package acts with the rights of the thread that calls
// it and follows symlinks as the kernel does. When the server is root and
// the agent's shells are a sandbox user, callers run each call inside
// asuser.User.Do (package internal/asuser), so the kernel checks every path,
// links included, as for that user: a link the agent planted cannot lead to
// what its user could not reach. Nothing here starts a goroutine that
// resolves a path (that would run with the server's rights); the one
// background removal unlinks by a directory descriptor opened by the
// caller's thread. A file the user may write but not recreate is rewritten
// in place. Bounded memory: Read returns at most MaxReadSize, ExtractZip
// refuses archives past its limits (ErrZipTooLarge), a watch caps its
// directories (OpLimit).
package files
