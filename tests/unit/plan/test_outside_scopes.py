"""The one answer to "may these tasks change this path": ci check, exec, the hooks, delivery."""

from __future__ import annotations

from plangate.ownfiles import HISTORY, never_blamed
from plangate.plan.scope import (
    TaskScope,
    belongs_to_task,
    outside_scopes,
    task_directory,
)

APP = TaskScope(("src/app/**", "docs/notes.md"), None, ("src/app/secret/**",))
LIB = TaskScope(("lib/**",))
UNDEFINED = TaskScope(None)


def test_the_tasks_own_directory_is_the_task() -> None:
    own = ["docs/working/TASK-0001/plan.md", "docs/working/TASK-0001/approvals/c3.json.sig"]
    assert outside_scopes(own, {"TASK-0001": APP}) == []


def test_another_tasks_directory_is_outside() -> None:
    assert outside_scopes(["docs/working/TASK-0002/plan.md"], {"TASK-0001": APP}) == [
        "docs/working/TASK-0002/plan.md"
    ]


def test_a_directory_whose_name_only_starts_like_the_task_is_outside() -> None:
    path = "docs/working/TASK-00010/plan.md"
    assert not belongs_to_task(path, ["TASK-0001"])
    assert outside_scopes([path], {"TASK-0001": APP}) == [path]


def test_what_the_caller_exempts_is_inside_and_nothing_else() -> None:
    paths = [".plangate/.gitignore", ".plangate/tools.toml"]
    exempt = lambda path: never_blamed(path, HISTORY)  # noqa: E731
    assert outside_scopes(paths, {"TASK-0001": APP}, exempt=exempt) == [
        ".plangate/tools.toml"
    ]
    assert outside_scopes(paths, {"TASK-0001": APP}) == paths  # no exemption of its own


def test_allowed_by_one_scope_and_denied_by_another_is_outside() -> None:
    scopes = {"TASK-0001": APP, "TASK-0002": TaskScope(("src/**",))}
    assert outside_scopes(["src/app/secret/key.py", "src/app/x.py", "src/other.py"], scopes) == [
        "src/app/secret/key.py"
    ]


def test_any_scope_allowing_is_enough() -> None:
    assert outside_scopes(["lib/a.py", "src/app/b.py", "c.py"], {"T-1": APP, "T-2": LIB}) == [
        "c.py"
    ]


def test_an_undefined_scope_allows_nothing_but_its_own_directory() -> None:
    paths = ["src/app/x.py", "docs/working/TASK-0003/todo.md"]
    assert outside_scopes(paths, {"TASK-0003": UNDEFINED}) == ["src/app/x.py"]


def test_without_any_task_every_path_not_exempted_is_outside() -> None:
    assert outside_scopes(["README.md", ".plangate/.gitignore"], {},
                          exempt=lambda path: never_blamed(path, HISTORY)) == ["README.md"]


def test_task_directory_is_under_docs_working() -> None:
    assert task_directory("TASK-0042") == "docs/working/TASK-0042/"
