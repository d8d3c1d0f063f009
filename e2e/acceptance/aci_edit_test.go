package acceptance

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ports of tests/runtime/test_aci_edit.py: FileEditAction (impl_source
// oh_aci) commands after FileWriteActions, with upstream's assertions on
// the observation's content. Upstream does not check the observation's
// type; the host's own checks (observationFromDict) still apply.

// test_view_file
func TestEditView_File(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "This is a test file.\nThis file is for testing purposes.")

		obs := rt.edit(fileEdit{command: "view", path: testFile})

		assert.Contains(t, obs.Content, "Here's the result of running `cat -n` on "+testFile+":", obs)
		assert.Contains(t, obs.Content, "1\tThis is a test file.", obs)
		assert.Contains(t, obs.Content, "2\tThis file is for testing purposes.", obs)
	})
}

// test_view_directory. Upstream enables the browser here, which makes
// <workspace>/.downloads: the one hidden item. Its message names
// '/workspace' literally, which is its workspace; here the workspace is
// elsewhere, and the message names the directory viewed.
func TestEditView_DirectoryCountsHiddenDownloads(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{enableBrowser: true})
		ws := rt.workspace()
		rt.write(filepath.Join(ws, "test.txt"), "This is a test file.\nThis file is for testing purposes.")

		obs := rt.edit(fileEdit{command: "view", path: ws})

		assert.Equal(t, "Here's the files and directories up to 2 levels deep in "+ws+", excluding hidden items:\n"+
			ws+"/\n"+
			ws+"/test.txt\n"+
			"\n"+
			"1 hidden files/directories in this directory are excluded. You can use 'ls -la "+ws+"' to see them.",
			obs.Content, obs)
	})
}

// test_create_file
func TestEditCreate_File(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		newFile := filepath.Join(rt.workspace(), "new_file.txt")

		obs := rt.edit(fileEdit{command: "create", path: newFile, fileText: strp("New file content")})
		assert.Contains(t, obs.Content, "File created successfully", obs)

		obs = rt.edit(fileEdit{command: "view", path: newFile})
		assert.Contains(t, obs.Content, "New file content", obs)
	})
}

// test_create_file_with_empty_content
func TestEditCreate_EmptyContentViewsAsOneEmptyLine(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		newFile := filepath.Join(rt.workspace(), "new_file.txt")

		obs := rt.edit(fileEdit{command: "create", path: newFile, fileText: strp("")})
		assert.Contains(t, obs.Content, "File created successfully", obs)

		obs = rt.edit(fileEdit{command: "view", path: newFile})
		assert.Contains(t, obs.Content, "1\t", obs)
	})
}

// test_create_with_none_file_text
func TestEditCreate_WithoutFileTextIsAnError(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		newFile := filepath.Join(rt.workspace(), "none_content.txt")

		obs := rt.edit(fileEdit{command: "create", path: newFile, fileText: nil})

		assert.Equal(t, "ERROR:\nParameter `file_text` is required for command: create.", obs.Content, obs)
	})
}

// test_str_replace
func TestEditStrReplace(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "This is a test file.\nThis file is for testing purposes.")

		obs := rt.edit(fileEdit{command: "str_replace", path: testFile,
			oldStr: strp("test file"), newStr: strp("sample file")})
		assert.Contains(t, obs.Content, "The file "+testFile+" has been edited", obs)

		obs = rt.edit(fileEdit{command: "view", path: testFile})
		assert.Contains(t, obs.Content, "This is a sample file.", obs)
	})
}

// test_str_replace_multi_line
func TestEditStrReplace_MultiLine(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "This is a test file.\nThis file is for testing purposes.")

		obs := rt.edit(fileEdit{command: "str_replace", path: testFile,
			oldStr: strp("This is a test file.\nThis file is for testing purposes."),
			newStr: strp("This is a sample file.\nThis file is for testing purposes.")})

		assert.Contains(t, obs.Content, "The file "+testFile+" has been edited.", obs)
		assert.Contains(t, obs.Content, "This is a sample file.", obs)
		assert.Contains(t, obs.Content, "This file is for testing purposes.", obs)
	})
}

// test_str_replace_multi_line_with_tabs
func TestEditStrReplace_MultiLineWithTabs(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.edit(fileEdit{command: "create", path: testFile,
			fileText: strp("def test():\n\tprint(\"Hello, World!\")")})

		obs := rt.edit(fileEdit{command: "str_replace", path: testFile,
			oldStr: strp("def test():\n\tprint(\"Hello, World!\")"),
			newStr: strp("def test():\n\tprint(\"Hello, Universe!\")")})

		assert.Equal(t, "The file "+testFile+" has been edited. Here's the result of running `cat -n` on a snippet of "+testFile+":\n"+
			"     1\tdef test():\n"+
			"     2\t\tprint(\"Hello, Universe!\")\n"+
			"Review the changes and make sure they are as expected. Edit the file again if necessary.",
			obs.Content, obs)
	})
}

