"""Helpers an agent calls from the IPython kernel.

open_file, goto_line, scroll_down and scroll_up page through a file in a
window of numbered lines; search_dir, search_file and find_file look for
text and names; parse_pdf, parse_docx, parse_latex and parse_pptx print the
text of documents, with whichever library for the format the kernel can
import; file_editor is the str_replace editor of the `edit` action, run by
the action server's own binary as the kernel's user, so file permissions
apply as they do to any code in the kernel.

The printed texts are the ones agents know from OpenHands.
"""

import importlib
import json
import os
import subprocess
import uuid

_CONFIG_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'config.json')

# The file open in the window, the line the window is at, its height.
CURRENT_FILE = None
CURRENT_LINE = 1
WINDOW = 100


def _config():
    with open(_CONFIG_PATH) as f:
        return json.load(f)


def _error(message):
    print(f'ERROR: {message}')


def _count_lines(path):
    with open(path) as f:
        return max(1, sum(1 for _ in f))


def _header(path, total):
    return f'[File: {os.path.abspath(path)} ({total} lines total)]\n'


def _window(path, target, height, from_target=False):
    """Render lines around target (or from it, when scrolling)."""
    global CURRENT_LINE
    with open(path) as f:
        text = f.read()
    if not text.endswith('\n'):
        text += '\n'
    lines = text.splitlines(True)
    total = len(lines)
    CURRENT_LINE = max(1, min(target, total))
    half = max(1, height // 2)
    if from_target:
        first, last = max(1, CURRENT_LINE), min(total, CURRENT_LINE + height)
    else:
        first, last = max(1, CURRENT_LINE - half), min(total, CURRENT_LINE + half)
    if first == 1:
        last = min(total, first + height - 1)
    if last == total:
        first = max(1, last - height + 1)
    parts = [f'({first - 1} more lines above)\n' if first > 1 else '(this is the beginning of the file)\n']
    for n in range(first, last + 1):
        line = f'{n}|{lines[n - 1]}'
        parts.append(line if line.endswith('\n') else line + '\n')
    parts.append(f'({total - last} more lines below)\n' if last < total else '(this is the end of the file)\n')
    return ''.join(parts).rstrip()


def _have_open_file():
    if not CURRENT_FILE or not os.path.isfile(CURRENT_FILE):
        _error('No file open. Use the open_file function first.')
        return False
    return True


def open_file(path: str, line_number: int | None = 1, context_lines: int | None = WINDOW) -> None:
    """Opens a file in the editor and optionally positions at a specific line.

    The function displays a limited window of content, centered around the specified line
    number if provided. To view the complete file content, the agent should use scroll_down and scroll_up
    commands iteratively.

    Args:
        path: The path to the file to open. Absolute path is recommended.
        line_number: The target line number to center the view on (if possible).
            Defaults to 1.
        context_lines: Maximum number of lines to display in the view window.
            Limited to 100 lines. Defaults to 100.
    """
    global CURRENT_FILE, CURRENT_LINE
    if not os.path.isfile(path):
        _error(f'File {path} not found.')
        return
    CURRENT_FILE = os.path.abspath(path)
    total = _count_lines(CURRENT_FILE)
    if not isinstance(line_number, int) or not 1 <= line_number <= total:
        _error(f'Line number must be between 1 and {total}')
        return
    CURRENT_LINE = line_number
    if context_lines is None or context_lines < 1:
        context_lines = WINDOW
    out = _header(CURRENT_FILE, total) + _window(CURRENT_FILE, CURRENT_LINE, max(1, min(context_lines, 100)))
    if out.strip().endswith('more lines below)'):
        out += '\n[Use `scroll_down` to view the next 100 lines of the file!]'
    print(out)


def goto_line(line_number: int) -> None:
    """Moves the window to show the specified line number.

    Args:
        line_number: int: The line number to move to.
    """
    if not _have_open_file():
        return
    total = _count_lines(CURRENT_FILE)
    if not isinstance(line_number, int) or not 1 <= line_number <= total:
        _error(f'Line number must be between 1 and {total}.')
        return
    print(_header(CURRENT_FILE, total) + _window(CURRENT_FILE, line_number, WINDOW))


def scroll_down() -> None:
    """Moves the window down by 100 lines.

    Args:
        None
    """
    if not _have_open_file():
        return
    total = _count_lines(CURRENT_FILE)
    target = max(1, min(CURRENT_LINE + WINDOW, total))
    print(_header(CURRENT_FILE, total) + _window(CURRENT_FILE, target, WINDOW, from_target=True))


def scroll_up() -> None:
    """Moves the window up by 100 lines.

    Args:
        None
    """
    if not _have_open_file():
        return
    total = _count_lines(CURRENT_FILE)
    target = max(1, min(CURRENT_LINE - WINDOW, total))
    print(_header(CURRENT_FILE, total) + _window(CURRENT_FILE, target, WINDOW, from_target=True))


def search_dir(search_term: str, dir_path: str = './') -> None:
    """Searches for search_term in all files in dir. If dir is not provided, searches in the current directory.

    Args:
        search_term: str: The term to search for.
        dir_path: str: The path to the directory to search.
    """
    if not os.path.isdir(dir_path):
        _error(f'Directory {dir_path} not found')
        return
    found = []
    for root, _, names in os.walk(dir_path):
        for name in names:
            if name.startswith('.'):
                continue
            path = os.path.join(root, name)
            if not os.path.isfile(path):
                continue  # a pipe or device would block the kernel forever
            with open(path, 'r', errors='ignore') as f:
                for n, line in enumerate(f, 1):
                    if search_term in line:
                        found.append((path, n, line.strip()))
    if not found:
        print(f'No matches found for "{search_term}" in {dir_path}')
        return
    files = len({path for path, _, _ in found})
    if files > 100:
        print(f'More than {files} files matched for "{search_term}" in {dir_path}. Please narrow your search.')
        return
    print(f'[Found {len(found)} matches for "{search_term}" in {dir_path}]')
    for path, n, line in found:
        print(f'{path} (Line {n}): {line}')
    print(f'[End of matches for "{search_term}" in {dir_path}]')


def search_file(search_term: str, file_path: str | None = None) -> None:
    """Searches for search_term in file. If file is not provided, searches in the current open file.

    Args:
        search_term: The term to search for.
        file_path: The path to the file to search.
    """
    if file_path is None:
        file_path = CURRENT_FILE
    if file_path is None:
        _error('No file specified or open. Use the open_file function first.')
        return
    if not os.path.isfile(file_path):
        _error(f'File {file_path} not found.')
        return
    with open(file_path) as f:
        found = [(n, line.strip()) for n, line in enumerate(f, 1) if search_term in line]
    if not found:
        print(f'[No matches found for "{search_term}" in {file_path}]')
        return
    print(f'[Found {len(found)} matches for "{search_term}" in {file_path}]')
    for n, line in found:
        print(f'Line {n}: {line}')
    print(f'[End of matches for "{search_term}" in {file_path}]')


def find_file(file_name: str, dir_path: str = './') -> None:
    """Finds all files with the given name in the specified directory.

    Args:
        file_name: str: The name of the file to find.
        dir_path: str: The path to the directory to search.
    """
    if not os.path.isdir(dir_path):
        _error(f'Directory {dir_path} not found')
        return
    found = [os.path.join(root, name) for root, _, names in os.walk(dir_path) for name in names if file_name in name]
    if not found:
        print(f'[No matches found for "{file_name}" in {dir_path}]')
        return
    print(f'[Found {len(found)} matches for "{file_name}" in {dir_path}]')
    for path in found:
        print(path)
    print(f'[End of matches for "{file_name}" in {dir_path}]')


def _library(helper, choices):
    """Returns the first module of choices, (module, package) pairs, that
    imports. When none does, it says which package helper needs and how to
    get it, and returns None: the kernel may well lack it, and a missing
    package is something the agent can fix.
    """
    for module, _ in choices:
        try:
            return importlib.import_module(module)
        except ImportError:
            pass
    packages = ' or '.join(package for _, package in choices)
    _error(f'{helper} needs the Python package {packages}, which this kernel cannot import. '
           f'Install it (for example with `%pip install {choices[0][1]}` in a cell) and call {helper} again.')
    return None


def _readable(path):
    if not os.path.isfile(path):
        _error(f'File {path} not found.')
        return False
    return True


def parse_pdf(file_path: str) -> None:
    """Parses the content of a PDF file and prints it.

    Args:
        file_path: str: The path to the file to open.
    """
    pdf = _library('parse_pdf', [('pypdf', 'pypdf'), ('PyPDF2', 'PyPDF2')])
    if pdf is None or not _readable(file_path):
        return
    print(f'[Reading PDF file from {file_path}]')
    pages = pdf.PdfReader(file_path).pages
    text = ''.join(f'@@ Page {n} @@\n{page.extract_text()}\n\n' for n, page in enumerate(pages, 1))
    print(text.strip())


def parse_docx(file_path: str) -> None:
    """Parses the content of a DOCX file and prints it.

    Args:
        file_path: str: The path to the file to open.
    """
    docx = _library('parse_docx', [('docx', 'python-docx')])
    if docx is None or not _readable(file_path):
        return
    print(f'[Reading DOCX file from {file_path}]')
    # Each paragraph is labelled a page, as agents know it from OpenHands.
    paragraphs = docx.Document(file_path).paragraphs
    print(''.join(f'@@ Page {n} @@\n{para.text}\n\n' for n, para in enumerate(paragraphs, 1)).strip())


def parse_latex(file_path: str) -> None:
    """Parses the content of a LaTex file and prints it.

    Args:
        file_path: str: The path to the file to open.
    """
    latex2text = _library('parse_latex', [('pylatexenc.latex2text', 'pylatexenc')])
    if latex2text is None or not _readable(file_path):
        return
    print(f'[Reading LaTex file from {file_path}]')
    with open(file_path) as f:
        data = f.read()
    print(latex2text.LatexNodes2Text().latex_to_text(data).strip())


def parse_pptx(file_path: str) -> None:
    """Parses the content of a pptx file and prints it.

    Args:
        file_path: str: The path to the file to open.
    """
    pptx = _library('parse_pptx', [('pptx', 'python-pptx')])
    if pptx is None or not _readable(file_path):
        return
    print(f'[Reading PowerPoint file from {file_path}]')
    try:
        lines = []
        for n, slide in enumerate(pptx.Presentation(str(file_path)).slides, 1):
            lines.append(f'@@ Slide {n} @@')
            lines.extend(shape.text for shape in slide.shapes if hasattr(shape, 'text'))
        print('\n'.join(lines))
    except Exception as e:
        print(f'Error reading PowerPoint file: {e}')


_EXCEPTIONS = {'PermissionError': PermissionError, 'FileNotFoundError': FileNotFoundError}


def file_editor(
    command: str,
    path: str,
    file_text: str | None = None,
    view_range: list[int] | None = None,
    old_str: str | None = None,
    new_str: str | None = None,
    insert_line: int | None = None,
    enable_linting: bool = False,
) -> str:
    """Runs a command of the str_replace editor (view, create, str_replace, insert, undo_edit) and
    returns its result between <oh_aci_output_ID> markers, as JSON with the output or error and
    the formatted text an agent reads.
    """
    cfg = _config()
    request = {
        'command': command, 'path': path, 'file_text': file_text, 'view_range': view_range,
        'old_str': old_str, 'new_str': new_str, 'insert_line': insert_line,
    }
    env = dict(os.environ, ACTION_SERVER_EDITOR_HISTORY=cfg['history'])
    proc = subprocess.run([cfg['binary'], 'file-editor'], input=json.dumps(request).encode(),
                          capture_output=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.decode(errors='replace').strip() or f'file editor exited with {proc.returncode}')
    result = json.loads(proc.stdout)
    if 'exception' in result:
        raise _EXCEPTIONS.get(result['exception'], OSError)(result['message'])
    formatted = f'ERROR:\n{result["error"]}' if result.get('error') else result.get('output')
    marker = uuid.uuid4().hex
    body = '{' + ','.join(f'"{k}": {json.dumps(v)}' for k, v in result.items())
    body += f', "formatted_output_and_error": {json.dumps(formatted)}' + '}'
    return f'<oh_aci_output_{marker}>\n{body}\n</oh_aci_output_{marker}>'


__all__ = [
    'open_file',
    'goto_line',
    'scroll_down',
    'scroll_up',
    'search_dir',
    'search_file',
    'find_file',
    'parse_pdf',
    'parse_docx',
    'parse_latex',
    'parse_pptx',
    'file_editor',
]
