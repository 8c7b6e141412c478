"""The shell parser's model, rule by rule, as bash reads each command.

Each test names one reading of the parser (how a line splits into commands, words and
redirections) and checks it against the model; where bash's reading is the question,
real bash answers it.
"""

from __future__ import annotations

from plangate.hooks.shell.parse import parse


def test_a_plain_command_is_its_words() -> None:
    script = parse("ls -l src")
    assert script.problems == ()
    assert [w.text for w in script.commands[0].words] == ["ls", "-l", "src"]