// test_str_replace_error_multiple_occurrences
func TestEditStrReplace_MultipleOccurrencesListsTheirLines(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "This is a test file.\nThis file is for testing purposes.")

		obs := rt.edit(fileEdit{command: "str_replace", path: testFile, oldStr: strp("test"), newStr: strp("sample")})

		assert.Contains(t, obs.Content, "Multiple occurrences of old_str `test`", obs)
		assert.Contains(t, obs.Content, "[1, 2]", obs) // both line numbers
	})
}

// test_str_replace_error_multiple_multiline_occurrences. The block is a
// Python triple-quoted string indented with the test's code: its second
// and third lines start with eight spaces.
func TestEditStrReplace_MultipleMultilineOccurrencesListStartLines(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		multiBlock := "def example():\n        print(\"Hello\")\n        return True"
		rt.write(testFile, multiBlock+"\n\nprint('separator')\n\n"+multiBlock)

		obs := rt.edit(fileEdit{command: "str_replace", path: testFile,
			oldStr: strp(multiBlock), newStr: strp("def new():\n    print(\"World\")")})

		assert.Contains(t, obs.Content, "Multiple occurrences of old_str", obs)
		assert.Contains(t, obs.Content, "[1, 7]", obs) // the blocks' first lines
	})
}

// test_str_replace_nonexistent_string
func TestEditStrReplace_NonexistentString(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "Line 1\nLine 2")

		obs := rt.edit(fileEdit{command: "str_replace", path: testFile,
			oldStr: strp("Non-existent Line"), newStr: strp("New Line")})

		assert.Contains(t, obs.Content, "No replacement was performed", obs)
		assert.Contains(t, obs.Content, "old_str `Non-existent Line` did not appear verbatim in "+testFile, obs)
	})
}

// test_str_replace_with_empty_new_str
func TestEditStrReplace_EmptyNewStrRemovesTheText(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "Line 1\nLine to remove\nLine 3")

		obs := rt.edit(fileEdit{command: "str_replace", path: testFile,
			oldStr: strp("Line to remove\n"), newStr: strp("")})

		assert.NotContains(t, obs.Content, "Line to remove", obs)
		assert.Contains(t, obs.Content, "Line 1", obs)
		assert.Contains(t, obs.Content, "Line 3", obs)
	})
}

// test_str_replace_with_empty_old_str. Upstream's branch for runtimes
// other than CLIRuntime: the write adds a final newline, so an empty
// old_str is found at the start of four lines.
func TestEditStrReplace_EmptyOldStrMatchesEveryLine(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "Line 1\nLine 2\nLine 3")

		obs := rt.edit(fileEdit{command: "str_replace", path: testFile, oldStr: strp(""), newStr: strp("New string")})

		assert.Contains(t, obs.Content,
			"No replacement was performed. Multiple occurrences of old_str `` in lines [1, 2, 3, 4]. Please ensure it is unique.", obs)
	})
}

// test_str_replace_with_none_old_str
func TestEditStrReplace_WithoutOldStrIsAnError(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "Line 1\nLine 2\nLine 3")

		obs := rt.edit(fileEdit{command: "str_replace", path: testFile, oldStr: nil, newStr: strp("new content")})

		assert.Contains(t, obs.Content, "old_str", obs)
	})
}

// test_insert
func TestEditInsert(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "Line 1\nLine 2")

		obs := rt.edit(fileEdit{command: "insert", path: testFile, insertLine: 1, newStr: strp("Inserted line")})
		assert.Contains(t, obs.Content, "The file "+testFile+" has been edited", obs)

		obs = rt.edit(fileEdit{command: "view", path: testFile})
		assert.Contains(t, obs.Content, "Line 1", obs)
		assert.Contains(t, obs.Content, "Inserted line", obs)
		assert.Contains(t, obs.Content, "Line 2", obs)
	})
}

// test_insert_invalid_line
func TestEditInsert_LineOutOfRangeIsAnError(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "Line 1\nLine 2")

		obs := rt.edit(fileEdit{command: "insert", path: testFile, insertLine: 10, newStr: strp("Invalid Insert")})

		assert.Contains(t, obs.Content, "Invalid `insert_line` parameter", obs)
		assert.Contains(t, obs.Content, "It should be within the range of allowed values", obs)
	})
}

// test_insert_with_empty_string
func TestEditInsert_EmptyStringAddsAnEmptyLine(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "Line 1\nLine 2")

		obs := rt.edit(fileEdit{command: "insert", path: testFile, insertLine: 1, newStr: strp("")})

		assert.Contains(t, obs.Content, "1\tLine 1", obs)
		assert.Contains(t, obs.Content, "2\t\n", obs)
		assert.Contains(t, obs.Content, "3\tLine 2", obs)
	})
}

