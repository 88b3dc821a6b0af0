"""Every code block of README.md runs, and the output it shows is what the code prints now.

How each fenced block is checked (a reader's way through the README):

* ```` ```python ````: run, in order, in one namespace per section (a heading
  starts a new one), from the repository root. A value shown in the comment
  of an expression line (``na.position_id(board)  # '4HPwATDgc/ABMA'``,
  ``# array([167, 167])``, ``# 0.6687: ...``) must be the value, to the digits shown.
* ```` ```console ````: each ``$ nard ...`` line runs (in-process, through
  ``cli.main``) and its output must be the lines shown under it. ``...`` (or
  ``... words ...``) stands for any lines; without one at the start or end,
  the shown lines are the whole output, except for the board that every
  command but ``show`` and ``play`` draws first (the README says so). Times
  (``0.05s``, ``1.4 s``) may differ.
* ```` ```bash ````: every ``nard ...`` command runs and exits 0. A block
  with anything else needs a marker comment on the line before it, saying
  why: ``<!-- readme-test: skip: REASON -->`` (servers, long runs; not run),
  ``<!-- readme-test: nard-only: REASON -->`` (only the ``nard`` commands of
  its ``&&`` chains run). A console transcript that types input takes it from
  ``<!-- readme-test: input: LINE | LINE -->``.

The README's ``curl`` examples, in a block skipped for starting a server,
are sent to the HTTP app itself (FastAPI's TestClient).
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import shlex
import sys
import tokenize
import urllib.parse
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
#: The documents whose blocks this test runs: the README and the generation history it links to.
DOCS = (README, REPO / "docs" / "GENERATIONS.md")

FENCE = re.compile(r"^```(\S*)\s*$")
MARKER = re.compile(r"^<!-- readme-test: (skip|nard-only|input): (.*\S)\s*-->$")
ELISION = re.compile(r"^\s*\.\.\.(\s.*\s\.\.\.)?\s*$")  # "..." or "... the board ..."
TIME = re.compile(r"\b\d+(\.\d+)? ?s\b")
LANGUAGES = {"python", "bash", "console"}


@dataclass(frozen=True)
class Block:
    lang: str
    line: int  # 1-based line of the opening fence
    section: str
    code: str
    marker: tuple[str, str] | None  # (kind, text) of the marker comment before the fence
    doc: str = "README.md"  # the file, relative to the repository root

    @property
    def id(self) -> str:
        return (
            f"{self.lang}@{self.line}" if self.doc == "README.md" else f"{self.doc}:{self.lang}@{self.line}"
        )

    @property
    def where(self) -> str:
        return f"{self.doc} line {self.line}"


def readme_blocks(text: str | None = None, path: Path = README) -> list[Block]:
    """The fenced blocks of ``path`` (or of ``text``), with their section heading and marker comment."""
    lines = (path.read_text() if text is None else text).splitlines()
    blocks, section, i = [], "", 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            section = line.lstrip("#").strip()
        fence = FENCE.match(line)
        if fence:
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            before = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            marker = MARKER.match(before)
            blocks.append(
                Block(
                    fence.group(1),
                    i + 1,
                    section,
                    "\n".join(lines[i + 1 : j]) + "\n",
                    (marker.group(1), marker.group(2)) if marker else None,
                    path.relative_to(REPO).as_posix(),
                )
            )
            i = j
        i += 1
    return blocks


BLOCKS = [block for doc in DOCS for block in readme_blocks(path=doc)]


def test_every_block_is_a_language_this_test_runs_and_every_marker_has_a_reason():
    assert len(BLOCKS) >= 12
    for block in BLOCKS:
        assert block.lang in LANGUAGES, f"{block.where}: a ```{block.lang} block is not checked"
        if block.marker:
            kind, text = block.marker
            assert len(text.split()) >= 3, f"{block.where}: say why ({kind}: {text!r})"
    for doc in DOCS:
        name = doc.relative_to(REPO).as_posix()
        lines = doc.read_text().splitlines()
        markers = [n for n, line in enumerate(lines, 1) if line.strip().startswith("<!-- readme-test")]
        for n in markers:
            assert MARKER.match(lines[n - 1].strip()), f"{name} line {n}: not a marker this test reads"
        marked = {b.line for b in BLOCKS if b.marker and b.doc == name}
        for n in markers:
            assert any(n < fence <= n + 2 for fence in marked), (
                f"{name} line {n}: a marker not before a block"
            )


def test_the_block_parser_reads_sections_markers_and_fences():
    text = "# A\n```python\nx = 1\n```\n## B\n<!-- readme-test: skip: it starts a server -->\n```bash\nnard serve\n```\n"
    a, b = readme_blocks(text)
    assert (a.lang, a.section, a.code, a.marker) == ("python", "A", "x = 1\n", None)
    assert (b.lang, b.section, b.line, b.marker) == ("bash", "B", 7, ("skip", "it starts a server"))


# --------------------------------------------------------------------------- python blocks


def _shown_value(comment: str):
    """The value a comment shows (``'text'``, a number, ``array([...])``), or ``None`` for prose.

    Returns ``(kind, value, decimals)``.
    """
    text = comment.lstrip("#").strip()
    if text[:1] in ("{", "["):  # a dict or list literal: {'player_0': 270.0, ...}, [3, 6]
        depth = 0
        for n, ch in enumerate(text):
            depth += (ch in "{[") - (ch in "}]")
            if depth == 0:
                try:
                    return "literal", ast.literal_eval(text[: n + 1]), None
                except (ValueError, SyntaxError):
                    return None
        return None
    if text.startswith("array("):
        depth = 0
        for n, ch in enumerate(text):
            depth += (ch == "(") - (ch == ")")
            if ch == ")" and depth == 0:
                return "array", text[: n + 1], None
        return None
    try:
        first = next(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, StopIteration):
        return None
    if first.type == tokenize.STRING:
        return "literal", ast.literal_eval(first.string), None
    if first.type == tokenize.NUMBER:
        decimals = len(first.string.split(".")[1]) if "." in first.string else 0
        return "number", ast.literal_eval(first.string), decimals
    return None


def test_shown_values_are_read_from_comments_and_prose_is_not():
    assert _shown_value("# '4HPwATDgc/ABMA'") == ("literal", "4HPwATDgc/ABMA", None)
    assert _shown_value("# array([167, 167])") == ("array", "array([167, 167])", None)
    assert _shown_value("# 0.6687: Kazaross-XG2 MET") == ("number", 0.6687, 4)
    assert _shown_value("# 0 while the game runs") == ("number", 0, 0)
    assert _shown_value("# (16, 26) int8 sorted") is None
    assert _shown_value("# the same XGID back") is None
    assert _shown_value("# {'player_0': 270.0, 'player_1': -270.0}: +2.70 a game") == (
        "literal",
        {"player_0": 270.0, "player_1": -270.0},
        None,
    )
    assert _shown_value("# [3, 6], the same every time") == ("literal", [3, 6], None)
    assert _shown_value("# [see below]") is None


def _comments(code: str) -> dict[int, str]:
    return {
        tok.start[0]: tok.string
        for tok in tokenize.generate_tokens(io.StringIO(code).readline)
        if tok.type == tokenize.COMMENT
    }


def run_python_block(code: str, namespace: dict, where: str) -> int:
    """Run one block statement by statement; returns how many shown values it checked."""
    tree = ast.parse(code, filename=where)
    comments = _comments(code)
    checked = 0
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr):
            expr = stmt.value
            printed = (  # print(x)  # {...}: the value shown is x's
                isinstance(expr, ast.Call)
                and isinstance(expr.func, ast.Name)
                and expr.func.id == "print"
                and len(expr.args) == 1
                and not expr.keywords
            )
            value = eval(compile(ast.Expression(expr.args[0] if printed else expr), where, "eval"), namespace)
            if printed:
                print(value)
            shown = _shown_value(comments.get(stmt.end_lineno, ""))
            if shown is not None:
                kind, expected, decimals = shown
                line = f"{where}+{stmt.lineno}"
                if kind == "array":
                    assert " ".join(repr(value).split()) == " ".join(expected.split()), (line, value)
                elif kind == "number":
                    assert round(float(value), decimals) == expected, (line, value, expected)
                else:
                    assert value == expected, (line, value, expected)
                checked += 1
        else:
            exec(compile(ast.Module([stmt], []), where, "exec"), namespace)
    return checked


PY_SECTIONS = list(dict.fromkeys(b.section for b in BLOCKS if b.lang == "python"))


@pytest.mark.parametrize("section", PY_SECTIONS)
def test_python_blocks_of_the_section_run_and_show_the_values_they_compute(section, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    namespace: dict = {"__name__": "__readme__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for block in (b for b in BLOCKS if b.lang == "python" and b.section == section):
            run_python_block(block.code, namespace, f"{block.doc}:{block.line}")
    capsys.readouterr()


def test_the_python_blocks_show_values_and_the_checker_catches_a_wrong_one():
    shown = 0
    for block in (b for b in BLOCKS if b.lang == "python"):
        shown += sum(_shown_value(c) is not None for c in _comments(block.code).values())
    assert shown >= 5  # position_id, pip_count, game_result, match_equity, play_notation
    import nard_ai as na

    namespace = {"na": na}
    assert run_python_block("na.position_id(na.starting_board())  # '4HPwATDgc/ABMA'\n", namespace, "t") == 1
    with pytest.raises(AssertionError):
        run_python_block("na.pip_count(na.starting_board())  # array([167, 166])\n", namespace, "t")
    with pytest.raises(AssertionError):
        run_python_block("na.match_equity(2, 4)  # 0.6688\n", namespace, "t")


# --------------------------------------------------------------------------- console blocks


@dataclass(frozen=True)
class Transcript:
    block: Block
    argv: list[str]
    shown: list[str]

    @property
    def id(self) -> str:
        where = "" if self.block.doc == "README.md" else f"{self.block.doc}:"
        return f"{where}{self.block.line}:{' '.join(self.argv[:2])}"


def transcripts(block: Block) -> list[Transcript]:
    found: list[Transcript] = []
    for line in block.code.splitlines():
        if line.startswith("$ "):
            argv = shlex.split(line[2:], comments=True)
            assert argv[0] == "nard", f"{block.where}: a console block runs nard only: {line}"
            found.append(Transcript(block, argv[1:], []))
        else:
            assert found, f"{block.where}: output before any $ command"
            found[-1].shown.append(line)
    for t in found:
        while t.shown and not t.shown[-1].strip():
            t.shown.pop()
    return found


def _normal(lines: list[str]) -> list[str]:
    return [TIME.sub("<time>", line.rstrip()) for line in lines]


def drop_board(out: list[str]) -> list[str]:
    """The output after the board drawn first (``Position ID:`` ... ``Pip count``, and one blank line)."""
    if not out or not out[0].startswith(" Position ID:"):
        return out
    end = next(n for n, line in enumerate(out) if line.startswith(" Pip count"))
    rest = out[end + 1 :]
    return rest[1:] if rest and not rest[0].strip() else rest


def output_mismatch(shown: list[str], printed: list[str]) -> str | None:
    """Why ``printed`` is not what ``shown`` shows (``...`` lines stand for any lines), or ``None``."""
    shown, printed = _normal(shown), _normal(printed)
    if not (shown and shown[0].strip().startswith("Position ID")):
        printed = drop_board(printed) if not (shown and ELISION.match(shown[0])) else printed
    runs: list[list[str]] = [[]]
    for line in shown:
        if ELISION.match(line):
            runs.append([])
        else:
            runs[-1].append(line)
    free_start = bool(shown) and bool(ELISION.match(shown[0]))
    free_end = bool(shown) and bool(ELISION.match(shown[-1]))
    pos = 0
    for n, run in enumerate(runs):
        if not run:
            continue
        anchored = n == 0 and not free_start
        starts = [pos] if anchored else range(pos, len(printed) - len(run) + 1)
        at = next((s for s in starts if printed[s : s + len(run)] == run), None)
        if at is None:
            if anchored:
                k = next(
                    k for k, line in enumerate(run) if pos + k >= len(printed) or printed[pos + k] != line
                )
                got = printed[pos + k] if pos + k < len(printed) else "(the end of the output)"
                return f"line {k + 1} of the output: shown\n{run[k]}\nprinted\n{got}"
            return "not printed:\n" + "\n".join(run)
        pos = at + len(run)
    if not free_end and pos != len(printed):
        return "printed after the last line shown:\n" + "\n".join(printed[pos:])
    return None


def test_output_comparison_follows_elisions_times_and_the_board_rule():
    board = [" Position ID: x", " | X |", " Pip count  X: 1  O: 1", ""]
    assert output_mismatch(["a", "b"], board + ["a", "b"]) is None
    assert output_mismatch(["a", "..."], ["a", "b", "c"]) is None
    assert output_mismatch(["a", "...", "c"], ["a", "b", "b2", "c"]) is None
    assert output_mismatch(["t 0.05s", "u 0.6 s"], ["t 12.31s", "u 1.4 s"]) is None
    assert "after the last" in output_mismatch(["a"], ["a", "extra"])
    assert output_mismatch(["a", "c"], ["a", "b"]) == "line 2 of the output: shown\nc\nprinted\nb"
    assert "not printed" in output_mismatch(["...", "z"], ["a", "b"])
    assert output_mismatch(["a", "... the board ...", "c"], ["a", "x", "c"]) is None
    assert output_mismatch(["     ... 3 more"], ["     ... 3 more"]) is None  # printed text, not an elision
    assert output_mismatch(["     ... 3 more"], ["anything"]) is not None


CONSOLE = [t for b in BLOCKS if b.lang == "console" for t in transcripts(b)]


@pytest.mark.parametrize("t", CONSOLE, ids=[t.id for t in CONSOLE])
def test_console_transcripts_print_what_the_readme_shows(t, monkeypatch, capsys):
    from conftest import run_cli

    monkeypatch.chdir(REPO)
    typed: list[str] = []
    if t.block.marker and t.block.marker[0] == "input":
        typed = [s.strip() for s in t.block.marker[1].split("|")]

        def echo_input(prompt: str = "") -> str:  # a terminal shows what is typed after the prompt
            if not typed:
                raise EOFError
            sys.stdout.write(prompt + typed[0] + "\n")
            return typed.pop(0)

        monkeypatch.setattr(builtins, "input", echo_input)
    status, out, err = run_cli(t.argv, capsys)
    assert status == 0, err
    why = output_mismatch(t.shown, out.splitlines())
    assert why is None, f"{t.block.where}, $ nard {' '.join(t.argv)}: {why}\n--- printed:\n{out}"


# --------------------------------------------------------------------------- bash blocks


def nard_commands(block: Block) -> list[list[str]]:
    """The ``nard ...`` commands of a bash block (each line's ``&&`` chain split; comments dropped)."""
    commands = []
    for line in block.code.splitlines():
        for part in line.split("&&"):
            argv = shlex.split(part, comments=True)
            if argv and argv[0] == "nard":
                commands.append(argv[1:])
            elif argv and not (block.marker and block.marker[0] == "nard-only"):
                raise AssertionError(
                    f"{block.where}: `{part.strip()}` is not a nard command; mark the block "
                    "<!-- readme-test: skip: REASON --> or nard-only"
                )
    return commands


BASH = [b for b in BLOCKS if b.lang == "bash"]


@pytest.mark.parametrize("block", BASH, ids=[b.id for b in BASH])
def test_bash_blocks_run_their_nard_commands(block, monkeypatch, capsys):
    from conftest import run_cli

    if block.marker and block.marker[0] == "skip":
        pytest.skip(f"{block.where}: {block.marker[1]}")
    monkeypatch.chdir(REPO)
    commands = nard_commands(block)
    assert commands, f"{block.where}: no nard command to run"
    for argv in commands:
        status, out, err = run_cli(argv, capsys)
        assert status == 0 and out, (argv, err)


def test_the_setup_block_ends_with_a_nard_hint_and_the_test_command():
    setup = BLOCKS[0]
    assert setup.lang == "bash" and setup.marker and setup.marker[0] == "nard-only"
    assert nard_commands(setup) == [["hint", "4HPwATDgc/ABMA", "--dice", "3", "1"]]
    assert "python -m pytest -q" in setup.code


# --------------------------------------------------------------------------- curl examples


def curl_urls() -> list[str]:
    urls = []
    for block in BASH:
        for line in block.code.splitlines():
            argv = shlex.split(line, comments=True)
            if argv and argv[0] == "curl":
                urls += [a for a in argv[1:] if a.startswith("http")]
    return urls


def test_the_curl_examples_answer_200_from_the_app_and_encode_the_plus_of_an_id():
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    from nard_ai.interfaces.http import create_app

    urls = curl_urls()
    assert len(urls) >= 3
    client = TestClient(create_app())
    encoded_plus = 0
    for url in urls:
        parts = urllib.parse.urlsplit(url)
        assert "+" not in parts.query, f"{url}: a + in a query string is a space; write it %2B"
        response = client.get(f"{parts.path}?{parts.query}")
        assert response.status_code == 200, (url, response.text)
        query = dict(urllib.parse.parse_qsl(parts.query))
        if "%2B" in parts.query and "position_id" in response.json():
            # the server read the ID with its + (it echoes the Position ID it evaluated)
            assert response.json()["position_id"] == query["id"].split(":")[0]
            encoded_plus += 1
    assert encoded_plus >= 1, "show a Position ID with a + written as %2B"
    # what the README says of a bare +: it arrives as a space, and the answer is a 400 naming it
    bare = client.get("/eval?id=E+fgATDgc/ABEg")
    assert bare.status_code == 400 and "' '" in bare.json()["detail"], bare.text


# --------------------------------------------------------------------------- links and references


LINK = re.compile(r"\]\(([^)\s#]+)(#[^)\s]*)?\)")


def test_relative_links_of_the_readme_and_its_documents_name_files_that_exist():
    """A link such as ``[`docs/GENERATIONS.md`](docs/GENERATIONS.md)`` or an image names a file of the repository."""
    checked = 0
    for doc in DOCS:
        for target, _ in LINK.findall(doc.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            assert (doc.parent / target).exists(), f"{doc.name}: a link to {target}, which does not exist"
            checked += 1
    assert checked >= 3  # docs/RULES.md, docs/img/web-board.png, docs/GENERATIONS.md from the README


SECTION_REF = re.compile(r"(README|docs/GENERATIONS\.md),\s+(?:the\s+)?\"([^\"]+)\"")


def named_places(text: str) -> list[str]:
    """What a reference may name in a document: its headings and the words that open a paragraph."""
    places, start = [], True
    for line in text.splitlines():
        if line.startswith("#"):
            places.append(line.lstrip("#").strip())
        elif line.strip() and start:
            places.append(line.strip().strip("*"))
        start = not line.strip()
    return places


def test_the_code_names_sections_of_the_readme_and_the_generation_history_that_exist():
    """A reference in the code to a part of the README or of docs/GENERATIONS.md (the file's name, a comma
    and the part's name in double quotes) must name a heading or a paragraph's opening words of that
    document: a section that was renamed or moved leaves a reference nobody can follow."""
    places = {
        "README": named_places(README.read_text()),
        "docs/GENERATIONS.md": named_places(DOCS[1].read_text()),
    }
    refs = 0
    for path in sorted(
        [*(REPO / "nard_ai").rglob("*.py"), *(REPO / "tests").glob("*.py"), REPO / "train.py"]
    ):
        for doc, name in SECTION_REF.findall(path.read_text()):
            name = " ".join(name.split())
            assert any(place.startswith(name) for place in places[doc]), f"{path.name}: {doc} has no {name!r}"
            refs += 1
    assert refs >= 20
    assert named_places("## Rollouts\n\n**Generation 9: race inputs** (2026-12-04). The\nrace net\n") == [
        "Rollouts",
        "Generation 9: race inputs** (2026-12-04). The",
    ]
