"""The canonical timeline of the snapshot tests: 3 turns, parallel tool calls, an
attachment, a hidden block, a note, a custom block type and a summary."""

from __future__ import annotations

from tests.helpers.clock import FixedClock
from tests.helpers.samples import PNG_1x1
from timeline import CompactionPolicy, HeuristicCounter, Timeline, blocks, register_block_type

SYSTEM = "You are a careful coding agent."


def canonical_timeline() -> Timeline:
    register_block_type("react.plan", role="assistant", boundary="message", label="[PLAN]")
    tl = Timeline(
        "canonical",
        policy=CompactionPolicy(max_tokens=4_000),
        token_counter=HeuristicCounter(),
        clock=FixedClock(),
    )
    tl.begin_turn()
    tl.append(blocks.user_prompt("The login test fails. Never change the public API."))
    call = tl.append(blocks.tool_call("read_file", {"path": "src/login.py"}))
    tl.append(
        blocks.tool_result(
            call.call_id or "",
            "def login(user):\n    return None\n" + "# TODO: audit logging\n" * 40,
            tool_id="read_file",
        )
    )
    tl.append(
        blocks.assistant_completion(
            "I decided to return the user object. Next I will run the tests."
        )
    )
    tl.compact(SYSTEM, force=True, keep_recent_tokens=1)

    tl.begin_turn()
    tl.append(blocks.user_prompt("Here is the screenshot of the error."))
    tl.append(blocks.user_attachment(name="error.png", mime="image/png", data=PNG_1x1))
    a = tl.append(blocks.tool_call("read_file", {"path": "tests/test_login.py"}))
    b = tl.append(blocks.tool_call("bash", {"command": "pytest -q tests/test_login.py"}))
    tl.append(
        blocks.tool_result(b.call_id or "", "1 failed, 3 passed", tool_id="bash", is_error=True)
    )
    tl.append(
        blocks.tool_result(
            a.call_id or "", "def test_login():\n    assert login('u')\n", tool_id="read_file"
        )
    )
    tl.append(blocks.note("The failure is in test_login only."))
    tl.append(blocks.assistant_completion("The test expects a truthy user."))

    tl.begin_turn()
    tl.append(blocks.user_prompt("Fix it."))
    tl.append(blocks.custom("react.plan", "1. edit login\n2. run tests"))
    c = tl.append(
        blocks.tool_call(
            "edit_file", {"path": "src/login.py", "old": "return None", "new": "return user"}
        )
    )
    big = tl.append(
        blocks.tool_result(c.call_id or "", "diff --git ...\n" * 40, tool_id="edit_file")
    )
    tl.hide([big.path], replacement_text="(diff hidden: 40 lines)")
    tl.append(blocks.assistant_completion("Fixed: login now returns the user."))
    return tl