// test_insert_with_none_new_str
func TestEditInsert_WithoutNewStrIsAnError(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "Line 1\nLine 2")

		obs := rt.edit(fileEdit{command: "insert", path: testFile, insertLine: 1, newStr: nil})

		assert.Contains(t, obs.Content, "ERROR", obs)
		assert.Contains(t, obs.Content, "Parameter `new_str` is required for command: insert", obs)
	})
}

// test_undo_edit
func TestEditUndo_RestoresTheFile(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "This is a test file.")

		obs := rt.edit(fileEdit{command: "str_replace", path: testFile, oldStr: strp("test"), newStr: strp("sample")})
		assert.Contains(t, obs.Content, "This is a sample file.", obs)

		obs = rt.edit(fileEdit{command: "undo_edit", path: testFile})
		assert.Contains(t, obs.Content, "Last edit to", obs)
		assert.Contains(t, obs.Content, "This is a test file.", obs)

		obs = rt.edit(fileEdit{command: "view", path: testFile})
		assert.Contains(t, obs.Content, "This is a test file.", obs)
	})
}

// test_validate_path_invalid
func TestEditView_MissingPathIsAnError(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		invalidFile := filepath.Join(rt.workspace(), "nonexistent.txt")

		obs := rt.edit(fileEdit{command: "view", path: invalidFile})

		assert.Contains(t, obs.Content, "Invalid `path` parameter", obs)
		assert.Contains(t, obs.Content, "The path "+invalidFile+" does not exist", obs)
	})
}

// test_create_existing_file_error
func TestEditCreate_ExistingFileIsAnError(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "Line 1\nLine 2")

		obs := rt.edit(fileEdit{command: "create", path: testFile, fileText: strp("New content")})

		assert.Contains(t, obs.Content, "File already exists", obs)
	})
}

// test_str_replace_missing_old_str
func TestEditStrReplace_EmptyOldStrIsNotUnique(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "Line 1\nLine 2")

		obs := rt.edit(fileEdit{command: "str_replace", path: testFile, oldStr: strp(""), newStr: strp("sample")})

		assert.Contains(t, obs.Content, "No replacement was performed. Multiple occurrences of old_str ``", obs)
	})
}

// test_str_replace_new_str_and_old_str_same
func TestEditStrReplace_SameOldAndNewStrIsAnError(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "Line 1\nLine 2")

		obs := rt.edit(fileEdit{command: "str_replace", path: testFile, oldStr: strp("test file"), newStr: strp("test file")})

		assert.Contains(t, obs.Content, "No replacement was performed. `new_str` and `old_str` must be different.", obs)
	})
}

// test_insert_missing_line_param
func TestEditInsert_WithoutInsertLineIsAnError(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "test.txt")
		rt.write(testFile, "Line 1\nLine 2")

		obs := rt.edit(fileEdit{command: "insert", path: testFile, newStr: strp("Missing insert line")})

		assert.Contains(t, obs.Content, "Parameter `insert_line` is required for command: insert", obs)
	})
}

// test_undo_edit_no_history_error
func TestEditUndo_WithoutHistoryIsAnError(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		emptyFile := filepath.Join(rt.workspace(), "empty.txt")
		rt.write(emptyFile, "")

		obs := rt.edit(fileEdit{command: "undo_edit", path: emptyFile})

		assert.Contains(t, obs.Content, "No edit history found for", obs)
	})
}

// test_view_large_file_with_truncation
func TestEditView_LargeFileIsTruncated(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		largeFile := filepath.Join(rt.workspace(), "large_test.txt")
		rt.write(largeFile, strings.Repeat("Line 1\n", 16000)) // enough lines to truncate

		obs := rt.edit(fileEdit{command: "view", path: largeFile})

		assert.Contains(t, obs.Content, "Due to the max output limit, only part of this file has been shown to you.", obs)
	})
}

// test_insert_line_string_conversion. Upstream calls the server's
// _execute_file_editor directly with a mocked editor and checks that the
// editor got insert_line 185 as an int and that its output came back.
// Here the same string goes over the wire, as the host sends it when the
// action holds a string, and the real editor must insert after line 185.
func TestEditInsert_InsertLineGivenAsString(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		testFile := filepath.Join(rt.workspace(), "path.py")
		var lines []string
		for i := 1; i <= 200; i++ {
			lines = append(lines, fmt.Sprintf("line %d", i))
		}
		rt.write(testFile, strings.Join(lines, "\n"))

		obs := rt.edit(fileEdit{command: "insert", path: testFile, insertLine: "185", newStr: strp("test content")})
		require.NotContains(t, obs.Content, "ERROR", obs)
		assert.Contains(t, obs.Content, "The file "+testFile+" has been edited", obs)

		obs = rt.edit(fileEdit{command: "view", path: testFile})
		assert.Contains(t, obs.Content, "   185\t"+lines[184]+"\n   186\ttest content\n   187\t"+lines[185]+"\n", obs)
	})
}
