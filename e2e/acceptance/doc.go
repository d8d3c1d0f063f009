// Package acceptance drives the action-server binary the way the OpenHands
// host's runtime test-suite (tests/runtime/ in OpenHands, at the commit the
// contract was written from) drives the upstream server, and checks what
// that suite checks. It holds tests only.
//
// How a test runs. Each test starts the server with the host's command line
// (`<PORT> --working-dir DIR [--plugins ...] --username U --user-id N
// [--no-enable-browser]`, plus `--host 127.0.0.1`; the browser is off
// unless the test enables it, as _load_runtime's default) and the environment
// DockerRuntime gives its container, waits for /alive, then does what the
// host's connect does (setup_initial_env: add_env_vars for the initial and
// startup variables, then `git config --global ...`). Actions are posted
// to /execute_action as event_to_dict serialises them, every args key
// present and "timeout" as the host sets it: set_hard_timeout(t) gives
// `"timeout": t` with `blocking: true`; otherwise the host sends its
// sandbox.timeout, `"timeout": 120.0` with `blocking: false`. Answers are
// read as observation_from_dict reads them, so an answer the host could not
// take (an HTTP error, an unknown extras key, a missing field) fails the
// test with the host's exception name. Each test runs as root and as a
// sandbox user the server creates on first use ("ohaccept", standing for
// upstream's "openhands"), in parallel.
//
// Each server runs in its own mount and PID namespace (so the tests need
// root): a private /tmp holding the workspace (/tmp/workspace), a fresh
// home directory mounted over /root and, for the sandbox user, one over
// the user's home (from /etc/skel, as useradd -m makes it), its own /proc,
// and `python` on PATH as in the runtime image. Upstream gets the same
// from one container per test; without it, commands such as `pkill -f
// http.server`, `sudo touch /root/test.txt`, writes to /tmp/test_dir or
// appends to ~/.bashrc would reach other tests, the machine's own home
// directories or other people's processes.
//
// Where each test comes from (test_bash.py unless noted):
//
//	TestBashServer_HardTimeoutThenCtrlCStopsIt          test_bash_server
//	TestBashBackgroundServer_KeepsServingAfterTheCommand test_bash_background_server
//	TestMultilineCommands_ContinuationsAndEmbeddedNewlines test_multiline_commands
//	TestComplexCommands_LoopAndConditionalsOnOneLine    test_complex_commands
//	TestNoPS2InOutput                                   test_no_ps2_in_output
//	TestMultilineCommandLoop_ForLoopsOverSeveralLines   test_multiline_command_loop
//	TestMultipleMultilineCommands_RejectedTogetherRunSeparately test_multiple_multiline_commands
//	TestCmdRun_CreatesFilesAsTheSandboxUser             test_cmd_run
//	TestRunAsUser_HomeDirectory                         test_run_as_user_correct_home_dir
//	TestMultiCmdRunInSingleLine                         test_multi_cmd_run_in_single_line
//	TestStatefulCmd_DirectoryPersistsAcrossActions      test_stateful_cmd
//	TestFailedCmd_NonZeroExitCode                       test_failed_cmd
//	TestGitOperation_AsTheSandboxUser                   test_git_operation (sandbox user only, as upstream)
//	TestPythonVersion                                   test_python_version
//	TestPwdProperty                                     test_pwd_property
//	TestBasicCommand                                    test_basic_command
//	TestInteractiveCommand_ReadPromptThenHeredoc        test_interactive_command
//	TestLongOutput                                      test_long_output
//	TestLongOutput_ExceedsHistoryLimit                  test_long_output_exceed_history_limit
//	TestLongOutput_FromNestedDirectories                test_long_output_from_nested_directories
//	TestCommandBackslash_FindExecSemicolon              test_command_backslash
//	TestStress_LongOutputWithSoftAndHardTimeout         test_stress_long_output_with_soft_and_hard_timeout
//	TestCommandOutputContinuation                       test_command_output_continuation
//	TestLongRunningCommand_FollowedByExecute            test_long_running_command_follow_by_execute
//	TestEmptyCommand_NothingToRetrieve                  test_empty_command_errors
//	TestPythonInteractiveInput                          test_python_interactive_input
//	TestPythonInteractiveInput_WithoutSetInput          test_python_interactive_input_without_set_input
//	TestBashRemovePrefix_CommandEchoNotInOutput         test_bash_remove_prefix
//	TestEnvVars_FromHostSandboxEnv                      test_env_vars.py::test_env_vars_os_environ
//	TestEnvVars_AddOverwriteAndEmpty                    test_env_vars.py::test_env_vars_runtime_operations
//	TestEnvVars_AddedByConfig                           test_env_vars.py::test_env_vars_added_by_config
//	TestEnvVars_PersistAfterRestart                     test_env_vars.py::test_docker_runtime_env_vars_persist_after_restart
//	TestConnect_WithTheSuitesPlugins                    conftest.py's plugins with base.py's add_env_vars
//	TestInitializeRepositoryForRuntime                  test_setup.py::test_initialize_repository_for_runtime (local origin)
//	TestMaybeRunSetupScript                             test_setup.py::test_maybe_run_setup_script
//	TestMaybeRunSetupScript_WithLongTimeout             test_setup.py::test_maybe_run_setup_script_with_long_timeout
//	TestCopyTo_SingleFile                               test_copy_single_file
//	TestCopyTo_DirectoryRecursively                     test_copy_directory_recursively
//	TestCopyTo_NonExistentDirectoryIsCreated            test_copy_to_non_existent_directory
//	TestCopyTo_OverwritesExistingFile                   test_overwrite_existing_file
//	TestCopyTo_NonExistentFileFailsOnTheHost            test_copy_non_existent_file
//	TestCopyFrom_Directory                              test_copy_from_directory (plus checks of the zip)
//
// From tests/unit/runtime/utils/test_bash_session.py, through the server
// (NO_CHANGE_TIMEOUT_SECONDS set to the session's no_change_timeout_seconds):
//
//	TestBashSessionInteractiveCommand_OpenHeredocWaitsForItsLines test_interactive_command
//
// From test_aci_edit.py:
//
//	TestEditView_File                                   test_view_file
//	TestEditView_DirectoryCountsHiddenDownloads         test_view_directory
//	TestEditCreate_File                                 test_create_file
//	TestEditCreate_EmptyContentViewsAsOneEmptyLine      test_create_file_with_empty_content
//	TestEditCreate_WithoutFileTextIsAnError             test_create_with_none_file_text
//	TestEditStrReplace                                  test_str_replace
//	TestEditStrReplace_MultiLine                        test_str_replace_multi_line
//	TestEditStrReplace_MultiLineWithTabs                test_str_replace_multi_line_with_tabs
//	TestEditStrReplace_MultipleOccurrencesListsTheirLines test_str_replace_error_multiple_occurrences
//	TestEditStrReplace_MultipleMultilineOccurrencesListStartLines test_str_replace_error_multiple_multiline_occurrences
//	TestEditStrReplace_NonexistentString                test_str_replace_nonexistent_string
//	TestEditStrReplace_EmptyNewStrRemovesTheText        test_str_replace_with_empty_new_str
//	TestEditStrReplace_EmptyOldStrMatchesEveryLine      test_str_replace_with_empty_old_str
//	TestEditStrReplace_WithoutOldStrIsAnError           test_str_replace_with_none_old_str
//	TestEditInsert                                      test_insert
//	TestEditInsert_LineOutOfRangeIsAnError              test_insert_invalid_line
//	TestEditInsert_EmptyStringAddsAnEmptyLine           test_insert_with_empty_string
//	TestEditInsert_WithoutNewStrIsAnError               test_insert_with_none_new_str
//	TestEditUndo_RestoresTheFile                        test_undo_edit
//	TestEditView_MissingPathIsAnError                   test_validate_path_invalid
//	TestEditCreate_ExistingFileIsAnError                test_create_existing_file_error
//	TestEditStrReplace_EmptyOldStrIsNotUnique           test_str_replace_missing_old_str
//	TestEditStrReplace_SameOldAndNewStrIsAnError        test_str_replace_new_str_and_old_str_same
//	TestEditInsert_WithoutInsertLineIsAnError           test_insert_missing_line_param
//	TestEditUndo_WithoutHistoryIsAnError                test_undo_edit_no_history_error
//	TestEditView_LargeFileIsTruncated                   test_view_large_file_with_truncation
//	TestEditInsert_InsertLineGivenAsString              test_insert_line_string_conversion (over the wire, not with a mocked editor)
//
// From test_ipython.py, with the agent_skills and jupyter plugins:
//
//	TestSimpleCmdIPythonAndFileOp                       test_simple_cmd_ipython_and_fileop
//	TestIPythonMultiUser_KernelRunsAsTheUser            test_ipython_multi_user (never run upstream: its skipif is always true)
//	TestIPythonSimple                                   test_ipython_simple
//	TestIPythonChdir_AbsolutePath                       test_ipython_chdir
//	TestIPythonPackageInstall                           test_ipython_package_install (up to the pip install, which needs PyPI)
//	TestIPythonFileEditor_PermissionsAsTheSandboxUser   test_ipython_file_editor_permissions_as_openhands (sandbox user only, as upstream)
//
// From test_browsing.py (the browser enabled, Debian's Chromium):
//
//	TestBrowserDisabled                                 test_browser_disabled
//	TestSimpleBrowse                                    test_simple_browse
//	TestBrowserNavigationActions                        test_browser_navigation_actions
//	TestBrowserFormInteractions                         test_browser_form_interactions
//	TestBrowserInteractiveActions                       test_browser_interactive_actions
//	TestBrowserFileUpload                               test_browser_file_upload
//	TestReadPDFBrowse                                   test_read_pdf_browse ("Canvas" needs Debian's libjs-pdf, or pdf.js from its CDN)
//	TestReadPNGBrowse                                   test_read_png_browse
//	TestDownloadFile                                    test_download_file (skipped upstream as flaky; browses the page its checks are about)
//
// The file viewer writes its address to /tmp/oh-server-url, its default:
// each sandbox's /tmp is its own, as a container's is.
// TestBrowsergymEvalEnv stands for test_browsergym_envs.py and only skips:
// it needs a miniwob evaluation image.
//
// From test_microagent.py, the part that reaches the server (the read of
// .openhands_instructions, list_files and copy_from of the microagents
// directory, as get_microagents_from_selected_repo does them):
//
//	TestLoadMicroagents_FromTheWorkspace                test_load_microagents_with_trailing_slashes
//	TestLoadMicroagents_FromTheSelectedRepo             test_load_microagents_with_selected_repo (without the org-level repository)
//	TestLoadMicroagents_WithMissingFiles                test_load_microagents_with_missing_files
//
// Its other tests load microagents from host files or mock the MCP
// tools: host code only.
//
// The copy tests keep the host's files outside the sandbox (upstream's
// are in the mounted workspace already), and the TestHost* tests check
// this package's copy_to and copy_from against a stand-in server.
//
// Not ported: the Windows, CLIRuntime and LocalRuntime branches and tests
// (test_cliruntime_multiple_newline_commands), and
// test_runtime_resource.py (its one test is skipped upstream as flaky).
// Upstream's conftest loads the agent_skills and jupyter plugins for every
// test; the other ports run without plugins (add_env_vars then sends only
// the two bash commands), while the IPython ports and
// TestConnect_WithTheSuitesPlugins load both.
//
// Run with: go test -race ./e2e/acceptance/ (as root). Independent tests
// run in parallel; the suite sets -test.parallel=8 unless given.
package acceptance
