"""File actions, editing and transfers through the host's methods."""

import os
import zipfile
from pathlib import Path

from conftest import sandbox_uid
from openhands.events.action import FileEditAction, FileReadAction, FileWriteAction
from openhands.events.observation import (
    ErrorObservation,
    FileEditObservation,
    FileReadObservation,
    FileWriteObservation,
)


def test_write_then_read(runtime):
    path = f'{runtime.workspace}/notes/hello.txt'
    obs = runtime.run_action(FileWriteAction(path=path, content='one\ntwo\nthree'))
    assert isinstance(obs, FileWriteObservation)
    assert obs.path == path
    obs = runtime.run_action(FileReadAction(path=path))
    assert isinstance(obs, FileReadObservation)
    assert obs.content == 'one\ntwo\nthree\n'
    obs = runtime.run_action(FileReadAction(path=path, start=1, end=2))
    assert obs.content == 'two\n'
    # Created as the sandbox user, as upstream's server does.
    assert os.stat(path).st_uid == sandbox_uid()


def test_read_missing_file(runtime):
    path = f'{runtime.workspace}/nope.txt'
    obs = runtime.run_action(FileReadAction(path=path))
    assert isinstance(obs, ErrorObservation)
    assert obs.content == f'File not found: {path}. Your current working directory is {runtime.workspace}.'


def edit(runtime, **kw):
    return runtime.run_action(FileEditAction(**kw))


def test_editor_every_command(runtime):
    path = f'{runtime.workspace}/app.py'
    obs = edit(runtime, path=path, command='create', file_text='def f():\n    return 1\n')
    assert isinstance(obs, FileEditObservation)
    assert obs.content == f'File created successfully at: {path}'

    obs = edit(runtime, path=path, command='view')
    assert '     1\tdef f():' in obs.content and '     2\t    return 1' in obs.content

    obs = edit(runtime, path=path, command='str_replace', old_str='return 1', new_str='return 2')
    assert obs.content.startswith(f'The file {path} has been edited.')
    # Upstream sends the arguments back as old and new content.
    assert (obs.old_content, obs.new_content) == ('return 1', 'return 2')
    assert '-    return 1' in obs.diff and '+    return 2' in obs.diff

    obs = edit(runtime, path=path, command='insert', insert_line=2, new_str='# end')
    assert obs.content.startswith(f'The file {path} has been edited.')

    obs = edit(runtime, path=path, command='undo_edit')
    assert obs.content.startswith(f'Last edit to {path} undone successfully.')
    assert runtime.run_action(FileReadAction(path=path)).content == 'def f():\n    return 2\n'

    obs = edit(runtime, path=path, command='str_replace', old_str='absent', new_str='x')
    assert obs.content.startswith('ERROR:\nNo replacement was performed, old_str `absent` did not appear verbatim')

    obs = edit(runtime, path=os.path.dirname(path), command='view')
    assert 'app.py' in obs.content


def test_copy_to_a_file_and_a_directory(runtime, tmp_path):
    src = tmp_path / 'single.txt'
    src.write_text('single file\n')
    dest = f'{runtime.workspace}/upload'
    runtime.copy_to(str(src), dest)
    tree = tmp_path / 'tree'
    (tree / 'deep').mkdir(parents=True)
    (tree / 'a.txt').write_text('A')
    (tree / 'deep' / 'b.txt').write_text('B')
    runtime.copy_to(str(tree), dest, recursive=True)

    assert sorted(runtime.list_files(dest)) == ['single.txt', 'tree/']
    assert sorted(runtime.list_files(f'{dest}/tree')) == ['a.txt', 'deep/']
    assert runtime.run_action(FileReadAction(path=f'{dest}/tree/deep/b.txt')).content == 'B'
    assert runtime.run_action(FileReadAction(path=f'{dest}/single.txt')).content == 'single file\n'


def test_list_files_of_the_workspace_by_default(runtime):
    runtime.run_action(FileWriteAction(path=f'{runtime.workspace}/listed.txt', content='x'))
    assert 'listed.txt' in runtime.list_files()
    assert runtime.list_files(f'{runtime.workspace}/missing-dir') == []


def test_copy_from(runtime, tmp_path):
    base = f'{runtime.workspace}/out'
    runtime.run_action(FileWriteAction(path=f'{base}/x.txt', content='X'))
    runtime.run_action(FileWriteAction(path=f'{base}/sub/y.txt', content='Y'))
    archive = runtime.copy_from(base)
    try:
        with zipfile.ZipFile(archive) as z:
            names = sorted(n for n in z.namelist() if not n.endswith('/'))
            assert names == ['sub/y.txt', 'x.txt']
            assert z.read('sub/y.txt') == b'Y\n'  # write ends the last line
    finally:
        Path(archive).unlink()
